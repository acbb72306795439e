"""Figure 4's pair (bench/figures/engine_vs_fio.run_pair) on a real ext4 on a loop device: the
engine and fio read the same files, laid out by the engine in even pairs and by fio in odd ones,
in ABBA order with the pair's random seed, and every run's device figures come from the device's
own counters (each 4 KiB block read once, the requests kept in the device within the depth)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from bench.figures.engine_vs_fio import (
    fio_argv,
    kept_reading,
    one_request_a_call,
    out_of_device,
    out_of_device_row,
    run_pair,
)

from disklab.engine import uring
from tests.helpers import make_scratch_fs, teardown

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")]

SIZE = 16 << 20
BS = 4096


@pytest.fixture
def mnt(tmp_path: Path):
    fs = make_scratch_fs(tmp_path, "ext4", size="128M")
    try:
        yield fs.mountpoint
    finally:
        teardown(fs)


@pytest.mark.parametrize("pair", [0, 1])
def test_a_pair_reads_one_layout_abba_and_counts_each_block_once(mnt: Path, pair: int) -> None:
    runs = run_pair(mnt, pair, "randread", BS, 8, SIZE, 2, ("psync", "libaio", "io_uring"))
    tools = [r["tool"] for r in runs]
    first = ["engine", "fio_psync", "fio_libaio", "fio_io_uring"]
    if pair:
        first.reverse()
    assert tools == first + first[::-1]
    for r in runs:
        # 2 streams x 4096 blocks, each read once from the one layout (none from a cache)
        # each block once from the device: a few more (metadata), a few fewer (neighbours in
        # one batch of io_submit merged into one request)
        assert abs(r["reads"] - 2 * SIZE // BS) <= 64, r
        assert r["bw"] > 0 and r["device_us"] > 0
        assert 0 < r["kept"] <= 16 * 1.1, r
        # busy: the device's busy time over the tool's own run time; the counters also span
        # the tool's start, which in a run this short (~0.1 s) can be most of it
        assert r["busy"] > 0, r
    assert {r["path"] for r in runs if r["tool"] == "engine"} == {
        "uring" if uring.unavailable() is None else "aio"}
    assert os.listdir(mnt) == ["lost+found"]  # the pair's files are gone


def test_a_write_pair_writes_files_of_its_own_once_each(mnt: Path) -> None:
    runs = run_pair(mnt, 0, "write", 1 << 20, 1, SIZE, 1, ("psync",))
    assert [r["tool"] for r in runs] == ["engine", "fio_psync"]
    assert all(r["bw"] > 0 for r in runs)
    assert os.listdir(mnt) == ["lost+found"]


def test_fio_gets_the_pairs_seed_and_every_streams_file() -> None:
    argv = fio_argv("randread", BS, 8, SIZE, ["/x/a", "/x/b"], "libaio", 3)
    assert "--randseed=3" in argv and "--iodepth=8" in argv
    ring = fio_argv("randread", BS, 8, SIZE, ["/x/a"], "io_uring", 3)
    assert "--ioengine=io_uring" in ring and "--iodepth=8" in ring and "--numjobs=8" not in ring
    assert "--fixedbufs" in ring and "--registerfiles" in ring  # as the engine's ring
    assert [a for a in argv if a.startswith("--filename=")] == ["--filename=/x/a",
                                                               "--filename=/x/b"]


def test_an_unresolved_ratio_says_what_the_requests_kept_in_the_device_decide() -> None:
    assert "feeds the device as fio does" in kept_reading([0.98, 0.99, 1.0, 1.01, 0.97])
    assert "leaves the device emptier" in kept_reading([0.9, 0.91, 0.92, 0.93, 0.94])
    undecided = kept_reading([0.9, 0.99, 1.0, 1.01, 0.97])
    assert "interval 0.900-1.010" in undecided and "(" not in undecided


def test_the_time_a_request_spends_out_of_the_device() -> None:
    """Little's law: a device kept full has no time out of it; at QD 1, a request 40 us in the
    device and kept there 0.8 of the run spends 10 us out of it. The row sets the gap beside
    the tools' CPU per request (run B's QD 8: 31.3 / 19.2 us against 10.15 / 6.51 us)."""
    assert out_of_device(8, 100.0, 8.0) == 0
    assert out_of_device(1, 40.0, 0.8) == pytest.approx(10.0)
    assert out_of_device(1, 40.0, 0.0) != out_of_device(1, 40.0, 0.0)  # nothing read: NaN
    device = {"engine_device_us": [110.8, 111.0], "engine_kept": [6.27, 6.27],
              "fio_io_uring_device_us": [104.2, 104.2], "fio_io_uring_kept": [6.78, 6.78]}
    cpu = {"engine": [10.15, 10.15], "io_uring": [6.51, 6.51]}
    device |= {"engine_reads": [65536, 65538], "fio_io_uring_reads": [65537, 65536]}
    assert one_request_a_call(device, 65536, "io_uring")
    # 256 MiB read in 1 MiB calls, each split into requests of 128 KiB: no such row
    split = device | {"engine_reads": [2048, 2048], "fio_io_uring_reads": [2049, 2048]}
    assert not one_request_a_call(split, 256, "io_uring")
    row = out_of_device_row("4 qd8", 8, device, cpu, "io_uring")
    assert row["value"] == "30.6 / 18.7"
    assert row["verdict"] == ("info: engine / fio io_uring, medians; +11.9 us a request, of "
                              "which the tools' CPU +3.7 us (10.2 / 6.5 us a request)")
