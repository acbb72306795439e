"""Two real `disklab run`s recording into one library at once, on a machine kept busy by a CPU hog
(a process spinning per CPU): both finish, every time. Each recorder's batch is a write
transaction begun IMMEDIATE (core/library/writer.py), so a writer that finds the lock taken waits
for it (the 30 s busy timeout) instead of being answered "database is locked" at once, as a
deferred transaction upgrading its read to a write under WAL is."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from disklab.core.library import Library

pytestmark = [pytest.mark.slow]

ROUNDS = 10
PLAN = """\
name = "{name}"
repeats = 3

[target]
directory = "{directory}"

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = ["1m", "256k", "64k"]
size = "8m"
direct = false
"""


@pytest.fixture
def cpu_hog() -> Iterator[None]:
    """One spinning process per CPU for the test's length, stopped by their pids."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(os.cpu_count() or 1)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def _start(plan: Path, library: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                             "--library", str(library)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_two_runs_on_one_library_at_once_both_finish(tmp_path: Path, cpu_hog: None) -> None:
    library = tmp_path / "library.sqlite3"
    plans = []
    for side in ("a", "b"):
        directory = tmp_path / side
        directory.mkdir()
        plan = tmp_path / f"{side}.toml"
        plan.write_text(PLAN.format(name=f"side {side}", directory=directory))
        plans.append(plan)
    failures = []
    for round_ in range(ROUNDS):
        runs = [_start(plan, library) for plan in plans]
        for plan, run in zip(plans, runs, strict=True):
            _out, err = run.communicate(timeout=300)
            if run.returncode != 0:
                failures.append(f"round {round_ + 1}, {plan.stem}: exit {run.returncode}: "
                                f"{err.strip()[-300:]}")
    assert not failures, "\n".join(failures)
    with Library.open(library) as lib:
        sessions = lib.list_sessions()
    assert len(sessions) == 2 * ROUNDS
    assert {s["status"] for s in sessions} == {"finished"}
