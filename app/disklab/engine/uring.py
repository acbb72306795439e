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

The ring is set up here; the loop over it runs in C where the extension was built
(engine/native.py hands it `UringPath.native`: the ring's views and offsets), else through
`submit` / `submit_reap` below.

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
from array import array
from collections.abc import Callable, Iterable
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
# At queue depth SPLIT_FROM and more, a batch of more than SPLIT requests is entered in parts of
# SPLIT, each as soon as the loop has prepared it (loop.IoPath.split): one enter a batch put ~12
# requests at once into the loop device at queue depth 32, and each then took ~1.1 times fio's
# time in the device (fio enters one request at a time); in parts of 4, 0.89 times, for ~10 %
# more CPU a request (bench/README.md, figure 4). At queue depth 8 (batches of ~4) the parts
# measured no better than one enter, so shallower rings keep one.
SPLIT, SPLIT_FROM = 4, 16
# The C loop (engine/native.py) enters each request as soon as it is prepared, as fio does: its
# enter costs no interpreter time, and at queue depth 32 the engine's requests then took
# 1.03-1.05 times fio's time in the device against 1.07-1.13 in parts of 4 (45 and 30 pairs of
# figure 4 alternated; bench/README.md, "The engine's loop in C").
NATIVE_SPLIT = 1
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


class UringPath:
    """The io_uring path for loop.run (loop.IoPath): one ring of `depth` entries, the buffer
    (a block per slot) and the file registered once where the kernel allows.

    Submission entry k belongs to request slot k for the whole run (its buffer, file and
    user_data written once); a batch writes only each request's offset and the ring's index,
    publishes the tail, and one io_uring_enter both submits it and waits for a completion. The
    completions are read out of the ring as two lists (user_data: the slot; res), one strided
    copy each, handed to the loop zipped, and the ring's head moved past them first."""

    submit: Callable[[int], None]  # made by _submitter
    submit_reap: Callable[[int], Iterable[tuple[int, int]]]  # made by _submitter

    def __init__(self, fd: int, write: bool, block_size: int, buffer: Any, depth: int):
        self.depth, self.inflight = depth, 0
        self.split = SPLIT if depth >= SPLIT_FROM else depth + 1
        self.batch_slot, self.batch_offset = [0] * depth, [0] * depth
        self.ring = ring = Ring(depth)
        try:
            self._layout(ring, fd, write, block_size, buffer)
        except BaseException:
            ring.close()
            raise

    def _layout(self, ring: Ring, fd: int, write: bool, bs: int, buffer: Any) -> None:
        """Register, write the entries' fixed words, and keep every index the batch needs."""
        base = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
        fixed_buffer, fixed_file = ring.register(base, len(buffer), fd)
        if fixed_buffer:
            opcode = OP_WRITE_FIXED if write else OP_READ_FIXED  # buf_index 0 (word 5)
        else:
            opcode = OP_WRITE if write else OP_READ
        # word 0: opcode (byte 0), flags (byte 1), the file (bytes 4-7: its index when fixed)
        head_word = opcode | (SQE_FIXED_FILE << 8 | 0 << 32 if fixed_file else fd << 32)
        for k in range(self.depth):
            w = _SQE_WORDS * k
            ring.sqes[w:w + _SQE_WORDS] = array("q", [head_word, 0, base + k * bs, bs, k, 0, 0,
                                                      0])
        so, co = ring.params.sq_off, ring.params.cq_off  # byte offsets; the views index u32s
        self._offset_word = [_SQE_WORDS * k + 1 for k in range(self.depth)]
        self._sq_tail_at, self._sq_array = so[_SQ_TAIL] // 4, so[_SQ_ARRAY] // 4
        self._cq_head_at, self._cq_tail_at = co[_CQ_HEAD] // 4, co[_CQ_TAIL] // 4
        self._sq_mask = ring.sq[so[_SQ_MASK] // 4]
        self._cq_mask = ring.cq[co[_CQ_MASK] // 4]
        self._cq_entries = self._cq_mask + 1
        self._cqe_word = co[_CQ_CQES] // 8  # a completion's user_data, in cq64's words
        self._res_int = co[_CQ_CQES] // 4 + 2  # its res, in cq_res's ints
        self._tail, self._head = ring.sq[self._sq_tail_at], ring.cq[self._cq_head_at]
        self._timeout = Timespec(0, WAIT_NS)
        self._arg = GeteventsArg(ts=ctypes.addressof(self._timeout))
        c = ctypes.c_long
        self._enter = _LIBC["syscall"]
        self._enter.restype = c
        # the call's arguments as ctypes longs built once: an untyped call passes them as
        # they are, where argtypes converting ints costs twice as much a call (aio.py)
        self._args = (c((_numbers() or {})["io_uring_enter"]), c(ring.fd))
        self._wait = (c(1), c(ENTER_GETEVENTS | ENTER_EXT_ARG), c(ctypes.addressof(self._arg)),
                      c(ctypes.sizeof(self._arg)))
        self._counts = [c(k) for k in range(self.depth + 1)]
        self._submitter()
        # what native.run hands the C loop: the ring's views and the byte offsets in them
        split = NATIVE_SPLIT if self.depth >= SPLIT_FROM else self.split
        self.native = ("uring", (ring.fd, self.depth, split, ring.sqes, ring.sq, ring.cq,
                                 so[_SQ_TAIL], so[_SQ_ARRAY], self._sq_mask, co[_CQ_HEAD],
                                 co[_CQ_TAIL], self._cq_mask, co[_CQ_CQES]))

    def _submitter(self) -> None:
        """submit and submit_reap as closures over the ring's views and indexes: a batch's
        calls look up no attribute (the methods they replace cost the interpreter 270
        bytecodes a batch, as much as three requests' bookkeeping). `publish` writes entries
        into the ring and its tail; submit_reap's one io_uring_enter submits and waits, and
        the completions are copied out (`_completions`), the head moved past them."""
        ring = self.ring
        sqes, sq, cq = ring.sqes, ring.sq, ring.cq
        sq_mask, sq_array, sq_tail_at = self._sq_mask, self._sq_array, self._sq_tail_at
        cq_head_at, cq_tail_at = self._cq_head_at, self._cq_tail_at
        offset_word, slots, offsets, counts = (self._offset_word, self.batch_slot,
                                               self.batch_offset, self._counts)
        enter, (nr, fd), (min_complete, flags, arg, size) = self._enter, self._args, self._wait
        completions, get_errno, nothing = self._completions, ctypes.get_errno, ctypes.c_long(0)
        cq64, cq_res, cq_mask, entries = ring.cq64, ring.cq_res, self._cq_mask, self._cq_entries
        # where completion k's user_data and res are in cq64 / cq_res, for k in 0..entries
        ud_at = [self._cqe_word + 2 * k for k in range(entries + 1)]
        res_at = [self._res_int + 4 * k for k in range(entries + 1)]
        tail, head, to_submit = self._tail, self._head, 0

        def publish(n: int) -> ctypes.c_long:
            """The batch's first n entries into the ring; how many the next enter submits."""
            nonlocal tail, to_submit
            for k in range(n):
                slot = slots[k]
                sqes[offset_word[slot]] = offsets[k]
                sq[sq_array + (tail & sq_mask)] = slot
                tail += 1
            tail &= 0xFFFFFFFF
            sq[sq_tail_at] = tail  # after the entries: x86-64 keeps the stores in order
            to_submit += n
            return counts[to_submit]

        def entered(r: int) -> None:
            nonlocal to_submit
            if r >= 0:
                to_submit -= r  # the kernel may take fewer: the rest go with the next call
            elif get_errno() not in RETRY:
                code = get_errno()
                raise OSError(code, f"io_uring_enter: {os.strerror(code)}")

        def submit(n: int) -> None:
            entered(enter(nr, fd, publish(n), nothing, nothing, nothing, nothing))
            self.inflight += n

        def submit_reap(n: int) -> Iterable[tuple[int, int]]:
            nonlocal head
            entered(enter(nr, fd, publish(n), min_complete, flags, arg, size))
            count = (cq[cq_tail_at] - head) & 0xFFFFFFFF
            self.inflight += n - count
            if not count:
                return ()
            at = head & cq_mask
            end = at + count
            if end <= entries:  # all before the ring's end: one strided copy each
                done = zip(cq64[ud_at[at]:ud_at[end]:2].tolist(),  # noqa: B905 (as long)
                           cq_res[res_at[at]:res_at[end]:4].tolist())
            else:
                done = completions(at, count)
            head = (head + count) & 0xFFFFFFFF
            cq[cq_head_at] = head  # copied out: the kernel may reuse the entries
            return done

        self.submit, self.submit_reap = submit, submit_reap

    def _completions(self, at: int, count: int) -> Iterable[tuple[int, int]]:
        """`count` completions from ring entry `at` on that wrap around the ring's end, as
        (slot, result) pairs: user_data and res copied out as two lists in two parts each."""
        cq64, cq_res, w, i = self.ring.cq64, self.ring.cq_res, self._cqe_word, self._res_int
        first = self._cq_entries - at
        slots = cq64[w + 2 * at:w + 2 * (at + first):2].tolist()
        results = cq_res[i + 4 * at:i + 4 * (at + first):4].tolist()
        slots += cq64[w:w + 2 * (count - first):2].tolist()
        results += cq_res[i:i + 4 * (count - first):4].tolist()
        return zip(slots, results)  # noqa: B905 (as long by construction; strict costs)

    def close(self) -> None:
        self.native = None  # the views go with the ring
        self.ring.close()
