"""The engine's hot loop: threads issuing pread/pwrite at offsets they take from a shared order.

Kept lean because the bench compares it with dd and fio: no allocation per operation (one
page-aligned mmap buffer per thread, filled once with random bytes so that compressing
filesystems do not flatter writes), counters each thread owns, one latency sample per
operation until a cap, then every 2nd, 4th... (the mean stays exact: a running sum).
The GIL is released inside every pread/pwrite, so queue_depth threads keep that many calls
in flight on a stream, as fio's psync engine does with as many jobs.
"""

from __future__ import annotations

import errno
import itertools
import math
import mmap
import os
import random
import threading
import time
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

MAX_LATENCIES = 1 << 20  # latency samples kept per run, over all threads
TABLE_LIMIT = 1 << 18  # random orders up to this many blocks are a shuffled table
PREPARE_CHUNK = 1 << 20

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

    def block_size_of(self, stream: int) -> int:
        """The block size stream number `stream` issues its calls in."""
        return self.stream_block_sizes[stream] if self.stream_block_sizes else self.block_size


@dataclass
class StreamState:
    """One file and its threads' counters; each thread writes only its own slot. Only whole
    blocks are counted (a short transfer ends the run), so bytes are ops * block_size: one
    counter per call instead of two in the hot loop.

    `started` and `ended` (perf_counter seconds) bound the stream's own active time: from the
    first of its threads entering the loop to the last one leaving it (after the stream's fsync).
    A stream's rate is its bytes over that time, not over the whole run's, so a slow stream
    next to fast ones shows as slow. Read twice per thread, never per call."""

    path: str
    block_size: int = 0
    fd: int = -1
    ops: list[int] = field(default_factory=list)
    lat_sum: list[int] = field(default_factory=list)
    lat_max: list[int] = field(default_factory=list)
    latencies: list[array] = field(default_factory=list)
    error: OSError | None = None
    started: float = 0.0
    ended: float = 0.0
    fsync_seconds: float | None = None  # None: no fsync ran
    running: int = 0  # threads still in the loop; the last one out fsyncs and closes the time
    lock: threading.Lock = field(default_factory=threading.Lock)

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
    file. The last r < m blocks follow in an order of their own.
    """

    def __init__(self, n: int, seed: int):
        rng = random.Random(seed)
        self.n = n
        self.m = max(1, math.isqrt(n))
        self.q = n // self.m
        self.grid = self.q * self.m
        self.p = _shuffled(self.m, rng)
        self.pq = _shuffled(self.q, rng)
        self.tail = _shuffled(n - self.grid, rng)

    def __getitem__(self, i: int) -> int:
        if i < self.grid:
            a, b = divmod(i, self.m)
            return self.p[b] * self.q + self.pq[a]
        return self.grid + self.tail[i - self.grid]

    def __len__(self) -> int:
        return self.n


def _shuffled(n: int, rng: random.Random) -> array:
    table = list(range(n))
    rng.shuffle(table)
    return array("q", table)


def block_order(blocks: int, random_order: bool, seed: int) -> Sequence[int]:
    """Block indices in the order a stream visits them (each once per pass)."""
    if not random_order:
        return range(blocks)
    if blocks <= TABLE_LIMIT:
        return _shuffled(blocks, random.Random(seed))
    return GridOrder(blocks, seed)


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


def aligned_buffer(size: int, fill: bool) -> mmap.mmap:
    """Page-aligned memory (O_DIRECT needs it: a bytearray is not aligned)."""
    buf = mmap.mmap(-1, size)
    if fill:
        buf.write(os.urandom(size))
        buf.seek(0)
    return buf


class LayoutError(Exception):
    """A file a read or rewrite test needs is missing or too short."""


class Runner:
    """Runs a Job: streams x queue_depth threads, then fsync. halt() ends it early."""

    def __init__(self, job: Job):
        self.job = job
        self.streams = [StreamState(p, job.block_size_of(i)) for i, p in enumerate(job.files)]
        self.started = 0.0
        self.finished = 0.0
        self.interrupted = False  # halted by a signal (the summary is partial)
        self._halt = [False]  # a list: the hot loop reads it without a method call
        self.done = threading.Event()

    def open(self) -> None:
        """Open every stream's file; OSError or LayoutError propagates for the caller."""
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
        """Stop every thread after its current call; interrupted marks the result partial."""
        self.interrupted = self.interrupted or interrupted
        self._halt[0] = True

    @property
    def halted(self) -> bool:
        return self._halt[0]

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
        """All the threads; each stream's last thread fsyncs its file (inside the stream's
        timing, like dd's conv=fdatasync and fio's per-job end_fsync)."""
        job = self.job
        qd = job.queue_depth
        cap = max(1024, MAX_LATENCIES // (qd * len(self.streams)))
        write = job.mode in WRITE_MODES
        threads = []
        for si, s in enumerate(self.streams):
            blocks = job.size // s.block_size
            order = block_order(blocks, job.mode in RANDOM_MODES, job.seed + si)
            counter = itertools.count()
            s.ops, s.lat_sum, s.lat_max = [0] * qd, [0] * qd, [0] * qd
            s.latencies = [array("q") for _ in range(qd)]
            s.running = qd
            for ti in range(qd):
                buf = aligned_buffer(s.block_size, fill=write)  # before the clock starts
                threads.append(threading.Thread(
                    target=self._loop, args=(s, ti, counter, order, blocks, cap, buf),
                    daemon=True, name=f"stream{si}-{ti}"))
        try:
            self.started = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.finished = time.perf_counter()
        finally:
            self.done.set()

    def _enter(self, s: StreamState) -> None:
        """A thread of `s` starts: the stream's clock starts with its first thread."""
        now = time.perf_counter()
        with s.lock:
            if not s.started:
                s.started = now

    def _leave(self, s: StreamState) -> None:
        """A thread of `s` is done: the last one fsyncs a written file (unless the run was
        stopped by a signal or an error) and ends the stream's clock."""
        with s.lock:
            s.running -= 1
            if s.running:
                return
        job = self.job
        if job.mode in WRITE_MODES and job.fsync and not self.halted_early():
            t0 = time.perf_counter()
            try:
                os.fsync(s.fd)
            except OSError as e:
                s.error = e
            s.fsync_seconds = time.perf_counter() - t0
        s.ended = time.perf_counter()

    def halted_early(self) -> bool:
        """Stopped by a signal or an error (a runtime's end is not early)."""
        return self.interrupted or bool(self.errors())

    def _loop(self, s: StreamState, ti: int, counter: itertools.count, order: Sequence[int],
              blocks: int, cap: int, buf: mmap.mmap) -> None:
        """One thread's calls. Every bytecode here runs holding the GIL, which the other
        threads of the stream need as soon as their call returns: the shorter this is, the
        fewer of them wait (bench figure 4, 4 KiB at queue depth 8)."""
        job = self.job
        bs = s.block_size
        write = job.mode in WRITE_MODES
        view = memoryview(buf)
        io, arg = (os.pwrite, view) if write else (os.preadv, [view])
        fd = s.fd
        clock = time.perf_counter_ns
        halt = self._halt
        wrap = job.runtime > 0
        lat = s.latencies[ti]
        keep = lat.append
        mask = 0  # a latency sample when done_ops & mask == 0: every op, then every 2nd...
        ops_slot = s.ops
        done_ops = lat_sum = lat_max = 0
        self._enter(s)
        try:
            for i in counter:
                if halt[0]:
                    break
                if i >= blocks:
                    if not wrap:
                        break
                    i %= blocks
                t0 = clock()
                n = io(fd, arg, order[i] * bs)
                d = clock() - t0
                if n != bs:
                    raise _short_transfer(write, n, bs, s.path)
                done_ops += 1
                ops_slot[ti] = done_ops
                lat_sum += d
                if d > lat_max:
                    lat_max = d
                if not done_ops & mask:
                    keep(d)
                    if len(lat) >= cap:
                        lat = lat[1::2]  # keep the samples of every 2nd sampled op
                        s.latencies[ti] = lat
                        keep = lat.append
                        mask = mask * 2 + 1
        except OSError as e:
            if s.error is None:
                s.error = e
            halt[0] = True
        finally:
            s.lat_sum[ti] = lat_sum
            s.lat_max[ti] = lat_max
            view.release()
            buf.close()
            self._leave(s)

    def totals(self) -> tuple[int, int]:
        b = o = 0
        for s in self.streams:
            sb, so = s.totals()
            b, o = b + sb, o + so
        return b, o


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
