"""The engine's JSON lines: interval, summary, error. One object a line, flushed at once,
because the runner reads them live from a pipe."""

from __future__ import annotations

import json
import math
import sys
import time
from array import array
from typing import Any, TextIO

from disklab.engine import native
from disklab.engine.worker import Runner, StreamState


def emit(obj: dict[str, Any], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    out.write(json.dumps(obj, separators=(",", ":")) + "\n")
    out.flush()


def latency_figures(samples: list[array], total_ns: int, ops: int, max_ns: int
                    ) -> dict[str, float | None]:
    """mean (exact, from the running sum), p50/p99/p99.9 (nearest rank over the samples), max."""
    values = sorted(v for a in samples for v in a)
    if not values or not ops:
        return {"mean": None, "p50": None, "p99": None, "p99.9": None, "max": None}
    n = len(values)

    def rank(q: float) -> float:
        return float(values[min(n - 1, max(0, math.ceil(round(q * n, 9)) - 1))])

    return {"mean": total_ns / ops, "p50": rank(0.50), "p99": rank(0.99), "p99.9": rank(0.999),
            "max": float(max_ns)}


def interval(runner: Runner) -> dict[str, Any]:
    """Cumulative bytes and ops since the start, per stream and in total."""
    elapsed = time.perf_counter() - runner.started if runner.started else 0.0
    streams = [s.totals() for s in runner.streams]
    return {
        "type": "interval", "elapsed": round(elapsed, 6),
        "bytes": sum(b for b, _ in streams), "ops": sum(o for _, o in streams),
        "streams": [{"bytes": b, "ops": o} for b, o in streams],
    }


def _stream(s: StreamState, origin: float) -> dict[str, Any]:
    """One stream's figures over its own active time; `start` and `end` are seconds since the
    first stream's start, so a reader sees which stream ran when."""
    b, o = s.totals()
    active = s.seconds()
    seconds = max(active, 1e-9)
    return {"file": s.path, "block_size": s.block_size, "bytes": b, "ops": o,
            "seconds": active, "start": max(s.started - origin, 0.0) if s.started else 0.0,
            "end": max(s.ended - origin, 0.0) if s.ended else 0.0,
            "bw": b / seconds, "iops": o / seconds, "fsync_seconds": s.fsync_seconds,
            "lat_ns": latency_figures(s.latencies, sum(s.lat_sum), o, max(s.lat_max, default=0))}


def summary(runner: Runner) -> dict[str, Any]:
    """Throughput, IOPS and latency per stream and in aggregate. Each stream's rate is over its
    own active time (first call to last, its fsync included); the aggregate is the total over
    the wall time from the first stream's start to the last stream's end, so neither is a
    share of the other: a stream that finished early shows its own speed, and the aggregate
    is what the streams together moved in the time they took."""
    job = runner.job
    first, last = runner.span()
    seconds = max(last - first, 1e-9) if first else 1e-9
    total_bytes, total_ops = runner.totals()
    samples = [a for s in runner.streams for a in s.latencies]
    lat_sum = sum(sum(s.lat_sum) for s in runner.streams)
    lat_max = max((m for s in runner.streams for m in s.lat_max), default=0)
    return {
        "type": "summary", "mode": job.mode, "bytes": total_bytes, "ops": total_ops,
        "seconds": seconds, "bw": total_bytes / seconds, "iops": total_ops / seconds,
        "lat_ns": latency_figures(samples, lat_sum, total_ops, lat_max),
        "fsync_seconds": runner.fsync_seconds,
        "block_size": job.block_size, "size": job.size, "queue_depth": job.queue_depth,
        "direct": job.direct, "sync": job.sync, "fsync": job.fsync,
        "streams": [_stream(s, first) for s in runner.streams],
        "partial": runner.halted_early(), "io": runner.io_path, "io_why": runner.io_why,
        "loop": native.which(runner.io_path, job.loop),
    }
