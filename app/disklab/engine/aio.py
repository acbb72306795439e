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
from collections.abc import Callable, Iterable
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


class AioPath:
    """The Linux AIO path for loop.run (loop.IoPath): one context of `depth` requests, a
    request block (struct iocb) per slot written once (its buffer block, file, opcode and
    aio_data: the slot); a batch writes each request's offset into its iocb and its address
    into the pointer array, and submit_reap makes one io_submit of the batch and one
    io_getevents for at least one completion, whose slots and results are copied out of the
    event array as two lists (one strided copy each), handed to the loop zipped."""

    submit_reap: Callable[[int], Iterable[tuple[int, int]]]  # made by _submitter

    def __init__(self, fd: int, write: bool, block_size: int, buffer: Any, depth: int):
        self.depth, self.inflight = depth, 0
        self.split = depth + 1  # a batch in one io_submit (loop.IoPath): see submit
        self.batch_slot, self.batch_offset = [0] * depth, [0] * depth
        self._ctx = ctypes.c_ulong(0)
        _call("io_setup", depth, ctypes.addressof(self._ctx))
        self._raw = (ctypes.c_int64 * (_IOCB_WORDS * depth))()
        iocbs = (Iocb * depth).from_buffer(self._raw)
        base = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
        opcode = IOCB_CMD_PWRITE if write else IOCB_CMD_PREAD
        for k in range(depth):
            cb = iocbs[k]
            cb.aio_data, cb.aio_lio_opcode, cb.aio_fildes = k, opcode, fd
            cb.aio_buf, cb.aio_nbytes = base + k * block_size, block_size
        self._words = memoryview(self._raw).cast("B").cast("q")
        self._addr = [ctypes.addressof(iocbs[k]) for k in range(depth)]
        self._offset_word = [_IOCB_WORDS * k + _OFFSET_WORD for k in range(depth)]
        self._ptrs = (ctypes.c_uint64 * depth)()
        self._ptrw = memoryview(self._ptrs).cast("B").cast("Q")
        self._events = (ctypes.c_int64 * (_EVENT_WORDS * depth))()
        self._evw = memoryview(self._events).cast("B").cast("q")
        self._wait = Timespec(0, WAIT_NS)
        nr = _numbers() or {}
        c = ctypes.c_long
        # the calls' arguments as ctypes longs built once, for an untyped syscall()
        self._call = _untyped_syscall()
        self._submit = (c(nr["io_submit"]), c(self._ctx.value))
        self._counts = [c(k) for k in range(depth + 1)]
        self._first = c(ctypes.addressof(self._ptrs))
        self._get = (c(nr["io_getevents"]), c(self._ctx.value), self._counts[1],
                     self._counts[depth], c(ctypes.addressof(self._events)),
                     c(ctypes.addressof(self._wait)))
        self.submit_reap = self._submitter()

    def _submitter(self) -> Callable[[int], Iterable[tuple[int, int]]]:
        """submit_reap as a closure over the request blocks' views and the calls' arguments
        (no attribute looked up a batch, as uring.UringPath's): write the batch's offsets and
        pointers, one io_submit, one io_getevents, the events copied out as two lists."""
        words, ptrw, addr, offset_word = self._words, self._ptrw, self._addr, self._offset_word
        slots, offsets = self.batch_slot, self.batch_offset
        counts, first = self._counts, self._first
        call, (sys_submit, ctx), get, evw = self._call, self._submit, self._get, self._evw
        get_errno, rest = ctypes.get_errno, self._submit_rest

        def submit_reap(n: int) -> Iterable[tuple[int, int]]:
            for k in range(n):
                slot = slots[k]
                words[offset_word[slot]] = offsets[k]
                ptrw[k] = addr[slot]
            if n:
                r = call(sys_submit, ctx, counts[n], first)
                taken = n if r == n else rest(n, max(r, 0))
                self.inflight += taken
                if taken < n:  # refused: they come back failed now, the rest at the next
                    code = get_errno() or errno.EIO
                    return [(slot, -code) for slot in slots[taken:n]]
            if not self.inflight:
                return ()
            got = call(*get)
            if got < 0:
                code = get_errno()
                if code == errno.EINTR:
                    return ()
                raise OSError(code, f"io_getevents: {os.strerror(code)}")
            self.inflight -= got
            end = got * _EVENT_WORDS
            return zip(evw[0:end:_EVENT_WORDS].tolist(),  # noqa: B905 (as long by construction)
                       evw[_RES_WORD:end:_EVENT_WORDS].tolist())

        return submit_reap

    def submit(self, n: int) -> None:
        """Never called (split > depth). AIO is the fallback where io_uring is forbidden; an
        io_submit of a batch's first part would have to carry the requests it refuses to the
        next reap, and the split was measured on io_uring only (bench/README.md, figure 4)."""
        raise NotImplementedError("the AIO path submits a batch in one io_submit")

    def _submit_rest(self, n: int, done: int) -> int:
        """io_submit the pointers from `done` on, the kernel having taken fewer than asked;
        returns how many it took in all, fewer than n when it refused (errno left set)."""
        nr, ctx = self._submit
        at = ctypes.addressof(self._ptrs)
        while done < n:
            r = self._call(nr, ctx, self._counts[n - done], ctypes.c_long(at + 8 * done))
            if r < 0:
                if ctypes.get_errno() == errno.EINTR:
                    continue
                return done
            done += r
        return done

    def close(self) -> None:
        """io_destroy: waits for whatever is still in flight (and an RCU grace period)."""
        if self._ctx.value:
            _call("io_destroy", self._ctx.value)
            self._ctx.value = 0
