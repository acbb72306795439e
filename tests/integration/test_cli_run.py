"""`disklab run` end to end on a real ext4 filesystem on a loop device: the README's quick-look
plan, then show and export; and what `plan validate`, `run` and the window share
(core.run.summary)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from disklab.core.library import Library

pytestmark = [pytest.mark.root, pytest.mark.slow]

QUICK_LOOK_PLAN = """\
name = "quick look"
repeats = 2
drop_caches = false
stop_on_failure = false

[target]
directory = "{dir}"

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = ["1m", "64k"]
size = "256m"
streams = 1
queue_depth = 1
direct = true

[[test]]
tool = "dd"
mode = ["write", "read"]
block_size = "1m"
size = "256m"
direct = true
"""


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=600)


def test_run_the_quick_look_plan_then_show_and_export(scratch_fs, tmp_path: Path) -> None:
    target = scratch_fs.mountpoint
    plan = tmp_path / "plan.toml"
    plan.write_text(QUICK_LOOK_PLAN.format(dir=target))
    library = tmp_path / "library.sqlite3"

    done = disklab("run", str(plan), "--library", str(library), "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["event"] == "SessionStarted"
    assert events[-1] == {**events[-1], "event": "SessionFinished", "status": "finished"}

    shown = disklab("show", "quick look", "--library", str(library), "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["session"]["status"] == "finished"
    main = {(r["tool"], r["params"]["mode"], r["params"].get("block_size")): r
            for r in doc["results"] if r["metric"] in ("write", "read")}
    assert set(main) == {
        ("engine", "write", 1 << 20), ("engine", "write", 64 << 10),
        ("engine", "read", 1 << 20), ("engine", "read", 64 << 10),
        ("dd", "write", 1 << 20), ("dd", "read", 1 << 20),
    }
    for r in main.values():
        assert r["unit"] == "B/s"
        assert r["n"] == 2 and len(r["values"]) == 2
        assert r["mean"] > 0 and r["stddev"] is not None
        assert r["params"]["size"] == 256 << 20 and r["params"]["direct"] is True

    out = tmp_path / "session.json"
    assert disklab("export", "quick look", "--format", "json", "-o", str(out),
                   "--library", str(library)).returncode == 0
    exported = json.loads(out.read_text())
    sampled = {s["case_id"] for s in exported["samples"]}
    assert sampled == {c["case_id"] for c in exported["runs"]}
    assert exported["session"]["host"]["tools"]["dd"]

    csv_out = tmp_path / "session.csv"
    assert disklab("export", "1", "--format", "csv", "-o", str(csv_out),
                   "--library", str(library)).returncode == 0
    assert len(csv_out.read_text().splitlines()) > len(main)

    left = sorted(p.name for p in target.iterdir())
    assert left == ["lost+found"]


def test_sigkill_mid_case_leaves_an_interrupted_session_with_finished_cases(
    scratch_fs, tmp_path: Path
) -> None:
    plan = tmp_path / "long.toml"
    plan.write_text(f"""\
name = "killed"
[target]
directory = "{scratch_fs.mountpoint}"
[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = ["32m", "900m"]
direct = true
""")
    library = tmp_path / "library.sqlite3"
    p = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                          "--library", str(library), "--json"],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    finished = 0
    tree: list[psutil.Process] = []
    try:
        for line in p.stdout:
            event = json.loads(line)
            finished += event["event"] == "CaseFinished"
            if finished and event["event"] == "Progress":
                break  # the second case is moving
        tree = psutil.Process(p.pid).children(recursive=True)
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
        # the tool dies with disklab's process (parent-death signal); wait for it
        _gone, alive = psutil.wait_procs(tree, timeout=10)
        for proc in alive:
            proc.kill()
    assert finished == 1
    assert not alive, "the tool outlived the killed disklab"

    lib = Library.open(library)
    try:
        (session,) = lib.list_sessions()
        assert session["status"] == "interrupted"
        results = [r for r in lib.results(session["id"]) if r["metric"] == "write"]
        assert [r["params"]["size"] for r in results] == [32 << 20]
        assert results[0]["mean"] > 0
    finally:
        lib.close()


RELATIVE_LIBRARY_PLAN = """\
name = "relative library"
drop_caches = false

[target]
image = {{ path = "{image}", size = "128m" }}

[[config]]
label = "ext4"
fs = "ext4"

[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "8m"
direct = true
"""


def test_a_relative_library_path_with_an_image_target_runs(tmp_path: Path) -> None:
    """`--library lib.sqlite3` from the plan's folder: the root helper (started from /) was
    handed the relative path, refused it with an answer of no id, and the client waited for
    ever for its own id (SIGTERM did not end it). Now the path is absolute before it leaves
    the client, and a refusal answers the request it refuses."""
    image = Path("/var/tmp") / f"disklab-test-relative-{os.getpid()}.img"
    (tmp_path / "plan.toml").write_text(RELATIVE_LIBRARY_PLAN.format(image=image))
    try:
        done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", "plan.toml",
                               "--library", "lib.sqlite3", "--json"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr
        sessions = Library.open(tmp_path / "lib.sqlite3").list_sessions()
        assert [s["status"] for s in sessions] == ["finished"]
    finally:
        image.unlink(missing_ok=True)
