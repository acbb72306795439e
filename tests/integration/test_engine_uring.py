"""How a plan's engine case (io = auto) comes to io_uring on a real ext4 on a loop device: direct
I/O at queue depth > 1 takes it; where the system forbids io_uring (kernel.io_uring_disabled, as
container runtimes do with seccomp) auto takes Linux AIO and says why, and a forced io = uring
names the setting. What each path does is tests/integration/test_engine_async.py's."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from disklab.core.tools.base import RunTarget
from disklab.core.tools.engine import EngineAdapter
from disklab.engine import uring

pytestmark = [pytest.mark.root]

KiB, MiB = 1024, 1 << 20
DEFAULTS = {"block_size": MiB, "streams": 1, "queue_depth": 1, "direct": False, "sync": False,
            "fsync": True, "runtime": 0.0}
DISABLED = Path("/proc/sys/kernel/io_uring_disabled")


def run(argv: list[str] | tuple[str, ...]) -> tuple[int, list[dict[str, Any]], str]:
    """Exit status, the JSON lines, stderr."""
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=120)
    return done.returncode, [json.loads(x) for x in done.stdout.splitlines()], done.stderr


def run_case(directory: Path, tag: str, **kw: Any) -> tuple[int, list[dict[str, Any]]]:
    """Prepare steps then the measured step, as the runner runs the adapter's Command."""
    cmd = EngineAdapter().build_command({**DEFAULTS, **kw},
                                        RunTarget(str(directory), tag, python=sys.executable))
    for step in cmd.prepare:
        rc, docs, _ = run(step)
        assert rc == 0 and docs[-1]["type"] == "prepared", docs
    rc, docs, _ = run(cmd.argv)
    return rc, docs


@pytest.mark.skipif(uring.unavailable() is not None, reason=str(uring.unavailable()))
def test_auto_takes_io_uring_for_direct_io_at_queue_depth_above_1(workdir: Path) -> None:
    rc, docs = run_case(workdir, "u", mode="randwrite", block_size=4 * KiB, size=MiB,
                        queue_depth=8, direct=True)
    assert rc == 0, docs
    s = docs[-1]
    assert (s["io"], s["io_why"], s["bytes"]) == ("uring", "O_DIRECT at queue depth > 1", MiB)
    rc, docs = run_case(workdir, "d", mode="randwrite", block_size=4 * KiB, size=MiB,
                        queue_depth=1, direct=True)
    assert rc == 0 and docs[-1]["io"] == "psync", docs


@contextlib.contextmanager
def io_uring_disabled() -> Iterator[None]:
    """kernel.io_uring_disabled = 2 (no process may make a ring) for the block, then as it was."""
    if not DISABLED.exists():
        pytest.skip("this kernel has no kernel.io_uring_disabled (Linux < 6.6)")
    was = DISABLED.read_text().strip()
    DISABLED.write_text("2")
    try:
        yield
    finally:
        DISABLED.write_text(was)


@pytest.mark.alone  # kernel.io_uring_disabled is the whole machine's
def test_where_io_uring_is_forbidden_auto_takes_aio_and_says_why(workdir: Path) -> None:
    with io_uring_disabled():
        why = uring.unavailable()
        assert why is not None and "forbidden" in why and "io_uring_disabled" in why
        rc, docs = run_case(workdir, "f", mode="randwrite", block_size=4 * KiB, size=MiB,
                            queue_depth=8, direct=True)
        assert rc == 0, docs
        assert docs[-1]["io"] == "aio" and docs[-1]["bytes"] == MiB
        assert docs[-1]["io_why"] == f"O_DIRECT at queue depth > 1; not io_uring: {why}"
        rc, docs = run_case(workdir, "g", mode="randwrite", block_size=4 * KiB, size=MiB,
                            queue_depth=8, direct=True, io="uring")
        assert rc == 1 and docs[-1]["type"] == "error", docs
        assert "io_uring_disabled" in docs[-1]["message"], docs
    assert uring.unavailable() is None or "forbidden" not in str(uring.unavailable())


@pytest.mark.skipif(uring.unavailable() is not None, reason=str(uring.unavailable()))
def test_a_buffer_over_the_users_memlock_limit_still_runs_through_the_ring(workdir: Path
                                                                           ) -> None:
    """A fixed buffer's pages count against RLIMIT_MEMLOCK for a process without CAP_IPC_LOCK
    (a desktop user: often 8 MiB); 8 x 1 MiB requests are more than a 64 KiB limit, and the
    ring then works on the plain buffer instead of failing the run."""
    path = workdir / "disklab-m-0"
    argv = [sys.executable, "-m", "disklab.engine", "--mode", "write", "--file",
            str(path), "--block-size", str(MiB), "--size", str(16 * MiB), "--queue-depth", "8",
            "--direct", "--io", "uring"]
    limited = ["setpriv", "--bounding-set=-ipc_lock", "--inh-caps=-ipc_lock",
               "prlimit", "--memlock=65536:65536"]
    rc, docs, stderr = run([*limited, *argv])
    assert rc == 0, (docs, stderr)
    assert (docs[-1]["io"], docs[-1]["bytes"], docs[-1]["partial"]) == ("uring", 16 * MiB, False)
