"""Figure 11: watching a long run live (issue 45). fio writes 256 GiB in all (`io_size`) over a
16 GiB file (direct I/O) while the real main window, offscreen, shows the Run page; twice: at
the default refresh (1 s), then at 5 s. Per arm it reports:

- the overall ETA's error at 10, 25, 50 and 75 % of the run, against the real end (the ETA the
  core computes and the overall bar shows: Progress.overall_eta); target within 10 %;
- the GUI process's CPU a minute (its own, fio excluded);
- its RSS growth from 10 % of the run to the end; target <= 30 MB;
- the longest gap of the GUI thread (a 10 ms timer's longest interval); target <= 100 ms;
- the time from a zoom on the run's last minute to its redraw, painted; target <= 100 ms;
- screenshots of the whole run and of the zoomed last minute (look at them).

`scale` shrinks both sizes for a smoke test (bench/run.py --long-scale 0.01: 2.56 GiB over
164 MiB). The fio job is a DiskLab plan whose `[test.fio_options]` table hands fio its
`io_size` (the plan's pass-through options); the file's directory needs its size free.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from pathlib import Path

from .app_overhead import CPU

GIB = 1 << 30
CHECKPOINTS = (0.10, 0.25, 0.50, 0.75)
TARGETS = {"eta_error": 0.10, "rss_growth_mb": 30.0, "gap_ms": 100.0, "zoom_ms": 100.0}


def sizes(scale: float, io_size: int = 256 * GIB, file_size: int = 16 * GIB) -> tuple[int, int]:
    """(io_size, file size) in bytes, scaled, in whole MiB and at least 64 MiB of file."""
    if not 0 < scale <= 1:
        raise ValueError(f"--long-scale {scale}: a fraction in (0, 1]")
    mib = 1 << 20
    return (max(int(io_size * scale) // mib, 64) * mib,
            max(int(file_size * scale) // mib, 64) * mib)


def plan_text(directory: Path, io_size: int, file_size: int) -> str:
    """The DiskLab plan of the run: one fio sequential write case, direct I/O, the file
    rewritten until io_size bytes went through (fio's io_size, passed through)."""
    return textwrap.dedent(f"""\
        name = "long run {io_size // GIB} GiB"

        [target]
        directory = "{directory}"

        [[test]]
        tool = "fio"
        rw = "write"
        bs = "1m"
        size = "{file_size // (1 << 20)}m"
        ioengine = "libaio"
        iodepth = 16
        direct = true

        [test.fio_options]
        io_size = "{io_size // (1 << 20)}m"
        """)


def plan_problem(text: str) -> str | None:
    """Why DiskLab would not run the plan (its first line), None if it would: a DiskLab without
    the fio pass-through options ([test.fio_options]) cannot say io_size."""
    from disklab.core.plan.parse import parse_plan
    from disklab.core.vocab.errors import PlanError

    try:
        parse_plan(text)
    except PlanError as e:
        return str(e).splitlines()[0]
    return None


def eta_errors(progress: Sequence[tuple[float, float, float | None]],
               end: float) -> dict[str, float | None]:
    """The overall ETA's relative error at each checkpoint: `progress` holds (time, fraction
    of the run, ETA in seconds) in time order; at the first report at or past a checkpoint the
    ETA is compared with the time really left (end - time); None where no report had one."""
    out: dict[str, float | None] = {}
    for point in CHECKPOINTS:
        hit = next(((t, eta) for t, frac, eta in progress if frac >= point and eta is not None),
                    None)
        key = f"{round(point * 100)} %"
        if hit is None or end <= hit[0]:
            out[key] = None
            continue
        left = end - hit[0]
        out[key] = round(abs(hit[1] - left) / left, 4)
    return out


def longest_gap(ticks: Sequence[float]) -> float:
    """The longest interval between consecutive timer ticks, in seconds (0 for < 2 ticks)."""
    return max((b - a for a, b in itertools.pairwise(ticks)), default=0.0)


def verdicts(result: dict) -> dict[str, str]:
    """Each measure against its target: 'ok' or 'short' (or 'not measured')."""
    errors = [e for e in result["eta_errors"].values() if e is not None]
    checks = {
        "eta": (max(errors) if len(errors) == len(CHECKPOINTS) else None, TARGETS["eta_error"]),
        "rss": (result["rss_growth"] / 1e6, TARGETS["rss_growth_mb"]),
        "gap": (result["max_gap"] * 1000, TARGETS["gap_ms"]),
        "zoom": (result["zoom"] * 1000, TARGETS["zoom_ms"]),
    }
    return {k: "not measured" if v is None else "ok" if v <= limit else "short"
            for k, (v, limit) in checks.items()}


GUI = CPU + textwrap.dedent("""
    import json, sys, time, psutil
    from pathlib import Path
    from PySide6.QtCore import QTimer
    from disklab.gui.app import make_app
    from disklab.core.plan.draft import PlanDraft
    from disklab.gui.main_window import MainWindow
    from disklab.gui.state import Workbench
    plan, library, refresh, shots = sys.argv[1:5]
    app = make_app()
    window = MainWindow(Workbench(library))
    window.resize(1280, 860)
    window.show()
    window.wb.set_draft(PlanDraft.from_text(Path(plan).read_text()))
    window.run.set_refresh(int(refresh))  # not kept: the user's own setting is untouched
    me = psutil.Process()
    state = {"progress": [], "ticks": [], "status": None}
    def on_event(event):
        name = type(event).__name__
        now = time.monotonic()
        if name == "CaseStarted":
            state["start"], state["cpu0"] = now, cpu_now()
        elif name == "Progress" and event.overall is not None:
            state["progress"].append((now, event.overall, event.overall_eta))
            if event.overall >= 0.10 and "rss0" not in state:
                state["rss0"] = me.memory_info().rss
        elif name in ("CaseFinished", "CaseFailed"):
            state["end"], state["cpu1"], state["status"] = now, cpu_now(), name
    def tick():
        state["ticks"].append(time.monotonic())
    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(10)
    window.wb.runs.event.connect(on_event)
    window.run.finished.connect(lambda *args: app.quit())
    QTimer.singleShot(0, window.run.start)
    app.exec()
    timer.stop()
    rss1 = me.memory_info().rss
    plots = window.run.plots.real()
    window.grab().save(f"{shots}-whole.png")
    last = plots.x_range()[1]
    t = time.perf_counter()
    plots.set_window(max(last - 60, 0), last)
    plots.redraw()
    plots.layout_widget.viewport().repaint()
    zoom = time.perf_counter() - t
    window.grab().save(f"{shots}-last-minute.png")
    ticks = [b for b in state["ticks"] if state.get("start", 0) <= b <= state.get("end", 0)]
    print(json.dumps({"status": state["status"], "progress": state["progress"],
                      "start": state.get("start"), "end": state.get("end"),
                      "cpu": report(state["cpu0"], state["cpu1"]) if "cpu1" in state else None,
                      "rss_growth": rss1 - state.get("rss0", rss1), "ticks": ticks,
                      "zoom": zoom}), flush=True)
    import os
    os._exit(0)  # no teardown of a window never closed (see gui_figures.COLD)
""")


def summarise(raw: dict) -> dict:
    """The child's measures as the figure reports them."""
    progress = [tuple(p) for p in raw["progress"]]
    return {"status": raw["status"],
            "eta_errors": eta_errors(progress, raw["end"]),
            "cpu_per_minute": raw["cpu"]["per_minute"] if raw["cpu"] else None,
            "seconds": raw["cpu"]["seconds"] if raw["cpu"] else None,
            "rss_growth": raw["rss_growth"], "max_gap": longest_gap(raw["ticks"]),
            "zoom": raw["zoom"]}


def _arm(plan: Path, library: Path, refresh: int, shots: Path, limit: float) -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", GUI, str(plan), str(library), str(refresh),
                           str(shots)], capture_output=True, text=True, env=env, timeout=limit)
    if done.returncode != 0:
        raise RuntimeError(f"exit status {done.returncode}: {done.stderr[-2000:]}")
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    if raw["status"] != "CaseFinished":
        raise RuntimeError(f"the case did not finish: {raw['status']}")
    return summarise(raw)


def run(directory: Path, scale: float = 1.0, shots: Path | None = None,
        limit: float = 6 * 3600) -> list[dict]:
    """Both arms (1 s, then 5 s refresh) in `directory`, which needs the file's size free."""
    io_size, file_size = sizes(scale)
    free = shutil.disk_usage(directory).free
    if free < file_size + GIB // 4:
        return [{"figure": "12 long run", "value": "-", "target": "-",
                 "verdict": f"not measured: {directory} has {free // (1 << 20)} MiB free, the "
                            f"file needs {file_size // (1 << 20)} MiB",
                 "details": {}}]
    problem = plan_problem(plan_text(directory, io_size, file_size))
    if problem is not None:
        return [{"figure": "12 long run", "value": "-", "target": "-",
                 "verdict": f"not measured: the plan is refused: {problem}", "details": {}}]
    shots = shots or Path(__file__).resolve().parents[1] / "shots"
    shots.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="disklab-long-", dir=directory) as tmp:
        plan = Path(tmp) / "plan.toml"
        plan.write_text(plan_text(Path(tmp), io_size, file_size), encoding="utf-8")
        for refresh in (1, 5):
            result = _arm(plan, Path(tmp) / f"lib{refresh}.sqlite3", refresh,
                          shots / f"long-run-{refresh}s", limit)
            checks = verdicts(result)
            worst = "ok" if all(v == "ok" for v in checks.values()) else "short"
            rows.append({"figure": f"12 long run {io_size // GIB} GiB, {refresh} s refresh",
                         "value": f"{result['cpu_per_minute']:.2f} s/min",
                         "target": "ETA 10 %, RSS 30 MB, gap/zoom 100 ms",
                         "verdict": worst, "details": {**result, "checks": checks}})
    return rows
