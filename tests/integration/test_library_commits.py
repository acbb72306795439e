"""A run's commits of samples wait for no fsync: a real 10 s run under strace, the library's
fsync and fdatasync calls counted as the kernel saw them. The once-a-second commits of samples
and log lines are written, not fsync'd (the recorder's non-durable commits): on a disk the tool
keeps busy an fsync waits behind its queue, and the run's loop, which samples the kernel's
counters, waited with it (a 256 GiB fio run stored 55 samples in 104 s, in bursts 5 s apart;
all of them, evenly, once the commits stopped fsyncing). What must survive a power cut is
still fsync'd: the session's start and end and each case's end."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.library import Library

SECONDS = 10
PLAN = """\
name = "commits"
drop_caches = false
[target]
directory = "{directory}"

[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "64m"
runtime = "{seconds}s"
direct = false
fsync = false
"""


def test_a_runs_commits_of_samples_fsync_only_what_must_survive(tmp_path: Path) -> None:
    strace = shutil.which("strace")
    if strace is None:
        pytest.fail("strace is not installed: scripts/install-system-packages.sh installs it")
    target = tmp_path / "target"
    target.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(directory=target, seconds=SECONDS))
    library = tmp_path / "library.sqlite3"
    trace = tmp_path / "trace.txt"
    done = subprocess.run([strace, "-f", "-qq", "-y", "-e", "trace=fsync,fdatasync", "-o",
                           str(trace), sys.executable, "-m", "disklab", "run", str(plan),
                           "--library", str(library), "-q"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    synced = [line for line in trace.read_text().splitlines()
              if re.search(r"fd(ata)?sync\(\d+<[^>]*library\.sqlite3", line)]
    with Library.open(library) as lib:
        (session,) = lib.list_sessions()
        (run,) = lib.runs(session["id"])
        assert session["status"] == "finished" and run["status"] == "ok"
        samples = lib.samples(session["id"], run["case_id"], "device_write_bps")
    assert len(samples) >= SECONDS  # sampled every 0.5 s, all stored
    # a commit a second, each fsync'd, was SECONDS or more: now the session's start, the
    # case's end, the session's end and the checkpoints (SQLite fsyncs the WAL and the file)
    assert 3 <= len(synced) < SECONDS, synced
