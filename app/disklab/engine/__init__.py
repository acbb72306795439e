"""DiskLab's built-in I/O engine: a tool of its own, run as `python -m disklab.engine`.

Modelled on Quantum StorNext's Mio and on fio's psync engine: N streams (one file each, or one
block device), a block size (one for all, or one per stream), a size per stream, a queue depth
per stream (that many slots issuing pread/pwrite on the stream's file: threads of worker
processes forked from the engine, one process per CPU, so that they do not all share one
GIL), sequential or random
offsets (each block once per pass, in a seeded pseudo-random order), modes write / rewrite /
read / randread / randwrite,
O_DIRECT with page-aligned (mmap) buffers, O_SYNC, or an fsync at the end (inside the timing,
like dd's conv=fdatasync and fio's end_fsync). `write` creates its files; the other modes work on
files laid out by a separate `--prepare` run (sequential writes, fsync, pages dropped from the
cache), so that the layout is not measured. `--runtime S` makes a run time-based: it wraps
around the file until S seconds have passed.

Output, one JSON object a line on stdout, flushed at once:
  {"type": "interval", "elapsed", "bytes", "ops", "streams": [{"bytes", "ops"}, ...]}
      every --interval seconds, cumulative since the start;
  {"type": "summary", "mode", "bytes", "ops", "seconds", "bw" (B/s), "iops",
   "lat_ns": {"mean", "p50", "p99", "p99.9", "max"}, "streams": [...], "partial",
   "io" ("uring", "aio" or "psync": the path that ran), "io_why", "loop" ("C" or "Python":
   engine/native.py), ...};
      each stream's "bw" and "iops" are over its own active time ("seconds", from its first
      call to its last, its fsync included; "start" and "end" since the first stream began),
      the aggregate's over the wall time from the first stream's start to the last one's end;
  {"type": "error", "message"} and exit status 1 on an I/O error, worded in the filesystem's
      terms ("ramfs at /mnt refuses O_DIRECT (EINVAL); ...", "no space left in DIR ...").
SIGTERM or SIGINT stop it cleanly: a summary flagged "partial": true, exit status 128 + signal.

I/O path (--io, the summary's "io" and "io_why"; engine/iopath.py): O_DIRECT at queue depth > 1
goes through io_uring (engine/uring.py: one process per stream keeps all its requests in
flight, one io_uring_enter a batch both submitting and waiting), or Linux native AIO where
io_uring is forbidden (engine/aio.py: io_submit and io_getevents a batch); everything else
through the pread/pwrite workers (engine/psync.py; buffered AIO is synchronous on Linux).
`--io psync`, `--io aio` or `--io uring` force one. The three move requests behind one
interface (engine/loop.py's IoPath: submit a batch, reap completions) under one accounting
loop (engine/loop.py: what a completion counts, its latency, the samples, the next block).

Limits: the request loop of the pread/pwrite and io_uring paths runs in C without the GIL
(engine/native.py; where it was not built, or with --loop python, in Python: about half a
million system calls per second per process, the GIL released only inside the calls, hence a
worker process per CPU). The engine aims at parity with fio's psync, io_uring and libaio
engines at equal block size and concurrency (bench figure 4), not beyond: options such as
polled I/O, SQPOLL or registered rings belong to fio. Latency
percentiles come from every operation up to about a million of them, and from an even sample
beyond (the mean is always exact).
"""
