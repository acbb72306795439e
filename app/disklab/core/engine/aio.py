"""Linux native asynchronous I/O for the engine's O_DIRECT runs with queue depth > 1.

Why: with pread/pwrite a call in flight needs a thread (or process) of its own, and each call
costs the interpreter 7-8 us of CPU (the GIL's hand-offs, a process per CPU's cache misses);
on 2 vCPUs at 4 KiB and QD 32 that CPU is the throughput (bench figure 4). One process per
stream keeping all QD requests in flight with io_submit / io_getevents pays one system call a
batch, and per request only a few stores into the request blocks, as fio's libaio engine does.

Dependency-free: the raw system calls (io_setup, io_submit, io_getevents, io_destroy) through
libc's syscall() with ctypes; struct iocb and struct io_event laid out as the kernel's
include/uapi/linux/aio_abi.h (checked with sizeof). The hot loop writes and reads them through
int64 views of the same memory (one store per request instead of a ctypes attribute access).

Buffered files are not for this path: Linux runs AIO on the page cache synchronously inside
io_submit, so the engine keeps its pread/pwrite workers for them (engine/iopath.py). Where the
kernel allows io_uring (engine/uring.py), the engine takes that instead: one system call a
batch instead of two.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import time
from array import array
from collections.abc import Sequence
from typing import Any

# system call numbers per machine (arch/x86/entry/syscalls/syscall_64.tbl;
# include/uapi/asm-generic/unistd.h for arm64)
SYSCALLS = {
    "x86_64": {"io_setup": 206, "io_destroy": 207, "io_getevents": 208, "io_submit": 209},
    "aarch64": {"io_setup": 0, "io_destroy": 1, "io_submit": 2, "io_getevents": 4},
}
IOCB_CMD_PREAD, IOCB_CMD_PWRITE = 0, 1
WAIT_NS = 200_000_000  # io_getevents' timeout: how soon a halt is seen by a stalled stream

_LIBC = ctypes.CDLL(None, use_errno=True)


def _syscall_fn(argc: int) -> Any:
    """libc's syscall() typed for `argc` long arguments after the number: with argtypes, ctypes
    converts plain ints to 64 bits itself (untyped, it would pass 32-bit ints), at the least
    cost per call. A fresh function object each (_LIBC[...]), so the types do not clash."""
    fn = _LIBC["syscall"]
    fn.restype = ctypes.c_long
    fn.argtypes = [ctypes.c_long] * (argc + 1)
    return fn


def _untyped_syscall() -> Any:
    """libc's syscall() without argtypes, for the hot loop: called with ctypes.c_long objects
    built once, it passes them as they are (0.57 us a call here), where argtypes converting
    plain ints costs 1.3 us a call, twice a batch."""
    fn = _LIBC["syscall"]
    fn.restype = ctypes.c_long
    return fn


class Iocb(ctypes.Structure):
    """struct iocb (little-endian layout: aio_key before aio_rw_flags)."""

    _fields_ = [("aio_data", ctypes.c_uint64), ("aio_key", ctypes.c_uint32),
                ("aio_rw_flags", ctypes.c_int32), ("aio_lio_opcode", ctypes.c_uint16),
                ("aio_reqprio", ctypes.c_int16), ("aio_fildes", ctypes.c_uint32),
                ("aio_buf", ctypes.c_uint64), ("aio_nbytes", ctypes.c_uint64),
                ("aio_offset", ctypes.c_int64), ("aio_reserved2", ctypes.c_uint64),
                ("aio_flags", ctypes.c_uint32), ("aio_resfd", ctypes.c_uint32)]


class IoEvent(ctypes.Structure):
    """struct io_event: data (our slot number), obj (the iocb), res (bytes or -errno), res2."""

    _fields_ = [("data", ctypes.c_uint64), ("obj", ctypes.c_uint64), ("res", ctypes.c_int64),
                ("res2", ctypes.c_int64)]


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


assert ctypes.sizeof(Iocb) == 64 and ctypes.sizeof(IoEvent) == 32
_IOCB_WORDS, _EVENT_WORDS = 8, 4  # int64 words of each
_OFFSET_WORD = 5  # aio_offset within an iocb
_RES_WORD = 2  # res within an io_event


def _numbers() -> dict[str, int] | None:
    return SYSCALLS.get(platform.machine())


def _call(name: str, *args: int) -> int:
    """The raw system call; OSError(errno) when it fails."""
    nr = (_numbers() or {})[name]
    r = _syscall_fn(len(args))(nr, *args)
    if r < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{name}: {os.strerror(code)}")
    return r


def _proc_int(path: str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def unavailable(depth: int, total: int | None = None) -> str | None:
    """None when this machine can run AIO at `depth` requests a context and `total` in all
    (streams x queue depth), else why not (a sentence a user can act on)."""
    if _numbers() is None:
        return f"Linux native AIO is not wired for this machine ({platform.machine()})"
    limit, used = _proc_int("/proc/sys/fs/aio-max-nr"), _proc_int("/proc/sys/fs/aio-nr")
    if total and limit is not None and (used or 0) + total > limit:
        return (f"the run needs {total} AIO requests (streams x queue depth) and "
                f"fs.aio-max-nr allows {max(limit - (used or 0), 0)} more; raise it "
                "(sysctl fs.aio-max-nr) or use io = psync")
    ctx = ctypes.c_ulong(0)
    try:
        _call("io_setup", depth, ctypes.addressof(ctx))
    except OSError as e:
        why = {errno.ENOSYS: "the kernel has no AIO (CONFIG_AIO off)",
               errno.EAGAIN: "the system-wide limit of AIO requests (fs.aio-max-nr) is reached"}
        return f"Linux native AIO is not available: {why.get(e.errno or 0, e.strerror)}"
    _call("io_destroy", ctx.value)
    return None


def aio_groups(queue_depth: int, per_stream: int = 1) -> list[list[int]]:
    """The stream's slots split into `per_stream` processes, each a contiguous range (its
    latency samples then fill one contiguous part of the shared memory)."""
    n = max(1, min(per_stream, queue_depth))
    bounds = [queue_depth * g // n for g in range(n + 1)]
    return [list(range(bounds[g], bounds[g + 1])) for g in range(n)]


def run_slots(*, fd: int, write: bool, block_size: int, order: Sequence[int], group: int,
              groups: int, wrap: bool, buffer: Any, slots: list[int], cap: int,
              fields: list[memoryview], lat_out: memoryview, halt: memoryview,
              kinds: tuple[int, int, int, int, int, int, int, int, int, int, int]) -> None:
    """One process's share of a stream: blocks group, group + groups, ... of the stream's order
    (wrapping around when time-based), len(slots) requests kept in flight.

    Counted only from completed events whose res is the whole block (a negative res is the
    errno, a short one a full filesystem or a shrunk file: both end the run with what
    completed). Latency: from the io_submit that carried a request to the io_getevents that
    returned it. Counters go to the first slot's entries (the others stay 0: sums agree)."""
    (f_ops, f_lat_sum, f_lat_max, f_started, f_ended, f_samples, f_err_kind, f_err_errno,
     f_err_n, os_error, short) = kinds
    qd = len(slots)
    ti = slots[0]
    bs = block_size
    blocks = len(order)
    ctx = ctypes.c_ulong(0)
    _call("io_setup", qd, ctypes.addressof(ctx))
    raw = (ctypes.c_int64 * (_IOCB_WORDS * qd))()
    iocbs = (Iocb * qd).from_buffer(raw)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    opcode = IOCB_CMD_PWRITE if write else IOCB_CMD_PREAD
    for k in range(qd):
        cb = iocbs[k]
        cb.aio_data, cb.aio_lio_opcode, cb.aio_fildes = k, opcode, fd
        cb.aio_buf, cb.aio_nbytes = base + k * bs, bs
    words = memoryview(raw).cast("B").cast("q")
    addr = [ctypes.addressof(iocbs[k]) for k in range(qd)]
    offset_word = [_IOCB_WORDS * k + _OFFSET_WORD for k in range(qd)]
    ptrs = (ctypes.c_uint64 * qd)()
    ptrw = memoryview(ptrs).cast("B").cast("Q")
    ptrs_at = ctypes.addressof(ptrs)
    events = (ctypes.c_int64 * (_EVENT_WORDS * qd))()
    evw = memoryview(events).cast("B").cast("q")
    events_at = ctypes.addressof(events)
    wait = Timespec(0, WAIT_NS)
    wait_at = ctypes.addressof(wait)
    nr = _numbers() or {}
    c = ctypes.c_long
    sys_submit, sys_get, ctx_arg = c(nr["io_submit"]), c(nr["io_getevents"]), c(ctx.value)
    counts = [c(k) for k in range(qd + 1)]
    first_ptr = c(ptrs_at)
    get_args = (sys_get, ctx_arg, counts[1], counts[qd], c(events_at), c(wait_at))
    call = _untyped_syscall()
    clock = time.perf_counter_ns
    sub = [0] * qd
    lat = array("q")
    keep = lat.append
    limit = cap * qd
    mask = 0
    done_ops = lat_sum = lat_max = 0
    ops_field = fields[f_ops]
    p = group  # the next position in the order (unbounded when wrapping)

    def fail(kind: int, code: int, n: int = 0) -> None:
        if fields[f_err_kind][ti] == 0:
            fields[f_err_errno][ti] = code
            fields[f_err_n][ti] = n
            fields[f_err_kind][ti] = kind
        halt[0] = 1

    def submit(n: int, done: int = 0) -> int:
        """io_submit the first n pointers (`done` of them already taken); returns how many the
        kernel took in all."""
        while done < n:  # the kernel may take fewer than asked: the rest in the next call
            r = call(sys_submit, ctx_arg, counts[n - done],
                     first_ptr if not done else c(ptrs_at + 8 * done))
            if r < 0:
                code = ctypes.get_errno()
                if code == errno.EINTR:
                    continue
                fail(os_error, code)  # the requests not taken are not counted
                return done
            done += r
        return done

    fields[f_started][ti] = clock()
    inflight = 0
    try:
        n = 0
        while n < qd and not halt[0]:
            if p >= blocks:
                if not wrap:
                    break
                p %= blocks
            words[offset_word[n]] = order[p] * bs
            ptrw[n] = addr[n]
            p += groups
            n += 1
        t = clock()
        for k in range(n):
            sub[k] = t
        inflight = submit(n)
        while inflight:
            got = call(*get_args)
            if got < 0:
                code = ctypes.get_errno()
                if code == errno.EINTR:
                    continue
                fail(os_error, code)
                break
            now = clock()
            inflight -= got
            n = 0
            stop = halt[0]
            for j in range(0, got * _EVENT_WORDS, _EVENT_WORDS):
                slot = evw[j]
                res = evw[j + _RES_WORD]
                if res != bs:
                    if res < 0:
                        fail(os_error, -res)
                    else:
                        fail(short, 0, res)
                    stop = 1
                    continue
                d = now - sub[slot]
                done_ops += 1
                lat_sum += d
                if d > lat_max:
                    lat_max = d
                if not done_ops & mask:
                    keep(d)
                    if len(lat) >= limit:
                        lat = lat[1::2]  # keep the samples of every 2nd sampled op
                        keep = lat.append
                        mask = mask * 2 + 1
                if stop:
                    continue
                if p >= blocks:
                    if not wrap:
                        continue
                    p %= blocks  # a time-based run wraps around the file
                words[offset_word[slot]] = order[p] * bs
                ptrw[n] = addr[slot]
                sub[slot] = now  # the request's clock starts as it is prepared (fio's too)
                p += groups
                n += 1
            ops_field[ti] = done_ops
            if n:
                r = call(sys_submit, ctx_arg, counts[n], first_ptr)  # inline: once a batch
                inflight += n if r == n else submit(n, max(r, 0))
    finally:
        # the I/O ends at the last completion reaped: io_destroy waits for an RCU grace period
        # (~30 ms), which fio's clock, stopped at its last completion, does not count either
        fields[f_ended][ti] = clock()
        _call("io_destroy", ctx.value)  # waits for whatever is still in flight
        fields[f_lat_sum][ti] = lat_sum
        fields[f_lat_max][ti] = lat_max
        kept = min(len(lat), limit)
        lat_out[ti * cap:ti * cap + kept] = lat[:kept]
        fields[f_samples][ti] = kept
