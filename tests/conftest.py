"""Shared fixtures: scratch filesystems on loop devices, made and always torn down.

Tests that need a real filesystem (O_DIRECT, mkfs, the tools) get one here: a sparse image file,
`losetup --find --show --direct-io=on`, mkfs, mount; teardown unmounts and detaches the very device
it attached, by name, whatever the test did. The making and tearing down is tests/helpers.py's,
for the tests that manage their own filesystems.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers import (
    IS_ROOT,
    ISOLATION_FAILED,
    LONG_EXAMPLES,
    XDG,
    ScratchFs,
    changes_of,
    hold_the_machine,
    machine_turn,
    make_scratch_fs,
    real_dirs,
    snapshot,
    teardown,
    user_env,
)

INSTALLER = "scripts/install-system-packages.sh"

# Hypothesis: "ci" for make test and make check, "long" (--hypothesis-profile=long) for the big
# fuzz runs of make test-long; a fuzz test's own count scales with it (helpers.examples)
settings.register_profile("ci", max_examples=LONG_EXAMPLES // 10)
settings.register_profile("long", max_examples=LONG_EXAMPLES)
settings.load_profile("ci")


# ---------------------------------------------------------------------------------------------
# the developer's own settings, library and state are never touched (issue 34)

REAL = pytest.StashKey[dict[str, dict[str, tuple[int, str]]]]()
TEMP = pytest.StashKey[tuple[str, dict[str, str | None]]]()
# what the session's first process (pytest alone, or pytest-xdist's controller) hands its
# workers: the user's own XDG variables (JSON) and the temporary directory that holds theirs
SAVED_VARS, SESSION_BASE = "DISKLAB_TESTS_USER_XDG", "DISKLAB_TESTS_XDG"
# and the terminal's size as the session was started with it: pytest-xdist starts its workers
# with COLUMNS set (80), which the CLI's tables would fit where pytest alone leaves them whole
TERMINAL, TERMINAL_VARS = "DISKLAB_TESTS_TERMINAL", ("COLUMNS", "LINES")
# the descriptor that holds the machine for this session (helpers.hold_the_machine)
MACHINE = pytest.StashKey[int | None]()


def pytest_configure(config: pytest.Config) -> None:
    """Before anything is collected or started: the session's own XDG directories (inherited by
    every process a test starts), the user's library variable set aside, and a snapshot of the
    user's real directories to compare at the end (pytest_sessionfinish). Under pytest-xdist
    (make test) each worker gets directories of its own under the controller's. The session's
    first process holds the machine against other DiskLab test sessions (hold_the_machine),
    except make check's, whose tests start no process and so share nothing."""
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker:
        saved = json.loads(os.environ[SAVED_VARS])
        base = str(Path(os.environ[SESSION_BASE]) / worker)
        os.mkdir(base)
        for var, value in json.loads(os.environ[TERMINAL]).items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
    else:
        if not config.pluginmanager.has_plugin("tests.no_processes"):  # make check: no process
            config.stash[MACHINE] = hold_the_machine()
        saved = {var: os.environ.get(var) for var in (*XDG, "DISKLAB_LIBRARY")}
        base = tempfile.mkdtemp(prefix="disklab-tests-xdg-")
        os.environ[SAVED_VARS], os.environ[SESSION_BASE] = json.dumps(saved), base
        os.environ[TERMINAL] = json.dumps({var: os.environ.get(var) for var in TERMINAL_VARS})
    config.stash[REAL] = snapshot(real_dirs(user_env(saved)))
    for var in XDG:
        os.environ[var] = str(Path(base) / var.removeprefix("XDG_").lower())
    os.environ.pop("DISKLAB_LIBRARY", None)
    config.stash[TEMP] = (base, saved)


def pytest_unconfigure(config: pytest.Config) -> None:
    held = config.stash.get(MACHINE, None)
    if held is not None:
        os.close(held)  # the machine for the next session (helpers.hold_the_machine)
    base, saved = config.stash[TEMP]
    for var, value in saved.items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value
    shutil.rmtree(base, ignore_errors=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[object]:
    """A test's turn (helpers.machine_turn): a test marked `alone` runs, its fixtures made and
    undone, while no other test of the session runs in another worker."""
    with machine_turn(Path(os.environ[SESSION_BASE]), item.get_closest_marker("alone") is not None):
        return (yield)


@pytest.hookimpl(tryfirst=True)  # before the terminal's summary, which then shows the section
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The user's three DiskLab directories as they were (issue 34), checked once every test of
    the session has run, in whichever worker: by the session's first process only (pytest
    alone, or pytest-xdist's controller), which fails the run and names the files changed."""
    config = session.config
    if hasattr(config, "workerinput"):
        return
    base, saved = config.stash[TEMP]
    temp = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    ours, others = changes_of((f"{temp}/", f"{base}/"), real_dirs(user_env(saved)),
                              config.stash[REAL])
    report = config.pluginmanager.get_plugin("terminalreporter")
    if others and report is not None:
        report.write_line(f"changed meanwhile by other DiskLab processes of this machine: "
                          f"{others}")
    if ours:
        if report is not None:
            report.section("the user's own DiskLab directories", sep="!", red=True, bold=True)
            for path in ours:
                report.write_line(f"{ISOLATION_FAILED} {path}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def _default_units() -> Iterator[None]:
    """Every test starts and ends in the default units choice (core.vocab.units: the process's
    one setting), whatever a window or a command of the test before chose."""
    from disklab.core.vocab.units import DEFAULT_UNITS, use_units

    use_units(DEFAULT_UNITS)
    yield
    use_units(DEFAULT_UNITS)


@pytest.fixture
def iec_units() -> Iterator[None]:
    """The IEC units choice (MiB/s, MiB) for a test whose figures are written in MiB (a plot
    fed 100 MiB/s, a table of 2**20 multiples): what it checks is not the units choice, which
    tests/gui/test_units_choice.py and tests/unit/test_units_choice.py check."""
    from disklab.core.vocab.units import units_used

    with units_used("iec"):
        yield


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of `slow` tests first, each file's tests in their order: make test's workers
    take a file at a time in this order (--dist loadfile), and the quick files then fill the
    end, rather than a long file starting last while the other worker has nothing left."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)  # stable: the order within each kind


@pytest.fixture(scope="session")
def real_settings(pytestconfig: pytest.Config) -> tuple[dict[str, Path], dict]:
    """The user's real DiskLab directories and what they held when the session started."""
    _base, saved = pytestconfig.stash[TEMP]
    return real_dirs(user_env(saved)), pytestconfig.stash[REAL]


@pytest.fixture(scope="session")
def session_xdg(pytestconfig: pytest.Config) -> Path:
    """The temporary directory that holds this session's (this worker's) XDG config, data and
    state."""
    return Path(pytestconfig.stash[TEMP][0])


def _need_root_tools(*tools: str) -> None:
    if not IS_ROOT:
        pytest.skip("needs root for loop devices and mount")
    for t in tools:
        if shutil.which(t) is None:
            pytest.fail(f"{t} is not installed: `make test` installs it ({INSTALLER})")


@pytest.fixture
def scratch_fs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScratchFs]:
    """A fresh 1 GiB ext4 filesystem on a loop device, mounted; removed after the test."""
    _need_root_tools("losetup", "mkfs.ext4")
    base = tmp_path_factory.mktemp("scratch", numbered=True)
    fs = make_scratch_fs(base, "ext4")
    try:
        yield fs
    finally:
        teardown(fs)


@pytest.fixture(scope="module")
def module_scratch_fs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScratchFs]:
    """Like scratch_fs, shared by the tests of one module (tests must clean their own files)."""
    _need_root_tools("losetup", "mkfs.ext4")
    base = tmp_path_factory.mktemp("mscratch", numbered=True)
    fs = make_scratch_fs(base, "ext4")
    try:
        yield fs
    finally:
        teardown(fs)


@pytest.fixture
def workdir(module_scratch_fs: ScratchFs) -> Iterator[Path]:
    """The module's shared ext4 scratch filesystem (loop device, direct-io=on) for one test,
    left as it was found: the engine's files removed, nothing else there."""
    d = Path(module_scratch_fs.mountpoint)
    yield d
    for p in d.iterdir():
        if p.name.startswith("disklab-"):
            p.unlink()
    assert sorted(p.name for p in d.iterdir()) == ["lost+found"]
