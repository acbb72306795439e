"""The built-in engine as a process (`python -m disklab.engine`) on real filesystems: every
mode, O_DIRECT, streams and queue depth, SIGTERM, a full disk, and filesystems that refuse
O_DIRECT. Commands come from the adapter, as the runner would run them."""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from disklab.core.plan.parse import parse_plan
from disklab.core.system.fsprobe import direct_io_refusal
from disklab.core.tools.base import RunTarget, ToolOutput
from disklab.core.tools.engine import EngineAdapter
from disklab.core.vocab.errors import PlanError
from tests.helpers import ScratchFs, make_scratch_fs, teardown

pytestmark = [pytest.mark.root]

MiB = 1 << 20
ENGINE = [sys.executable, "-m", "disklab.engine"]
DEFAULTS = {"block_size": MiB, "streams": 1, "queue_depth": 1, "direct": False, "sync": False,
            "fsync": True, "runtime": 0.0}


def run(argv: tuple[str, ...] | list[str]) -> tuple[int, list[dict[str, Any]], str]:
    """Exit status, the JSON lines and stdout as it came."""
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=120)
    assert done.stderr == ""
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()], done.stdout


def run_case(directory: Path, tag: str = "t", **kw: Any
             ) -> tuple[int, list[dict[str, Any]], str]:
    """Prepare steps then the measured step, as the runner runs an adapter's Command."""
    command = EngineAdapter().build_command({**DEFAULTS, **kw},
                                            RunTarget(str(directory), tag, python=sys.executable))
    for step in command.prepare:
        rc, docs, _ = run(step)
        assert rc == 0 and docs[-1]["type"] == "prepared", docs
    return run(command.argv)


def cached_bytes(path: Path) -> int:
    """Bytes of the file in the page cache, as util-linux's fincore counts them."""
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return int(out.strip())


@pytest.mark.parametrize("mode", ["write", "rewrite", "read", "randread", "randwrite"])
def test_each_mode_moves_exactly_its_size(workdir: Path, mode: str) -> None:
    rc, docs, stdout = run_case(workdir, mode=mode, block_size=64 << 10, size=8 * MiB)
    assert rc == 0, docs
    summary = docs[-1]
    assert summary["type"] == "summary" and summary["mode"] == mode
    assert (summary["bytes"], summary["ops"]) == (8 * MiB, 128)
    assert summary["partial"] is False
    assert docs[-2]["type"] == "interval" and docs[-2]["bytes"] == 8 * MiB
    assert summary["bw"] > 0 and summary["iops"] > 0
    lat = summary["lat_ns"]
    assert 0 < lat["p50"] <= lat["p99"] <= lat["p99.9"] <= lat["max"]
    assert (workdir / "disklab-t-0").stat().st_size == 8 * MiB
    metrics = EngineAdapter().parse_result(ToolOutput(stdout=stdout), {"mode": mode})
    name = {"randread": "random_read", "randwrite": "random_write"}.get(mode, mode)
    assert [m.name for m in metrics] == [name, f"{name}:iops", f"{name}:lat_mean",
                                         f"{name}:lat_p50", f"{name}:lat_p99",
                                         f"{name}:lat_p99.9"]


def _device_reads(path: Path) -> int:
    """Read requests the block device under `path` has completed since boot."""
    dev = path.stat().st_dev
    return int(Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/stat").read_text().split()[0])


@pytest.mark.alone  # counts every read of the device: another test's lsblk probes it too
@pytest.mark.parametrize("queue_depth", [1, 4])
def test_a_1_mib_direct_read_reaches_the_device_as_one_request(workdir: Path,
                                                               queue_depth: int) -> None:
    """The loop device takes 128 segments a request: a 1 MiB buffer of scattered 4 KiB pages
    (256 segments) had each call split in two, ~15 % slower, in about half the runs (bench
    figure 4). The engine's buffers are huge pages where the kernel gives them."""
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if not thp.exists() or "[never]" in thp.read_text():
        pytest.skip("no transparent huge pages on this kernel")
    command = EngineAdapter().build_command(
        {**DEFAULTS, "mode": "read", "size": 64 * MiB, "direct": True,
         "queue_depth": queue_depth}, RunTarget(str(workdir), f"one{queue_depth}",
                                                python=sys.executable))
    for step in command.prepare:
        assert run(step)[0] == 0
    before = _device_reads(workdir)
    rc, docs, _ = run(command.argv)
    assert rc == 0 and docs[-1]["ops"] == 64
    assert _device_reads(workdir) - before <= 64 + 2  # a call, a request (and ext4's own few)


def _device_bytes(path: Path) -> tuple[int, int]:
    """Bytes read and written by the block device under `path` since boot, as the kernel
    counted them (its stat file: sectors of 512 bytes)."""
    dev = path.stat().st_dev
    fields = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/stat").read_text().split()
    return int(fields[2]) * 512, int(fields[6]) * 512


def _measured(directory: Path, tag: str, **kw: Any) -> tuple[dict[str, Any], int, int]:
    """One engine run (prepared first, outside the count): its summary and the bytes the
    device read and wrote while it ran. The device is the test's own loop device: nothing
    else reads or writes it."""
    command = EngineAdapter().build_command({**DEFAULTS, **kw},
                                            RunTarget(str(directory), tag, python=sys.executable))
    for step in command.prepare:
        assert run(step)[0] == 0
    read0, written0 = _device_bytes(directory)
    rc, docs, _ = run(command.argv)
    read1, written1 = _device_bytes(directory)
    assert rc == 0, docs
    return docs[-1], read1 - read0, written1 - written0


def test_o_direct_on_ext4_bypasses_the_page_cache(workdir: Path) -> None:
    """Judged by what the kernel counted, not by speed: a direct write is on the device when
    it returns and leaves no page of the file cached; a direct read reads every byte from the
    device and caches none. (A buffered figure beside them, a page-cache count, was lost
    whenever another process dropped the caches.)"""
    assert direct_io_refusal(str(workdir)) is None
    summary, _read, written = _measured(workdir, "d", mode="write", size=16 * MiB, direct=True)
    assert summary["direct"] is True and summary["bytes"] == 16 * MiB
    assert written >= 16 * MiB, written
    assert cached_bytes(workdir / "disklab-d-0") == 0
    summary, read, _written = _measured(workdir, "d", mode="read", block_size=4096,
                                        size=16 * MiB, direct=True)
    assert summary["bytes"] == 16 * MiB
    assert read >= 16 * MiB, read
    assert cached_bytes(workdir / "disklab-d-0") == 0


def test_prepare_leaves_nothing_in_the_page_cache(workdir: Path) -> None:
    """So a buffered read test reads the disk even when caches cannot be dropped."""
    path = workdir / "disklab-p-0"
    rc, docs, _ = run([*ENGINE, "--mode", "read", "--file", str(path), "--block-size", "4096",
                    "--size", str(8 * MiB), "--prepare"])
    assert (rc, docs) == (0, [{"type": "prepared", "files": [str(path)], "bytes": 8 * MiB}])
    assert path.stat().st_size == 8 * MiB
    assert cached_bytes(path) == 0


def test_streams_and_queue_depth_add_up(workdir: Path) -> None:
    rc, docs, _ = run_case(workdir, mode="write", block_size=256 << 10, size=16 * MiB, streams=2,
                        queue_depth=4, direct=True)
    assert rc == 0, docs
    summary = docs[-1]
    streams = summary["streams"]
    assert [s["file"] for s in streams] == [str(workdir / "disklab-t-0"),
                                            str(workdir / "disklab-t-1")]
    assert [(s["bytes"], s["ops"]) for s in streams] == [(16 * MiB, 64), (16 * MiB, 64)]
    assert (summary["bytes"], summary["ops"]) == (32 * MiB, 128)
    # each stream over its own active time, the aggregate over the first start to the last end
    for s in streams:
        assert s["bw"] == pytest.approx(s["bytes"] / s["seconds"])
    wall = max(s["end"] for s in streams) - min(s["start"] for s in streams)
    assert summary["bw"] == pytest.approx(summary["bytes"] / wall)
    assert summary["bw"] <= sum(s["bw"] for s in streams) * (1 + 1e-9)
    assert summary["queue_depth"] == 4
    for d in docs[:-1]:
        assert d["type"] == "interval"
        assert sum(s["bytes"] for s in d["streams"]) == d["bytes"]
        assert sum(s["ops"] for s in d["streams"]) == d["ops"]
    for i in range(2):
        assert (workdir / f"disklab-t-{i}").stat().st_size == 16 * MiB
    # random writes on 2 streams x 4 threads touch each block once: sizes stay, ops add up
    rc, docs, _ = run_case(workdir, mode="randwrite", block_size=4096, size=4 * MiB, streams=2,
                        queue_depth=4, direct=True)
    assert rc == 0 and [s["ops"] for s in docs[-1]["streams"]] == [1024, 1024]


def test_runtime_wraps_around_the_file(workdir: Path) -> None:
    rc, docs, _ = run_case(workdir, mode="randread", block_size=4096, size=1 * MiB, runtime=1.0)
    assert rc == 0, docs[-1]
    summary = docs[-1]
    assert summary["partial"] is False
    assert summary["bytes"] > 1 * MiB  # several passes over the 1 MiB file
    assert summary["bytes"] == summary["ops"] * 4096


def test_sigterm_stops_with_a_partial_summary(workdir: Path) -> None:
    command = EngineAdapter().build_command(
        {**DEFAULTS, "mode": "randread", "block_size": 4096, "size": 8 * MiB, "direct": True,
         "runtime": 60.0}, RunTarget(str(workdir), "s", python=sys.executable))
    for step in command.prepare:
        assert run(step)[0] == 0
    p = subprocess.Popen(list(command.argv), stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    head = p.stdout.readline()
    first = json.loads(head)
    assert first["type"] == "interval"
    p.send_signal(signal.SIGTERM)
    tail = p.stdout.read()
    rest = [json.loads(line) for line in tail.splitlines()]
    assert p.wait(timeout=30) == 143
    summary = rest[-1]
    assert summary["type"] == "summary" and summary["partial"] is True
    assert summary["bytes"] >= first["bytes"] > 0
    assert rest[-2]["type"] == "interval" and rest[-2]["bytes"] == summary["bytes"]
    metrics = EngineAdapter().parse_partial(ToolOutput(stdout=head + tail, exit_status=143),
                                            {"mode": "randread"})
    assert metrics[0].name == "random_read" and metrics[0].note == "partial"


def test_a_signal_caught_while_starting_still_gives_a_summary(workdir: Path) -> None:
    """__main__ catches SIGTERM before the imports; main() then stops at once, cleanly."""
    path = workdir / "disklab-g-0"
    code = ("import sys; from disklab.engine.cli import main; "
            f"sys.exit(main(['--mode', 'write', '--file', '{path}', '--block-size', '4096', "
            "'--size', '1048576'], early_signals=[15]))")
    rc, docs, _ = run([sys.executable, "-c", code])
    assert rc == 143
    assert docs[-1]["type"] == "summary" and docs[-1]["partial"] is True
    assert docs[-1]["bytes"] == 0
    rc, docs, _ = run([sys.executable, "-c", code.replace("'write'", "'read'").replace(
        "'1048576']", "'1048576', '--prepare']")])
    assert rc == 143
    assert docs == [{"type": "error", "message": f"interrupted while laying out {path}"}]


def test_errors_say_what_to_do(workdir: Path) -> None:
    path = workdir / "disklab-e-0"
    rc, docs, _ = run([*ENGINE, "--mode", "read", "--file", str(path), "--block-size", "4096",
                    "--size", str(MiB)])
    assert rc == 1
    assert docs == [{"type": "error", "message": f"{path} does not exist (read and rewrite "
                                                 "modes need a --prepare run first)"}]
    path.write_bytes(b"x" * 8192)
    rc, docs, _ = run([*ENGINE, "--mode", "read", "--file", str(path), "--block-size", "4096",
                    "--size", str(MiB)])
    assert rc == 1
    assert docs[-1]["message"] == (f"{path} holds 8192 bytes, the test needs 1048576: "
                                   "lay it out first (--prepare)")
    rc, docs, _ = run([*ENGINE, "--mode", "write", "--file", str(path), "--block-size", "4096",
                    "--size", "10000"])
    assert rc == 2
    assert docs == [{"type": "error",
                     "message": "size 10000 is not a multiple of block size 4096"}]


def test_a_full_filesystem_names_the_directory_and_its_free_space(tmp_path: Path) -> None:
    fs = make_scratch_fs(tmp_path, "ext4", size="64M")
    try:
        path = fs.mountpoint / "disklab-f-0"
        rc, docs, _ = run([*ENGINE, "--mode", "write", "--file", str(path), "--block-size",
                        str(MiB), "--size", str(128 * MiB), "--direct", "--fsync"])
        assert rc == 1
        error, summary = docs[-1], docs[-2]
        assert error["type"] == "error"
        assert error["message"].startswith(
            f"no space left in {fs.mountpoint} (ext4 at {fs.mountpoint}): ")
        free = shutil.disk_usage(fs.mountpoint).free  # the file is still there: as it was
        assert error["message"].endswith(f"({free} bytes) free")
        assert summary["partial"] is True and 0 < summary["bytes"] < 64 * MiB
        assert summary["bytes"] == path.stat().st_size
        path.unlink()
    finally:
        teardown(fs)


def test_o_direct_smaller_than_the_sector_names_the_logical_block_size(tmp_path: Path) -> None:
    """A 4 KiB-sector device takes O_DIRECT only in multiples of 4096: the engine says so."""
    image, mnt = tmp_path / "s4k.img", tmp_path / "m"
    mnt.mkdir()
    subprocess.run(["truncate", "-s", "64M", str(image)], check=True)
    device = subprocess.run(["losetup", "--find", "--show", "--sector-size", "4096", str(image)],
                            check=True, capture_output=True, text=True).stdout.strip()
    fs = ScratchFs(image, device, mnt, "ext4")
    try:
        subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
        subprocess.run(["mount", device, str(mnt)], check=True)
        path = mnt / "disklab-a-0"
        rc, docs, _ = run([*ENGINE, "--mode", "write", "--file", str(path), "--block-size",
                           "512", "--size", "65536", "--direct"])
        assert rc == 1
        assert docs[-1] == {"type": "error", "message": (
            f"{path}: ext4 at {mnt} refused an O_DIRECT transfer of 512 bytes (EINVAL); the "
            "block size must be a multiple of the device's logical block size (4096 bytes)")}
        assert docs[-2]["bytes"] == 0 and docs[-2]["partial"] is True
        rc, docs, _ = run([*ENGINE, "--mode", "write", "--file", str(path), "--block-size",
                           "4096", "--size", "65536", "--direct"])
        assert rc == 0 and docs[-1]["bytes"] == 65536
        path.unlink()
    finally:
        teardown(fs)


def _kernel_at_least(major: int, minor: int) -> bool:
    parts = platform.release().split(".")
    return (int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)) >= (major,
                                                                                        minor)


@pytest.mark.parametrize("fstype", ["ramfs", "tmpfs"])
def test_memory_filesystems_and_o_direct(tmp_path: Path, fstype: str) -> None:
    """ramfs refuses O_DIRECT; tmpfs did too before Linux 6.6 and accepts it since. Either
    way the probe and the engine agree, and a refusal names the filesystem and its mount."""
    mnt = tmp_path / fstype
    mnt.mkdir()
    subprocess.run(["mount", "-t", fstype, "-o", "size=64m", "none", str(mnt)], check=True)
    try:
        refuses = fstype == "ramfs" or not _kernel_at_least(6, 6)
        path = mnt / "disklab-m-0"
        rc, docs, _ = run([*ENGINE, "--mode", "write", "--file", str(path), "--block-size",
                        str(MiB), "--size", str(4 * MiB), "--direct", "--fsync"])
        if refuses:
            message = (f"{fstype} at {mnt} refuses O_DIRECT (EINVAL); use direct = false or "
                       "a disk filesystem")
            assert (rc, docs) == (1, [{"type": "error", "message": message}])
            assert direct_io_refusal(str(mnt)) == message
            with pytest.raises(PlanError) as e:  # `plan validate` says so before any run
                parse_plan(f'name = "m"\n[target]\ndirectory = "{mnt}"\n[[test]]\n'
                           'tool = "engine"\nmode = "write"\nsize = "4m"\ndirect = true\n')
            assert [(p.key, p.message) for p in e.value.problems] == [
                ("test[1].direct", message)]
        else:
            assert rc == 0 and docs[-1]["bytes"] == 4 * MiB
            assert direct_io_refusal(str(mnt)) is None
        path.unlink(missing_ok=True)
        assert list(mnt.iterdir()) == []  # the probe left nothing behind
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
