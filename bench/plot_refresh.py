"""Per-refresh GUI CPU of the Run page's live plots, fed like a 60 s engine case (a tool for
finding where figure 2's GUI thread goes; not a figure: the machine need not be quiet when
two versions are alternated, PYTHONPATH=<other checkout>/app for the other).

python bench/plot_refresh.py [--profile] [--refreshes N] [--history S]
The real main window offscreen at 1280x860 on the Run page; each refresh feeds 1 s of samples
(every 0.5 s: the monitor's LIVE_SERIES and the engine's tool_bps), then does what flush does
(plots.redraw) and lets Qt paint (processEvents). Reports process CPU per refresh (median,
mean) over the measured refreshes, after `history` seconds of run already drawn.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import shutil
import statistics
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from disklab.gui.app import make_app
from disklab.gui.main_window import MainWindow
from disklab.gui.state import Workbench

MiB = 1 << 20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--refreshes", type=int, default=60)
    ap.add_argument("--history", type=int, default=5)
    ap.add_argument("--sort", default="cumulative")
    ap.add_argument("--lines", type=int, default=60)
    args = ap.parse_args()
    app = make_app()
    tmp = tempfile.mkdtemp(prefix="plotprof-")
    window = MainWindow(Workbench(os.path.join(tmp, "lib.sqlite3")))
    window.resize(1280, 860)
    window.show()
    window.show_page("run")
    for _ in range(20):
        app.processEvents()
    plots = window.run.plots.real()
    plots.driven = True
    plots.timer.stop()
    for _ in range(10):
        app.processEvents()
    rnd = random.Random(1)
    t0 = 1.7e9
    plots.add_marker(t0, "#1", "case", "case 1")
    state = {"s": 0.0}

    def feed(seconds: float) -> None:
        end = state["s"] + seconds
        while state["s"] < end - 1e-9:
            s = state["s"] + 0.5
            state["s"] = s
            t = t0 + s
            read = (60 + rnd.gauss(0, 6)) * MiB
            plots.add_sample("app_rchar_bps", t, read)
            plots.add_sample("app_wchar_bps", t, 0.0)
            plots.add_sample("tool_bps", t, read * (1 + rnd.gauss(0, 0.02)))
            plots.add_sample("device_read_bps", t, read * 1.01)
            plots.add_sample("device_write_bps", t, rnd.choice((0.0, 0.0, 40e3)))
            plots.add_sample("dirty_bytes", t, (20 + rnd.random()) * 1024 * 1024)
            plots.add_sample("writeback_bytes", t, 0.0)
            plots.add_sample("cpu_pct", t, 35 + rnd.gauss(0, 3))

    def refresh() -> None:
        window.run.flush()
        app.processEvents()

    for _ in range(args.history):
        feed(1.0)
        refresh()
    cpu = []
    split = [[], []]
    prof = cProfile.Profile() if args.profile else None
    for _ in range(args.refreshes):
        feed(1.0)
        c0 = time.process_time()
        if prof:
            prof.enable()
        window.run.flush()
        c1 = time.process_time()
        app.processEvents()
        if prof:
            prof.disable()
        cpu.append(time.process_time() - c0)
        split[0].append(c1 - c0)
        split[1].append(time.process_time() - c1)
    out = {"median_ms": round(statistics.median(cpu) * 1000, 2),
           "mean_ms": round(statistics.fmean(cpu) * 1000, 2), "n": len(cpu),
           "redraws": plots.redraws,
           "flush_ms": round(statistics.median(split[0]) * 1000, 2),
           "paint_ms": round(statistics.median(split[1]) * 1000, 2)}
    print(json.dumps(out), flush=True)
    if prof:
        st = pstats.Stats(prof, stream=sys.stderr)
        st.sort_stats(args.sort).print_stats(args.lines)
    shutil.rmtree(tmp, ignore_errors=True)
    os._exit(0)  # no teardown of a window never closed (see bench/figures/gui_figures.COLD)


if __name__ == "__main__":
    main()
