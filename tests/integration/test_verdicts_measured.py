"""Issue 44, verdicts that judge what was measured, on real runs through `disklab run` and
`disklab show --json`, as a user reads them: a placed case judged from every target's device,
each iozone phase from its own samples, direct I/O that ext4's data=journal buffered, the
write-back rule under a page_cache_limit, the file-tree tool's cells."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from disklab.core import proc
from disklab.core.results.limits import GROUP_WRITEBACK_SHARE
from tests.helpers import Loops

pytestmark = [pytest.mark.root, pytest.mark.slow]


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=600)


def _needs(*tools: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mkfs, mount)")
    missing = [t for t in tools if proc.which(t) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")


def run(tmp_path: Path, plan_text: str) -> dict[str, Any]:
    """Run a plan into a fresh library; its session as `show --json` gives it."""
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text)
    library = tmp_path / "lib.sqlite3"
    done = disklab("run", str(plan), "--library", str(library))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    shown = disklab("show", "1", "--json", "--library", str(library))
    assert shown.returncode == 0, shown.stderr
    return dict(json.loads(shown.stdout))


def kinds(row: dict[str, Any]) -> set[str]:
    return {x["kind"] for x in row["limited_by"]}


@pytest.fixture
def two_luns(tmp_path: Path) -> Iterator[dict[str, Path]]:
    _needs("iozone", "mkfs.ext4", "losetup")
    loops = Loops(tmp_path)
    try:
        yield {name: loops.mount(loops.device(name, "600M"), f"lun-{name}") for name in "ab"}
    finally:
        loops.cleanup()


PLACED = """\
name = "placed under a limit"
repeats = 1
page_cache_limit = "64m"
[targets.a]
directory = "{a}"
[targets.b]
directory = "{b}"

[[test]]
tool = "iozone"
tests = ["write"]
record_size = "1m"
file_size = "192m"
on = ["a+b", "a+b+b"]
"""


def test_a_placed_case_is_judged_from_every_targets_device(two_luns: dict[str, Path],
                                                           tmp_path: Path) -> None:
    """iozone writes 192 MiB a stream on a and on b (and on a, b and b again) under a 64 MiB
    page_cache_limit: the bytes went through to both devices, so no figure of it is 'absorbed
    by the page cache' (a's device alone holds half of them, a third in a+b+b)."""
    session = run(tmp_path, PLACED.format(**two_luns))
    rows = [r for r in session["results"] if r["tool"] == "iozone"]
    assert rows
    for r in rows:
        assert not kinds(r) & {"page_cache_write", "page_cache_read"}, (r["metric"],
                                                                        r["limited_by"])
    # the samples the verdict read: both devices' bytes, together at least what was written
    library = tmp_path / "lib.sqlite3"
    from disklab.core.library import Library
    with Library.open(library) as lib:
        every = sum(s["value"] for s in lib.samples(1, series="device_write_bps:all"))
        one = sum(s["value"] for s in lib.samples(1, series="device_write_bps"))
    assert every > 1.6 * one


JOURNAL = """\
name = "direct under data=journal"
repeats = 1
[target]
image = {{ path = "{image}", size = "384m" }}

[[config]]
label = "ordered"
fs = "ext4"
mount = ["data=ordered"]

[[config]]
label = "journal"
fs = "ext4"
mount = ["data=journal"]

[[test]]
tool = "fio"
rw = "randwrite"
bs = "4k"
size = "64m"
iodepth = 8
ioengine = "libaio"
direct = true
runtime = "3s"
"""


def test_direct_io_under_data_journal_is_warned_and_named_the_page_cache(tmp_path: Path
                                                                        ) -> None:
    """fio randwrite 4k, libaio, direct = true under ext4 data=ordered and data=journal:
    `plan validate` warns that data=journal buffers it, and the journal configuration's
    figures say 'direct I/O through the page cache' (the ordered one's do not)."""
    _needs("fio", "mkfs.ext4", "losetup")
    plan = tmp_path / "plan.toml"
    plan.write_text(JOURNAL.format(image=tmp_path / "scratch.img"))
    checked = disklab("plan", "validate", str(plan))
    assert checked.returncode == 0, checked.stderr
    said = checked.stdout + checked.stderr
    assert "data=journal does not do O_DIRECT" in said and "test[1].direct" in said, said
    session = run(tmp_path, plan.read_text())
    by_config: dict[str, set[str]] = {}
    for r in session["results"]:
        by_config.setdefault(r["config"], set()).update(kinds(r))
    assert "page_cache_direct" in by_config["journal"], by_config
    assert "page_cache_direct" not in by_config["ordered"], by_config
    words = [x["words"] for r in session["results"] if r["config"] == "journal"
             for x in r["limited_by"] if x["kind"] == "page_cache_direct"]
    assert words[0].startswith("direct I/O through the page cache: ext4 data=journal")


@pytest.fixture
def one_lun(tmp_path: Path) -> Iterator[Path]:
    _needs("iozone", "mkfs.ext4", "losetup")
    loops = Loops(tmp_path)
    try:
        yield loops.mount(loops.device("a", "512M"), "lun-a")
    finally:
        loops.cleanup()


PHASES = """\
name = "write then re-read"
repeats = 1
[target]
directory = "{directory}"

[[test]]
tool = "iozone"
tests = ["write", "read"]
record_size = "1m"
file_size = "192m"
threads = 1
fsync = true
"""


# alone: its re-read comes from the page cache only while nothing drops the caches; another
# worker's session with drop_caches = true drops them for every process (the re-read then
# truly came from the device: "too short" alone, once in a whole suite)
@pytest.mark.alone
def test_each_iozone_phase_is_judged_from_its_own_samples(one_lun: Path, tmp_path: Path
                                                          ) -> None:
    """iozone's throughput mode writes 192 MiB with fsync (to the device) and reads it back
    from the page cache, seconds apart: the re-read figure says the page cache, the write
    figure does not (the whole run's reads were all the page cache's)."""
    session = run(tmp_path, PHASES.format(directory=one_lun))
    by_metric = {r["metric"]: r for r in session["results"]}
    reread, write = by_metric["reread"], by_metric["write"]
    assert "page_cache_read" in kinds(reread), reread["limited_by"]
    assert not kinds(write) & {"page_cache_read", "page_cache_write"}, write["limited_by"]
    assert kinds(write) != kinds(reread)
    # a figure's interval is its own: the re-read's 192 MiB at cache speed lasts well under
    # the run's ~10 s of iozone's sleeps between phases
    short = [x for x in reread["limited_by"] if x["kind"] == "too_short"]
    assert not short or short[0]["evidence"]["seconds"] < 2.0


TREE = """\
name = "a tree"
repeats = 1
[target]
directory = "{directory}"

[[test]]
tool = "tree"
phases = ["create"]
dirs = 20
files_per_dir = 1000
file_size = "12k"
block_size = "4k"
"""


def test_a_file_tree_carries_no_read_verdict(one_lun: Path, tmp_path: Path) -> None:
    """The file-tree tool writes and removes files and reads none back: its Python start-up
    (a megabyte or more of modules read) is no figure's, so no cell says 'read from the page
    cache'."""
    session = run(tmp_path, TREE.format(directory=one_lun))
    rows = [r for r in session["results"] if r["tool"] == "tree"]
    assert {r["metric"].split(":")[0] for r in rows} == {"create"}
    for r in rows:
        assert "page_cache_read" not in kinds(r), (r["metric"], r["limited_by"])


# The root blkio cgroup's write limit on one device (cgroup v1), as test_limited_by's
THROTTLE = Path("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device")
SLOW_BPS = 8 << 20


@pytest.fixture
def slow_lun(tmp_path: Path) -> Iterator[Path]:
    """A scratch ext4 on its own loop device written back at 8 MiB/s; the limit removed and
    the device detached afterwards, by name. No sysctl is touched."""
    _needs("mkfs.ext4", "losetup")
    if not THROTTLE.exists():
        pytest.skip("no cgroup v1 blkio throttle on this machine")
    loops = Loops(tmp_path)
    try:
        device = loops.device("slow", "512M")
        mnt = loops.mount(device, "lun-slow")
        number = f"{os.major(os.stat(device).st_rdev)}:{os.minor(os.stat(device).st_rdev)}"
        THROTTLE.write_text(f"{number} {SLOW_BPS}\n")
        try:
            yield mnt
        finally:
            THROTTLE.write_text(f"{number} 0\n")
    finally:
        loops.cleanup()


WRITEBACK = """\
name = "write-back under a limit"
repeats = 1
page_cache_limit = "128m"
[target]
directory = "{directory}"

[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "256m"
runtime = "5s"
direct = false
"""


def test_a_write_back_bound_run_under_a_page_cache_limit_is_write_back(
        slow_lun: Path, tmp_path: Path) -> None:
    """Buffered writes for 5 s onto a device written back at 8 MiB/s, under a 128 MiB
    page_cache_limit: the group fills with pages waiting for the device, the machine's Dirty
    stays far below its own threshold; the verdict is write-back, against the group's limit,
    and its evidence shows the group's dirty pages at the share the rule names (how far above
    that share the kernel lets the group fill varies run to run). At 64 MiB the kernel's OOM
    killer ended the writer in 2 of 4 runs (a v1 memory group full of pages under write-back
    to a throttled device): DiskLab said so, but the test is of the verdict."""
    session = run(tmp_path, WRITEBACK.format(directory=slow_lun))
    row = next(r for r in session["results"] if r["tool"] == "engine")
    (back,) = [x for x in row["limited_by"] if x["kind"] == "writeback"]
    assert back["evidence"]["threshold"] <= 128 << 20
    assert back["evidence"]["dirty_bytes"] >= (
        GROUP_WRITEBACK_SHARE * back["evidence"]["threshold"])
    assert "page_cache_limit group" in back["words"]


def test_a_cell_whose_baseline_was_limited_otherwise_is_marked_not_coloured(tmp_path: Path
                                                                           ) -> None:
    """data=journal's buffered 'direct' writes against data=ordered's direct ones, 2 repeats
    each: `compare` and the pivot mark the journal cells '≠' (limited by something else than
    the baseline) instead of calling them better, and the HTML colours none of them."""
    _needs("fio", "mkfs.ext4", "losetup")
    session = run(tmp_path, JOURNAL.format(image=tmp_path / "scratch.img").replace(
        "repeats = 1", "repeats = 2"))
    assert session["results"]
    library = str(tmp_path / "lib.sqlite3")
    shown = disklab("compare", "1", "--baseline", "ordered", "--format", "json",
                    "--library", library)
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    text = json.dumps(doc)
    assert "limited by something else than the baseline" in text
    assert '"significant": true' not in text.replace("\n", "")
    html = tmp_path / "c.html"
    done = disklab("compare", "1", "--baseline", "ordered", "--format", "html", "-o", str(html),
                   "--library", library)
    assert done.returncode == 0, done.stderr
    page = html.read_text()
    assert "≠" in page and 'class="num better"' not in page and 'class="num worse"' not in page
    pivot = disklab("compare", "1", "--rows", "config", "--columns", "metric",
                    "--baseline", "config=ordered", "--format", "text", "--library", library)
    assert pivot.returncode == 0, pivot.stderr
    assert "≠" in pivot.stdout and "▲" not in pivot.stdout and "▼" not in pivot.stdout


MISSING = """\
name = "one configuration fails"
repeats = 2
[target]
image = {{ path = "{image}", size = "256m" }}

[[config]]
label = "roomy"
fs = "ext4"

[[config]]
label = "few inodes"
fs = "ext4"
mkfs = {{ bytes_per_inode = "4m" }}

[[test]]
tool = "tree"
phases = ["create"]
dirs = 2
files_per_dir = 200
file_size = "4k"
block_size = "4k"
"""


def test_a_configuration_whose_every_run_failed_is_named_in_compare(tmp_path: Path) -> None:
    """A configuration whose filesystem runs out of inodes fails both its runs: `compare`
    (text and HTML) names it with its runs' statuses instead of showing the other alone."""
    _needs("mkfs.ext4", "losetup")
    plan = tmp_path / "plan.toml"
    plan.write_text(MISSING.format(image=tmp_path / "scratch.img"))
    library = str(tmp_path / "lib.sqlite3")
    disklab("run", str(plan), "--library", library)  # exits non-zero: runs failed
    for fmt in ("text", "html"):
        out = tmp_path / f"c.{fmt}"
        done = disklab("compare", "1", "--format", fmt, "-o", str(out), "--library", library)
        assert done.returncode == 0, done.stderr
        said = out.read_text()
        assert "no figure of:" in said and "few inodes: 2 runs failed" in said, said[-2000:]


SYNC_WRITE = """\
name = "synchronous writes"
repeats = 1
[target]
directory = "{directory}"

[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "24m"
direct = false
sync = true
"""


def test_a_synchronous_writer_is_judged_by_the_devices_latency(
        slow_lun: Path, tmp_path: Path) -> None:
    """dd with oflag=dsync onto a device written at 8 MiB/s: every write waits for the
    device, which is idle between two of them (the throttle holds each request above it), so
    the device is never 90 % busy. The figure is the device's latency per request, every byte
    reached it, and the verdict says so instead of 'nothing found'."""
    session = run(tmp_path, SYNC_WRITE.format(directory=slow_lun))
    (row,) = [r for r in session["results"] if r["tool"] == "dd"]
    assert "none" not in kinds(row), row["limited_by"]
    (waited,) = [x for x in row["limited_by"] if x["kind"] == "latency"]
    assert waited["evidence"]["device_share"] >= 0.9
    assert waited["evidence"]["busy_pct"] < 90
    assert "waits for every request" in waited["words"]
