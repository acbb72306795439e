"""A SIGKILL of `disklab run` leaves the running case's files, and an image run its mountpoint
directory: the next start removes exactly those, and says so. Real runs, real tools, a real
SIGKILL; TMPDIR is the test's own, so the mountpoint directories are counted there."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from disklab.core.fs.apply import STATE_PREFIX, StateFile, recover_leftovers
from disklab.core.fs.commands import MOUNT_PREFIX
from disklab.core.system.cleanup import remove_recorded
from tests.helpers import IS_ROOT

pytestmark = [pytest.mark.slow]

DIRECTORY_TESTS = {
    "engine": 'tool = "engine"\nmode = "write"\nblock_size = "1m"\nsize = "64m"\n'
              'runtime = "60s"\ndirect = false\n',
    "fio": 'tool = "fio"\nrw = "write"\nbs = "1m"\nsize = "64m"\nruntime = "60s"\n'
           'numjobs = 2\n',
    "iozone": 'tool = "iozone"\ntests = ["write"]\nrecord_size = "4k"\nfile_size = "512m"\n',
}


def plan_text(target: str, test: str, name: str = "killed") -> str:
    return f'name = "{name}"\nrepeats = 1\n\n[target]\n{target}\n\n[[test]]\n{test}'


def directory_target(path: Path) -> str:
    return f'directory = "{path}"'


def start_run(plan: Path, library: Path, env: dict[str, str] | None = None
              ) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                             "--library", str(library), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def wait_for_case(run: subprocess.Popen[str], timeout: float = 120.0) -> None:
    """Read --json events until the first case started."""
    assert run.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = run.stdout.readline()
        assert line, f"the run ended before a case started: {run.stderr and run.stderr.read()}"
        if json.loads(line).get("event") == "CaseStarted":
            return
    raise AssertionError("no case started")


def wait_for(predicate, timeout: float = 30.0, what=None) -> None:  # type: ignore[no-untyped-def]
    """Wait until `predicate()`; past `timeout` fail, saying `what()` is still there."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out" + (f": {what()}" if what else "")
        time.sleep(0.1)


def kill(run: subprocess.Popen[str], where: Path) -> None:
    """SIGKILL, then wait until no process works under `where` any more (the tool dies with
    DiskLab, PDEATHSIG; the kernel takes a moment)."""
    run.send_signal(signal.SIGKILL)
    run.wait(30)
    wait_for(lambda: not [p for p in psutil.process_iter(["cmdline"])
                          if str(where) in " ".join(p.info["cmdline"] or ())
                          and p.pid != os.getpid()])


def mounts_of(image: Path) -> list[Path]:
    """Where the loop devices of `image` are mounted."""
    out = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True).stdout
    loops = [line.split(":")[0] for line in out.splitlines() if line]
    return [Path(line.split()[4]) for line in Path("/proc/self/mountinfo").read_text().splitlines()
            if line.split(" - ")[1].split()[1] in loops]


def helper_record(workdir: Path) -> str:
    """The record of the helper that worked in `workdir`: whether it still runs, and the step
    of its teardown it last wrote (why a failure left something)."""
    said = []
    for path in sorted(Path("/var/lib/disklab/helper").glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if str(workdir) in (record.get("workdirs") or ()):  # its own, or an inheritor's
            pid = int(path.stem.split("-")[0])
            alive = psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"
            said.append(f"helper {pid} {'runs' if alive else 'is gone'}, its teardown at "
                        f"{record.get('closing') or 'not begun'}")
    return "; ".join(said) or "no record of its helper"


def ours(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("disklab-"))


def next_start(tmp_path: Path, library: Path, env: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    """A short plan on a fresh directory with the same library: the next start."""
    other = tmp_path / "next"
    other.mkdir(exist_ok=True)
    plan = tmp_path / "next.toml"
    plan.write_text(plan_text(directory_target(other), 'tool = "engine"\nmode = "write"\n'
                              'block_size = "1m"\nsize = "1m"\ndirect = false\n', "next"))
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                           "--library", str(library), "--json"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.parametrize("tool", sorted(DIRECTORY_TESTS))
def test_a_killed_directory_run_leaves_files_the_next_start_removes(tmp_path: Path,
                                                                    tool: str) -> None:
    if tool != "engine" and shutil.which(tool) is None:
        pytest.fail(f"{tool} is not installed: `make test` installs it")
    target = tmp_path / "target"
    target.mkdir()
    (target / "mine.txt").write_text("the user's file")
    (target / "disklab-notes.txt").write_text("the user's file with our prefix")
    library = tmp_path / "lib" / "library.sqlite3"
    library.parent.mkdir()
    state = tmp_path / "state"  # $XDG_STATE_HOME: where the crash records go
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(directory_target(target), DIRECTORY_TESTS[tool]))
    run = start_run(plan, library, env)
    try:
        wait_for_case(run)
        wait_for(lambda: len(ours(target)) > 1)
    finally:
        kill(run, target)
    left = [n for n in ours(target) if n != "disklab-notes.txt"]
    assert left, "the kill left no file: nothing to recover"
    assert list((state / "disklab").glob(f"{STATE_PREFIX}{run.pid}*")), "the kill left no record"
    done = next_start(tmp_path, library, env)
    for name in left:
        assert f"disklab: cleaned up after an earlier run: removed {target / name} " \
               f"(left by DiskLab pid {run.pid})" in done.stderr
    assert sorted(p.name for p in target.iterdir()) == ["disklab-notes.txt", "mine.txt"]
    assert not list((state / "disklab").glob(f"{STATE_PREFIX}*"))


def test_a_killed_image_run_leaves_no_mountpoint_after_the_next_start(tmp_path: Path) -> None:
    if not IS_ROOT:
        pytest.skip("an image target needs root (loop devices, mount)")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "XDG_STATE_HOME": str(tmp_path / "state")}
    image = tmp_path / "killed.img"
    library = tmp_path / "lib" / "library.sqlite3"
    library.parent.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(f'image = {{ path = "{image}", size = "1g" }}',
                              DIRECTORY_TESTS["engine"])
                    + '\n[[config]]\nlabel = "ext4"\nfs = "ext4"\n')
    run = start_run(plan, library, env)
    try:
        wait_for_case(run)
        (mountpoint,) = mounts_of(image)  # in the privileged helper's own directory
        assert mountpoint.name.startswith(MOUNT_PREFIX)
        wait_for(lambda: bool(ours(mountpoint)))
    finally:
        kill(run, tmp)
    # the helper saw its client go: it unmounted, detached and removed what it made itself,
    # and its own directory. Its unmount waits for the killed writer's dirty pages to reach the
    # image (buffered writes), which a busy disk stretches: 60 s, and the failure says what
    # was still there (once, in a whole clean-clone run, 30 s were not enough).
    def left() -> list[str]:
        return [name for name, there in (("mounted", os.path.ismount(mountpoint)),
                                         ("image", image.exists()),
                                         ("helper's directory", mountpoint.parent.exists()))
                if there]
    wait_for(lambda: not left(), 60.0, lambda: f"{left()}; {helper_record(mountpoint.parent)}")
    next_start(tmp_path, library, env)
    assert not os.path.ismount(mountpoint) and list(tmp.iterdir()) == []
    assert not image.exists()
    losetup = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True)
    assert losetup.stdout.strip() == ""


def test_recovery_removes_only_recorded_paths_in_the_recorded_directory(tmp_path: Path
                                                                         ) -> None:
    """A record (damaged, or pointing elsewhere) never makes DiskLab remove another file."""
    target, elsewhere = tmp_path / "target", tmp_path / "elsewhere"
    target.mkdir()
    elsewhere.mkdir()
    made = target / "disklab-case-r1-0"
    made.write_text("ours")
    outside = elsewhere / "precious"
    outside.write_text("not ours")
    sneaky = target / "sub"
    sneaky.symlink_to(elsewhere)
    folder = target / "disklab-folder"
    folder.mkdir()
    removed, left, refused = remove_recorded(
        os.path.realpath(target),
        [str(made), str(outside), str(sneaky / "precious"), str(target / "../elsewhere/precious"),
         "relative/path", str(folder), str(target / "never-made")])
    assert removed == [str(made)] and left == []
    assert refused == [str(outside), str(sneaky / "precious"),
                       str(target / "../elsewhere/precious"), "relative/path", str(folder)]
    assert outside.read_text() == "not ours" and folder.is_dir()


def test_a_record_of_a_dead_session_is_cleaned_and_said(tmp_path: Path) -> None:
    """The record a killed session left (files, then the directory holding them), by hand: a
    dead pid's state file."""
    state_dir = tmp_path / "lib"
    state_dir.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    record = StateFile(state_dir / f"{STATE_PREFIX}{dead.pid}.json")
    record.data["pid"] = dead.pid
    helper_dir = tmp_path / "disklab-helper-x"  # the helper's, had a kill cut its cleanup
    helper_dir.mkdir()
    record.add({"kind": "dir", "path": str(helper_dir), "owner": "helper"})
    made = record.make_dir("disklab-raw-", parent=str(tmp_path))
    (Path(made) / "disklab-x-r1.json").write_text("{}")
    record.record_files(made, [f"{made}/disklab-x-r1.json"])
    cleaned = recover_leftovers(state_dir)
    tail = f"(left by DiskLab pid {dead.pid})"
    assert cleaned == [f"removed {made}/disklab-x-r1.json {tail}",
                       f"removed directory {made} {tail}",
                       f"removed directory {helper_dir} {tail}"]
    assert not os.path.exists(made) and not helper_dir.exists() and not record.path.exists()

