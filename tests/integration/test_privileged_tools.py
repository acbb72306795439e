"""Privilege: a user who is not root runs image and raw-device plans; the tools run as
root through the session's one privileged helper (sudo, with a rule that allows only the helper),
and a cancel or a kill of the user's DiskLab leaves no root process, mount or loop device behind
(the helper undoes its session when its client goes).

The user is a system account made for this module and removed after it, with a sudoers rule for
exactly the root-owned launcher `disklab install-helper` made (in a test directory): a helper
from the user's own venv would refuse to serve as root. This machine's own Python (and maybe
the checkout) lives where only root can enter, so the user's DiskLab is a copy of this
checkout's package and its run-time dependencies in the user's own directory, run by Debian's
/usr/bin/python3 from a venv (what a user's own install looks like to sudo).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pexpect
import platformdirs
import psutil
import ptyprocess
import pytest
import tomli_w

import disklab
from disklab.core.library import Library
from disklab.core.system.devices import identity
from tests.integration.privhelper_fixtures import installed_helper, made_user

pytestmark = [pytest.mark.root, pytest.mark.slow]

USER = "disklab-tester"
SUDOERS = Path("/etc/sudoers.d/disklab-tester")
SYSTEM_PYTHON = "/usr/bin/python3"


@dataclass
class User:
    name: str
    uid: int
    gid: int
    home: Path  # owned by the user: plans, the library, images
    python: str  # the interpreter its DiskLab runs on
    launcher: str = ""  # the root-owned helper launcher its sudoers rule names

    def disklab(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*args), cwd=self.home, env=self.env(), user=self.uid,
                              group=self.gid, extra_groups=[], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(self.argv(*args), cwd=self.home, env=self.env(), user=self.uid,
                                group=self.gid, extra_groups=[], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)

    def argv(self, *args: str) -> list[str]:
        return [self.python, "-m", "disklab.cli.main", *args]

    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                "DISKLAB_HELPER": self.launcher}


@pytest.fixture(scope="module")
def user() -> Iterator[User]:
    if not os.path.exists(SYSTEM_PYTHON):
        pytest.fail(f"{SYSTEM_PYTHON} is missing: `make test` installs python3")
    with made_user(USER) as made, installed_helper() as helper:
        home = made.home
        venv = home / "venv"
        subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
        (site,) = venv.glob("lib/python3*/site-packages")
        for package in (disklab, psutil, platformdirs, tomli_w, pexpect, ptyprocess):  # core, cli
            source = Path(package.__file__).resolve().parent
            shutil.copytree(source, site / source.name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        for path in [home, *home.rglob("*")]:
            os.chown(path, made.uid, made.gid, follow_symlinks=False)
        SUDOERS.write_text(f"{USER} ALL=(root) NOPASSWD: {helper.launcher}\n")
        os.chmod(SUDOERS, 0o440)
        try:
            yield User(USER, made.uid, made.gid, home, str(venv / "bin" / "python"),
                       str(helper.launcher))
        finally:
            SUDOERS.unlink(missing_ok=True)


def events_of(done: subprocess.CompletedProcess[str]) -> list[dict]:
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def loops_of(image: Path) -> list[str]:
    out = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True).stdout
    return [line.split(":")[0] for line in out.splitlines() if line]


def as_run(argv: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """What of a tool's argv the plan and the helper's run share: a Python tool (the engine,
    the tree load) runs by root's own interpreter, isolated (`-I -c BOOT` where the plan says
    `-m MODULE`), and a result file goes to the case's own root-only directory (the same
    name, another directory)."""
    if len(argv) > 2 and argv[1] == "-m":
        argv = argv[3:]
    elif len(argv) > 3 and argv[1:3] in (["-I", "-c"], ("-I", "-c")):
        argv = argv[4:]
    return tuple(_output_named(a) for a in argv)


def _output_named(text: str) -> str:
    """--output=DIR/NAME as --output=NAME (the helper's result file: same name, its own
    directory)."""
    return re.sub(r"--output=\S*/", "--output=", text)


def processes_running(argvs: list[list[str]]) -> list[psutil.Process]:
    """Live processes whose command line is one of `argvs` (the tools DiskLab started)."""
    wanted = {as_run(a) for a in argvs}
    found = []
    for p in psutil.process_iter(["cmdline", "status"]):
        if as_run(p.info["cmdline"] or ()) in wanted and p.info["status"] != "zombie":
            found.append(p)
    return found


def clean_up(image: Path) -> tuple[list[str], list[str]]:
    """What is left of an image run (loop devices, mount lines); undone here whatever the test
    found, so that a failing test never leaves the machine changed."""
    loops = loops_of(image)
    mounts = [line for line in Path("/proc/self/mountinfo").read_text().splitlines()
              if any(f" {dev} " in line for dev in loops)]
    for dev in loops:
        for line in mounts:
            subprocess.run(["umount", "-l", line.split()[4]], check=False)
        subprocess.run(["losetup", "-d", dev], check=False)
    return loops, mounts


IMAGE_PLAN = """\
name = "{name}"
[target]
image = {{ path = "{image}", size = "768m" }}

[[config]]
label = "ext4 data=journal"
fs = "ext4"
mount = ["data=journal"]

[[config]]
label = "xfs"
fs = "xfs"

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = "1m"
size = "32m"
direct = true

[[test]]
tool = "dd"
mode = ["write", "read"]
block_size = "1m"
size = "16m"
direct = true

[[test]]
tool = "fio"
rw = "randread"
bs = "4k"
size = "16m"
direct = true
ioengine = "psync"

[test.fio_options]          # fio's own options, through the root helper's case_params
io_size = "24m"
norandommap = true

[[test]]
tool = "tree"
dirs = 2
files_per_dir = 20
file_size = "64k"
"""


def test_a_user_runs_configs_on_an_image_with_the_tools_run_as_root(user: User) -> None:
    image = user.home / "scratch.img"
    plan = user.home / "image.toml"
    plan.write_text(IMAGE_PLAN.format(name="as a user", image=image))
    library = user.home / "lib" / "library.sqlite3"
    try:
        done = user.disklab("run", str(plan), "--library", str(library), "--json")
        failed = [line[:1500] for line in done.stdout.splitlines() if '"CaseFailed"' in line]
        assert done.returncode == 0, done.stderr[-3000:] + "\n".join(failed)
        events = events_of(done)
        notices = [e["message"] for e in events if e["event"] == "Notice"]
        assert any("run as root through the privileged helper" in n for n in notices)
        assert [e["config"] for e in events if e["event"] == "ConfigApplied"] == [
            "ext4 data=journal", "xfs"]
        argvs = [e["argv"] for e in events if e["event"] == "CaseStarted"]
        fio_runs = [a for a in argvs if a[0] == "fio"]
        assert fio_runs and all("--io_size=25165824" in a and "--norandommap=1" in a
                                for a in fio_runs)
    finally:
        loops, mounts = clean_up(image)
    assert loops == [] and mounts == [] and not image.exists()
    assert processes_running(argvs) == []

    lib = Library.open(library)
    try:
        (session,) = lib.list_sessions()
        found = {(r["config"], r["tool"], r["metric"]) for r in lib.results(session["id"])
                 if r["mean"] and r["mean"] > 0}
        for config in ("ext4 data=journal", "xfs"):
            assert {(config, "engine", "write"), (config, "engine", "read"),
                    (config, "dd", "write"), (config, "dd", "read"),
                    (config, "fio", "read"), (config, "tree", "create"),
                    (config, "tree", "delete:seconds")} <= found
        # what the tools moved, counted from their process trees, which only root can read:
        # the helper's counters reached the user's monitor
        cases = {c["case_id"]: c for c in lib.cases(session["id"])}
        moved: dict[tuple[str, str], float] = {}
        for s in lib.samples(session["id"]):
            case = cases[s["case_id"]]
            if case["tool"] == "dd" and s["series"] in ("app_write_bps", "app_read_bps"):
                key = (case["params"]["mode"], s["series"])
                moved[key] = max(moved.get(key, 0.0), s["value"])
        assert moved[("write", "app_write_bps")] > 0 and moved[("read", "app_read_bps")] > 0
        # every command the helper ran as root is kept with the session
        helper = [text for _t, stream, text in lib.transcript(session["id"], "", 0)
                  if stream == "helper"]
        assert any(t.startswith("mke2fs -t ext4") for t in helper)
        assert any(t.startswith("mkfs.xfs") for t in helper)
        started = [t for t in helper if t.startswith("started as root")]
        assert all(any(_output_named(t).endswith(" " + " ".join(as_run(argv)))
                       for t in started) for argv in argvs)
        assert any(t.startswith("losetup --detach") for t in helper)
    finally:
        lib.close()


RAW_PLAN = """\
name = "raw as a user"
[target]
device = "{dev}"
confirm = "{confirm}"

[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "16m"
direct = true

[[test]]
tool = "engine"
mode = "read"
block_size = "1m"
size = "16m"
direct = true

[[test]]
tool = "fio"
rw = "randread"
bs = "4k"
size = "16m"
direct = true
ioengine = "psync"
"""


@pytest.fixture
def loop_device(user: User) -> Iterator[str]:
    """A loop device whose first 16 MiB hold 0xAB bytes (so a write is visible)."""
    image = user.home / "raw.img"
    with open(image, "wb") as f:
        f.write(b"\xab" * (16 << 20))
        f.truncate(256 << 20)
    dev = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(image)],
                         check=True, capture_output=True, text=True).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
        image.unlink(missing_ok=True)


def test_a_user_runs_raw_tools_on_a_confirmed_device_through_the_helper(
        user: User, loop_device: str) -> None:
    mode = os.stat(loop_device).st_mode
    assert stat.S_IMODE(mode) & 0o006 == 0  # the user cannot open the device by itself
    plan = user.home / "raw.toml"
    plan.write_text(RAW_PLAN.format(dev=loop_device, confirm=identity(loop_device)))
    library = user.home / "raw.sqlite3"

    refused = user.disklab("run", str(plan), "--library", str(library))
    assert refused.returncode == 2  # no terminal to type the device back on, no --yes-destroy
    assert f"--yes-destroy {loop_device}" in refused.stderr
    with open(loop_device, "rb") as f:
        assert f.read(1 << 20) == b"\xab" * (1 << 20)  # nothing was written

    done = user.disklab("run", str(plan), "--library", str(library), "--json",
                        "--yes-destroy", loop_device)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    events = events_of(done)
    assert not [e for e in events if e["event"] == "CaseFailed"]
    with open(loop_device, "rb") as f:
        assert f.read(1 << 20) == bytes(1 << 20)  # dd's zeros, written as root
    # fio's result file went to the helper's own directory, removed with the helper
    (fio_argv,) = [e["argv"] for e in events if e["event"] == "CaseStarted"
                   and e["argv"][0] == "fio"]
    (output,) = [a.split("=", 1)[1] for a in fio_argv if a.startswith("--output=")]
    assert Path(output).parent.name.startswith("disklab-helper-")
    assert not Path(output).parent.exists()
    lib = Library.open(library)
    try:
        (session,) = lib.list_sessions()
        found = {(r["tool"], r["metric"]) for r in lib.results(session["id"])
                 if r["mean"] and r["mean"] > 0}
        assert {("dd", "write"), ("engine", "read"), ("fio", "read")} <= found
        # the raw device's own counters, not those of the disk under a temporary directory
        device_reads = [s["value"] for s in lib.samples(session["id"], series="device_read_bps")]
        assert device_reads and max(device_reads) > 0
    finally:
        lib.close()


LONG_PLAN = """\
name = "{name}"
[target]
image = {{ path = "{image}", size = "512m" }}
[[config]]
label = "ext4"
fs = "ext4"
[[test]]
tool = "engine"
mode = "randread"
block_size = "4k"
size = "64m"
runtime = "120s"
direct = true
"""


def _run_until_measuring(user: User, name: str) -> tuple[subprocess.Popen[str], Path, list[str],
                                                         Path]:
    """Start a long image run as the user; return it once its measured tool is running."""
    image = user.home / f"{name}.img"
    plan = user.home / f"{name}.toml"
    plan.write_text(LONG_PLAN.format(name=name, image=image))
    library = user.home / f"{name}.sqlite3"
    run = user.start("run", str(plan), "--library", str(library), "--json")
    assert run.stdout is not None
    argv: list[str] = []
    deadline = time.monotonic() + 120
    for line in run.stdout:
        event = json.loads(line)
        if event["event"] == "CaseStarted":
            argv = event["argv"]
        if argv and event["event"] == "Sample":
            break
        assert time.monotonic() < deadline, "the run never started measuring"
    assert argv and processes_running([argv]), "the tool is not running"
    assert all(p.uids().real == 0 for p in processes_running([argv]))  # root's, via sudo
    return run, image, argv, library


def test_sigterm_of_a_users_run_stops_the_root_tool_and_tears_down(user: User) -> None:
    run, image, argv, _ = _run_until_measuring(user, "cancelled")
    try:
        run.send_signal(signal.SIGTERM)
        run.communicate(timeout=120)
        assert run.returncode == 130
    finally:
        if run.poll() is None:
            run.kill()
        loops, mounts = clean_up(image)
    assert loops == [] and mounts == [] and not image.exists()
    assert processes_running([argv]) == []


def test_sigkill_of_a_users_run_kills_the_root_tool_and_the_next_start_cleans_up(
        user: User) -> None:
    run, image, argv, library = _run_until_measuring(user, "killed")
    try:
        run.kill()
        run.communicate(timeout=30)
        # the helper reads the end of its input and stops what it runs for the dead client
        deadline = time.monotonic() + 30
        while processes_running([argv]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert processes_running([argv]) == []
        # ... and undoes what it attached and mounted, and removes the image it made
        while (loops_of(image) or image.exists()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert loops_of(image) == [] and not image.exists()
        # the next start, a small plan of the same user and library, finds nothing left to
        # undo but its record (as root, through a helper of its own)
        work = user.home / "next"
        work.mkdir()
        os.chown(work, user.uid, user.gid)
        small = user.home / "next.toml"
        small.write_text(f'name = "next"\n[target]\ndirectory = "{work}"\n[[test]]\n'
                         'tool = "engine"\nmode = "write"\nblock_size = "1m"\nsize = "4m"\n')
        again = user.disklab("run", str(small), "--library", str(library), "--json")
        assert again.returncode == 0, again.stderr[-3000:]
        assert "could not undo" not in again.stderr
    finally:
        loops, mounts = clean_up(image)
    assert loops == [] and mounts == [] and not image.exists()


RAW_SECTION_PLAN = """\
name = "LUN, then filesystem, as a user"
[target]
image = {{ path = "{image}", size = "256m" }}

[[config]]
label = "ext4"
fs = "ext4"

[[test]]
tool = "dd"
raw = true
mode = ["write", "read"]
block_size = "1m"
size = "16m"
direct = true

[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "16m"
direct = true
"""


def test_a_user_runs_a_raw_section_on_the_image_the_helper_attached(user: User) -> None:
    """The raw = true tests write the loop device the helper attached for this session (no
    confirm needed: it is the helper's own), then the configuration is made on it."""
    image = user.home / "lun.img"
    plan = user.home / "raw-section.toml"
    plan.write_text(RAW_SECTION_PLAN.format(image=image))
    library = user.home / "lib" / "raw-section.sqlite3"
    try:
        done = user.disklab("run", str(plan), "--library", str(library), "--json")
        failed = [line[:1500] for line in done.stdout.splitlines() if '"CaseFailed"' in line]
        assert done.returncode == 0, done.stderr[-3000:] + "\n".join(failed)
        events = events_of(done)
        notices = [e["message"] for e in events if e["event"] == "Notice"]
        assert any("run as root through the privileged helper" in n for n in notices)
        applied = [e for e in events if e["event"] == "ConfigApplied"]
        assert [e["config"] for e in applied] == ["raw device", "ext4"]
        device = applied[0]["readback"]["device"]
        raw = [e["argv"] for e in events
               if e["event"] == "CaseStarted" and e["case"]["config"] == "raw device"]
        assert [a for a in raw if f"of={device}" in a or f"if={device}" in a] == raw
        assert len(raw) == 2
    finally:
        loops, mounts = clean_up(image)
    assert loops == [] and mounts == [] and not image.exists()
