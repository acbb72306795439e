"""Figure 9: the start skew between the streams of one case on different targets (`on = "a+b"`,
core/targets.py): target < 50 ms.

Two scratch ext4 filesystems on loop devices of their own ([targets.a], [targets.b]); one case
per tool that spreads streams over targets (the built-in engine: one process, a stream per
target; dd: one process per target, released together by proc.ToolGroup; fio: one process, a
job per target), O_DIRECT 1 MiB writes so the first write reaches the device at once, each run
`REPEATS` times through the real runner. The skew of a run is measured on the devices, not from
what the tools say: a watcher process (devwatch.py) polls both devices' written-sector counters
every ~0.5 ms, and a stream's first I/O is the first sample after the case's start at which its
device has written >= 256 KiB (more than a journal commit of the files' creation: the first
data write). skew = |first(a) - first(b)|, judged on the confidence interval of its median.
The skew the tool reports of itself (the stored `write:start_skew`, engine and dd) is kept
beside it as a report.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from disklab.core.plan.parse import parse_plan
from disklab.core.run.runner import run_plan
from disklab.core.vocab.events import CaseFailed, CaseFinished, CaseStarted

from .common import judge
from .devwatch import Watcher, first_write, stat_path

REPEATS = 5
TARGET_MS = 50.0
AT_LEAST = 256 << 10
PLAN = """name = "bench start skew"
repeats = {repeats}
[targets.a]
directory = "{a}"
[targets.b]
directory = "{b}"
[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "{size}"
direct = true
on = "a+b"
[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "{size}"
direct = true
on = "a+b"
[[test]]
tool = "fio"
rw = "write"
bs = "1m"
size = "{size}"
direct = true
on = "a+b"
"""


def run(mnt_a: Path, mnt_b: Path, size: str = "256m") -> list[dict]:
    checked = parse_plan(PLAN.format(repeats=REPEATS, a=mnt_a, b=mnt_b, size=size))
    windows: list[tuple[str, float, float, float | None]] = []  # tool, start, end, own skew
    started: dict[str, tuple[str, float]] = {}
    watcher = Watcher([stat_path(mnt_a), stat_path(mnt_b)])
    try:
        for event in run_plan(checked.plan):
            if isinstance(event, CaseStarted):
                started[event.case.id] = (event.case.tool, event.t)
            elif isinstance(event, CaseFinished):
                tool, t0 = started[event.case_id]
                own = next((m.value for m in event.metrics
                            if m.name.endswith(":start_skew") and m.value is not None), None)
                windows.append((tool, t0, event.t, own))
            elif isinstance(event, CaseFailed):
                raise RuntimeError(f"{event.error}\n{event.transcript_tail}")
    finally:
        changes = watcher.stop()
    rows = []
    for tool in dict.fromkeys(w[0] for w in windows):
        skews, own, missing = [], [], 0
        for _tool, t0, t1, own_skew in (w for w in windows if w[0] == tool):
            firsts = [first_write(changes, i, t0, t1, AT_LEAST) for i in (0, 1)]
            if None in firsts:
                missing += 1
                continue
            skews.append(abs(firsts[0] - firsts[1]) * 1000)  # type: ignore[operator]
            if own_skew is not None:
                own.append(own_skew / 1e6)
        if len(skews) < 2:
            rows.append({"figure": f"9 start skew a+b ({tool})", "value": "-",
                         "target": f"< {TARGET_MS:.0f} ms",
                         "verdict": f"not measured: a device saw no write in {missing} runs",
                         "details": {}})
            continue
        value, verdict, interval = judge(skews, TARGET_MS, higher_is_better=False, digits=1)
        rows.append({"figure": f"9 start skew a+b ({tool}, on the devices)",
                     "value": f"{value} ms", "target": f"< {TARGET_MS:.0f} ms",
                     "verdict": verdict,
                     "details": {"ms": [round(s, 2) for s in skews], "interval": interval,
                                 "tool_reported_ms": [round(s, 2) for s in own],
                                 "runs_without_write": missing}})
        if own:
            rows.append({"figure": f"9 start skew a+b ({tool}, as the tool reports it)",
                         "value": f"{statistics.median(own):.1f} ({min(own):.1f}-"
                                  f"{max(own):.1f}) ms", "target": "report",
                         "verdict": "info: the stored write:start_skew", "details": {}})
    return rows
