"""page_cache_limit on real tools and a real filesystem: a buffered read of a 1 GiB file in a
memory cgroup limited to 128 MiB comes from the device, not from RAM; the group exists only while
its case runs, and one left by a SIGKILLed run is removed at the next start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from disklab.core.plan.parse import parse_plan
from disklab.core.proc.tool import ToolProcess
from disklab.core.run.runner import run_plan
from disklab.core.system.cgroups import (
    create_group,
    find_memory_controller,
    group_name,
    members,
    remove_group,
)
from disklab.core.vocab.errors import SafetyError, ToolError
from disklab.core.vocab.events import CaseFinished, CaseStarted, LogLine, Sample, SessionStarted
from tests.helpers import IS_ROOT, ScratchFs, make_scratch_fs, teardown

pytestmark = [pytest.mark.root, pytest.mark.slow]

CONTROLLER = find_memory_controller()
if not IS_ROOT or CONTROLLER is None:
    pytest.skip("needs root and a memory cgroup controller", allow_module_level=True)

REPEATS = 3  # rounds of the three reads: direct, buffered, buffered with a limit

READS = """\
name = "cache limit"
repeats = {repeats}

[target]
directory = "{directory}"

[[test]]
tool = "engine"
mode = "read"
size = "1g"
direct = true
queue_depth = 4
runtime = "{runtime}"

[[test]]
tool = "engine"
mode = "read"
size = "1g"
direct = false
runtime = "{runtime}"

[[test]]
tool = "engine"
mode = "read"
size = "1g"
direct = false
runtime = "{runtime}"
page_cache_limit = "128m"
"""


@pytest.fixture
def big_fs(tmp_path: Path) -> Iterator[ScratchFs]:
    """A 2 GiB ext4 on a loop device (room for a 1 GiB file), made and torn down by name."""
    fs = make_scratch_fs(tmp_path, "ext4", "2G")
    try:
        yield fs
    finally:
        teardown(fs)


def groups(pid: int) -> set[str]:
    """The groups of the DiskLab process `pid` (named disklab-PID-case) in this process's memory
    hierarchy now: only its own, as other DiskLab runs (tests run two at a time, other
    checkouts) may have theirs there meanwhile."""
    assert CONTROLLER is not None
    return {p.name for p in CONTROLLER.base.glob(f"disklab-{pid}-*")}


def test_a_limited_buffered_read_comes_from_the_device(big_fs: ScratchFs, tmp_path: Path
                                                       ) -> None:
    """The same buffered 1 GiB read, re-read for 4 s: unlimited, the second pass on comes from
    the page cache; limited to 128 MiB, every pass comes from the device. Judged by what the
    kernel counted for the tool's process (/proc/PID/io: the bytes it had read from storage
    against the bytes its reads returned), not by its speed, which a loaded machine changes."""
    text = READS.format(directory=big_fs.mountpoint, repeats=REPEATS, runtime="4s")
    checked = parse_plan(text)
    assert not any("page cache" in w.message and "test[3]" in w.key for w in checked.warnings)
    events = []
    seen_in_group: dict[str, set[int]] = {}
    current: dict[str, str] = {}
    for e in run_plan(checked.plan, state_dir=str(tmp_path / "state")):
        events.append(e)
        if isinstance(e, LogLine) and "memory cgroup" in e.text:
            current[e.case_id] = e.text.rsplit(" ", 1)[1]
        if isinstance(e, Sample) and e.case_id in current:
            seen_in_group.setdefault(e.case_id, set()).update(members(current[e.case_id]))
    started = next(e for e in events if isinstance(e, SessionStarted))
    assert started.host["page_cache_limit"]["tests"] == {"test[3]": 128 << 20}
    assert started.host["page_cache_limit"]["controller"] == CONTROLLER.to_json()
    cases = {c.test_index: c.id for c in started.cases}
    limited = cases[2]
    # the limited case said where it ran, and its tool was in that group while it ran
    assert set(current) == {limited}
    assert seen_in_group.get(limited), "no process was seen in the case's memory cgroup"
    assert len([e for e in events if isinstance(e, CaseStarted)]) == 3 * REPEATS
    assert groups(os.getpid()) == set()  # every group this run made is gone after its case

    def repeats(case_id: str) -> set[int]:
        return {e.repeat for e in events if isinstance(e, CaseFinished)
                and e.case_id == case_id and any(m.name == "read" and m.value
                                                 for m in e.metrics)}

    def from_device(case_id: str, repeat: int) -> float:
        """Storage-level bytes over bytes read by the tool (1: all from the device)."""
        rows = [e for e in events if isinstance(e, Sample) and e.case_id == case_id
                and e.repeat == repeat]
        device = sum(e.value for e in rows if e.series == "app_read_bps")
        asked = sum(e.value for e in rows if e.series == "app_rchar_bps")
        return device / asked if asked else 0.0

    direct, unlimited, capped = repeats(cases[0]), repeats(cases[1]), repeats(cases[2])
    assert len(direct) == len(unlimited) == len(capped) == REPEATS
    figures = {c: {r: round(from_device(c, r), 2) for r in capped} for c in cases.values()}
    # every limited read came from the device, all of it
    assert all(from_device(limited, r) > 0.8 for r in capped), figures
    # without the limit, the same reads came from the page cache. Other tests on this machine
    # drop the page cache now and then, which sends an unlimited read to the device too: one
    # repeat served from the cache is enough to show the limit made the difference
    cached = [r for r in unlimited if from_device(cases[1], r) < 0.5]
    assert cached, f"every unlimited read was sent to the device by a cache drop: {figures}"
    # direct I/O never goes through the cache: every repeat read from the device
    assert all(from_device(cases[0], r) > 0.8 for r in direct), figures


KILLED = """\
name = "killed"
page_cache_limit = "64m"

[target]
directory = "{directory}"

[[test]]
tool = "engine"
mode = "write"
size = "256m"
direct = false
runtime = "120s"
"""

QUICK = """\
name = "next start"

[target]
directory = "{directory}"

[[test]]
tool = "engine"
mode = "write"
size = "1m"
direct = true
"""


def disklab(*args: str, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "disklab.cli.main", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kw)  # type: ignore[call-overload]


def test_a_killed_runs_group_is_removed_at_the_next_start(big_fs: ScratchFs,
                                                          tmp_path: Path) -> None:
    library = tmp_path / "lib" / "library.sqlite3"
    state = tmp_path / "state" / "disklab"  # where crash records go: $XDG_STATE_HOME/disklab
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    killed = tmp_path / "killed.toml"
    killed.write_text(KILLED.format(directory=big_fs.mountpoint))
    run = disklab("run", str(killed), "--library", str(library), "--json", env=env)
    try:
        mine: set[str] = set()
        deadline = time.monotonic() + 60
        while not mine and time.monotonic() < deadline:
            mine = groups(run.pid)
            time.sleep(0.1)
        assert len(mine) == 1, "the run made no memory cgroup"
        (name,) = mine
        path = CONTROLLER.base / name  # type: ignore[union-attr]
        deadline = time.monotonic() + 30
        while not members(path) and time.monotonic() < deadline:
            time.sleep(0.1)
        tool = members(path)
        assert tool, "the tool never ran in its group"
        limit = int((path / ("memory.limit_in_bytes" if CONTROLLER.version == 1  # type: ignore
                             else "memory.max")).read_text())
        assert limit == 64 << 20
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)
        deadline = time.monotonic() + 10  # the tool dies with DiskLab (PDEATHSIG)
        while members(path) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert path.is_dir(), "SIGKILL leaves the group behind: the next start removes it"
        records = list(state.glob(f"setup-state-{run.pid}-cgroups.json"))
        assert len(records) == 1 and str(path) in records[0].read_text()
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    quick = tmp_path / "quick.toml"
    quick.write_text(QUICK.format(directory=big_fs.mountpoint))
    nxt = disklab("run", str(quick), "--library", str(library), "--json", env=env)
    out, err = nxt.communicate(timeout=300)
    assert nxt.returncode == 0, err
    assert f"removed the memory cgroup {path} (left by DiskLab pid {run.pid})" in err, err
    assert json.loads(out.splitlines()[-1])["status"] == "finished"
    assert not path.exists()
    assert not list(state.glob("setup-state-*"))


def test_the_helper_makes_and_removes_the_group_of_an_image_target(tmp_path: Path) -> None:
    """Tools run through the privileged helper (as for a user who is not root): the helper
    makes the group, its tool runs in it, and tool_cleanup removes it."""
    text = f"""\
name = "helper"
page_cache_limit = "64m"

[target]
image = {{ path = "{tmp_path / 'img.raw'}", size = "512m" }}

[[config]]
label = "ext4"
fs = "ext4"

[[test]]
tool = "engine"
mode = "write"
size = "128m"
direct = false
"""
    events = list(run_plan(parse_plan(text).plan, state_dir=str(tmp_path / "state"),
                           privileged_tools=True))
    finished = [e for e in events if isinstance(e, CaseFinished)]
    assert len(finished) == 1, [e for e in events if getattr(e, "error", None)]
    limited = [e.text for e in events if isinstance(e, LogLine) and "memory cgroup" in e.text]
    assert len(limited) == 1 and "page cache limited to 64m" in limited[0]
    path = limited[0].rsplit(" ", 1)[1]
    helper = [e.text for e in events if isinstance(e, LogLine) and e.stream == "helper"]
    assert f"mkdir {path}" in helper and f"rmdir {path}" in helper
    helper_pid = int(Path(path).name.split("-")[1])  # disklab-PID-case: the helper's groups
    assert not os.path.exists(path) and groups(helper_pid) == set()
    assert not list((tmp_path / "state").glob("setup-state-*"))


def test_a_tool_is_in_its_group_before_it_runs_a_single_instruction() -> None:
    """The child joins the group between fork and exec: the very first thing the tool does
    (cat reading its own /proc/self/cgroup) already shows the group."""
    assert CONTROLLER is not None
    name = group_name("proc-test")
    path = create_group(CONTROLLER, name, 64 << 20)
    try:
        with ToolProcess(["cat", "/proc/self/cgroup"], cgroup=str(path)) as p:
            p.start()
            p.wait(30)
            text = p.output("stdout")
        assert p.returncode == 0
        relative = "/" + str(path.relative_to(CONTROLLER.mountpoint))
        assert any(line.endswith(relative) for line in text.splitlines()), text
        assert members(path) == []  # the tool has gone: the group can go
    finally:
        remove_group(path)
    assert not path.exists()
    with pytest.raises(ToolError, match=f"memory cgroup {path}"):
        ToolProcess(["true"], cgroup=str(path)).start()


def test_only_disklab_groups_in_a_cgroup_hierarchy_are_removed(tmp_path: Path) -> None:
    assert CONTROLLER is not None
    with pytest.raises(SafetyError, match="not a DiskLab cgroup"):
        remove_group(CONTROLLER.base)
    stray = tmp_path / "disklab-1-x"
    stray.mkdir()
    with pytest.raises(SafetyError, match="not inside a mounted cgroup hierarchy"):
        remove_group(stray)
    assert stray.is_dir()


AS_NOBODY = """
import os, sys
from disklab.core.vocab.errors import PlanError
from disklab.core.plan.parse import parse_plan
text = open(sys.argv[1]).read()
os.setgid(65534)
os.setuid(65534)  # real and effective: an ordinary user from here on
try:
    parse_plan(text)
except PlanError as e:
    for p in e.problems:
        print(f"line {p.line}: {p.key}: {p.message}")
    sys.exit(2)
"""


def test_a_user_without_a_delegated_cgroup_is_told_a_directory_target_cannot(
        tmp_path: Path) -> None:
    """The plan check as an ordinary user (nobody), a directory target: the cgroup would have
    to be made by DiskLab itself, and this user may not. (The interpreter of this test venv is
    not readable by nobody, so the process drops root after loading DiskLab.)"""
    assert CONTROLLER is not None
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="disklab-user-") as target:
        os.chmod(target, 0o777)  # a directory the user may write (pytest's tmp is root's only)
        plan = tmp_path / "plan.toml"
        plan.write_text(QUICK.format(directory=target).replace(
            'name = "next start"', 'name = "user"\npage_cache_limit = "256m"'))
        done = subprocess.run([sys.executable, "-c", AS_NOBODY, str(plan)],
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert ("line 2: page_cache_limit: limiting the page cache of a directory target needs "
            "root or a delegated cgroup") in done.stdout, done.stdout
