"""The check that catches a bad PySide6 upgrade (the range in pyproject.toml), the charts the
Library and Compare show, and the bounded buffers behind the live plots.

- PySide6 6.12.0 aborted Python 3.11 within ~100 repaints of a plot: the soak repaints a live
  plot 20,000 times and checks that memory stays flat.
- The Library's and Compare's charts are the SVG core.results.svg writes for exports.
"""

from __future__ import annotations

import gc
import xml.etree.ElementTree as ET

import numpy as np
import psutil
import pytest

from disklab.core.results.charts import ChartSpec, Series
from disklab.core.results.svg import to_svg
from disklab.core.vocab.units import MiB
from disklab.gui.buffers import SeriesBuffer
from disklab.gui.chart import ChartWidget
from disklab.gui.export import write_chart
from disklab.gui.plot_series import peak_window, visible_span
from disklab.gui.plots import LivePlots

# samples fed in MiB/s (multiples of 2**20): drawn in IEC units (tests/conftest.py iec_units);
# the plots' units choice is tests/gui/test_units_choice.py's
pytestmark = pytest.mark.usefixtures("iec_units")

REPAINTS = 20_000


@pytest.mark.slow
def test_soak_20000_repaints_of_a_live_plot_memory_flat(qtbot):
    # One small live plot repainted 20,000 times through Qt's paint path (pyqtgraph's scene:
    # one setData and a repaint of the view): the path that aborted on PySide6 6.12 under
    # pyqtgraph; memory must stay flat.
    plots = LivePlots(which=("app",))
    plots.timer.stop()  # this test drives the redraws itself
    plots.driven = True
    qtbot.addWidget(plots)
    plots.resize(200, 150)
    for buf in plots.buffers.values():
        buf.limit = 2048  # bounded as in a long run, reached early so frames stay cheap
    plots.show()
    qtbot.wait(100)  # let the first layout and expose happen
    view = plots.layout_widget.viewport()
    rng = np.random.default_rng(1)
    values = rng.uniform(50, 500, size=4096) * MiB
    proc = psutil.Process()
    baseline = None
    for i in range(REPAINTS):
        plots.add_sample("app_wchar_bps", 1000.0 + i * 0.5, float(values[i % 4096]))
        if i % 50 == 0:
            plots.add_sample("dirty_bytes", 1000.0 + i * 0.5, float(values[i % 4096]))
        plots.redraw()
        view.repaint()
        if i == 2000:
            gc.collect()
            baseline = proc.memory_info().rss
    gc.collect()
    grown = proc.memory_info().rss - baseline
    assert plots.redraws >= REPAINTS
    t, _y = plots.series_data("app_wchar_bps")
    assert 1024 <= len(t) <= 2048 and t[-1] == (REPAINTS - 1) * 0.5
    # 20k float64 pairs are 320 KB; anything near 30 MB is a leak per frame
    assert grown < 30 * 1024 * 1024, f"RSS grew {grown / MiB:.1f} MiB over the soak"


def test_the_pages_chart_is_the_svg_every_export_writes(qtbot, tmp_path):
    """One chart writer (core.results.svg): the widget the Library and Compare pages show
    draws exactly the SVG an export writes, for bars and for a log-x sweep."""
    view = ChartWidget()
    qtbot.addWidget(view)
    view.resize(700, 400)
    bars = ChartSpec("bars", "bar", "test", "MiB/s",
                     (Series("ext4", (0.0, 1.0), (100.0, 200.0), (5.0, 10.0)),
                      Series("xfs", (0.0, 1.0), (110.0, 190.0), (4.0, 8.0))),
                     categories=("write", "read"))
    line = ChartSpec("sweep", "line", "record_size", "MiB/s",
                     (Series("write", (4096.0, 65536.0, 1048576.0), (50.0, 150.0, 300.0)),),
                     log_x=True, x_ticks=((4096.0, "4k"), (65536.0, "64k"), (1048576.0, "1m")))
    for spec in (bars, line):
        view.show_spec(spec)
        assert view.renderer().isValid()
        path = write_chart(spec, tmp_path / f"{spec.title}.svg")
        assert view.svg == path.read_text() == to_svg(spec)
        assert ET.fromstring(view.svg) is not None
    assert ">4k<" in view.svg and ">1m<" in view.svg  # the swept values as the plan spells
    view.show_spec(None)
    assert not view.renderer().isValid()


def test_series_buffer_doubles_then_halves_resolution_to_stay_bounded():
    buf = SeriesBuffer(capacity=4, limit=16)
    for i in range(10):
        buf.append(float(i), float(i) * 2)
    assert buf.capacity == 16 and len(buf) == 10
    t, y = buf.data()
    assert t.tolist() == [float(i) for i in range(10)] and y[9] == 18.0
    for i in range(10, 100):
        buf.append(float(i), 0.0)
    assert buf.capacity == 16  # never beyond the limit
    t, _y = buf.data()
    assert t[-1] == 99.0 and len(t) <= 16
    assert np.all(np.diff(t) > 0)  # still in time order


def test_a_24_hour_run_shows_whole_with_its_peaks_and_every_sample_when_zoomed(qtbot):
    # 24 h at 1 sample a second: a flat 100 MiB/s with one 1-second spike and one stall
    plots = LivePlots(which=("app",))
    plots.timer.stop()  # the test drives the redraws
    qtbot.addWidget(plots)
    plots.resize(800, 300)
    plots.show()
    qtbot.wait(50)
    n, spike, stall = 86_400, 50_000, 70_001
    for s in range(n):
        value = 900 if s == spike else 0 if s == stall else 100
        plots.add_sample("app_wchar_bps", 1000.0 + s, value * MiB)
    plots.redraw()
    curve = plots.curves["app_wchar_bps"]
    x, y = curve.data()
    width = plots._plot_width()  # the pixel columns the user sees
    assert len(x) <= 2 * width + 4  # about two points per pixel column, not 86,400
    assert (x[0], x[-1]) == (0.0, n - 1.0)  # the whole run, to its last second
    assert y.max() == 900 and y.min() == 0  # the spike and the stall are both drawn
    assert x[y.argmax()] == spike and x[y.argmin()] == stall  # at their own time
    assert np.all(np.diff(x) >= 0)
    plots.grab()  # a frame
    (x0, x1), (y0, y1) = plots.plots["app"].getViewBox().viewRange()
    assert x0 <= 0 and x1 >= n - 1 and y0 <= 0 and y1 >= 900

    # zoom on two minutes around the spike: every sample of the window, at full resolution
    plots.set_window(spike - 60, spike + 60)
    plots.redraw()
    x, y = curve.data()
    assert set(range(spike - 60, spike + 61)) <= set(x.tolist())
    assert len(x) < 200 and y.max() == 900

    # back to the whole run
    plots.show_whole_run()
    plots.redraw()
    x, _y = curve.data()
    assert (x[0], x[-1]) == (0.0, n - 1.0)


def test_peak_window_keeps_the_extremes_and_ends_of_any_window():
    rng = np.random.default_rng(7)
    t = np.arange(10_000, dtype=float)
    y = rng.normal(size=10_000)
    for lo, hi, bins in [(None, None, 100), (1234.5, 5678.9, 37), (0, 9999, 5000), (10, 20, 3)]:
        x, v = peak_window(t, y, lo, hi, bins)
        i0 = 0 if lo is None else int(np.searchsorted(t, lo)) - (lo > 0)
        i1 = 10_000 if hi is None else min(int(np.searchsorted(t, hi, "right")) + 1, 10_000)
        assert (x[0], x[-1]) == (t[i0], t[i1 - 1])
        assert v.max() == y[i0:i1].max() and v.min() == y[i0:i1].min()
        assert len(x) <= 2 * bins + 4 or len(x) == i1 - i0
        assert np.all(np.diff(x) >= 0)
        assert np.all(y[x.astype(int)] == v)  # real samples at their own times


def test_y_fits_the_visible_window_unless_the_user_zoomed_y(qtbot):
    # a burst of 3000 MiB/s, then 100 MiB/s for minutes: zoomed on the quiet part, the axis
    # fits 100, not 3000 (the old frame only grew); a y zoom of the user's own is kept
    plots = LivePlots(which=("app", "cpu"))
    plots.timer.stop()  # the test drives the redraws
    qtbot.addWidget(plots)
    plots.resize(800, 500)
    plots.show()
    qtbot.wait(50)
    for s in range(600):
        plots.add_sample("app_wchar_bps", 1000.0 + s / 2, (3000 if s < 20 else 100) * MiB)
        plots.add_sample("cpu_pct", 1000.0 + s / 2, 20.0 + (s % 7))
    plots.redraw()
    qtbot.wait(50)  # the auto-range fits at the next paint
    view = plots.plots["app"].getViewBox()
    assert view.viewRange()[1][1] >= 3000  # the whole run: the burst in view
    assert view.viewRange()[0][0] >= 0  # never before the run's start
    plots.set_window(100, 200)
    plots.redraw()
    qtbot.wait(50)
    lo, hi = view.viewRange()[1]
    assert lo <= 0 and 100 <= hi <= 2 * 100  # fitted to what is shown, from zero
    assert plots.plots["cpu"].getViewBox().viewRange()[0] == pytest.approx([100, 200])
    view.setYRange(0, 1000, padding=0)  # the user's own y window
    plots.set_window(120, 220)
    plots.redraw()
    qtbot.wait(50)
    assert view.viewRange()[1] == pytest.approx([0, 1000])
    plots.show_whole_run()
    plots.redraw()
    qtbot.wait(50)
    assert view.viewRange()[1][1] >= 3000 and view.viewRange()[0][1] >= 299


def test_new_samples_redraw_at_most_once_a_second_but_a_zoom_at_once(qtbot):
    plots = LivePlots(which=("app",))
    qtbot.addWidget(plots)
    plots.resize(600, 300)
    plots.show()
    plots.add_sample("app_wchar_bps", 0.0, 100 * MiB)
    qtbot.waitUntil(lambda: plots.redraws == 1, timeout=2000)  # the first one soon
    for i in range(1, 6):  # a burst of samples right after a redraw: one redraw for all
        plots.add_sample("app_wchar_bps", i * 0.25, 100 * MiB)
    qtbot.wait(600)
    assert plots.redraws == 1  # not yet: the last redraw was under a second ago
    qtbot.waitUntil(lambda: plots.redraws == 2, timeout=2000)
    assert len(plots.curves["app_wchar_bps"].data()[0]) == 6  # all of the burst drawn
    qtbot.wait(1200)
    assert plots.redraws == 2  # nothing new, nothing drawn
    plots.set_window(0.3, 0.8)  # the user zooms
    qtbot.waitUntil(lambda: plots.redraws == 3, timeout=500)
    # the window's samples and one beyond each end, so the line reaches the edges
    assert plots.curves["app_wchar_bps"].data()[0].tolist() == [0.25, 0.5, 0.75, 1.0]


def test_y_fits_the_line_where_it_crosses_the_window_edge_not_the_sample_beyond():
    # the sample beyond the left edge (2000 MiB/s, the end of a fast case) is handed only so
    # that the line reaches the edge: seen there is the line's value at the edge, 1000
    t = np.array([0.0, 1.0, 2.0, 3.0])
    y = np.array([2000.0, 0.0, 500.0, 600.0])
    assert visible_span(t, y, "all", 0.5, 3.0) == (0.0, 3.0, 0.0, 1000.0)
    assert visible_span(t, y, np.array([False, True, True, True]), 0.5, 3.0) == (
        0.0, 3.0, 0.0, 600.0)  # a gap: no line reaches the edge
    assert visible_span(t, y, "all", None, None) == (0.0, 3.0, 0.0, 2000.0)


def test_a_steady_run_refresh_moves_no_range_of_the_plots(qtbot):
    # a run's refreshes (the Run page drives them) of steady data: the whole run's time axis
    # ends at a round time past the newest sample and y keeps its scale, so most refreshes
    # move no view: no new ticks, no new transform of the curves (bench figure 2)
    plots = LivePlots(which=("app", "cpu"))
    plots.timer.stop()
    plots.driven = True
    qtbot.addWidget(plots)
    plots.resize(800, 500)
    plots.show()
    qtbot.wait(50)
    rng = np.random.default_rng(3)
    moves: list[object] = []
    for plot in plots.plots.values():
        plot.getViewBox().sigRangeChanged.connect(lambda *a: moves.append(a))
    for s in range(121):
        for half in (0.0, 0.5):
            plots.add_sample("app_wchar_bps", s + half, (100 + rng.normal(0, 5)) * MiB)
            plots.add_sample("cpu_pct", s + half, 30 + rng.normal(0, 2))
        plots.redraw()
        if s == 60:
            moves.clear()  # the run's second minute
        plots.layout_widget.viewport().repaint()
    assert len(moves) <= 20, len(moves)  # 60 refreshes, 2 plots: at least 120 moves before
    (x0, x1), (_y0, y1) = plots.plots["app"].getViewBox().viewRange()
    assert x0 <= 0.5 and 120.5 <= x1 <= 1.25 * 120.5  # the whole run, to a round end
    assert 105 * 1.35 <= y1 <= 2 * 115  # fitted to the data
    plots.driven = False  # the run ended: fitted exactly
    plots.redraw()
    assert plots.plots["app"].getViewBox().viewRange()[0][1] == pytest.approx(120.5, abs=0.01)
