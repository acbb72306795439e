"""DiskLab's built-in I/O engine: a tool of its own, run as `python -m disklab.core.engine`.

Modelled on Quantum StorNext's Mio and on fio's psync engine: N streams (one file each), a block
size, a size per stream, a queue depth per stream (that many threads issuing pread/pwrite on the
stream's file), sequential or random offsets (each block once, in a pseudo-random order), modes
write / rewrite / read / randread / randwrite, O_DIRECT with page-aligned (mmap) buffers, O_SYNC
or an fsync at the end (inside the timing, like dd's conv=fdatasync). Read modes read files laid
out by a separate `--prepare` run, so the layout is not measured.

Output: one JSON line per interval on stdout ({"type": "interval", ...}: bytes and ops done per
stream and in total), then one summary line (throughput, IOPS, latency mean/p50/p99/p99.9 per
stream and aggregate). Errors are one {"type": "error", "message": ...} line and exit status 1.

Limits: Python issues about half a million system calls per second per process, and the GIL is
released only inside the calls; small-block work above that (4 KiB at >100k IOPS, deep queues on
NVMe) belongs to fio, whose numbers the engine does not try to beat.
"""
