"""Figure 11: the history of one plan with 1,000 sessions of 50 metrics each opens in < 200 ms.

1,000 sessions of one plan on one target (10 cases x 5 metrics: throughput, IOPS, mean latency,
p99 latency, CPU; 3 repeats) recorded through the real recorder into a real library file, each
with a host record as a run makes it (the read-ahead lowered from session 700 on, the read
figures falling with it, so the history has changes to find and to explain); then what
`disklab history SESSION` and the History page do before they draw: core.history.build_history
(the sessions' identities, the series, 50,000 points from the stored summaries, the step test
over every figure, what changed at each change), timed on a library connection of its own each
time (a first look), judged on the confidence interval of the median of several timings
(common.judge).
"""

from __future__ import annotations

import gc
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from disklab.core.history.build import build_history
from disklab.core.library import Library
from disklab.core.vocab.events import CaseFinished, CaseStarted, SessionFinished, SessionStarted
from disklab.core.vocab.model import Case, Metric

from .common import judge

SESSIONS = 1000
CASES = 10
METRICS = ("", ":iops", ":lat_mean", ":lat_p99", ":cpu")  # x 10 cases = 50 metrics
REPEATS = 3
TIMINGS = 7
TARGET_MS = 200.0
PLAN = "name = 'weekly'\nrepeats = 3\n[target]\ndirectory = '/mnt/x'\n[[test]]\ntool = 'fio'\n"


def _host(read_ahead: int, week: int) -> dict[str, Any]:
    return {"hostname": "bench", "machine_id": "b" * 32, "kernel": "6.1.0-13",
            "tools": {"fio": "fio-3.33"}, "free_bytes": 10**10 - week, "fs_size_bytes": 10**11,
            "filesystem": {"fstype": "ext4", "options": "rw,relatime", "source": "/dev/sdz1"},
            "device": {"name": "sdz1", "model": "BENCH", "read_ahead_kb": read_ahead,
                       "scheduler": "mq-deadline"},
            "target": {"kind": "directory", "path": "/mnt/x",
                       "identity": {"directory": "/mnt/x", "fstype": "ext4",
                                    "source": "/dev/sdz1", "exists": True}}}


def record_sessions(lib: Library, sessions: int, cases: int) -> list[int]:
    """`sessions` sessions of `cases` cases x len(METRICS) metrics x REPEATS, a week apart,
    through the real recorder; their ids."""
    modes = ("read", "write")
    plan_cases = tuple(Case(f"c{i:02d}", i, "as is", "fio", i,
                            {"rw": modes[i % 2], "bs": 4096 << i}) for i in range(cases))
    ids = []
    change = int(sessions * 0.7)
    for s in range(sessions):
        after = s >= change
        rec = lib.recorder()
        t = 1.6e9 + s * 7 * 86400
        rec.handle(SessionStarted(name="weekly", cases=plan_cases, repeats=REPEATS,
                                  host=_host(16 if after else 128, s), plan_text=PLAN, t=t))
        for repeat in range(1, REPEATS + 1):
            for case in plan_cases:
                mode = str(case.params["rw"])
                rate = 3e8 * (1 + 0.02 * ((s * 7 + repeat * 3 + case.index) % 5))
                if after and mode == "read":
                    rate *= 0.4
                rec.handle(CaseStarted(case=case, repeat=repeat, argv=("fio",), t=t + 1))
                rec.handle(CaseFinished(
                    case_id=case.id, repeat=repeat, exit_status=0, duration=1.0, t=t + 2,
                    metrics=tuple(Metric(f"{mode}{m}", _value(m, rate),
                                         _unit(m)) for m in METRICS)))
        rec.handle(SessionFinished(status="finished", t=t + 3))
        rec.close()
        assert rec.session_id is not None
        ids.append(rec.session_id)
    return ids


def _value(metric: str, rate: float) -> float:
    return {"": rate, ":iops": rate / 4096, ":lat_mean": 4096e9 / rate,
            ":lat_p99": 3 * 4096e9 / rate, ":cpu": 12.5}[metric]


def _unit(metric: str) -> str:
    return {"": "B/s", ":iops": "op/s", ":cpu": "%"}.get(metric, "ns")


def _once(path: Path, ref: str) -> tuple[float, float, tuple[int, int, int]]:
    lib = Library.open(path)
    try:
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        h = build_history(lib, ref)
        ms = (time.perf_counter() - t0) * 1000
        cpu = (time.process_time() - c0) * 1000
    finally:
        lib.close()
    s = h.series[0]
    return ms, cpu, (len(s.sessions), len(s.figures), len(s.changes))


def run(sessions: int = SESSIONS, cases: int = CASES, timings: int = TIMINGS) -> list[dict]:
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="disklab-bench-history-") as tmp:
        path = Path(tmp) / "history.sqlite3"
        t0 = time.perf_counter()
        with Library.open(path) as lib:
            ids = record_sessions(lib, sessions, cases)
        record_s = time.perf_counter() - t0
        ref = str(ids[-1])
        _once(path, ref)  # the file into the page cache
        times, cpu = [], []
        for _ in range(timings):
            ms, cpu_ms, shape = _once(path, ref)
            times.append(ms)
            cpu.append(cpu_ms)
        value, verdict, interval = judge(times, TARGET_MS, higher_is_better=False, digits=1)
        return [{
            "figure": f"11 history of {shape[0]:,} sessions x {shape[1]} metrics, first look",
            "value": f"{value} ms", "target": f"< {TARGET_MS:.0f} ms", "verdict": verdict,
            "details": {"ms": [round(t, 2) for t in times],
                        "median_ms": round(statistics.median(times), 2),
                        "cpu_ms": [round(t, 2) for t in cpu],
                        "median_cpu_ms": round(statistics.median(cpu), 2),
                        "changes": shape[2], "interval": interval,
                        "load_average": list(os.getloadavg()),
                        "record_seconds": round(record_s, 2),
                        "library_bytes": path.stat().st_size}}]
