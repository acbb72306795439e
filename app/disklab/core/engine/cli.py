"""The engine's command line and its JSON-lines output."""

from __future__ import annotations

import argparse
import errno
import json
import os
import shutil
import signal
import sys
import threading
import time
from typing import Any

from disklab.core.engine.probe import refusal_message
from disklab.core.engine.worker import WRITE_MODES, Job, Runner, prepare_file

MODES = ("write", "rewrite", "read", "randread", "randwrite")


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def percentiles(values: list[int]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "p50": None, "p99": None, "p99.9": None}
    values = sorted(values)
    n = len(values)

    def at(q: float) -> float:
        return float(values[min(n - 1, int(q * n))])

    return {"mean": sum(values) / n, "p50": at(0.50), "p99": at(0.99), "p99.9": at(0.999)}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m disklab.core.engine",
                                description="DiskLab's built-in I/O engine")
    p.add_argument("--mode", choices=MODES, required=True)
    p.add_argument("--file", action="append", required=True, help="one per stream")
    p.add_argument("--block-size", type=int, required=True)
    p.add_argument("--size", type=int, required=True, help="bytes per stream")
    p.add_argument("--queue-depth", type=int, default=1)
    p.add_argument("--direct", action="store_true")
    p.add_argument("--sync", action="store_true")
    p.add_argument("--fsync", action="store_true")
    p.add_argument("--runtime", type=float, default=0.0)
    p.add_argument("--interval", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--prepare", action="store_true",
                   help="only lay out the files for a read or rewrite test")
    return p.parse_args(argv)


def _explain(err: OSError, path: str, direct: bool) -> str:
    directory = os.path.dirname(os.path.abspath(path))
    if err.errno == errno.EINVAL and direct:
        return refusal_message(directory, err)
    if err.errno == errno.ENOSPC:
        free = shutil.disk_usage(directory).free
        return f"no space left in {directory} ({free} bytes free)"
    if err.errno == errno.ENOENT:
        return f"{path} does not exist (read modes need a --prepare run first)"
    return f"{path}: {err.strerror}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.size % args.block_size:
        emit({"type": "error", "message": "size must be a multiple of block size"})
        return 2
    job = Job(args.mode, args.file, args.block_size, args.size, args.queue_depth, args.direct,
              args.sync, args.fsync, args.runtime, args.seed)
    if args.prepare:
        for path in args.file:
            try:
                prepare_file(path, args.size, args.direct)
            except OSError as e:
                emit({"type": "error", "message": _explain(e, path, args.direct)})
                return 1
        emit({"type": "prepared", "files": args.file, "bytes": args.size})
        return 0
    runner = Runner(job)
    try:
        runner.open()
    except OSError as e:
        emit({"type": "error", "message": _explain(e, e.filename or args.file[0], args.direct)})
        runner.close()
        return 1
    signal.signal(signal.SIGTERM, lambda *_: runner.stop.set())
    signal.signal(signal.SIGINT, lambda *_: runner.stop.set())
    worker = threading.Thread(target=runner.run, daemon=True)
    worker.start()
    t_start = time.perf_counter()
    while worker.is_alive():
        worker.join(args.interval)
        done_bytes, done_ops = runner.totals()
        emit({"type": "interval", "elapsed": round(time.perf_counter() - t_start, 4),
              "bytes": done_bytes, "ops": done_ops,
              "streams": [{"bytes": sum(s.bytes), "ops": sum(s.ops)} for s in runner.streams]})
    runner.close()
    errors = [s.error for s in runner.streams if s.error]
    seconds = max(runner.finished - runner.started, 1e-9)
    total_bytes, total_ops = runner.totals()
    all_lat: list[int] = []
    streams = []
    for s in runner.streams:
        lat = [v for a in s.latencies for v in a]
        all_lat += lat
        b, o = sum(s.bytes), sum(s.ops)
        streams.append({"file": s.path, "bytes": b, "ops": o, "bw": b / seconds,
                        "iops": o / seconds, "lat_ns": percentiles(lat)})
    partial = runner.stop.is_set()
    summary = {"type": "summary", "mode": args.mode, "bytes": total_bytes, "ops": total_ops,
               "seconds": seconds, "bw": total_bytes / seconds, "iops": total_ops / seconds,
               "fsync_seconds": runner.fsync_seconds if args.mode in WRITE_MODES else None,
               "lat_ns": percentiles(all_lat), "streams": streams, "partial": partial}
    emit(summary)
    if errors:
        emit({"type": "error", "message": "; ".join(errors)})
        return 1
    return 143 if partial else 0
