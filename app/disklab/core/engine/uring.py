"""Linux io_uring for the engine's O_DIRECT runs with queue depth > 1.

Why, beside engine/aio.py: with Linux AIO a batch costs two system calls from Python
(io_getevents, then io_submit, each a ctypes call plus the kernel's copy of the iocbs); with
io_uring the requests are written into a ring shared with the kernel and one io_uring_enter both
submits what was queued and waits for the next completion, whose results are then read from the
completion ring without a call. The buffer and the file are registered once (fixed buffers: no
page pinning per O_DIRECT request). At 4 KiB the time between a batch's completions and its
resubmission is where the engine lost against fio; measured A/B (9 pairs, bench figure 4's
method), this path reads 2.7 % (QD 8) and 3.5 % (4 streams x QD 8) faster than the AIO one, on
a par with fio's io_uring engine (bench/README.md).

Dependency-free, like aio.py: the raw system calls (io_uring_setup, io_uring_enter,
io_uring_register) through libc's syscall() with ctypes, the rings mapped with mmap and read and
written through memoryviews, laid out as the kernel's include/uapi/linux/io_uring.h.

x86-64 only: the rings are shared memory the kernel reads with acquire/release ordering, and
Python cannot issue a fence; on x86-64 stores become visible in program order (TSO), so a
request's fields are seen before the tail that publishes it. Elsewhere the engine takes AIO.

Needs Linux 5.11 (IORING_FEAT_EXT_ARG: a wait with a timeout, so that a halt is seen by a stream
whose device stalls); containers often forbid io_uring (seccomp, kernel.io_uring_disabled):
`unavailable` says why and the engine takes AIO.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import mmap
import os
import platform
import time
from array import array
from collections.abc import Sequence
from typing import Any

SYSCALLS = {"x86_64": {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}}
OP_READ_FIXED, OP_WRITE_FIXED = 4, 5  # IORING_OP_*: into a registered buffer
OP_READ, OP_WRITE = 22, 23  # into any buffer (Linux 5.6)
SQE_FIXED_FILE = 1  # IOSQE_FIXED_FILE: fd is an index into the registered files
ENTER_GETEVENTS, ENTER_EXT_ARG = 1, 8
SETUP_COOP_TASKRUN, SETUP_SINGLE_ISSUER, SETUP_DEFER_TASKRUN = 1 << 8, 1 << 12, 1 << 13
FEAT_SINGLE_MMAP, FEAT_EXT_ARG = 1, 1 << 8
REGISTER_BUFFERS, UNREGISTER_BUFFERS, REGISTER_FILES, UNREGISTER_FILES = 0, 1, 2, 3
OFF_SQ_RING, OFF_CQ_RING, OFF_SQES = 0, 0x8000000, 0x10000000
# Setup flags, most to least useful: completions run in the waiting task itself, when it waits
# (DEFER_TASKRUN, 6.1), or at least without an interrupt (COOP_TASKRUN, 5.19); older kernels
# take the plain ring.
SETUP_CHOICES = (SETUP_SINGLE_ISSUER | SETUP_DEFER_TASKRUN, SETUP_COOP_TASKRUN, 0)
WAIT_NS = 200_000_000  # the wait's timeout: how soon a halt is seen by a stalled stream
# io_uring_enter's failures that are not the run's: a signal, the wait's timeout, the kernel
# short of memory for a moment or its completion queue full (it is twice the requests here)
RETRY = (errno.EINTR, errno.ETIME, errno.EAGAIN, errno.EBUSY)

_LIBC = ctypes.CDLL(None, use_errno=True)


class Params(ctypes.Structure):
    """struct io_uring_params with its io_sqring_offsets and io_cqring_offsets as u32 arrays:
    sq_off = head, tail, ring_mask, ring_entries, flags, dropped, array, resv1, user_addr (2);
    cq_off = head, tail, ring_mask, ring_entries, overflow, cqes, flags, resv1, user_addr (2)."""

    _fields_ = [("sq_entries", ctypes.c_uint32), ("cq_entries", ctypes.c_uint32),
                ("flags", ctypes.c_uint32), ("sq_thread_cpu", ctypes.c_uint32),
                ("sq_thread_idle", ctypes.c_uint32), ("features", ctypes.c_uint32),
                ("wq_fd", ctypes.c_uint32), ("resv", ctypes.c_uint32 * 3),
                ("sq_off", ctypes.c_uint32 * 10), ("cq_off", ctypes.c_uint32 * 10)]


class GeteventsArg(ctypes.Structure):
    """struct io_uring_getevents_arg: the wait's timeout (ts points at a timespec)."""

    _fields_ = [("sigmask", ctypes.c_uint64), ("sigmask_sz", ctypes.c_uint32),
                ("min_wait_usec", ctypes.c_uint32), ("ts", ctypes.c_uint64)]


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_int64), ("tv_nsec", ctypes.c_int64)]


class Iovec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_uint64), ("iov_len", ctypes.c_uint64)]


assert ctypes.sizeof(Params) == 120 and ctypes.sizeof(GeteventsArg) == 24
_SQE_WORDS, _CQE_BYTES = 8, 16  # a submission entry in int64 words, a completion in bytes
_SQ_HEAD, _SQ_TAIL, _SQ_MASK, _SQ_ARRAY = 0, 1, 2, 6  # indexes into sq_off
_CQ_HEAD, _CQ_TAIL, _CQ_MASK, _CQ_CQES = 0, 1, 2, 5  # indexes into cq_off


def _numbers() -> dict[str, int] | None:
    return SYSCALLS.get(platform.machine())


def _syscall(name: str, *args: int) -> int:
    """The raw system call with its arguments as longs; OSError(errno) when it fails."""
    fn = _LIBC["syscall"]
    fn.restype = ctypes.c_long
    fn.argtypes = [ctypes.c_long] * (len(args) + 1)
    r = fn((_numbers() or {})[name], *args)
    if r < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{name}: {os.strerror(code)}")
    return r


class Ring:
    """One io_uring: the file descriptor, its rings mapped, their fields as memoryview
    indexes. `close` unmaps and closes; in-flight requests are then cancelled by the kernel."""

    def __init__(self, entries: int):
        self.params = Params()
        self.fd = -1
        for flags in SETUP_CHOICES:
            self.params = Params(flags=flags)
            try:
                self.fd = _syscall("io_uring_setup", entries, ctypes.addressof(self.params))
                break
            except OSError as e:
                if e.errno != errno.EINVAL or flags == SETUP_CHOICES[-1]:
                    raise
        p = self.params
        self._maps: list[mmap.mmap] = []
        self.registered = False
        try:
            if not p.features & FEAT_EXT_ARG:
                raise OSError(errno.ENOSYS, "io_uring without IORING_FEAT_EXT_ARG (Linux < 5.11)")
            sq_size = p.sq_off[_SQ_ARRAY] + 4 * p.sq_entries
            cq_size = p.cq_off[_CQ_CQES] + _CQE_BYTES * p.cq_entries
            if p.features & FEAT_SINGLE_MMAP:
                sq = cq = self._map(max(sq_size, cq_size), OFF_SQ_RING)
            else:
                sq, cq = self._map(sq_size, OFF_SQ_RING), self._map(cq_size, OFF_CQ_RING)
            self.sqes = memoryview(self._map(64 * p.sq_entries, OFF_SQES)).cast("q")
            self.sq = memoryview(sq).cast("B")[:len(sq) // 4 * 4].cast("I")
            self.cq = memoryview(cq).cast("B")[:len(cq) // 4 * 4].cast("I")
            self.cq_res = memoryview(cq).cast("B")[:len(cq) // 4 * 4].cast("i")
            self.cq64 = memoryview(cq).cast("B")[:len(cq) // 8 * 8].cast("Q")
        except BaseException:
            self.close()
            raise

    def _map(self, size: int, offset: int) -> mmap.mmap:
        m = mmap.mmap(self.fd, size, mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0),
                      mmap.PROT_READ | mmap.PROT_WRITE, offset=offset)
        self._maps.append(m)
        return m

    def register(self, buffer_at: int, buffer_len: int, fd: int) -> tuple[bool, bool]:
        """The worker's buffer and the stream's file, registered once: a fixed buffer is pinned
        once instead of at every O_DIRECT request, a fixed file looked up once. (buffer, file):
        which of the two the kernel took. The buffer may be refused: its pages count against
        the user's RLIMIT_MEMLOCK (often 8 MiB) without CAP_IPC_LOCK; the ring then reads into
        the plain buffer, as fio's io_uring engine does by default."""
        self.registered = True
        taken = []
        iov = Iovec(buffer_at, buffer_len)
        files = ctypes.c_int32(fd)
        for op, at in ((REGISTER_BUFFERS, ctypes.addressof(iov)),
                       (REGISTER_FILES, ctypes.addressof(files))):
            try:
                _syscall("io_uring_register", self.fd, op, at, 1)
                taken.append(True)
            except OSError:
                taken.append(False)
        return taken[0], taken[1]

    def close(self) -> None:
        """Unregister the file and buffer, unmap, close. The unregistering is not optional:
        a ring's teardown after close() runs later in a kernel worker, and a file registered
        with it stays open until then: the filesystem under it could not be unmounted right
        after the run ("target is busy"), as a scratch filesystem's teardown does."""
        if self.registered and self.fd >= 0:
            for op in (UNREGISTER_FILES, UNREGISTER_BUFFERS):
                with contextlib.suppress(OSError):
                    _syscall("io_uring_register", self.fd, op, 0, 0)
            self.registered = False
        for name in ("sqes", "sq", "cq", "cq_res", "cq64"):
            view = self.__dict__.pop(name, None)
            if view is not None:
                view.release()
        for m in self._maps:
            m.close()
        self._maps.clear()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def unavailable() -> str | None:
    """None when this machine can run the engine's io_uring path, else why not (a sentence a
    user can act on)."""
    if _numbers() is None:
        return f"the engine's io_uring path is wired for x86-64 only ({platform.machine()})"
    try:
        ring = Ring(2)
    except OSError as e:
        why = {errno.ENOSYS: "the kernel has no io_uring",
               errno.EPERM: "io_uring is forbidden here (kernel.io_uring_disabled, or a "
                            "container's seccomp profile)"}
        return f"io_uring is not available: {why.get(e.errno or 0, e.strerror)}"
    ring.close()
    return None


def run_slots(*, fd: int, write: bool, block_size: int, order: Sequence[int], group: int,
              groups: int, wrap: bool, buffer: Any, slots: list[int], cap: int,
              fields: list[memoryview], lat_out: memoryview, halt: memoryview,
              kinds: tuple[int, int, int, int, int, int, int, int, int, int, int]) -> None:
    """One process's share of a stream through one io_uring, len(slots) requests in flight:
    the same contract as aio.run_slots (blocks group, group + groups, ... of the order; counted
    from completions whose result is the whole block; latency from the call that submitted a
    request to the one that returned it; counters in the first slot's entries).

    Submission entry k belongs to request slot k for the whole run (its buffer, file and
    user_data written once); a resubmission writes only the offset and the ring's index.
    The bookkeeping of a completion (latency, samples, the next block) is aio.run_slots' own,
    written again inline on purpose: a function call per request is what both loops exist to
    avoid (each is measured against fio in bench figure 4)."""
    (f_ops, f_lat_sum, f_lat_max, f_started, f_ended, f_samples, f_err_kind, f_err_errno,
     f_err_n, os_error, short) = kinds
    qd = len(slots)
    ti = slots[0]
    bs = block_size
    blocks = len(order)
    clock = time.perf_counter_ns
    lat = array("q")
    limit = cap * qd
    done_ops = lat_sum = lat_max = 0
    ring = Ring(qd)
    base = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    try:
        fixed_buffer, fixed_file = ring.register(base, len(buffer), fd)
        sqes, sq, cq, cq_res, cq64 = ring.sqes, ring.sq, ring.cq, ring.cq_res, ring.cq64
        so, co = ring.params.sq_off, ring.params.cq_off  # byte offsets; the views index u32s
        sq_tail_at, sq_array = so[_SQ_TAIL] // 4, so[_SQ_ARRAY] // 4
        cq_head_at, cq_tail_at = co[_CQ_HEAD] // 4, co[_CQ_TAIL] // 4
        sq_mask, cq_mask = sq[so[_SQ_MASK] // 4], cq[co[_CQ_MASK] // 4]
        cqes = co[_CQ_CQES]
        if fixed_buffer:
            opcode = OP_WRITE_FIXED if write else OP_READ_FIXED  # buf_index 0 (word 5)
        else:
            opcode = OP_WRITE if write else OP_READ
        # word 0: opcode (byte 0), flags (byte 1), the file (bytes 4-7: its index when fixed)
        head_word = opcode | (SQE_FIXED_FILE << 8 | 0 << 32 if fixed_file else fd << 32)
        for k in range(qd):
            w = _SQE_WORDS * k
            sqes[w:w + _SQE_WORDS] = array("q", [head_word, 0, base + k * bs, bs, k, 0, 0, 0])
        offset_word = [_SQE_WORDS * k + 1 for k in range(qd)]
        timeout = Timespec(0, WAIT_NS)
        arg = GeteventsArg(ts=ctypes.addressof(timeout))
        nr = _numbers() or {}
        c = ctypes.c_long
        enter = _LIBC["syscall"]
        enter.restype = ctypes.c_long
        sys_enter, ring_fd, one = c(nr["io_uring_enter"]), c(ring.fd), c(1)
        wait_flags, arg_at, arg_size = (c(ENTER_GETEVENTS | ENTER_EXT_ARG),
                                        c(ctypes.addressof(arg)), c(ctypes.sizeof(arg)))
        counts = [c(k) for k in range(qd + 1)]
        sub = [0] * qd
        keep = lat.append
        mask = 0
        ops_field = fields[f_ops]
        p = group  # the next position in the order (unbounded when wrapping)
        tail = sq[sq_tail_at]
        head = cq[cq_head_at]

        def fail(kind: int, code: int, n: int = 0) -> None:
            if fields[f_err_kind][ti] == 0:
                fields[f_err_errno][ti] = code
                fields[f_err_n][ti] = n
                fields[f_err_kind][ti] = kind
            halt[0] = 1

        fields[f_started][ti] = clock()
        n = 0
        while n < qd and not halt[0]:
            if p >= blocks:
                if not wrap:
                    break
                p %= blocks
            sqes[offset_word[n]] = order[p] * bs
            sq[sq_array + (tail & sq_mask)] = n
            tail += 1
            p += groups
            n += 1
        sq[sq_tail_at] = tail  # after the entries: x86-64 keeps the stores in order
        t = clock()
        for k in range(n):
            sub[k] = t
        inflight = to_submit = n
        while inflight:
            r = enter(sys_enter, ring_fd, counts[to_submit], one, wait_flags, arg_at, arg_size)
            if r < 0:
                code = ctypes.get_errno()
                if code not in RETRY:
                    fail(os_error, code)  # closing the ring cancels what is still in flight
                    break
            else:
                to_submit -= r  # the kernel may take fewer: the rest go with the next call
            now = clock()
            end = cq[cq_tail_at]
            stop = halt[0]
            while head != end:
                e = cqes + _CQE_BYTES * (head & cq_mask)
                slot = cq64[e >> 3]
                res = cq_res[(e >> 2) + 2]
                head += 1
                inflight -= 1
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
                sqes[offset_word[slot]] = order[p] * bs
                sq[sq_array + (tail & sq_mask)] = slot
                tail += 1
                sub[slot] = now  # the request's clock starts as it is prepared (fio's too)
                p += groups
                to_submit += 1
                inflight += 1
            cq[cq_head_at] = head  # the entries are read: the kernel may reuse them
            sq[sq_tail_at] = tail
            ops_field[ti] = done_ops
    finally:
        # the I/O ends at the last completion read (closing the ring is not timed, as in aio)
        fields[f_ended][ti] = clock()
        ring.close()
        fields[f_lat_sum][ti] = lat_sum
        fields[f_lat_max][ti] = lat_max
        kept = min(len(lat), limit)
        lat_out[ti * cap:ti * cap + kept] = lat[:kept]
        fields[f_samples][ti] = kept
