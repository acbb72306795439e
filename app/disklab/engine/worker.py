"""The engine's run: worker processes issuing a stream's requests at offsets of a shared order,
each through one accounting loop (engine/loop.py) over its I/O path.

Kept lean because the bench compares it with dd and fio: no allocation per operation (one
page-aligned mmap buffer per worker, a block per slot, filled once with random bytes so that
compressing filesystems do not flatter writes), counters each slot owns in shared memory.
The queue slots run in worker processes forked from the engine, one per CPU (fio's psync engine
runs a process per job the same way), so queue_depth slots keep that many calls in flight on a
stream without all waiting for one GIL; with O_DIRECT at queue depth > 1 one process per stream
keeps them all in flight through io_uring or Linux AIO instead (engine/uring.py,
engine/aio.py; the pread/pwrite calls are engine/psync.py; engine/iopath.py chooses).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import math
import mmap
import os
import random
import select
import signal
import threading
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

from disklab.engine import aio, iopath, loop, native, uring
from disklab.engine.loop import (
    ENDED,
    ERR_ERRNO,
    ERR_KIND,
    ERR_N,
    FIELDS,
    LAT_MAX,
    LAT_SUM,
    NO_ERROR,
    OPS,
    OS_ERROR,
    SAMPLES,
    STARTED,
)
from disklab.engine.psync import PsyncPath

MAX_LATENCIES = 1 << 20  # latency samples kept per run, over all slots
TABLE_LIMIT = 1 << 18  # random orders up to this many blocks are a shuffled table
PREPARE_CHUNK = 1 << 20

_LIBC = ctypes.CDLL(None, use_errno=True)  # prctl: a slot dies with the engine process
_PR_SET_PDEATHSIG = 1

AIO_PROCESSES_PER_STREAM = 1  # one process keeps a stream's whole queue in flight
WRITE_MODES = ("write", "rewrite", "randwrite")
RANDOM_MODES = ("randread", "randwrite")
LAYOUT_MODES = ("rewrite", "read", "randread", "randwrite")  # work on a file laid out before


@dataclass
class Job:
    """One measured run: what the command line asked for."""

    mode: str
    files: list[str]
    block_size: int
    size: int  # per stream
    queue_depth: int = 1
    direct: bool = False
    sync: bool = False
    fsync: bool = True
    runtime: float = 0.0  # > 0: time-based, wrapping around the file until then
    seed: int = 1
    stream_block_sizes: tuple[int, ...] = ()  # one per file, overriding block_size (a slow and
    # a fast stream side by side, as a slow LUN next to a fast one)
    io: str = "auto"  # auto, psync, aio or uring: the I/O path (iopath.choose)
    loop: str = "auto"  # auto (C where built: engine/native.py) or python (engine/loop.py)

    def block_size_of(self, stream: int) -> int:
        """The block size stream number `stream` issues its calls in."""
        return self.stream_block_sizes[stream] if self.stream_block_sizes else self.block_size


@dataclass
class StreamState:
    """One file and its slots' counters; each slot writes only its own entry (in shared memory
    while the run lasts, copied out after). Only whole
    blocks are counted (a short transfer ends the run), so bytes are ops * block_size: one
    counter per call instead of two in the hot loop.

    `started` and `ended` (perf_counter seconds) bound the stream's own active time: from the
    first of its slots starting its I/O to the last one's last I/O, plus the stream's fsync.
    A stream's rate is its bytes over that time, not over the whole run's, so a slow stream
    next to fast ones shows as slow."""

    path: str
    block_size: int = 0
    fd: int = -1
    ops: Sequence[int] = field(default_factory=list)
    lat_sum: Sequence[int] = field(default_factory=list)
    lat_max: Sequence[int] = field(default_factory=list)
    latencies: list[array] = field(default_factory=list)
    error: OSError | None = None
    started: float = 0.0
    ended: float = 0.0
    fsync_seconds: float | None = None  # None: no fsync ran

    def totals(self) -> tuple[int, int]:
        ops = sum(self.ops)
        return ops * self.block_size, ops

    def seconds(self) -> float:
        """The stream's active time (0 before it started)."""
        return max(self.ended - self.started, 0.0) if self.started else 0.0


class GridOrder:
    """Each block index once, in a pseudo-random order, from two small tables instead of one
    the size of the file (a 256 GiB file in 4 KiB blocks would need 0.5 GiB of offsets).

    The first q * m blocks are a q x m grid: i -> (a, b) = divmod(i, m), block P[b] * q + Q[a],
    with P and Q shuffled; consecutive calls land a random multiple of q apart, anywhere in the
    file. The last r < m blocks follow in an order of their own. `scale`: each index times it
    (the block size: byte offsets, one multiplication less per request in the loop).
    """

    def __init__(self, n: int, seed: int, scale: int = 1):
        rng = random.Random(seed)
        self.n, self.scale = n, scale
        self.m = max(1, math.isqrt(n))
        self.q = n // self.m
        self.grid = self.q * self.m
        self.p = _shuffled(self.m, rng)
        self.pq = _shuffled(self.q, rng)
        self.tail = _shuffled(n - self.grid, rng)

    def __getitem__(self, i: int) -> int:
        if i < self.grid:
            a, b = divmod(i, self.m)
            return (self.p[b] * self.q + self.pq[a]) * self.scale
        return (self.grid + self.tail[i - self.grid]) * self.scale

    def __len__(self) -> int:
        return self.n


def _shuffled(n: int, rng: random.Random, scale: int = 1) -> array:
    table = list(range(0, n * scale, scale))  # the same permutation whatever the scale
    rng.shuffle(table)
    return array("q", table)


def block_order(blocks: int, random_order: bool, seed: int, scale: int = 1) -> Sequence[int]:
    """Block indices in the order a stream visits them (each once per pass), times `scale`
    (the block size: the loop's byte offsets)."""
    if not random_order:
        return range(0, blocks * scale, scale)
    if blocks <= TABLE_LIMIT:
        return _shuffled(blocks, random.Random(seed), scale)
    return GridOrder(blocks, seed, scale)


def open_flags(job: Job) -> int:
    """write creates (and truncates) its files; the other modes use files laid out before."""
    if job.mode == "write":
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    elif job.mode in WRITE_MODES:
        flags = os.O_WRONLY
    else:
        flags = os.O_RDONLY
    if job.direct:
        flags |= os.O_DIRECT
    if job.sync and job.mode in WRITE_MODES:
        flags |= os.O_SYNC
    return flags


HUGE_PAGE = 2 << 20  # x86_64's and aarch64's (4 KiB pages) transparent huge page
HUGE_FROM = 64 << 10  # buffers from this size up are asked to be huge pages


def aligned_buffer(size: int, fill: bool) -> mmap.mmap:
    """Page-aligned memory (O_DIRECT needs it: a bytearray is not aligned), private to the
    process that maps it (a worker maps its own after the fork). From HUGE_FROM up it is a
    whole number of huge pages, asked for with MADV_HUGEPAGE (granted where transparent huge
    pages are "always" or "madvise"): physically contiguous, so a large O_DIRECT call reaches
    the device as one request. Scattered 4 KiB pages need a segment each, and a device
    taking 128 segments a request (a loop device) got each 1 MiB call as two requests in
    about half the runs, ~15 % slower (bench figure 4); fio's memory was split the same way
    by chance. Where the kernel gives no huge page the buffer is plain pages, as before."""
    huge = size >= HUGE_FROM
    length = -(-size // HUGE_PAGE) * HUGE_PAGE if huge else size
    buf = mmap.mmap(-1, length, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if huge and hasattr(mmap, "MADV_HUGEPAGE"):
        with contextlib.suppress(OSError):  # a kernel without transparent huge pages
            buf.madvise(mmap.MADV_HUGEPAGE)
    if fill:
        buf.write(os.urandom(size))
        buf.seek(0)
    return buf


class LayoutError(Exception):
    """A file a read or rewrite test needs is missing or too short."""


class Runner:
    """Runs a Job: streams x queue_depth worker processes, then each stream's fsync.
    halt() ends it early.

    Each queue slot is a process forked from this one (as fio's psync engine runs a process per
    job), not a thread: between threads of one interpreter every call's return waits for the GIL,
    and on a 2-vCPU machine that cost 10-20 us a call at 4 KiB and queue depth 8 (bench figure 4).
    The slots write their counters into shared memory that this process reads for the interval
    lines, and take the blocks of their stream's order round-robin (slot k: k, k + depth, ...),
    as fio's jobs each do their share (io_size = size / jobs). This process starts them together,
    waits for them and fsyncs each stream's file when its last slot is done."""

    def __init__(self, job: Job):
        self.job = job
        self.streams = [StreamState(p, job.block_size_of(i)) for i, p in enumerate(job.files)]
        self.started = 0.0
        self.finished = 0.0
        self.interrupted = False  # halted by a signal (the summary is partial)
        self._flag = mmap.mmap(-1, mmap.PAGESIZE)  # shared with the slots: byte 0 set = halt
        self._halt = memoryview(self._flag).cast("B")
        self.done = threading.Event()
        self.io_path, self.io_why = "psync", ""  # decided by open()

    def open(self) -> None:
        """Open every stream's file and choose the I/O path (iopath.choose); OSError or
        LayoutError propagates for the caller."""
        self.io_path, self.io_why = iopath.choose(self.job.io, self.job.direct,
                                               self.job.queue_depth, len(self.job.files))
        flags = open_flags(self.job)
        for s in self.streams:
            s.fd = os.open(s.path, flags, 0o644)
            if self.job.mode in LAYOUT_MODES:
                have = os.lseek(s.fd, 0, os.SEEK_END)  # st_size is 0 for a block device
                if have < self.job.size:
                    raise LayoutError(
                        f"{s.path} holds {have} bytes, the test needs {self.job.size}: "
                        "lay it out first (--prepare)"
                    )

    def close(self) -> None:
        for s in self.streams:
            if s.fd >= 0:
                os.close(s.fd)
                s.fd = -1

    def halt(self, interrupted: bool = False) -> None:
        """Stop every slot after its current call; interrupted marks the result partial."""
        self.interrupted = self.interrupted or interrupted
        self._halt[0] = 1

    @property
    def halted(self) -> bool:
        return bool(self._halt[0])

    def errors(self) -> list[StreamState]:
        return [s for s in self.streams if s.error is not None]

    @property
    def fsync_seconds(self) -> float | None:
        """The longest of the streams' final fsyncs (they overlap); None when none ran."""
        times = [s.fsync_seconds for s in self.streams if s.fsync_seconds is not None]
        return max(times) if times else None

    def span(self) -> tuple[float, float]:
        """(first stream's start, last stream's end): the wall time the aggregate is over.
        Before any stream started, the run's own start and end."""
        begun = [s for s in self.streams if s.started]
        if not begun:
            return self.started, self.finished or self.started
        return min(s.started for s in begun), max(s.ended or s.started for s in begun)

    def run(self) -> None:
        """Fork the slots, start them together once all are ready (their buffers filled), reap
        them; each stream's file is fsynced when its last slot is done (inside the stream's
        timing, like dd's conv=fdatasync and fio's per-job end_fsync)."""
        job = self.job
        qd = job.queue_depth
        cap = max(1024, MAX_LATENCIES // (qd * len(self.streams)))
        shared = [_SlotMemory(qd, cap) for _ in self.streams]
        for s, mem in zip(self.streams, shared, strict=True):
            s.ops, s.lat_sum, s.lat_max = mem.ops, mem.lat_sum, mem.lat_max
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        owner: dict[int, int] = {}  # pid -> stream index
        try:
            try:
                for si, s in enumerate(self.streams):
                    order = block_order(job.size // s.block_size, job.mode in RANDOM_MODES,
                                        job.seed + si, s.block_size)
                    together = self.io_path in iopath.ASYNC_PATHS
                    groups = (aio.aio_groups(qd, AIO_PROCESSES_PER_STREAM) if together
                              else slot_groups(qd))
                    for g, slots in enumerate(groups):
                        pid = _fork_group(self, s, shared[si], slots, order, cap,
                                          (ready_r, ready_w, go_r, go_w),
                                          (g, len(groups)) if together else None)
                        owner[pid] = si
            finally:
                os.close(ready_w)
                os.close(go_r)
                for _ in owner:  # one byte from each slot: its buffer is filled
                    if not os.read(ready_r, 1):
                        break
                os.close(ready_r)
                self.started = time.perf_counter()
                os.close(go_w)  # end of file on every slot's go pipe: they all start now
            self._reap(owner, shared)
            self.finished = time.perf_counter()
        finally:
            for pid in list(owner):  # only after an error here: normally all were reaped
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
            for s, mem in zip(self.streams, shared, strict=True):
                mem.collect(s)
            self.done.set()

    def _reap(self, owner: dict[int, int], shared: list[_SlotMemory]) -> None:
        """Wait for every worker, in the order they end (pidfds: only our own children, never
        one of the process's others, as os.wait() would take when the Runner runs in-process);
        when a stream's last one is done, its fsync and end time."""
        left = [0] * len(self.streams)
        for si in owner.values():
            left[si] += 1
        fds = {os.pidfd_open(pid): pid for pid in owner}
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        try:
            while fds:
                for fd, _ in poller.poll():
                    poller.unregister(fd)
                    os.close(fd)
                    pid = fds.pop(fd)
                    self._worker_ended(pid, os.waitpid(pid, 0)[1], owner, left, shared)
        finally:
            for fd in fds:
                os.close(fd)

    def _worker_ended(self, pid: int, status: int, owner: dict[int, int], left: list[int],
                      shared: list[_SlotMemory]) -> None:
        si = owner.pop(pid, -1)
        if si >= 0:
            s = self.streams[si]
            code = os.waitstatus_to_exitcode(status)
            if code and s.error is None:
                s.error = OSError(errno.EIO, f"engine worker process ended with status {code}",
                                  s.path)
                self._halt[0] = 1
            left[si] -= 1
            if not left[si]:
                shared[si].errors(s, self.job.mode in WRITE_MODES)
                self._end_stream(s, shared[si])

    def _end_stream(self, s: StreamState, mem: _SlotMemory) -> None:
        """The stream's slots are all done: fsync a written file (unless the run was stopped by
        a signal or an error) and end the stream's clock: at its slots' last I/O (each slot
        records it), plus the fsync. Not when this process reaped the workers: their exit came
        between, and an AIO worker's io_destroy waits for an RCU grace period (~30 ms here,
        3 % of a 1 s run that fio, whose clock stops at the last completion, did not count)."""
        s.started = mem.first_start()
        io_end = mem.last_end() or time.perf_counter()
        job = self.job
        if job.mode in WRITE_MODES and job.fsync and not self.halted_early():
            t0 = time.perf_counter()
            try:
                os.fsync(s.fd)
            except OSError as e:
                s.error = e
            s.fsync_seconds = time.perf_counter() - t0
        s.ended = max(io_end + (s.fsync_seconds or 0.0), s.started)

    def halted_early(self) -> bool:
        """Stopped by a signal or an error (a runtime's end is not early)."""
        return self.interrupted or bool(self.errors())

    def totals(self) -> tuple[int, int]:
        b = o = 0
        for s in self.streams:
            sb, so = s.totals()
            b, o = b + sb, o + so
        return b, o


class _SlotMemory:
    """One stream's shared counters and latency samples (cap per slot). Each slot's int64
    fields fill cache lines of their own, so that a slot's counter update per call does not
    evict the line its neighbours on other CPUs write (false sharing); each field
    across the slots is a strided view that the report sums. Anonymous mmap is MAP_SHARED:
    what a forked slot writes, this process reads."""

    def __init__(self, qd: int, cap: int):
        self.qd, self.cap = qd, cap
        self.mem = mmap.mmap(-1, FIELDS * qd * 8)
        self.lat_mem = mmap.mmap(-1, max(qd * cap * 8, 8))
        view = memoryview(self.mem).cast("q")
        self.fields = [view[f::FIELDS] for f in range(FIELDS)]
        self.lat = memoryview(self.lat_mem).cast("q")
        self.ops, self.lat_sum, self.lat_max = (self.fields[OPS], self.fields[LAT_SUM],
                                                self.fields[LAT_MAX])

    def first_start(self) -> float:
        """The first slot's start (perf_counter seconds; 0.0 when none started)."""
        begun = [t for t in self.fields[STARTED] if t]
        return min(begun) / 1e9 if begun else 0.0

    def last_end(self) -> float:
        """The last slot's end of I/O (perf_counter seconds; 0.0 when none recorded one)."""
        ended = [t for t in self.fields[ENDED] if t]
        return max(ended) / 1e9 if ended else 0.0

    def errors(self, s: StreamState, write: bool) -> None:
        """The first error a slot of the stream recorded, as the OSError it was."""
        for ti in range(self.qd):
            kind = self.fields[ERR_KIND][ti]
            if kind == NO_ERROR or s.error is not None:
                continue
            code = self.fields[ERR_ERRNO][ti]
            s.error = (OSError(code, os.strerror(code), s.path) if kind == OS_ERROR
                       else _short_transfer(write, self.fields[ERR_N][ti], s.block_size, s.path))

    def collect(self, s: StreamState) -> None:
        """Copy the counters and samples out of shared memory (the report reads them after the
        run) and release it."""
        s.ops, s.lat_sum, s.lat_max = (self.ops.tolist(), self.lat_sum.tolist(),
                                       self.lat_max.tolist())
        s.latencies = [array("q", self.lat[ti * self.cap:ti * self.cap
                                           + self.fields[SAMPLES][ti]])
                       for ti in range(self.qd)]
        if not s.started:
            s.started = self.first_start()
            if s.started and not s.ended:
                s.ended = time.perf_counter()
        # the shared memory is unmapped when the last view of it goes: a reader of the live
        # counters (an interval line in the other thread) may still hold one


def slot_groups(queue_depth: int, cpus: int | None = None) -> list[list[int]]:
    """The stream's slots split into one group per worker process: as many processes as CPUs
    (at most one per slot), the slots dealt round-robin, each slot a thread of its process.

    Why not one process per slot: measured at 4 KiB and queue depth 32 on 2 vCPUs, 32
    processes spent 10-11 us of CPU per call against 6.5-7 us for 32 threads of one process
    (each process its own copy of the interpreter's memory, so caches and TLBs keep missing),
    and 32 threads of one process hand the GIL across CPUs on every call. A process per CPU
    keeps each GIL's hand-offs on one CPU and the working sets few."""
    n = max(1, min(queue_depth, cpus or os.cpu_count() or 1))
    return [list(range(g, queue_depth, n)) for g in range(n)]


def _fork_group(runner: Runner, s: StreamState, mem: _SlotMemory, slots: list[int],
                order: Sequence[int], cap: int, pipes: tuple[int, int, int, int],
                async_group: tuple[int, int] | None = None) -> int:
    """Fork one worker process running `slots` (a thread each, or, with `async_group` = (its
    number, how many share the stream), all of them in flight through the run's asynchronous
    path: uring.UringPath or aio.AioPath), each under loop.run; returns its pid. The child
    never returns: it runs its slots' share of the stream's calls and leaves with os._exit
    (no atexit, no flush of buffers it inherited)."""
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        _die_with(parent)
        # SIGTERM/SIGINT go to the engine process, which halts the slots through shared memory
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        ready_r, ready_w, go_r, go_w = pipes
        os.close(ready_r)
        os.close(go_w)
        job = runner.job
        if async_group is not None:
            _async_child(job, s, mem, slots, order, cap, runner._halt, async_group, ready_w,
                         go_r, runner.io_path)
        else:
            _thread_child(job, s, mem, slots, order, cap, runner._halt, ready_w, go_r)
        code = 0
    finally:
        os._exit(code)


def _thread_child(job: Job, s: StreamState, mem: _SlotMemory, slots: list[int],
                  order: Sequence[int], cap: int, halt: memoryview, ready_w: int, go_r: int
                  ) -> None:
    """A pread/pwrite worker's life: one buffer cut in a block per slot (one mapping: huge
    pages for all of them, see aligned_buffer), a thread per slot running the accounting loop
    over its own psync path (slot ti: blocks ti, ti + depth, ...), ready, go, join."""
    bs = s.block_size
    buf = aligned_buffer(bs * len(slots), fill=job.mode in WRITE_MODES)
    whole = memoryview(buf)
    write = job.mode in WRITE_MODES
    threads = [threading.Thread(
        target=native.run, daemon=True, kwargs={"python": job.loop == "python"},
        args=(PsyncPath(s.fd, write, whole[k * bs:(k + 1) * bs]),
              loop.LoopShare(order, ti, job.queue_depth, job.runtime > 0, bs, ti, cap, ti * cap),
              mem.fields, mem.lat, halt))
        for k, ti in enumerate(slots)]
    os.write(ready_w, b"r")
    os.close(ready_w)
    os.read(go_r, 1)  # end of file: the parent has started the clock
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _async_child(job: Job, s: StreamState, mem: _SlotMemory, slots: list[int],
                 order: Sequence[int], cap: int, halt: memoryview, group: tuple[int, int],
                 ready_w: int, go_r: int, path: str) -> None:
    """An io_uring or AIO worker's life (`path`): one buffer of len(slots) blocks, ready, go,
    its share of the stream's requests (blocks group, group + groups, ... of the order, all
    len(slots) in flight), counted in its first slot's entries; an error of the system calls
    themselves (the ring or the context refused) is recorded as a slot's."""
    buf = aligned_buffer(s.block_size * len(slots), fill=job.mode in WRITE_MODES)
    os.write(ready_w, b"r")
    os.close(ready_w)
    os.read(go_r, 1)
    ti = slots[0]
    share = loop.LoopShare(order, group[0], group[1], job.runtime > 0, s.block_size, ti,
                       cap * len(slots), ti * cap)
    try:
        kind = uring.UringPath if path == "uring" else aio.AioPath
        io = kind(s.fd, job.mode in WRITE_MODES, s.block_size, buf, len(slots))
    except OSError as e:
        if not mem.fields[ERR_KIND][ti]:
            mem.fields[ERR_ERRNO][ti] = e.errno or errno.EIO
            mem.fields[ERR_KIND][ti] = OS_ERROR
        halt[0] = 1
        return
    try:
        native.run(io, share, mem.fields, mem.lat, halt, python=job.loop == "python")
    finally:
        io.close()


def _die_with(parent: int) -> None:
    """Ask the kernel to SIGKILL this slot if the engine process dies (a SIGKILL it cannot
    catch), so that no slot outlives it issuing I/O."""
    with contextlib.suppress(OSError, AttributeError):
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the request
        os._exit(1)


def _short_transfer(write: bool, n: int, bs: int, path: str) -> OSError:
    """A short write is the filesystem filling up; a short read, a file that shrank."""
    if write:
        return OSError(errno.ENOSPC, f"short write ({n} of {bs} bytes)", path)
    return OSError(errno.ENODATA, f"short read ({n} of {bs} bytes): the file is shorter", path)


def prepare_file(path: str, size: int, direct: bool, halt: Sequence[bool] = (False,)) -> bool:
    """Lay out a file for a read or rewrite test: sequential 1 MiB writes, fsync, then drop
    its pages from the page cache (so a buffered read test reads the disk, even without root).
    Returns False when halted (by a signal) before the end."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (os.O_DIRECT if direct else 0)
    fd = os.open(path, flags, 0o644)
    buf = aligned_buffer(PREPARE_CHUNK, fill=True)
    view = memoryview(buf)
    try:
        done = 0
        while done < size:
            if halt[0]:
                return False
            n = min(PREPARE_CHUNK, size - done)
            try:
                written = os.pwrite(fd, view[:n], done)
            except OSError as e:
                if not (direct and e.errno == errno.EINVAL and n < PREPARE_CHUNK):
                    raise
                os.close(fd)  # an O_DIRECT tail smaller than the device's sector: buffered
                fd = os.open(path, os.O_WRONLY)
                written = os.pwrite(fd, view[:n], done)
            if written <= 0:
                raise _short_transfer(True, written, n, path)
            done += written
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return True
    finally:
        view.release()
        buf.close()
        os.close(fd)
