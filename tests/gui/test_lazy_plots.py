"""The window appears without numpy, pyqtgraph and the live plots (bench figure 6), which
are made right after its first frame, and plots made late miss nothing: a run watched from
another page has all its samples and markers plotted when the Run page is shown."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from disklab.core.vocab.units import MiB
from disklab.gui import lazy

ROOT = Path(__file__).resolve().parents[2]

FIRST_FRAME = textwrap.dedent("""
    import sys
    from disklab.gui.app import make_app
    from disklab.gui.main_window import MainWindow
    from disklab.gui.state import Workbench
    app = make_app()
    w = MainWindow(Workbench(sys.argv[1]))
    w.show_page("run")
    w.show()
    app.processEvents()
    first = ("pyqtgraph" in sys.modules, "numpy" in sys.modules, w.run.plots.made)
    while not w.run.plots.made:
        app.processEvents()
    curves = len(w.run.plots.curves)
    print(*first, "pyqtgraph" in sys.modules, "numpy" in sys.modules, curves, flush=True)
    import os
    os._exit(0)
""")


def test_the_first_frame_comes_without_numpy_or_pyqtgraph_and_the_plots_right_after(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "app"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", FIRST_FRAME, str(tmp_path / "lib.sqlite3")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    pg_first, np_first, made_first, pg_after, np_after, curves = done.stdout.split()
    assert (pg_first, np_first, made_first) == ("False", "False", "False"), done.stdout
    assert (pg_after, np_after) == ("True", "True")  # the plots, right after
    assert int(curves) >= 8  # the Run page's live plots, whole


def test_samples_and_markers_before_the_plots_exist_are_all_plotted(qtbot, iec_units):
    # iec_units: the samples are fed in MiB/s (tests/conftest.py)
    plots = lazy.live_plots()
    qtbot.addWidget(plots)
    plots.driven = True  # set by the Run page when a run starts: handed on to the real plots
    plots.add_sample("app_wchar_bps", 100.0, 10 * MiB)  # a run before this one: cleared
    plots.clear()
    plots.add_marker(1000.0, "#1", detail="case 1, repeat 1")
    for s in range(300):
        plots.add_sample("app_wchar_bps", 1000.0 + s, (50 + s % 7) * MiB)
        plots.add_sample("cpu_pct", 1000.0 + s, 12.5)
    plots.redraw()  # nothing to draw on yet: nothing happens, nothing is lost
    assert not plots.made
    plots.resize(900, 700)
    plots.show()  # the page shown: the plots are made after its first paint
    qtbot.waitUntil(lambda: plots.made, timeout=5000)
    real = plots.real()
    assert real.driven is True
    t, y = plots.series_data("app_wchar_bps")
    assert len(t) == 300 and t[0] == 0.0 and t[-1] == 299.0
    assert list(y[:7]) == [50.0 + i for i in range(7)]
    assert len(plots.series_data("cpu_pct")[0]) == 300
    assert [m.label for m in plots.markers] == ["#1"]
    assert real.redraws >= 1  # drawn in its first paint, without waiting for a refresh
    curve_t, _curve_y = real.curves["app_wchar_bps"].data()
    assert curve_t is not None and curve_t[-1] == 299.0
    plots.add_sample("app_wchar_bps", 1300.0, 60 * MiB)  # later samples go straight in
    assert len(plots.series_data("app_wchar_bps")[0]) == 301


def test_a_long_run_watched_elsewhere_makes_the_plots_hidden_instead_of_growing(qtbot,
                                                                                 monkeypatch):
    monkeypatch.setattr(lazy, "RECORD_LIMIT", 50)
    plots = lazy.live_plots()
    qtbot.addWidget(plots)
    for s in range(60):
        plots.add_sample("device_write_bps", float(s), 20 * MiB)
    assert plots.made and not plots.isVisible()
    assert len(plots.series_data("device_write_bps")[0]) == 60


def test_start_makes_the_plots_before_the_tool_starts(qtbot, window, target_dir, monkeypatch):
    """Start pressed on another page: the Run page's plots (pyqtgraph's import, ~0.5 s of the
    GUI thread) are made while the plan is checked, before the worker starts the tool. Made
    when the Run page was first shown at the run's start, they took half a CPU during the
    tool's first second of every window's first run (bench figure 1b: 0.965 of the bare
    tool's throughput on one CPU)."""
    from disklab.core.plan.draft import PlanDraft
    from tests.helpers import engine_plan

    window.show_page("matrix")
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, name="plots first")))
    assert not window.run.plots.made
    made_when_launched = []
    launch = window.wb.runs.start

    def spy(*args, **kwargs):
        made_when_launched.append(window.run.plots.made)
        return launch(*args, **kwargs)

    monkeypatch.setattr(window.wb.runs, "start", spy)
    with qtbot.waitSignal(window.run.finished, timeout=90_000):
        window.start_run()
    assert made_when_launched == [True]
    assert window.current_page() == "run"
    assert len(window.run.plots.series_data("tool_bps")[0]) > 0  # the run is on them
