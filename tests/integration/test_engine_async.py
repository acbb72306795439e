"""The engine's asynchronous paths, io_uring and Linux native AIO, each forced, on a real ext4 on
a loop device: what they write is on disk block for block, what they read is counted once per
block and reached the device once per block, a SIGTERM ends a run with a partial summary and no
worker left, a full filesystem is a short result with a sentence, and a bad or impossible `io` is
refused before any run, naming the key."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from disklab.core.plan.parse import parse_plan
from disklab.core.tools.base import RunTarget, ToolOutput
from disklab.core.tools.engine import EngineAdapter
from disklab.core.vocab.errors import PlanError
from disklab.engine import uring
from tests.helpers import make_scratch_fs, teardown

pytestmark = [pytest.mark.root]

KiB, MiB = 1024, 1 << 20
ENGINE = [sys.executable, "-m", "disklab.engine"]
DEFAULTS = {"block_size": MiB, "streams": 1, "queue_depth": 1, "direct": False, "sync": False,
            "fsync": True, "runtime": 0.0}
ASYNC = ["aio", pytest.param("uring", marks=pytest.mark.skipif(
    uring.unavailable() is not None, reason=str(uring.unavailable())))]
AIO_NEEDS_DIRECT = ("io aio needs direct I/O (--direct): Linux runs asynchronous I/O on "
                    "buffered (page-cache) files synchronously inside io_submit; use io auto "
                    "or psync")


def run(argv: list[str] | tuple[str, ...]) -> tuple[int, list[dict[str, Any]], str]:
    """Exit status, the JSON lines, stderr."""
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=120)
    return done.returncode, [json.loads(x) for x in done.stdout.splitlines()], done.stderr


def command(directory: Path, tag: str, **kw: Any):
    return EngineAdapter().build_command({**DEFAULTS, **kw},
                                         RunTarget(str(directory), tag, python=sys.executable))


def run_case(directory: Path, tag: str = "a", **kw: Any) -> tuple[int, list[dict[str, Any]]]:
    """Prepare steps then the measured step, as the runner runs an adapter's Command."""
    cmd = command(directory, tag, **kw)
    for step in cmd.prepare:
        rc, docs, _ = run(step)
        assert rc == 0 and docs[-1]["type"] == "prepared", docs
    rc, docs, _ = run(cmd.argv)
    return rc, docs


def _device_reads(directory: Path) -> int:
    """Reads completed by the block device under `directory` (its sysfs stat)."""
    st = directory.stat()
    return int(Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}/stat")
               .read_text().split()[0])


@pytest.mark.alone  # counts every read of the device: another test's lsblk probes it too
@pytest.mark.parametrize("io", ASYNC)
def test_writes_every_block_and_reads_each_once(workdir: Path, io: str) -> None:
    """A direct write at queue depth 8 through the path says it took it; the file then holds
    every block, each one whole copy of one of the 8 requests' random buffers (nothing left as
    zeros, nothing torn), and a random read counts exactly the file's size, each block a read
    of the device."""
    size, bs = 8 * MiB, 4 * KiB
    rc, docs = run_case(workdir, mode="write", block_size=bs, size=size, queue_depth=8,
                        direct=True, io=io)
    assert rc == 0, docs
    summary = docs[-1]
    assert (summary["io"], summary["partial"]) == (io, False)
    assert (summary["bytes"], summary["ops"]) == (size, size // bs)
    assert summary["fsync_seconds"] is not None  # written data fsynced inside the timing
    data = (workdir / "disklab-a-0").read_bytes()
    assert len(data) == size
    blocks = {data[i:i + bs] for i in range(0, size, bs)}
    assert bytes(bs) not in blocks
    assert 1 < len(blocks) <= 8  # only the 8 in-flight buffers' contents, whole

    before = _device_reads(workdir)
    rc, docs = run_case(workdir, tag="r", mode="randread", block_size=bs, size=size,
                        queue_depth=8, direct=True, io=io)
    reads = _device_reads(workdir) - before
    assert rc == 0, docs
    s = docs[-1]
    assert (s["io"], s["bytes"], s["ops"], s["partial"]) == (io, size, size // bs, False)
    # the layout step only writes; a few neighbours of one batch may merge into one request,
    # metadata adds a few
    assert abs(reads - size // bs) <= 64, reads
    assert s["lat_ns"]["p50"] > 0 and s["lat_ns"]["max"] >= s["lat_ns"]["p99"]
    assert docs[-2]["type"] == "interval" and docs[-2]["bytes"] == size
    metrics = EngineAdapter().parse_result(
        ToolOutput("\n".join(json.dumps(d) for d in docs), "", None, 0),
        {**DEFAULTS, "mode": "randread"})
    assert {m.params["io"] for m in metrics} == {io}  # the library reads back the path


@pytest.mark.parametrize("io", ASYNC)
def test_streams_with_their_own_block_sizes_and_a_time_based_run(workdir: Path, io: str
                                                                 ) -> None:
    """Two streams (4 KiB and 64 KiB) at depth 4 each move their own size; a time-based run
    wraps around its file and counts whole blocks only."""
    rc, docs = run_case(workdir, mode="randwrite", size=4 * MiB, streams=2, queue_depth=4,
                        direct=True, stream_block_sizes="4k 64k", io=io)
    assert rc == 0, docs
    s = docs[-1]
    assert s["io"] == io
    assert [(st["block_size"], st["bytes"], st["ops"]) for st in s["streams"]] == [
        (4 * KiB, 4 * MiB, 1024), (64 * KiB, 4 * MiB, 64)]
    rc, docs = run_case(workdir, tag="w", mode="randread", block_size=4 * KiB, size=1 * MiB,
                        queue_depth=8, direct=True, runtime=1.0, io=io)
    assert rc == 0, docs
    s = docs[-1]
    assert s["io"] == io and s["partial"] is False
    assert s["bytes"] > 1 * MiB and s["bytes"] == s["ops"] * 4096


def _children(pid: int) -> list[int]:
    """Every child of every thread of `pid` (the engine forks its workers from a thread)."""
    return [int(x) for task in Path(f"/proc/{pid}/task").iterdir()
            for x in (task / "children").read_text().split()]


@pytest.mark.parametrize("io", ASYNC)
def test_sigterm_ends_a_run_with_a_partial_summary_and_no_worker_left(workdir: Path, io: str
                                                                      ) -> None:
    cmd = command(workdir, "s", mode="randread", block_size=4096, size=8 * MiB, direct=True,
                  queue_depth=8, streams=2, runtime=60.0, io=io)
    for step in cmd.prepare:
        assert run(step)[0] == 0
    p = subprocess.Popen(list(cmd.argv), stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        first = json.loads(p.stdout.readline())
        assert first["type"] == "interval"
        workers = _children(p.pid)
        assert len(workers) == 2  # one process per stream
        p.send_signal(signal.SIGTERM)
        rest = [json.loads(line) for line in p.stdout.read().splitlines()]
        assert p.wait(timeout=30) == 143
    finally:
        if p.poll() is None:  # a failed assertion above: leave nothing running on the mount
            p.kill()
            p.wait()
    summary = rest[-1]
    assert summary["type"] == "summary" and summary["partial"] is True
    assert summary["io"] == io
    assert summary["bytes"] >= first["bytes"] > 0
    assert summary["bytes"] == summary["ops"] * 4096
    for pid in workers:
        assert not os.path.exists(f"/proc/{pid}"), f"worker {pid} outlived the engine"


@pytest.mark.parametrize("io", ASYNC)
def test_a_full_filesystem_is_a_short_result_with_a_sentence(tmp_path: Path, io: str) -> None:
    fs = make_scratch_fs(tmp_path, "ext4", size="64M")
    try:
        path = fs.mountpoint / "disklab-f-0"
        rc, docs, stderr = run([*ENGINE, "--mode", "write", "--file", str(path),
                                "--block-size", str(MiB), "--size", str(128 * MiB), "--direct",
                                "--queue-depth", "4", "--fsync", "--io", io])
        assert (rc, stderr) == (1, "")
        error, summary = docs[-1], docs[-2]
        assert error["type"] == "error"
        assert error["message"].startswith(
            f"no space left in {fs.mountpoint} (ext4 at {fs.mountpoint}): ")
        assert summary["io"] == io and summary["partial"] is True
        # only completed whole requests count; in-flight ones past the failure may have
        # landed too, so the file may hold more than was counted, never less
        assert 0 < summary["bytes"] == summary["ops"] * MiB <= path.stat().st_size
        path.unlink()
    finally:
        teardown(fs)


def test_io_choices_are_checked_before_any_run(workdir: Path) -> None:
    path = workdir / "disklab-c-0"
    rc, docs, stderr = run([*ENGINE, "--mode", "write", "--file", str(path), "--block-size",
                            "4096", "--size", "65536", "--io", "fast"])
    assert rc == 2 and docs == []
    assert "--io: invalid choice: 'fast'" in stderr
    rc, docs, _ = run([*ENGINE, "--mode", "write", "--file", str(path), "--block-size", "4096",
                       "--size", "65536", "--io", "aio", "--queue-depth", "4"])
    assert (rc, docs) == (2, [{"type": "error", "message": AIO_NEEDS_DIRECT}])
    rc, docs, _ = run([*ENGINE, "--mode", "write", "--file", str(path), "--block-size", "4096",
                       "--size", "65536", "--io", "uring", "--queue-depth", "4"])
    assert rc == 2 and docs[0]["message"].startswith("io uring needs direct I/O (--direct)")
    assert not path.exists()
    # forced psync at depth 4 runs the pread/pwrite workers, and says so
    rc, docs, _ = run([*ENGINE, "--mode", "write", "--file", str(path), "--block-size", "4096",
                       "--size", "65536", "--io", "psync", "--queue-depth", "4", "--direct"])
    assert rc == 0 and (docs[-1]["io"], docs[-1]["bytes"]) == ("psync", 65536)
    rc, docs, _ = run([*ENGINE, "--mode", "write", "--file", str(path), "--block-size", "4096",
                       "--size", "65536", "--queue-depth", "4"])
    assert rc == 0 and docs[-1]["io"] == "psync"  # auto on a buffered file
    assert "synchronously" in docs[-1]["io_why"]
    path.unlink()

    def plan(io: str, direct: str) -> str:
        return (f'name = "io"\n[target]\ndirectory = "{workdir}"\n[[test]]\ntool = "engine"\n'
                f'mode = "write"\nsize = "1m"\nqueue_depth = 4\ndirect = {direct}\n'
                f'io = "{io}"\n')

    with pytest.raises(PlanError) as e:
        parse_plan(plan("fast", "true"))
    assert [p.key for p in e.value.problems] == ["test[1].io"]
    assert "'fast' is not one of auto, psync, aio, uring" in e.value.problems[0].message
    with pytest.raises(PlanError) as e:
        parse_plan(plan("aio", "false"))
    assert [p.key for p in e.value.problems] == ["test[1].io"]
    assert "aio needs direct = true" in e.value.problems[0].message
    # the command line's `plan validate`: exit 2, the key named
    toml = workdir / "disklab-plan.toml"
    toml.write_text(plan("fast", "true"))
    done = subprocess.run([sys.executable, "-m", "disklab", "plan", "validate", str(toml)],
                          capture_output=True, text=True, timeout=60)
    toml.unlink()
    assert done.returncode == 2
    assert "test[1].io" in done.stdout + done.stderr
