"""The engine's accounting loop in C (engine/_native.c through engine/native.py) against the
Python loop it replaces (engine/loop.py), on real files in a temporary directory: both write
every block of the order exactly once (the file has no hole left and the kernel took as many
writes as blocks), count the same, keep latency samples alike, record a short transfer and a
refused request alike, and a time-based run wraps until halted, which a Python thread can do
while the C loop runs (it runs without the GIL).

Why writes: the loop does not say which offsets it asked for, but a sparse file does. A write
of each block fills exactly that block; a block asked twice and another never would leave a
hole (SEEK_HOLE finds one before the end)."""

from __future__ import annotations

import json
import mmap
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from disklab.core.system.fsprobe import direct_io_refusal
from disklab.engine import loop, native, uring
from disklab.engine.loop import ERR_ERRNO, ERR_KIND, ERR_N, FIELDS, OPS, SAMPLES
from disklab.engine.psync import PsyncPath
from disklab.engine.worker import GridOrder, aligned_buffer, block_order

KiB = 1024
BS = 4 * KiB
BLOCKS = 1024
NO_COMPILER = shutil.which("cc") is None and shutil.which("gcc") is None
# Where a C compiler is, `make setup` built the extension: its absence is a defect, not a skip.
pytestmark = pytest.mark.skipif(NO_COMPILER, reason="no C compiler: the Python loop runs")


class Memory:
    """One slot's shared memory, as worker._SlotMemory lays it out."""

    def __init__(self, samples: int):
        self.mem = mmap.mmap(-1, FIELDS * 8)
        self.fields = [memoryview(self.mem).cast("q")[f::FIELDS] for f in range(FIELDS)]
        self.lat = memoryview(mmap.mmap(-1, samples * 8)).cast("q")
        self.halt = memoryview(mmap.mmap(-1, mmap.PAGESIZE)).cast("B")

    def __getitem__(self, field: int) -> int:
        return self.fields[field][0]


def orders() -> dict[str, Sequence[int]]:
    return {"sequential": block_order(BLOCKS, False, 1, BS),
            "table": block_order(BLOCKS, True, 7, BS),
            "grid": GridOrder(BLOCKS + 5, 7, BS)}  # 5 blocks past the grid: its tail


def psync_path(fd: int, write: bool) -> PsyncPath:
    return PsyncPath(fd, write, memoryview(aligned_buffer(BS, fill=write))[:BS])


def uring_path(fd: int, write: bool) -> uring.UringPath:
    return uring.UringPath(fd, write, BS, aligned_buffer(32 * BS, fill=write), 32)


def run(make: Callable[[int, bool], loop.IoPath], flags: int, path: str, order: Sequence[int],
        c: bool, samples: int = 4 * BLOCKS, wrap: bool = False, write: bool = True,
        halt_after: float | None = None) -> Memory:
    """One share (the whole order) through the C loop (`c`) or the Python one."""
    mem = Memory(samples)
    fd = os.open(path, flags)
    io = make(fd, write)
    if halt_after is not None:
        threading.Timer(halt_after, mem.halt.__setitem__, (0, 1)).start()
    try:
        native.run(io, loop.LoopShare(order, 0, 1, wrap, BS, 0, samples, 0), mem.fields, mem.lat,
                   mem.halt, python=not c)
    finally:
        io.close()
        os.close(fd)
    return mem


def hole_before_end(path: str) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_HOLE)
    finally:
        os.close(fd)


def sparse(path: Path, blocks: int) -> str:
    with open(path, "wb") as f:
        f.truncate(blocks * BS)
    return str(path)


@pytest.fixture
def direct_dir(tmp_path: Path) -> Path:
    if direct_io_refusal(str(tmp_path)):
        pytest.skip(f"{tmp_path} refuses O_DIRECT")
    return tmp_path


def test_the_extension_was_built_and_runs_by_default() -> None:
    """make setup compiled it (pyproject.toml's ext-modules); a run takes it unless asked not
    to, and says so."""
    assert native.which("psync") == "C", (
        "the engine's C loop was not built though a compiler is here: the venv was made before "
        "it was (make clean && make setup)")
    assert native.which("uring") == "C"
    assert native.which("aio") == "Python" and native.which("uring", "python") == "Python"


PATHS = {"psync": (psync_path, 0), "uring": (uring_path, os.O_DIRECT)}


@pytest.mark.parametrize("kind", ["psync", "uring"])
@pytest.mark.parametrize("name", ["sequential", "table", "grid"])
@pytest.mark.parametrize("c", [True, False], ids=["C", "Python"])
def test_every_block_of_the_order_written_once(direct_dir: Path, kind: str, name: str,
                                               c: bool) -> None:
    if kind == "uring" and uring.unavailable():
        pytest.skip(str(uring.unavailable()))
    order = orders()[name]
    make, flag = PATHS[kind]
    path = sparse(direct_dir / "f", len(order))
    mem = run(make, os.O_WRONLY | flag, path, order, c)
    assert mem[ERR_KIND] == loop.NO_ERROR
    assert mem[OPS] == len(order) and mem[SAMPLES] == len(order)
    assert hole_before_end(path) == len(order) * BS  # no block skipped, so none twice
    assert mem[loop.LAT_SUM] > 0 and mem[loop.ENDED] > mem[loop.STARTED] > 0


def test_latency_samples_halved_alike_past_their_space(tmp_path: Path) -> None:
    """With room for 100 samples, 1024 requests at one a batch: both loops keep every 2nd, 4th,
    ... request's latency the same way, as many, and the mean stays exact from the sum."""
    order = block_order(BLOCKS, True, 3, BS)
    got = []
    for c in (True, False):
        path = sparse(tmp_path / f"f{c}", BLOCKS)
        mem = run(psync_path, os.O_WRONLY, path, order, c, samples=100)
        kept = mem[SAMPLES]
        got.append(kept)
        assert 25 <= kept <= 100 and all(mem.lat[i] > 0 for i in range(kept))
        assert mem[OPS] == BLOCKS
    assert got[0] == got[1]


@pytest.mark.parametrize("kind", ["psync", "uring"])
def test_a_short_file_ends_the_run_with_a_short_transfer_recorded_alike(
        direct_dir: Path, kind: str) -> None:
    """The order covers 64 blocks, the file 40: the read at block 40 returns 0 bytes. Both
    loops record SHORT (0 bytes moved), halt the run and count what completed."""
    if kind == "uring" and uring.unavailable():
        pytest.skip(str(uring.unavailable()))
    make, flag = PATHS[kind]
    path = str(direct_dir / "f")
    with open(path, "wb") as f:
        f.write(os.urandom(40 * BS))
    seen = []
    for c in (True, False):
        mem = run(make, os.O_RDONLY | flag, path, block_order(64, False, 1, BS), c, write=False)
        assert (mem[ERR_KIND], mem[ERR_N]) == (loop.SHORT, 0) and mem.halt[0] == 1
        seen.append(mem[OPS])
    # psync: one request at a time, blocks 0-39 each; io_uring: at least the first 32 in flight
    assert seen == [40, 40] if kind == "psync" else min(seen) >= 32 and max(seen) <= 40


@pytest.mark.parametrize("kind", ["psync", "uring"])
def test_a_refused_request_is_recorded_as_its_errno_alike(direct_dir: Path, kind: str) -> None:
    """Reads from a file opened for writing only: EBADF, recorded by both loops as the
    run's OS error with nothing counted."""
    if kind == "uring" and uring.unavailable():
        pytest.skip(str(uring.unavailable()))
    make, flag = PATHS[kind]
    path = sparse(direct_dir / "f", 64)
    for c in (True, False):
        mem = run(make, os.O_WRONLY | flag, path, block_order(64, True, 1, BS), c, write=False)
        assert (mem[ERR_KIND], mem[ERR_ERRNO]) == (loop.OS_ERROR, 9) and mem[OPS] == 0


@pytest.mark.parametrize("kind", ["psync", "uring"])
def test_a_time_based_run_wraps_until_a_python_thread_halts_it(direct_dir: Path,
                                                                kind: str) -> None:
    """The C loop releases the GIL: a timer thread's halt 0.5 s in is seen, after the order
    has been gone round more than once (a 64-block file)."""
    if kind == "uring" and uring.unavailable():
        pytest.skip(str(uring.unavailable()))
    make, flag = PATHS[kind]
    path = sparse(direct_dir / "f", 64)
    began = time.monotonic()
    mem = run(make, os.O_WRONLY | flag, path, block_order(64, True, 1, BS), True, wrap=True,
              halt_after=0.5)
    took = time.monotonic() - began
    assert mem[ERR_KIND] == loop.NO_ERROR and mem[OPS] > 64
    assert 0.5 <= took < 10  # ended by the halt, not by the order


def test_the_summary_says_which_loop_ran(tmp_path: Path) -> None:
    """`python -m disklab.engine ... --loop python` runs engine/loop.py, the default the C
    loop; the summary's "loop" says which, and both wrote every byte."""
    got = {}
    for asked in ("auto", "python"):
        out = subprocess.run(
            [sys.executable, "-m", "disklab.engine", "--mode", "write", "--file",
             str(tmp_path / asked), "--block-size", str(BS), "--size", str(256 * BS),
             "--loop", asked], capture_output=True, text=True, check=True, timeout=60)
        last = json.loads(out.stdout.splitlines()[-1])
        got[asked] = (last["loop"], last["bytes"])
    assert got == {"auto": ("C", 256 * BS), "python": ("Python", 256 * BS)}


def test_without_the_extension_the_engine_runs_its_python_loop(tmp_path: Path) -> None:
    """A machine without a C compiler at install has no _native module: the engine imports
    all the same, runs engine/loop.py, and its summary says so."""
    code = ("import sys; sys.modules['disklab.engine._native'] = None; "
            "from disklab.engine.cli import main; sys.exit(main(sys.argv[1:]))")
    out = subprocess.run(
        [sys.executable, "-c", code, "--mode", "write", "--file", str(tmp_path / "f"),
         "--block-size", str(BS), "--size", str(256 * BS)],
        capture_output=True, text=True, check=True, timeout=60)
    last = json.loads(out.stdout.splitlines()[-1])
    assert (last["loop"], last["bytes"]) == ("Python", 256 * BS)
    assert os.path.getsize(tmp_path / "f") == 256 * BS


def test_an_extension_that_does_not_load_is_an_error_not_the_python_loop() -> None:
    """Only a _native that was never built falls back to the Python loop; one that is there
    but fails to load (a missing symbol, a broken file) stops the engine with the loader's
    words, instead of running the slower loop as if nothing were wrong."""
    code = ("import sys, importlib.abc\n"
            "class Broken(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name == 'disklab.engine._native':\n"
            "            raise ImportError('_native.so: undefined symbol: io_uring_enter')\n"
            "sys.meta_path.insert(0, Broken())\n"
            "import disklab.engine.native\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode != 0
    assert "undefined symbol: io_uring_enter" in out.stderr
