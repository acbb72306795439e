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
from disklab.gui.plots import LivePlots, peak_window, step_up

REPAINTS = 20_000


@pytest.mark.slow
def test_soak_20000_repaints_of_a_live_plot_memory_flat(qtbot):
    # One small live plot repainted 20,000 times through Qt's paint path (the canvas's
    # QPainter calls, its polyline memory filled by numpy): the path that aborted on PySide6
    # 6.12 under pyqtgraph; memory must stay flat.
    plots = LivePlots(which=("app",))
    plots.timer.stop()  # this test drives the redraws itself
    plots.driven = True
    qtbot.addWidget(plots)
    plots.resize(200, 150)
    for buf in plots.buffers.values():
        buf.limit = 2048  # bounded as in a long run, reached early so frames stay cheap
    plots.show()
    qtbot.wait(100)  # let the first layout and expose happen
    canvas = plots.canvas
    rng = np.random.default_rng(1)
    values = rng.uniform(50, 500, size=4096) * MiB
    proc = psutil.Process()
    baseline = None
    painted = canvas.paints
    for i in range(REPAINTS):
        plots.add_sample("app_wchar_bps", 1000.0 + i * 0.5, float(values[i % 4096]))
        if i % 50 == 0:
            plots.add_sample("dirty_bytes", 1000.0 + i * 0.5, float(values[i % 4096]))
        plots.redraw()
        canvas.repaint()
        if i == 2000:
            gc.collect()
            baseline = proc.memory_info().rss
    gc.collect()
    grown = proc.memory_info().rss - baseline
    assert plots.redraws >= REPAINTS
    assert canvas.paints - painted >= REPAINTS  # every repaint really drew the plot
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
    width = plots.canvas.plot_width()  # the pixel columns the user sees
    assert len(x) <= 2 * width + 4  # about two points per pixel column, not 86,400
    assert (x[0], x[-1]) == (0.0, n - 1.0)  # the whole run, to its last second
    assert y.max() == 900 and y.min() == 0  # the spike and the stall are both drawn
    assert x[y.argmax()] == spike and x[y.argmin()] == stall  # at their own time
    assert np.all(np.diff(x) >= 0)
    plots.canvas.grab()  # a frame
    (x0, x1), (y0, y1) = plots.canvas.x, plots.canvas.by_key["app"].y
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


def test_step_up_gives_round_numbers_at_most_a_third_above():
    assert [step_up(v) for v in (1, 7, 10, 11, 99, 101, 0.013, 2.5)] == [
        1, 8, 10, 12, 100, 120, 0.015, 2.5]
    for v in np.geomspace(1e-3, 1e9, 500):
        assert v <= step_up(v) <= v * 4 / 3 * (1 + 1e-12)


def test_live_axes_stay_still_between_steps_and_always_hold_the_whole_run(qtbot):
    # what makes a live sample cheap to draw: the range (and so the axes' text) does not move
    # for every sample, yet the whole run, its newest sample and its peak are always in view
    plots = LivePlots(which=("app", "cpu"))
    plots.timer.stop()  # the test drives the redraws
    qtbot.addWidget(plots)
    plots.resize(800, 500)
    plots.show()
    qtbot.wait(50)
    canvas = plots.canvas
    ranges, moves = [], 0
    for s in range(600):  # 5 minutes at 2 samples a second, throughput creeping up
        plots.add_sample("app_wchar_bps", 1000.0 + s / 2, (100 + s / 10) * MiB)
        plots.add_sample("cpu_pct", 1000.0 + s / 2, 20.0 + (s % 7))
        plots.redraw()
        now = (canvas.x, tuple(p.y for p in canvas.panels))
        if ranges and now != ranges[-1]:
            moves += 1
        ranges.append(now)
        x0, x1 = canvas.x  # one x for every plot
        assert x0 <= 0 and x1 >= s / 2  # the whole run to its newest sample
        assert all(p.y[0] <= 0 for p in canvas.panels)  # from zero up
        assert canvas.by_key["app"].y[1] >= 100 + s / 10  # the peak so far
    assert moves <= 20, f"the axes moved {moves} times in 600 samples"
    # the frame is round numbers: 300 s of run in a 300 s axis, 159.9 MiB/s with the legend's
    # headroom above it (x 1.35 = 216) under 250
    assert plots.frames["app"].right == 300 and plots.frames["app"].high == 250


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
