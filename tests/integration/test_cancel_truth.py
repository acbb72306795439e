"""A cancel is `cancelled`, exit 130, whenever it comes: during an image's setup, between two
configurations, in the middle of a case. `disklab run` is a real subprocess that gets a real
SIGTERM; the library, the exit code and the machine (mounts, loop devices, mount directories)
are checked afterwards."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from disklab.core.fs.commands import MOUNT_PREFIX
from disklab.core.library import Library

pytestmark = [pytest.mark.root, pytest.mark.slow]

IMAGE_PLAN = """\
name = "cancel me"
repeats = 1

[target]
image = {{ path = "{image}", size = "256m" }}

[[config]]
label = "first"
fs = "ext4"

[[config]]
label = "second"
fs = "ext4"
mount = ["nodelalloc"]

[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "8m"
direct = true
"""


def run_until(argv: list[str], env: dict[str, str], when: Callable[[dict[str, Any]], bool],
              sig: int = signal.SIGTERM) -> tuple[int, list[dict[str, Any]]]:
    """Start `disklab ARGV --json`, send `sig` right after the first event `when` accepts;
    its exit code and every event it printed."""
    p = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", *argv, "--json"],
                         stdout=subprocess.PIPE, text=True, env=env)
    assert p.stdout is not None
    events: list[dict[str, Any]] = []
    try:
        sent = False
        for line in p.stdout:
            events.append(json.loads(line))
            if not sent and when(events[-1]):
                p.send_signal(sig)
                sent = True
        assert sent, "the run ended before the moment to cancel"
        return p.wait(timeout=300), events
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def mounted_under(prefix: str) -> list[str]:
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f if prefix in line.split()[4]]


def loops_of(image: Path) -> list[str]:
    out = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True).stdout
    return [line.split(":")[0] for line in out.splitlines() if line]


@pytest.fixture
def image_run(tmp_path: Path):
    """The image plan, a library, and a TMPDIR of this test's own (where the mount
    directories are made), so that what is left there is this run's."""
    image = tmp_path / "scratch.img"
    plan = tmp_path / "plan.toml"
    plan.write_text(IMAGE_PLAN.format(image=image))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    library = tmp_path / "lib" / "library.sqlite3"
    yield plan, library, env, image, tmp
    for loop in loops_of(image):  # only if the test failed: never leave a loop behind
        for m in mounted_under(str(tmp)):
            subprocess.run(["umount", "-l", m], check=False)
        subprocess.run(["losetup", "-d", loop], check=False)


def assert_nothing_left(image: Path, tmp: Path) -> None:
    assert mounted_under(str(tmp)) == []
    assert loops_of(image) == []
    assert [p.name for p in tmp.iterdir() if p.name.startswith(MOUNT_PREFIX)] == []


def stored(library: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with Library.open(library) as lib:
        (session,) = lib.list_sessions()
        return session, lib.runs(session["id"])


def test_sigterm_right_after_session_started_on_an_image_is_cancelled(image_run) -> None:
    plan, library, env, image, tmp = image_run
    code, events = run_until(["run", str(plan), "--library", str(library)], env,
                             lambda e: e["event"] == "SessionStarted")
    assert events[-1]["event"] == "SessionFinished"
    assert events[-1]["status"] == "cancelled"
    assert code == 130
    session, runs = stored(library)
    assert session["status"] == "cancelled"
    assert not [r for r in runs if r["status"] == "ok"]
    assert_nothing_left(image, tmp)


def test_sigterm_after_the_first_configs_teardown_is_cancelled(image_run) -> None:
    plan, library, env, image, tmp = image_run
    code, events = run_until(["run", str(plan), "--library", str(library)], env,
                             lambda e: e["event"] == "ConfigTornDown")
    assert events[-1]["event"] == "SessionFinished"
    assert events[-1]["status"] == "cancelled"
    assert code == 130
    started = [e["case"]["config"] for e in events if e["event"] == "CaseStarted"]
    assert started == ["first"]  # the second configuration never ran a case
    session, runs = stored(library)
    assert session["status"] == "cancelled"
    assert [r["status"] for r in runs] == ["ok"]
    assert_nothing_left(image, tmp)


DIRECTORY_PLAN = """\
name = "cancel a case"
[target]
directory = "{directory}"
[[test]]
tool = "engine"
mode = "randread"
block_size = "4k"
size = "32m"
runtime = "60s"
direct = false
"""


def test_a_cancelled_case_is_cancelled_with_its_partial_figures_kept_and_marked(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(DIRECTORY_PLAN.format(directory=work))
    library = tmp_path / "library.sqlite3"
    code, events = run_until(["run", str(plan), "--library", str(library)], dict(os.environ),
                             lambda e: e["event"] == "Progress" and e["done_bytes"])
    assert code == 130
    kinds = [e["event"] for e in events]
    assert "CaseFailed" not in kinds and kinds.count("CaseCancelled") == 1
    assert events[-1]["status"] == "cancelled"
    with Library.open(library) as lib:
        (session,) = lib.list_sessions()
        assert session["status"] == "cancelled"
        (run,) = lib.runs(session["id"])
        assert run["status"] == "cancelled" and not run["error"]
        figures = lib.db.execute("SELECT name, value, note FROM metric").fetchall()
        assert figures and all("partial" in note for _name, _value, note in figures)
        assert any(name == "random_read" and value > 0 for name, value, _note in figures)
        assert "CaseCancelled" in [e["kind"] for e in lib.events(session["id"])]
    assert list(work.iterdir()) == []


def test_a_session_cancelled_between_configurations_resumes_only_the_missing_one(
        image_run) -> None:
    """Resume re-applies only the configurations whose runs are missing: the second is made,
    mounted, run and torn down; the first is not made again."""
    plan, library, env, image, tmp = image_run
    code, _events = run_until(["run", str(plan), "--library", str(library)], env,
                              lambda e: e["event"] == "ConfigTornDown")
    assert code == 130
    session, _runs = stored(library)
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "resume", str(session["id"]),
                           "--library", str(library), "--json"], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["event"] == "SessionResumed"
    assert [e["config"] for e in events if e["event"] == "ConfigApplied"] == ["second"]
    assert [e["case"]["config"] for e in events if e["event"] == "CaseStarted"] == ["second"]
    session, runs = stored(library)
    assert session["status"] == "finished"
    assert [r["status"] for r in runs] == ["ok", "ok"]
    assert_nothing_left(image, tmp)


def test_a_second_ctrl_c_stops_at_once_and_is_still_cancelled(tmp_path: Path) -> None:
    """The second SIGINT does not wait for the tool to stop: the session is still stored as
    `cancelled` (not `interrupted`), exit 130, the tool is gone and its files removed."""
    work = tmp_path / "work"
    work.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(DIRECTORY_PLAN.format(directory=work))
    library = tmp_path / "library.sqlite3"
    p = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                          "--library", str(library), "--json"], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    tree: list[psutil.Process] = []
    try:
        for line in p.stdout:
            if json.loads(line)["event"] == "Progress":
                tree = psutil.Process(p.pid).children(recursive=True)
                p.send_signal(signal.SIGINT)
                p.send_signal(signal.SIGINT)
                break
        p.stdout.read()
        assert p.wait(timeout=60) == 130
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    _gone, alive = psutil.wait_procs(tree, timeout=10)
    assert not alive, "the tool outlived the cancel"
    session, runs = stored(library)
    assert session["status"] == "cancelled"
    assert [r["status"] for r in runs] == ["cancelled"]
    assert list(work.iterdir()) == []
