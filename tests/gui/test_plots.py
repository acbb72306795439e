"""The two checks that catch a bad PySide6/pyqtgraph upgrade (issue 5 'Versions'), and the
bounded buffers behind the live plots.

- PySide6 6.12.0 aborted Python 3.11 within ~100 repaints of a plot: the soak repaints a live
  plot 20,000 times and checks that memory stays flat.
- 6.11.x broke pyqtgraph's SVG exporter: the export must be valid SVG with the plotted data.
"""

from __future__ import annotations

import gc
import re
import xml.etree.ElementTree as ET

import numpy as np
import psutil
import pytest

from disklab.core.charts import ChartSpec, Series
from disklab.core.units import MiB
from disklab.gui.buffers import SeriesBuffer
from disklab.gui.plots import ChartView, LivePlots, export_plot

REPAINTS = 20_000


@pytest.mark.slow
def test_soak_20000_repaints_of_a_live_plot_memory_flat(qtbot):
    # One live plot with its axes hidden: axis text is 85 % of a frame's cost and is Qt's C++
    # text drawing; the curve, view box and scene are pyqtgraph's Python paint() code, the path
    # that aborted on PySide6 6.12. 20k frames then take ~15-30 s instead of ~150 s.
    painted = _count_curve_paints()  # before the curve exists: PySide caches overrides
    plots = LivePlots(which=("app",))
    plots.timer.stop()  # this test drives the redraws itself
    qtbot.addWidget(plots)
    plots.resize(200, 150)
    plot = plots.plots["app"]
    plot.hideAxis("left")
    plot.hideAxis("bottom")
    plot.legend.scene().removeItem(plot.legend)  # text items: half of what is left
    plot.setTitle(None)
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
        plots.add_sample("app_write_bps", 1000.0 + i * 0.5, float(values[i % 4096]))
        if i % 50 == 0:
            plots.add_sample("dirty_bytes", 1000.0 + i * 0.5, float(values[i % 4096]))
        plots.redraw()
        view.repaint()
        if i == 2000:
            gc.collect()
            baseline = proc.memory_info().rss
    gc.collect()
    grown = proc.memory_info().rss - baseline
    assert plots.redraws == REPAINTS
    assert painted["n"] >= REPAINTS  # every repaint really drew the curve
    t, _y = plots.series_data("app_write_bps")
    assert 1024 <= len(t) <= 2048 and t[-1] == (REPAINTS - 1) * 0.5
    # 20k float64 pairs are 320 KB; anything near 30 MB is a leak per frame
    assert grown < 30 * 1024 * 1024, f"RSS grew {grown / MiB:.1f} MiB over the soak"


def _count_curve_paints() -> dict[str, int]:
    """Count PlotCurveItem.paint calls (undone when the test's module is done)."""
    import pyqtgraph as pg

    counter = {"n": 0}
    original = pg.PlotCurveItem.paint

    def paint(self, *args):
        counter["n"] += 1
        return original(self, *args)

    pg.PlotCurveItem.paint = paint
    _restore.append(lambda: setattr(pg.PlotCurveItem, "paint", original))
    return counter


_restore: list = []


@pytest.fixture(autouse=True)
def _undo_patches():
    yield
    while _restore:
        _restore.pop()()


def test_svg_export_of_a_live_plot_is_valid_and_holds_the_data(qtbot, tmp_path):
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.resize(800, 600)
    plots.show()
    # a ramp 0..99 MiB/s over 100 seconds
    for i in range(100):
        plots.add_sample("app_write_bps", float(i), i * MiB)
    plots.redraw()
    path = export_plot(plots.plots["app"], tmp_path / "live.svg")
    text = path.read_text()
    root = ET.fromstring(text)  # well-formed XML
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "<svg" in text
    paths = [e for e in root.iter() if e.tag.endswith("path") and e.get("d")]
    # the curve: one path with (nearly) all 100 points, M then L commands
    longest = max(paths, key=lambda e: len(e.get("d")))
    points = re.findall(r"[-\d.]+[ ,][-\d.]+", longest.get("d"))
    assert len(points) >= 90
    png = export_plot(plots.plots["app"], tmp_path / "live.png")
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_chart_view_draws_bars_and_lines_and_exports(qtbot, tmp_path):
    view = ChartView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    bars = ChartSpec("bars", "bar", "test", "MiB/s",
                     (Series("ext4", (0.0, 1.0), (100.0, 200.0), (5.0, 10.0)),
                      Series("xfs", (0.0, 1.0), (110.0, 190.0), (4.0, 8.0))),
                     categories=("write", "read"))
    view.show_spec(bars)
    svg = view.export(tmp_path / "bars.svg").read_text()
    assert ET.fromstring(svg) is not None and "<svg" in svg
    line = ChartSpec("sweep", "line", "record_size (KiB)", "MiB/s",
                     (Series("write", (4.0, 64.0, 1024.0), (50.0, 150.0, 300.0)),),
                     log_x=True)
    view.show_spec(line)
    assert view.export(tmp_path / "line.png").stat().st_size > 1000
    view.show_spec(None)


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
