"""What limited each result, judged from what a run records anyway, on real runs: a buffered
read of a cached file (the page cache), O_DIRECT reads at queue depth 8 of a loop device's
filesystem (the device, with the requests in flight), the engine on tmpfs (the CPU), a 0.2 s
run (too short), and an imported result (not known). `disklab show` says it in its "limited
by" column and `show --json` keeps each verdict's evidence."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import FIXTURES

pytestmark = [pytest.mark.root, pytest.mark.slow]

PLAN = """\
name = "limits"
repeats = 1
[target]
directory = "{directory}"

[[test]]
tool = "{tool}"
{test}
"""


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=300)


def limited(tmp_path: Path, directory: Path, test: str, tool: str = "engine"
            ) -> list[dict[str, Any]]:
    """Run one engine test in `directory`; its first result's `limited_by` from show --json,
    after checking that `show` prints the same words in its column."""
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(directory=directory, test=test, tool=tool))
    library = tmp_path / "lib.sqlite3"
    done = disklab("run", str(plan), "--library", str(library))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    shown = disklab("show", "1", "--json", "--library", str(library))
    doc = json.loads(shown.stdout)
    assert doc["version"] == 2
    first = doc["results"][0]["limited_by"]
    text = subprocess.run([sys.executable, "-m", "disklab.cli.main", "show", "1",
                           "--library", str(library)], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "400"}).stdout
    assert "limited by" in text and first[0]["words"] in text
    return first


def kinds(limits: list[dict[str, Any]]) -> set[str]:
    return {x["kind"] for x in limits}


def test_a_buffered_read_of_a_cached_file_is_the_page_cache(tmp_path: Path, workdir: Path
                                                            ) -> None:
    limits = limited(tmp_path, workdir, 'mode = "read"\nblock_size = "64k"\nsize = "64m"\n'
                     'runtime = "2s"\ndirect = false')
    (cache,) = [x for x in limits if x["kind"] == "page_cache_read"]
    assert cache["evidence"]["device_share"] < 0.10
    assert cache["words"].startswith("read from the page cache: the device read")
    # every export says it too: the HTML report's results table, CSV, Markdown, JSON
    library = str(tmp_path / "lib.sqlite3")
    for fmt in ("html", "csv", "md", "json"):
        out = tmp_path / f"s.{fmt}"
        done = disklab("export", "1", "--format", fmt, "-o", str(out), "--library", library)
        assert done.returncode == 0, done.stderr
        text = html.unescape(out.read_text())
        assert "limited" in text and cache["words"] in text, fmt


# alone: fio lays its 256 MiB file out inside the judged run; with another test's I/O and CPU
# beside it the layout's bursty write-back stretched and the device's steady busy fell below
# 90 % ("nothing found" at load 1.3, once in a whole -n 2 run)
@pytest.mark.alone
def test_direct_reads_at_queue_depth_8_are_the_device(tmp_path: Path, workdir: Path) -> None:
    """fio, which keeps its whole queue in flight: the built-in engine reaps its completions
    in batches and kept 6.4 of 8 in flight here at 80-94 % busy, which is honestly "nothing
    found" at the 90 % threshold (bench figure 4's open question, issue 34)."""
    limits = limited(tmp_path, workdir, 'rw = "randread"\nbs = "4k"\nsize = "256m"\n'
                     'runtime = "3s"\ndirect = true\n'
                     'ioengine = "libaio"\niodepth = 8', tool="fio")
    if "device" not in kinds(limits):  # a loaded machine: the engine got too little CPU to
        # keep 8 requests in flight (the verdict says so with the machine's own figure), or
        # other work shared the disk under the loop device; neither is this test's subject
        cpu = [x for x in limits if x["kind"] == "cpu"]
        busy = bool(cpu) and cpu[0]["evidence"].get("machine_cpu_pct", 0) >= 90
        load = os.getloadavg()[0]
        assert busy or load > (os.cpu_count() or 1), limits
        pytest.skip(f"the machine was busy (load average {load:.1f}): {limits}")
    (device,) = [x for x in limits if x["kind"] == "device"]
    assert device["evidence"]["busy_pct"] >= 90
    assert device["evidence"]["asked"] == 8
    # Little's law from the kernel's own counters: about the queue asked for
    assert 5.0 <= device["evidence"]["in_flight"] <= 8.5, device
    assert "of 8 requests in flight" in device["words"]
    assert "page_cache_read" not in kinds(limits)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of its own, unmounted by name after the test."""
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300m", "disklab-limits", str(mnt)],
                   check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_the_engine_on_tmpfs_is_the_cpu(tmp_path: Path, tmpfs: Path) -> None:
    limits = limited(tmp_path, tmpfs, 'mode = "write"\nblock_size = "4k"\nsize = "200m"\n'
                     'runtime = "2s"\ndirect = false')
    (cpu,) = [x for x in limits if x["kind"] == "cpu"]
    # the engine's one thread at a core, or (a loaded machine) every CPU busy
    assert (cpu["evidence"]["per_thread_pct"] >= 90
            or cpu["evidence"].get("machine_cpu_pct", 0) >= 90), cpu
    assert cpu["words"].startswith("CPU: ")
    assert "device" not in kinds(limits)  # tmpfs has no device to be busy


def test_a_run_of_a_fifth_of_a_second_is_too_short(tmp_path: Path, workdir: Path) -> None:
    limits = limited(tmp_path, workdir, 'mode = "write"\nblock_size = "1m"\nsize = "256m"\n'
                     'runtime = "0.2s"\ndirect = true')
    assert kinds(limits) == {"too_short"}
    assert 0.1 < limits[0]["evidence"]["seconds"] < 1.0
    assert limits[0]["words"].startswith("too short to judge: 0.")


def test_the_same_read_under_a_page_cache_limit_is_not_the_page_cache(
        tmp_path: Path, workdir: Path) -> None:
    """The cached read of the first test, in eight files five times the limit in all: the
    device serves it (eight readers keep its queue full), and the verdict says so (or, on a
    machine whose CPUs are all busy, says that instead)."""
    limits = limited(tmp_path, workdir, 'mode = "read"\nblock_size = "1m"\nsize = "64m"\n'
                     'runtime = "3s"\ndirect = false\nstreams = 8\npage_cache_limit = "96m"')
    assert "page_cache_read" not in kinds(limits), limits
    if "device" not in kinds(limits):
        cpus = [x for x in limits if x["kind"] == "cpu"]
        assert len(cpus) == 1, limits
        (cpu,) = cpus
        assert cpu["evidence"]["machine_cpu_pct"] >= 90, limits
        pytest.skip(f"the machine was busy ({cpu['words']}): the device was not the limit")
    (device,) = [x for x in limits if x["kind"] == "device"]
    assert device["evidence"]["busy_pct"] >= 90


def imported(tmp_path: Path, *paths: Path) -> dict[str, Any]:
    """show --json of the session `disklab import` made of these outputs."""
    library = tmp_path / "lib.sqlite3"
    done = disklab("import", *map(str, paths), "--library", str(library))
    assert done.returncode == 0, done.stderr
    return json.loads(disklab("show", "1", "--json", "--library", str(library)).stdout)


FIO = FIXTURES / "fio"
SWEEP = FIXTURES / "fio-plot-sweep"


def test_an_imported_result_without_evidence_is_not_known(tmp_path: Path) -> None:
    # fio on btrfs lists no disk_util: nothing to judge from
    doc = imported(tmp_path, FIO / "randread_4k_qd32_libaio_direct_btrfs_jsonplus.json")
    assert all(r["limited_by"] == [{"kind": "unknown", "words": "not known (imported)",
                                    "evidence": {}}] for r in doc["results"])


def test_an_imported_fio_output_says_its_device_from_disk_util(tmp_path: Path) -> None:
    """fio's disk_util (util, in_queue over the job's runtime) is the device's evidence: a
    device under 90 % busy was not the limit (and what was is not known); at 90 % or more it
    was, with its requests in flight against the queue asked for."""
    doc = imported(tmp_path, FIO / "randread_4k_qd32_libaio_direct_ext4_jsonplus.json")
    (verdict,) = doc["results"][0]["limited_by"]
    assert verdict["kind"] == "unknown"  # util 89.7 % in the output
    assert verdict["words"] == "not known (imported): not the device, busy 89 %"
    assert verdict["evidence"]["busy_pct"] == pytest.approx(89.707649)


def test_the_imported_fio_plot_sweep_is_the_device_with_its_queue(tmp_path: Path) -> None:
    """The real sweep of a Samsung PM883 (iodepth x numjobs, 60 s each): busy all the time
    from two requests asked on, requests in flight following iodepth x numjobs up to the
    device's own queue (~150), and the pivot's note says so."""
    doc = imported(tmp_path, SWEEP)  # a folder: one session
    by = {(r["params"]["iodepth"], r["params"]["numjobs"]): r["limited_by"]
          for r in doc["results"] if r["metric"] == "read"}
    (qd1,) = by[(1, 1)]
    assert qd1["kind"] == "unknown" and qd1["evidence"]["busy_pct"] == pytest.approx(86.055006)
    (qd64,) = by[(1, 64)]
    assert qd64["kind"] == "device" and qd64["evidence"]["asked"] == 64
    # in_queue 3799692 ms over the job's 60039 ms: 63.3 requests in flight of 64
    assert qd64["evidence"]["in_flight"] == pytest.approx(3799692 / 60039)
    assert qd64["words"] == ("device busy 100 %, 63.3 of 64 requests in flight "
                             "(fio's disk_util)")
    (deep,) = by[(64, 64)]  # 4096 asked, the device holds ~150
    assert deep["kind"] == "device" and 140 < deep["evidence"]["in_flight"] < 160
    text = disklab("compare", "1", "--rows", "numjobs", "--columns", "iodepth",
                   "--where", "test=read", "--library", str(tmp_path / "lib.sqlite3"))
    assert text.returncode == 0, text.stderr
    said = " ".join(text.stdout.split())  # a line each, wrapped to the terminal
    assert ("limited by device (busy 97–100 %, 1.8–154.7 in flight): every cell but "
            "numjobs=1 (iodepth=1) limited by not known (imported) (device busy 86 %): "
            "numjobs=1 (iodepth=1)") in said
    pivot = json.loads(disklab("compare", "1", "--rows", "numjobs", "--columns", "iodepth",
                               "--where", "test=read", "--format", "json", "--library",
                               str(tmp_path / "lib.sqlite3")).stdout)
    assert pivot["version"] == 3
    assert pivot["cells"][0][0]["limited_by"][0]["kind"] == "unknown"
    assert pivot["cells"][-1][-1]["limited_by"][0]["kind"] == "device"


# The root blkio cgroup's write limit on one device (cgroup v1): it holds the flusher's
# write-back to that device too, which a v2 io.max of a child group would not for root's own
THROTTLE = Path("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device")
SLOW_BPS = 8 << 20  # the slow target: 8 MiB/s
DIRTY_BYTES = 32 << 20  # the dirty threshold for the test: reached in a fraction of a second
VM = Path("/proc/sys/vm")


@pytest.fixture
def slow_target(tmp_path: Path) -> Iterator[Path]:
    """A scratch ext4 on its own loop device, written back at 8 MiB/s (the root blkio
    cgroup's limit on that device alone), with vm.dirty_bytes at 32 MiB; the limit removed,
    the device detached and vm.dirty_* restored exactly afterwards, by name."""
    from tests.helpers import make_scratch_fs, teardown

    if not THROTTLE.exists():
        pytest.skip("no cgroup v1 blkio throttle on this machine")
    base = tmp_path / "s8-limits-slow"
    base.mkdir()
    fs = make_scratch_fs(base, "ext4", "1G")
    number = f"{os.major(os.stat(fs.device).st_rdev)}:{os.minor(os.stat(fs.device).st_rdev)}"
    names = ("dirty_bytes", "dirty_ratio", "dirty_background_bytes", "dirty_background_ratio")
    before = {n: (VM / n).read_text().strip() for n in names}
    try:
        THROTTLE.write_text(f"{number} {SLOW_BPS}\n")
        (VM / "dirty_bytes").write_text(f"{DIRTY_BYTES}\n")
        yield fs.mountpoint
    finally:
        THROTTLE.write_text(f"{number} 0\n")  # this device's rule removed
        # a ratio written back clears the bytes, and bytes clear the ratio: the one that was set
        for kind in ("dirty", "dirty_background"):
            was = "bytes" if before[f"{kind}_bytes"] != "0" else "ratio"
            (VM / f"{kind}_{was}").write_text(before[f"{kind}_{was}"] + "\n")
        for p in fs.mountpoint.iterdir():
            if p.name.startswith("disklab-"):
                p.unlink()
        teardown(fs)
        assert {n: (VM / n).read_text().strip() for n in names} == before
        assert number not in THROTTLE.read_text()


@pytest.mark.alone  # vm.dirty_bytes is the whole machine's
def test_a_buffered_burst_past_the_dirty_threshold_on_a_slow_target_is_write_back(
        tmp_path: Path, slow_target: Path) -> None:
    """512 MiB written through the page cache for 5 s onto a device written back at 8 MiB/s:
    past 32 MiB of Dirty + Writeback the kernel holds the writer, and the verdict says so with
    the threshold it recorded."""
    limits = limited(tmp_path, slow_target, 'mode = "write"\nblock_size = "1m"\n'
                     'size = "512m"\nruntime = "5s"\ndirect = false')
    (back,) = [x for x in limits if x["kind"] == "writeback"]
    assert back["evidence"]["threshold"] == DIRTY_BYTES
    assert back["evidence"]["dirty_bytes"] >= 0.75 * DIRTY_BYTES
    assert back["words"].startswith("write-back throttling: Dirty + Writeback held at")
    assert "too_short" not in kinds(limits)
