"""The studies' bonnie++ and iozone options on real runs (small sizes, ext4 scratch image):
bonnie++ -s size:chunk -n files:max:min:dirs -D -b -f with its %CPU next to each rate, and
iozone -O in throughput mode with the per-process min/max/avg."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.library import Library
from tests.helpers import ScratchFs

pytestmark = [pytest.mark.root, pytest.mark.slow]

PLAN = """\
name = "study options"
[target]
directory = "{directory}"

[[test]]
tool = "bonnie"
size = "32m"
chunk_size = "64k"
files = 1
max_file_size = 4096
min_file_size = 1024
dirs = 4
direct = true
fast = true
no_buffer = true

[[test]]
tool = "iozone"
tests = ["write", "read"]
record_size = "64k"
file_size = "2m"
threads = 2
ops = true
"""


def test_bonnie_and_iozone_study_options_run_and_give_their_figures(
        scratch_fs: ScratchFs, tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(directory=scratch_fs.mountpoint))
    library = tmp_path / "lib.sqlite3"
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                           "--library", str(library)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    with Library.open(library) as lib:
        argvs = [r[0] for r in lib.db.execute("SELECT argv FROM run").fetchall()]
        names = {r[0]: r[1] for r in lib.db.execute("SELECT name, unit FROM metric")}
    bonnie = next(a for a in argvs if "bonnie++" in a)
    for part in ("32:65536", "1:4096:1024:4", "-D", "-b", "-f"):
        assert part in bonnie, bonnie
    # a rate and its %CPU side by side (the study's BlkW %c columns)
    assert names["block_write"] == "B/s" and names["block_write:cpu"] == "%"
    assert names["block_read"] == "B/s" and names["block_read:cpu"] == "%"
    assert names["write:iops"] == "op/s" and names["write:min_proc_iops"] == "op/s"
    assert names["reread:avg_proc_iops"] == "op/s" and "write" not in names
    assert sorted(p.name for p in scratch_fs.mountpoint.iterdir()) == ["lost+found"]
