"""The engine's hot loop: threads issuing pread/pwrite at offsets they take from a shared order.

Kept lean because the bench compares it with dd and fio: no allocation per operation (one
page-aligned mmap buffer per thread, filled once with random bytes so compressing filesystems do
not flatter writes), one latency sample per `stride` operations, counters each thread owns.
"""

from __future__ import annotations

import itertools
import math
import mmap
import os
import threading
import time
from array import array
from dataclasses import dataclass, field

MAX_LATENCIES = 1_000_000  # latency samples kept per run (evenly strided beyond that)

WRITE_MODES = ("write", "rewrite", "randwrite")
RANDOM_MODES = ("randread", "randwrite")


@dataclass
class Job:
    mode: str
    files: list[str]
    block_size: int
    size: int  # per stream
    queue_depth: int = 1
    direct: bool = False
    sync: bool = False
    fsync: bool = True
    runtime: float = 0.0  # > 0: run this long, wrapping around the file
    seed: int = 1


@dataclass
class StreamState:
    """One file and its threads' counters (each thread writes only its own slot)."""

    path: str
    fd: int = -1
    bytes: list[int] = field(default_factory=list)
    ops: list[int] = field(default_factory=list)
    latencies: list[array] = field(default_factory=list)
    error: str | None = None


class Permutation:
    """Each block index once in a pseudo-random order, without a table: i -> (a*i + c) mod n
    with a coprime to n. A 256 GiB file in 4 KiB blocks would need 0.5 GiB for a shuffled list."""

    def __init__(self, n: int, seed: int):
        self.n = n
        a = (0x9E3779B97F4A7C15 + 2 * seed) % max(n, 1) or 1
        while math.gcd(a, n) != 1:
            a += 1
        self.a = a
        self.c = (seed * 0x632BE59BD9B4E019) % max(n, 1)

    def __getitem__(self, i: int) -> int:
        return (self.a * i + self.c) % self.n


def open_flags(job: Job, prepare: bool = False) -> int:
    if job.mode == "write" and not prepare:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    elif job.mode in WRITE_MODES or prepare:
        flags = os.O_WRONLY | os.O_CREAT if prepare else os.O_WRONLY
    else:
        flags = os.O_RDONLY
    if job.direct:
        flags |= os.O_DIRECT
    if job.sync and job.mode in WRITE_MODES and not prepare:
        flags |= os.O_SYNC
    return flags


def aligned_buffer(size: int, fill: bool) -> mmap.mmap:
    buf = mmap.mmap(-1, size)
    if fill:
        buf.write(os.urandom(size))
        buf.seek(0)
    return buf


class Runner:
    """Runs a Job: streams x queue_depth threads, then fsync; `stop` ends it early."""

    def __init__(self, job: Job):
        self.job = job
        self.stop = threading.Event()
        self.streams = [StreamState(p) for p in job.files]
        self.blocks = job.size // job.block_size
        self.started = 0.0
        self.finished = 0.0
        self.fsync_seconds = 0.0

    def open(self) -> None:
        """Open every stream's file; OSError propagates for the caller to explain."""
        flags = open_flags(self.job)
        for s in self.streams:
            s.fd = os.open(s.path, flags, 0o644)

    def close(self) -> None:
        for s in self.streams:
            if s.fd >= 0:
                os.close(s.fd)
                s.fd = -1

    def run(self) -> None:
        job = self.job
        total_ops = self.blocks * len(self.streams)
        stride = max(1, total_ops // MAX_LATENCIES)
        threads = []
        for si, s in enumerate(self.streams):
            order = Permutation(self.blocks, job.seed + si) if job.mode in RANDOM_MODES else None
            counter = itertools.count()
            s.bytes = [0] * job.queue_depth
            s.ops = [0] * job.queue_depth
            s.latencies = [array("q") for _ in range(job.queue_depth)]
            for ti in range(job.queue_depth):
                t = threading.Thread(target=self._loop, args=(s, ti, counter, order, stride),
                                     daemon=True)
                threads.append(t)
        self.started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if job.mode in WRITE_MODES and job.fsync and not self.stop.is_set():
            t0 = time.perf_counter()
            for s in self.streams:
                os.fsync(s.fd)
            self.fsync_seconds = time.perf_counter() - t0
        self.finished = time.perf_counter()

    def _loop(self, s: StreamState, ti: int, counter: itertools.count,
              order: Permutation | None, stride: int) -> None:
        job = self.job
        bs = job.block_size
        blocks = self.blocks
        write = job.mode in WRITE_MODES
        buf = aligned_buffer(bs, fill=write)
        view = memoryview(buf)
        fd = s.fd
        lat = s.latencies[ti]
        clock = time.perf_counter_ns
        pwrite, preadv = os.pwrite, os.preadv
        bufs = [view]
        stop = self.stop
        deadline = time.perf_counter() + job.runtime if job.runtime > 0 else 0.0
        done_bytes = done_ops = 0
        try:
            for i in counter:
                if i >= blocks:
                    if not deadline or time.perf_counter() >= deadline:
                        break
                    i %= blocks
                if stop.is_set():
                    break
                off = (order[i] if order is not None else i) * bs
                t0 = clock()
                n = pwrite(fd, view, off) if write else preadv(fd, bufs, off)
                t1 = clock()
                if n <= 0:
                    break
                done_bytes += n
                done_ops += 1
                s.bytes[ti] = done_bytes
                s.ops[ti] = done_ops
                if done_ops % stride == 0:
                    lat.append(t1 - t0)
        except OSError as e:
            s.error = f"{s.path}: {e.strerror}"
            stop.set()
        finally:
            view.release()
            buf.close()

    def totals(self) -> tuple[int, int]:
        return (sum(sum(s.bytes) for s in self.streams), sum(sum(s.ops) for s in self.streams))


def prepare_file(path: str, size: int, direct: bool) -> None:
    """Lay out a file for a read or rewrite test: sequential 1 MiB writes, then fsync."""
    chunk = 1 << 20
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (os.O_DIRECT if direct else 0)
    fd = os.open(path, flags, 0o644)
    buf = aligned_buffer(chunk, fill=True)
    view = memoryview(buf)
    try:
        done = 0
        while done < size:
            n = min(chunk, size - done)
            if direct and n % 4096:
                os.close(fd)
                fd = os.open(path, os.O_WRONLY)
            done += os.pwrite(fd, view[:n], done)
        os.fsync(fd)
    finally:
        view.release()
        buf.close()
        os.close(fd)
