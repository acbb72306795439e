"""Figure 2: CPU seconds DiskLab's own process uses per minute of a running case (GUI thread,
worker, sampler and library writes; the tool's processes excluded). Target <= 1.0 s per minute
(issue 45: 1.4 % of a core; figure 1b guards what the tool loses).

Two arms, each a fresh interpreter running one real engine case (4 KiB random direct reads for
`seconds`) on the bench's scratch filesystem:
- headless: run_plan feeding the library's recorder, as `disklab run` does;
- GUI: the real main window, offscreen, on the Run page, started with its Start action, so the
  worker thread, the recorder, the live plots and the log pane all take part, drawn once per
  refresh: 1 s (the default, the figure judged) and 5 s (the "low overhead" choice on the page).
CPU is the process's own user + system time (children excluded) from CaseStarted to
CaseFinished, also split per thread by name (/proc/self/task/*/comm), so that a short arm says
where its time went (the worker thread `disklab-run` does what the headless arm does: runner,
monitor, recorder; `python` is the GUI thread). The arms alternate (headless, GUI, GUI 5 s,
headless ...) because the VM's speed drifts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from .common import judge

PLAN = ('name = "overhead"\n[target]\ndirectory = "{mnt}"\n[[test]]\ntool = "engine"\n'
        'mode = "randread"\nblock_size = "4k"\nsize = "256m"\ndirect = true\n'
        'runtime = {seconds}\n')

# Shared by both arms: CPU of this process as a whole and per thread name.
CPU = textwrap.dedent("""
    import os, time
    def cpu_now():
        t = os.times()
        threads = {}
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/comm") as f:
                    name = f.read().strip()
                with open(f"/proc/self/task/{tid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            threads[f"{name}:{tid}"] = ticks
        return t.user + t.system, time.monotonic(), threads
    def report(a, b):
        cpu0, wall0, th0 = a
        cpu1, wall1, th1 = b
        per_thread = {}
        for key, v in th1.items():
            name = key.split(":")[0]
            per_thread[name] = per_thread.get(name, 0.0) + v - th0.get(key, 0.0)
        minutes = (wall1 - wall0) / 60
        return {"cpu": cpu1 - cpu0, "seconds": wall1 - wall0,
                "per_minute": (cpu1 - cpu0) / minutes,
                "threads": {k: round(v / minutes, 3) for k, v in per_thread.items() if v > 0}}
""")

HEADLESS = CPU + textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from disklab.core.library import Library
    from disklab.core.plan.parse import parse_plan
    from disklab.core.run.runner import run_plan
    plan = parse_plan(Path(sys.argv[1]).read_text()).plan
    lib = Library.open(sys.argv[2])
    rec = lib.recorder()
    marks = {}
    for event in run_plan(plan):
        rec.handle(event)
        name = type(event).__name__
        if name == "CaseStarted":
            marks["start"] = cpu_now()
        elif name in ("CaseFinished", "CaseFailed"):
            marks["end"] = cpu_now()
            marks["status"] = name
    rec.close()
    lib.close()
    print(json.dumps({**report(marks["start"], marks["end"]), "status": marks["status"]}))
""")

GUI = CPU + textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from PySide6.QtCore import QTimer
    from disklab.gui.app import make_app
    from disklab.core.plan.draft import PlanDraft
    from disklab.gui.main_window import MainWindow
    from disklab.gui.state import Workbench
    app = make_app()
    window = MainWindow(Workbench(sys.argv[2]))
    window.resize(1280, 860)
    window.show()
    window.wb.set_draft(PlanDraft.from_text(Path(sys.argv[1]).read_text()))
    window.run.set_refresh(int(sys.argv[3]))  # not kept: the user's own setting is untouched
    marks = {}
    def on_event(event):
        name = type(event).__name__
        if name == "CaseStarted":
            marks["start"] = cpu_now()
            marks["redraws"] = window.run.plots.redraws
            marks["events"] = window.run.model.events_seen
        elif name in ("CaseFinished", "CaseFailed"):
            marks["end"] = cpu_now()
            marks["status"] = name
            marks["page"] = window.current_page()
            marks["points"] = sum(len(b) for b in window.run.plots.buffers.values())
            marks["redraws"] = window.run.plots.redraws - marks["redraws"]
            marks["events"] = window.run.model.events_seen - marks["events"]
    window.wb.runs.event.connect(on_event)
    window.run.finished.connect(lambda *args: app.quit())
    QTimer.singleShot(0, window.run.start)
    app.exec()
    print(json.dumps({**report(marks["start"], marks["end"]), "status": marks["status"],
                      **{k: marks[k] for k in ("page", "points", "redraws", "events")}}),
          flush=True)
    os._exit(0)  # no teardown of a window never closed (see gui_figures.COLD)
""")


def _arm(code: str, plan: Path, library: Path, refresh: int = 1) -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", code, str(plan), str(library), str(refresh)],
                          capture_output=True, text=True, env=env, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"exit status {done.returncode}: {done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["status"] != "CaseFinished":
        raise RuntimeError(f"the case did not finish: {result}")
    return result


def run(mnt: Path, seconds: int = 60, rounds: int = 2) -> list[dict]:
    arms: dict[str, list[dict]] = {"headless": [], "GUI": [], "GUI, 5 s refresh": []}
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        plan = Path(tmp) / "plan.toml"
        plan.write_text(PLAN.format(mnt=mnt, seconds=seconds))
        for i in range(rounds):
            arms["headless"].append(_arm(HEADLESS, plan, Path(tmp) / f"h{i}.sqlite3"))
            arms["GUI"].append(_arm(GUI, plan, Path(tmp) / f"g{i}.sqlite3"))
            arms["GUI, 5 s refresh"].append(_arm(GUI, plan, Path(tmp) / f"l{i}.sqlite3", 5))
    rows = []
    for name, results in arms.items():
        values = [r["per_minute"] for r in results]
        value, v, ci = judge(values, 1.0, higher_is_better=False, digits=2)
        rows.append({"figure": f"2 app CPU per minute ({name})",
                     "value": f"{value} s/min", "target": "<= 1.0",
                     "verdict": v, "details": {"runs": results, "ci": ci}})
    return rows
