"""The runner on a real filesystem: failures, a full disk, cancel, and nothing left behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from disklab.core.library import Library
from disklab.core.plan.parse import parse_plan
from disklab.core.run.runner import run_plan
from disklab.core.vocab.events import (
    CaseCancelled,
    CaseFailed,
    CaseFinished,
    CaseStarted,
    Progress,
    Sample,
    SessionFinished,
    SessionStarted,
)

pytestmark = [pytest.mark.root]


def plan_text(directory: Path, tests: str, extra: str = "") -> str:
    return f'name = "t"\n{extra}\n[target]\ndirectory = "{directory}"\n{tests}'


def test_a_full_disk_fails_its_case_and_the_run_goes_on(scratch_fs, tmp_path: Path) -> None:
    """A 512 MiB write that fitted when the plan was checked, on a filesystem something else
    has filled since (a write larger than the free space is refused before the run): the
    engine says where the space ran out, the case is failed with its transcript, the files are
    removed and the next case still runs."""
    text = plan_text(scratch_fs.mountpoint, """
[[test]]
tool = "engine"
mode = "write"
size = ["512m", "16m"]
direct = true
""")
    plan = parse_plan(text).plan
    filler = scratch_fs.mountpoint / "filler"
    with filler.open("wb") as f:
        os.posix_fallocate(f.fileno(), 0, shutil.disk_usage(scratch_fs.mountpoint).free
                           - 128 * 1024 * 1024)
    lib = Library.open(tmp_path / "lib.sqlite3")
    rec = lib.recorder()
    events = []
    try:
        for e in run_plan(plan):
            rec.handle(e)
            events.append(e)
    finally:
        filler.unlink()
    rec.close()
    failed = [e for e in events if isinstance(e, CaseFailed)]
    finished = [e for e in events if isinstance(e, CaseFinished)]
    assert len(failed) == 1 and len(finished) == 1
    assert "no space left" in failed[0].error.lower() or "no space left" in (
        failed[0].transcript_tail.lower())
    assert failed[0].exit_status == 1
    assert events[-1] == SessionFinished(status="failed", failed_cases=1, t=events[-1].t)
    assert sorted(p.name for p in scratch_fs.mountpoint.iterdir()) == ["lost+found"]
    sid = rec.session_id
    assert sid is not None
    runs = {r["status"] for r in lib.runs(sid)}
    assert runs == {"failed", "ok"}
    assert lib.session(sid)["status"] == "failed"
    lib.close()


def test_cancel_stops_the_tool_and_removes_its_files(scratch_fs) -> None:
    text = plan_text(scratch_fs.mountpoint, """
[[test]]
tool = "engine"
mode = "randread"
block_size = "4k"
size = "64m"
runtime = "60s"
direct = true
""")
    cancel = threading.Event()
    events = []
    tool_pids: list[int] = []
    for e in run_plan(parse_plan(text).plan, cancel=cancel):
        events.append(e)
        if isinstance(e, Sample) and not cancel.is_set():
            me = psutil.Process()
            tool_pids = [c.pid for c in me.children(recursive=True)]
            cancel.set()
    assert isinstance(events[0], SessionStarted)
    assert not [e for e in events if isinstance(e, CaseFailed)]  # cancelled is not failed
    (cancelled,) = [e for e in events if isinstance(e, CaseCancelled)]
    assert cancelled.metrics and all("partial" in (m.note or "") for m in cancelled.metrics)
    assert events[-1].status == "cancelled"  # type: ignore[attr-defined]
    assert tool_pids and not any(psutil.pid_exists(p) and psutil.Process(p).status() !=
                                 psutil.STATUS_ZOMBIE for p in tool_pids)
    assert sorted(p.name for p in scratch_fs.mountpoint.iterdir()) == ["lost+found"]


def test_progress_has_eta_and_overall_share(scratch_fs) -> None:
    text = plan_text(scratch_fs.mountpoint, """
[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "64m"
direct = true
""", "repeats = 2")
    events = list(run_plan(parse_plan(text).plan))
    starts = [e for e in events if isinstance(e, CaseStarted)]
    assert [(s.run_index, s.run_count, s.repeat) for s in starts] == [(0, 2, 1), (1, 2, 2)]
    done = [e for e in events if isinstance(e, Progress) and e.phase == "done"]
    # the overall share is by time (core.run.progress): half the runs, about half the time (the
    # session's own start counts too); 100 % exactly when the last run is done
    assert 0.4 <= (done[0].overall or 0) <= 0.7 and done[1].overall == 1.0
    assert [p.runs_done for p in done] == [1, 2]
    assert done[1].overall_eta == 0.0
    assert all(p.done_bytes == 64 << 20 for p in done)


def test_sigint_to_the_cli_cancels_with_exit_130(scratch_fs, tmp_path: Path) -> None:
    plan = tmp_path / "p.toml"
    plan.write_text(plan_text(scratch_fs.mountpoint, """
[[test]]
tool = "engine"
mode = "randread"
block_size = "4k"
size = "64m"
runtime = "60s"
direct = true
"""))
    p = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan), "--json",
                          "--library", str(tmp_path / "l.sqlite3")],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    for line in p.stdout:
        if '"event": "Sample"' in line:
            p.send_signal(signal.SIGINT)
            break
    rest = p.stdout.read()
    assert p.wait(timeout=60) == 130
    assert '"status": "cancelled"' in rest
    with Library.open(tmp_path / "l.sqlite3") as lib:
        assert lib.list_sessions()[0]["status"] == "cancelled"
    assert sorted(x.name for x in scratch_fs.mountpoint.iterdir()) == ["lost+found"]


STUCK_DD = """#!/bin/sh
# dd that hangs as iozone -t does when its children fail: silent, no I/O (its version is dd's)
[ "$1" = "--version" ] && exec {dd} --version
exec sleep 120
"""


def test_a_silent_tool_moving_no_data_is_stopped_as_stuck(tmp_path: Path, monkeypatch) -> None:
    """iozone -t spins forever when its children fail: no output, no I/O. The runner stops such
    a tool after STALL_SECONDS (shortened here) and fails the case with the reason: a whole
    plan through the public runner, its dd a program that hangs the same way (first on PATH)."""
    from disklab.core.run import watch

    monkeypatch.setattr(watch, "STALL_SECONDS", 1.5)
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "dd").write_text(STUCK_DD.format(dd=shutil.which("dd")))
    (shims / "dd").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}:{os.environ['PATH']}")
    target = tmp_path / "target"
    target.mkdir()
    text = plan_text(target, """
[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "8m"
direct = false
""")
    started = time.monotonic()
    events = list(run_plan(parse_plan(text).plan))
    assert time.monotonic() - started < 60  # not the tool's 120 s
    (failed,) = [e for e in events if isinstance(e, CaseFailed)]
    assert "moved no data for 2 s" in failed.error and "stuck" in failed.error
    assert failed.signal in (15, 9)
    assert events[-1].status == "failed"  # type: ignore[attr-defined]
    assert not [p for p in psutil.process_iter(["cmdline"])
                if str(shims) in " ".join(p.info["cmdline"] or [])]  # the stuck tool is gone


def test_a_buffered_read_drops_caches_through_the_privileged_helper(scratch_fs) -> None:
    text = plan_text(scratch_fs.mountpoint, """
[[test]]
tool = "dd"
mode = "read"
block_size = "1m"
size = "16m"
direct = false
""")
    started = time.time() - 1
    events = list(run_plan(parse_plan(text).plan))
    logs = [e.text for e in events if getattr(e, "stream", None) == "disklab"]
    assert any("dropped caches through the privileged helper" in t for t in logs)
    assert events[-1].status == "finished"  # type: ignore[attr-defined]
    # the helper started for this session is gone with it: none of ours is left, neither as our
    # child nor orphaned (other test runs on the machine may have helpers of their own)
    helpers = [p for p in psutil.process_iter(["cmdline", "ppid", "create_time"])
               if "disklab.core.root_helper" in " ".join(p.info["cmdline"] or [])
               and p.info["create_time"] >= started and p.info["ppid"] in (os.getpid(), 1)]
    assert helpers == []
