"""`disklab resume`: a session SIGKILLed halfway is taken up in place and ends `finished` with
every case's repeats; a resume is refused, with the reason and exit 2, when the target is gone
or is another filesystem. Real `disklab` processes, real signals, the built-in engine on a real
directory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from disklab.core.library import Library
from disklab.core.library.summary import computed_results
from tests.helpers import engine_plan

pytestmark = [pytest.mark.slow]


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=300)


def run_and_signal(plan: Path, library: Path, sig: int, after_finished: int) -> int:
    """`disklab run --json`, sent `sig` as soon as the run after the `after_finished`-th
    CaseFinished has started; its exit code (negative: killed by the signal)."""
    p = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                          "--library", str(library), "--json"], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    tree: list[psutil.Process] = []
    try:
        finished = 0
        for line in p.stdout:
            event = json.loads(line)
            finished += event["event"] == "CaseFinished"
            if finished == after_finished and event["event"] == "CaseStarted":
                tree = psutil.Process(p.pid).children(recursive=True)
                p.send_signal(sig)
                break
        else:
            pytest.fail("the run ended before the moment to signal it")
        p.stdout.read()
        return p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        _gone, alive = psutil.wait_procs(tree, timeout=10)
        for child in alive:
            child.kill()


def results_by_case(lib: Library, sid: int) -> dict[str, dict[str, Any]]:
    return {r["case_id"]: r for r in lib.results(sid) if ":" not in r["metric"]}


def test_a_session_killed_halfway_resumes_to_finished_with_every_repeat(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(engine_plan(work, name="long matrix", repeats=3, runtime="1s"))
    library = tmp_path / "library.sqlite3"

    assert run_and_signal(plan, library, signal.SIGKILL, after_finished=2) == -signal.SIGKILL
    with Library.open(library) as lib:  # opening it marks the dead session interrupted
        (session,) = lib.list_sessions()
        sid = session["id"]
        assert session["status"] == "interrupted"
        before = {(r["case_id"], r["repeat"]): r for r in lib.runs(sid) if r["status"] == "ok"}
    assert len(before) == 2

    done = disklab("resume", str(sid), "--library", str(library), "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    first, last = events[0], events[-1]
    assert first["event"] == "SessionResumed" and first["session_id"] == sid
    assert first["previous_status"] == "interrupted"
    assert len(first["runs"]) == 4 and first["complete"] == 2
    assert not {tuple(r) for r in first["runs"]} & set(before)
    assert last["event"] == "SessionFinished" and last["status"] == "finished"
    started = [(e["case"]["id"], e["repeat"]) for e in events if e["event"] == "CaseStarted"]
    assert sorted(started) == sorted(tuple(r) for r in first["runs"])

    with Library.open(library) as lib:
        (session,) = lib.list_sessions()  # the same session, not a new one
        assert session["id"] == sid and session["status"] == "finished"
        runs = lib.runs(sid)
        assert len(runs) == 6 and {r["status"] for r in runs} == {"ok"}
        for key, run in before.items():  # the runs before the kill are kept as they were
            (now,) = [r for r in runs if (r["case_id"], r["repeat"]) == key]
            assert now["started"] == run["started"]
        results = results_by_case(lib, sid)
        assert len(results) == 2
        for r in results.values():
            assert r["n"] == 3 and None not in r["values"] and r["mean"] > 0
        # the resume's close stored the session's results summary, and what the first look
        # reads from it is what the metric rows give, value by value
        assert lib.db.execute("SELECT count(*) FROM result_stamp WHERE session_id = ?",
                              (sid,)).fetchone()[0] == 1
        from_metrics = [row for _params, row in computed_results(
            lib.db, sid, lib.cases(sid), session["repeats"])]
        assert lib.results(sid) == from_metrics and len(from_metrics) >= 2
        (resumed,) = lib.resumes(sid)
        assert resumed["runs"] == 4 and resumed["previous_status"] == "interrupted"

    shown = disklab("show", str(sid), "--library", str(library))
    assert shown.returncode == 0, shown.stderr
    assert "(finished)" in shown.stdout
    assert "4 run(s) without a complete result ran again (it was interrupted" in shown.stdout
    doc = json.loads(disklab("show", str(sid), "--library", str(library), "--json").stdout)
    assert [r["runs"] for r in doc["resumed"]] == [4]

    again = disklab("resume", str(sid), "--library", str(library))
    assert again.returncode == 2
    assert "every run has a complete result" in again.stderr


@pytest.fixture
def cancelled_session(tmp_path: Path) -> tuple[Path, Path, int]:
    """A session cancelled after its first complete run: (its target directory, library,
    session id)."""
    work = tmp_path / "work"
    work.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(engine_plan(work, name="to resume", repeats=2, runtime="1s"))
    library = tmp_path / "library.sqlite3"
    assert run_and_signal(plan, library, signal.SIGTERM, after_finished=1) == 130
    with Library.open(library) as lib:
        (session,) = lib.list_sessions()
        assert session["status"] == "cancelled"
    return work, library, session["id"]


def test_resume_is_refused_when_the_target_directory_is_gone(cancelled_session) -> None:
    work, library, sid = cancelled_session
    work.rmdir()
    done = disklab("resume", str(sid), "--library", str(library))
    assert done.returncode == 2
    assert f"its target directory {work} is gone" in done.stderr
    assert "Traceback" not in done.stderr
    with Library.open(library) as lib:
        assert lib.session(sid)["status"] == "cancelled" and lib.resumes(sid) == []


@pytest.mark.root
def test_resume_is_refused_when_the_target_is_another_filesystem(cancelled_session) -> None:
    work, library, sid = cancelled_session
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "disklab-test", str(work)],
                   check=True)
    try:
        done = disklab("resume", str(sid), "--library", str(library))
    finally:
        subprocess.run(["umount", str(work)], check=True)
    assert done.returncode == 2
    assert "not the same machine and target" in done.stderr
    assert "the target's fstype was" in done.stderr and "'tmpfs'" in done.stderr
    with Library.open(library) as lib:
        assert lib.session(sid)["status"] == "cancelled" and lib.resumes(sid) == []
    # back on its own filesystem, the same session resumes and completes
    done = disklab("resume", str(sid), "--library", str(library))
    assert done.returncode == 0, done.stderr
    with Library.open(library) as lib:
        assert lib.session(sid)["status"] == "finished"
        assert {r["n"] for r in results_by_case(lib, sid).values()} == {2}
    assert os.path.isdir(work)


def test_resume_is_refused_on_another_machine(cancelled_session) -> None:
    """The session's recorded machine identity (hostname, machine id) is not this machine's:
    as if the library had been copied to another host."""
    _work, library, sid = cancelled_session
    with Library.open(library) as lib:
        host = lib.session(sid)["host"]
        assert host["hostname"] and "identity" in host["target"]
        host["machine_id"] = "0" * 32
        lib.db.execute("UPDATE session SET host = ? WHERE id = ?", (json.dumps(host), sid))
    done = disklab("resume", str(sid), "--library", str(library))
    assert done.returncode == 2
    assert "the host's machine_id was '" + "0" * 32 + "'" in done.stderr
    with Library.open(library) as lib:
        assert lib.session(sid)["status"] == "cancelled"


def test_resume_is_refused_when_the_plan_expands_to_other_cases(cancelled_session) -> None:
    """The session's recorded cases are not what its plan expands to now (as after a DiskLab
    that names or expands cases otherwise): its runs would not be the same measurements."""
    _work, library, sid = cancelled_session
    with Library.open(library) as lib:
        lib.db.execute("UPDATE case_ SET params = '{}' WHERE session_id = ? AND idx = 0",
                       (sid,))
    done = disklab("resume", str(sid), "--library", str(library))
    assert done.returncode == 2
    assert "the plan now expands to other cases than the session recorded" in done.stderr
    assert "other parameters" in done.stderr
