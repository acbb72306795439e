"""Figure 2: CPU seconds DiskLab's own process uses per minute of a running case (runner, sampler,
event handling and library writes; the tool's processes excluded). Target <= 0.6 s per minute."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import psutil

from disklab.core.library import Library
from disklab.core.plan import parse_plan
from disklab.core.runner import run_plan

from .common import verdict


def run(mnt: Path, seconds: int = 60) -> list[dict]:
    plan = parse_plan(f'name = "overhead"\n[target]\ndirectory = "{mnt}"\n[[test]]\n'
                      f'tool = "engine"\nmode = "randread"\nblock_size = "4k"\nsize = "256m"\n'
                      f'direct = true\nruntime = {seconds}\n').plan
    me = psutil.Process()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        lib = Library.open(Path(tmp) / "o.sqlite3")
        rec = lib.recorder()
        cpu0 = wall0 = None
        for event in run_plan(plan):
            rec.handle(event)
            if type(event).__name__ == "CaseStarted" and cpu0 is None:
                t = me.cpu_times()
                cpu0, wall0 = t.user + t.system, time.monotonic()
            if type(event).__name__ in ("CaseFinished", "CaseFailed"):
                t = me.cpu_times()
                cpu1, wall1 = t.user + t.system, time.monotonic()
        rec.close()
        lib.close()
    per_minute = (cpu1 - cpu0) / ((wall1 - wall0) / 60)
    return [{"figure": "2 app CPU per minute (headless)", "value": f"{per_minute:.2f} s/min",
             "target": "<= 0.6", "verdict": verdict(per_minute, 0.6, False),
             "details": {"seconds": round(wall1 - wall0, 1)}}]
