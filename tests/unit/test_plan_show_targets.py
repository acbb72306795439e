"""`disklab plan show` of a plan with four targets, two of them split into partitions: every
target's set-up is shown (the partitioning, then each configuration on each stream target), not
only the first target's, and a placed iozone case says the processes its argv runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PLAN = """\
name = "four LUNs"
[targets.a]
image = {{ path = "{d}/a.img", size = "256m" }}
partitions = 2
[targets.b]
image = {{ path = "{d}/b.img", size = "256m" }}
[targets.c]
image = {{ path = "{d}/c.img", size = "256m" }}
[targets.d]
image = {{ path = "{d}/d.img", size = "2g" }}
partitions = 4

[[config]]
label = "ext4"
fs = "ext4"

[[config]]
label = "xfs on d"
fs = "xfs"
targets = ["d1", "d2", "d3", "d4"]

[[test]]
tool = "iozone"
auto = false
tests = ["write"]
file_size = "4m"
record_size = "64k"
on = ["a1+b+c+d1", "d1+d2"]
"""


def show(tmp_path: Path) -> str:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(d=tmp_path))
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "plan", "show", str(plan),
                           "--library", str(tmp_path / "lib.sqlite3")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_target_and_partition_is_shown_with_its_setup(tmp_path: Path) -> None:
    out = show(tmp_path)
    head = out.splitlines()[0]
    for name, size in (("a", "256m"), ("b", "256m"), ("c", "256m"), ("d", "2g")):
        assert f"{name} (image {tmp_path}/{name}.img, {size}" in head
    assert "2 partitions: a1 a2" in head and "4 partitions: d1 d2 d3 d4" in head
    # the partitioning of a and d, with sizes: (size - 4 MiB) / parts, the last the rest (d's
    # 511 MiB partitions hold xfs, whose least size is 300 MB)
    assert "target a: 2 GPT partitions of /dev/loopN:" in out
    assert ("sgdisk --new=1:0:+126M --typecode=1:8300 --change-name=1:disklab1 --new=2:0:0 "
            "--typecode=2:8300 --change-name=2:disklab2 /dev/loopN") in out
    assert "target d: 4 GPT partitions of /dev/loopN:" in out
    assert "--new=3:0:+511M" in out and "--new=4:0:0" in out
    assert "target b:" not in out  # not split: nothing to partition
    # each configuration on each stream target it is made on, with its own mountpoint
    made = re.findall(r"^configuration '(.+)' on (\w+) \((\S+)\):$", out, re.M)
    assert made == [
        ("ext4", "a1", "/dev/loopNp1"), ("ext4", "a2", "/dev/loopNp2"),
        ("ext4", "b", "/dev/loopN"), ("ext4", "c", "/dev/loopN"),
        ("ext4", "d1", "/dev/loopNp1"), ("ext4", "d2", "/dev/loopNp2"),
        ("ext4", "d3", "/dev/loopNp3"), ("ext4", "d4", "/dev/loopNp4"),
        ("xfs on d", "d1", "/dev/loopNp1"), ("xfs on d", "d2", "/dev/loopNp2"),
        ("xfs on d", "d3", "/dev/loopNp3"), ("xfs on d", "d4", "/dev/loopNp4")]
    assert re.search(r"mount -t ext4 -o nosuid,nodev,noexec /dev/loopNp2 \S+-a2$", out, re.M)
    assert re.search(r"mkfs.xfs .*/dev/loopNp4$", out, re.M)


def test_a_placed_iozone_case_says_the_processes_its_argv_runs(tmp_path: Path) -> None:
    out = show(tmp_path)
    cases = re.findall(r"^\[\d+\] \w+  (.+?) \| (.+)\n  run: +(.+)$", out, re.M)
    assert len(cases) == 3  # a1+b+c+d1 and d1+d2 on ext4; only d1+d2 on "xfs on d"
    for _config, title, argv in cases:
        threads = int(re.search(r"threads=(\d+)", title)[1])  # type: ignore[index]
        streams = len(re.search(r"on=(\S+)", title)[1].split("+"))  # type: ignore[index]
        assert threads == streams == int(re.search(r" -t (\d+) ", argv)[1])  # type: ignore[index]
