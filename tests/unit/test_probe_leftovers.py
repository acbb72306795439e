"""Issue 32's soak: a SIGKILL during a fio server's probe left its `disklab-probe-*` directory
in TMPDIR and no later start removed it. The directory names its maker's pid; the next start
removes those whose maker is gone (or whose pid is now another, newer process), saying so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from disklab.core.hosts.servers import PROBE_DIR_PREFIX, stale_probe_dirs


def test_probe_dirs_of_dead_or_reused_pids_go_and_live_ones_stay(tmp_path: Path) -> None:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    dead = int(child.stdout)  # exited: its pid is free (or reused by a newer process)
    gone = tmp_path / f"{PROBE_DIR_PREFIX}{dead}-a1b2c3"
    gone.mkdir()
    (gone / "h1.job").write_text("[disklab-probe]\n")
    mine = tmp_path / f"{PROBE_DIR_PREFIX}{os.getpid()}-d4e5f6"
    mine.mkdir()
    reused = tmp_path / f"{PROBE_DIR_PREFIX}{os.getpid()}-0old0"
    reused.mkdir()
    os.utime(reused, (1000.0, 1000.0))  # made long before this process started: not ours
    other = tmp_path / "disklab-probe-notes"
    other.mkdir()
    lines = stale_probe_dirs(str(tmp_path))
    assert sorted(lines) == sorted(f"removed {p}, a fio server probe's directory"
                                   for p in (gone, reused))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([mine.name, other.name])
    assert stale_probe_dirs(str(tmp_path)) == []
