"""Figure 5: the library. Samples insert rate with synchronous=FULL (target >= 200,000 rows/s),
listing 10,000 sessions (< 100 ms), comparing two sessions of 500 cases (< 100 ms), opening a
large library including its quick_check (reported). Everything goes through the real recorder
and store, on a real file."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from disklab.core.library import Library
from disklab.core.results.compare import comparison_for
from disklab.core.vocab.events import (
    CaseFinished,
    CaseStarted,
    Sample,
    SessionFinished,
    SessionStarted,
)
from disklab.core.vocab.model import Case, Metric

from .common import verdict


def _session(lib: Library, name: str, n_cases: int, samples_per_case: int) -> int:
    rec = lib.recorder()
    cases = tuple(Case(f"c{i:05d}", i, "as is", "engine", 0,
                       {"mode": "write", "block_size": 4096 << (i % 8), "size": 1 << 30})
                  for i in range(n_cases))
    rec.handle(SessionStarted(name=name, cases=cases, repeats=1, host={}, plan_text="", t=1.0))
    for case in cases:
        rec.handle(CaseStarted(case=case, repeat=1, argv=("x",), t=2.0))
        for k in range(samples_per_case):
            rec.handle(Sample(case_id=case.id, series="app_write_bps", value=k, repeat=1, t=k))
        rec.handle(CaseFinished(case_id=case.id, repeat=1, exit_status=0, duration=1.0, t=3.0,
                                metrics=(Metric("write", 1e8 + case.index, "B/s"),)))
    rec.handle(SessionFinished(status="finished", t=4.0))
    rec.close()
    assert rec.session_id is not None
    return rec.session_id


def run() -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        lib = Library.open(Path(tmp) / "bench.sqlite3")
        n = 1_000_000
        t0 = time.perf_counter()
        _session(lib, "samples", 1, n)
        rate = n / (time.perf_counter() - t0)
        rows.append({"figure": "5 samples insert (FULL)", "value": f"{rate:,.0f} rows/s",
                     "target": ">= 200,000", "verdict": verdict(rate, 200_000), "details": {}})

        a = _session(lib, "a", 500, 0)
        b = _session(lib, "b", 500, 0)
        t0 = time.perf_counter()
        table, _sessions = comparison_for(lib, [a, b], baseline=a)
        ms = (time.perf_counter() - t0) * 1000
        rows.append({"figure": "5 compare 2 x 500 cases", "value": f"{ms:.1f} ms",
                     "target": "< 100 ms", "verdict": verdict(ms, 100, False),
                     "details": {"columns": len(table.columns)}})

        for i in range(10_000 - 3):
            _session(lib, f"s{i}", 0, 0)
        t0 = time.perf_counter()
        listed = lib.list_sessions()
        ms = (time.perf_counter() - t0) * 1000
        rows.append({"figure": "5 list 10,000 sessions", "value": f"{ms:.1f} ms",
                     "target": "< 100 ms", "verdict": verdict(ms, 100, False),
                     "details": {"sessions": len(listed)}})
        # grow towards 1 GB of samples, then time a fresh open (with quick_check)
        while (Path(tmp) / "bench.sqlite3").stat().st_size < 1 << 30:
            _session(lib, "bulk", 1, 2_000_000)
        lib.close()
        size = (Path(tmp) / "bench.sqlite3").stat().st_size
        t0 = time.perf_counter()
        Library.open(Path(tmp) / "bench.sqlite3").close()
        s = time.perf_counter() - t0
        rows.append({"figure": "5 open 1 GB library", "value": f"{s:.2f} s",
                     "target": "report", "verdict": "info",
                     "details": {"bytes": size}})
    return rows
