"""The Run page's live plots as pyqtgraph draws them (issue 45): a curve where its data says,
axes with units and time, legends; one setData per curve that changed a refresh; the mouse
zooms and pans time in every plot on the plot and one axis on that axis; y fits what is shown;
a gap in the samples is a gap in the line (issue 44, point 9); the crosshair's values are the
samples; the menu's CSV holds the samples of the window shown; log y; light and dark themes.
(The same with real X input on the real window: test_real_input_plots.py.)"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QImage, QWheelEvent
from PySide6.QtWidgets import QApplication

from disklab.core.results.charts import PALETTE
from disklab.core.vocab.units import MiB
from disklab.gui.plot_export import export_csv, samples_csv
from disklab.gui.plots import LivePlots

# samples fed in MiB/s (multiples of 2**20): drawn in IEC units (tests/conftest.py iec_units);
# the plots' units choice is tests/gui/test_units_choice.py's
pytestmark = pytest.mark.usefixtures("iec_units")


def _plots(qtbot, which=("app", "device"), size=(800, 500)) -> LivePlots:
    plots = LivePlots(which=which)
    plots.timer.stop()  # the test drives the redraws
    plots.driven = True
    qtbot.addWidget(plots)
    plots.resize(*size)
    plots.show()
    qtbot.waitExposed(plots)
    return plots


def _image(plots: LivePlots) -> QImage:
    return plots.layout_widget.grab().toImage()


def _px(plots: LivePlots, key: str, t: float, y: float = 0.0) -> QPoint:
    """Where (t, y) of plot `key` is in the layout widget's pixels."""
    view = plots.plots[key].getViewBox()
    return plots.layout_widget.mapFromScene(view.mapViewToScene(QPointF(t, y)))


def _column(plots: LivePlots, key: str, t: float, colour: QColor, reach: int = 0) -> int:
    """How many pixels of `colour` (within a small distance) the column at time t holds (the
    most of the columns within `reach` pixels)."""
    img = _image(plots)
    rect = plots.plots[key].getViewBox().sceneBoundingRect()
    x = _px(plots, key, t).x()
    return max(sum(1 for y in range(int(rect.top()) + 1, int(rect.bottom()) - 1)
                   if _close(QColor(img.pixel(x + dx, y)), colour))
               for dx in range(-reach, reach + 1))


def _close(a: QColor, b: QColor) -> bool:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) < 60


def _wheel(plots: LivePlots, at: QPoint, notches: int = 3) -> None:
    viewport = plots.layout_widget.viewport()
    pos = QPointF(at)
    event = QWheelEvent(pos, viewport.mapToGlobal(pos), QPoint(0, 0), QPoint(0, 120 * notches),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(viewport, event)
    QApplication.processEvents()


def _feed(plots: LivePlots, seconds: int, every: float = 0.5, value=lambda s: 100.0) -> None:
    for i in range(int(seconds / every) + 1):
        s = i * every
        plots.add_sample("app_wchar_bps", 1000.0 + s, value(s) * MiB)
        plots.add_sample("device_write_bps", 1000.0 + s, 0.8 * value(s) * MiB)


def test_a_curve_is_drawn_where_its_data_says_with_axes_and_legends(qtbot):
    plots = _plots(qtbot)
    # values between the ticks (100, 200, 300 here): a grid line over a curve tints it
    _feed(plots, 60, value=lambda s: 110.0 if s < 30 else 330.0)
    plots.redraw()
    qtbot.wait(100)
    blue = QColor(PALETTE[0])
    img = _image(plots)
    for t, v in ((10.0, 110.0), (50.0, 330.0)):
        p = _px(plots, "app", t, v)
        assert any(_close(QColor(img.pixel(p.x(), p.y() + d)), blue) for d in range(-2, 3))
    assert plots.legend("app")[:2] == ["write", "read"]
    assert plots.plots["app"].getAxis("left").labelText == "MiB/s"
    assert list(plots.plots.values())[-1].getAxis("bottom").labelText == "elapsed (s)"
    assert plots.plots["app"].getViewBox().viewRange()[0][0] >= 0  # from the run's start


def test_one_setdata_per_changed_curve_a_refresh(qtbot):
    plots = _plots(qtbot, which=("app", "device", "memory", "cpu"))
    for s in ("app_wchar_bps", "device_write_bps", "dirty_bytes", "cpu_pct"):
        plots.add_sample(s, 0.0, 100 * MiB)
    plots.redraw()
    handed: list[str] = []
    for series, curve in plots.curves.items():
        original = curve.setData
        curve.setData = lambda *a, _s=series, _o=original, **k: (handed.append(_s), _o(*a, **k))
    for k in range(1, 11):
        for s in ("app_wchar_bps", "device_write_bps", "dirty_bytes", "cpu_pct"):
            plots.add_sample(s, float(k), 100 * MiB)
        plots.redraw()
    assert sorted(set(handed)) == sorted(
        ["app_wchar_bps", "device_write_bps", "dirty_bytes", "cpu_pct"])
    assert len(handed) == 40  # one each a refresh, not one per sample or per axis
    handed.clear()
    plots.add_sample("cpu_pct", 11.0, 50.0)
    plots.redraw()
    assert handed == ["cpu_pct"]  # only the curve with a new sample
    plots.redraw()
    assert handed == ["cpu_pct"]  # nothing new, nothing handed


def test_wheel_on_a_plot_zooms_time_everywhere_and_on_the_y_axis_y_alone(qtbot):
    plots = _plots(qtbot)
    _feed(plots, 600, every=1.0)
    plots.redraw()
    qtbot.wait(100)
    app, device = (plots.plots[k].getViewBox() for k in ("app", "device"))
    y_before = app.viewRange()[1]
    centre = plots.layout_widget.mapFromScene(app.sceneBoundingRect().center())
    _wheel(plots, centre)
    plots.redraw()
    lo, hi = app.viewRange()[0]
    assert hi - lo < 450 and lo > 0  # time zoomed about the mouse
    assert device.viewRange()[0] == pytest.approx([lo, hi])  # in every plot
    assert app.viewRange()[1] == pytest.approx(y_before, rel=0.05)  # y still fits the data
    assert len(plots.curves["app_wchar_bps"].data()[0]) < 460  # only the window handed over
    axis = plots.plots["app"].getAxis("left")  # its own strip (the grid reaches further)
    on_axis = plots.layout_widget.mapFromScene(
        plots.plots["app"].mapRectToScene(axis.geometry()).center())
    _wheel(plots, on_axis)
    assert app.viewRange()[1][1] < y_before[1] * 0.8  # y zoomed
    assert app.viewRange()[0] == pytest.approx([lo, hi])  # time not moved
    assert device.viewRange()[1][1] > app.viewRange()[1][1]  # the other plot's y not
    viewport = plots.layout_widget.viewport()
    qtbot.mousePress(viewport, Qt.MouseButton.LeftButton, pos=centre)  # a double click's
    qtbot.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=centre)
    qtbot.mouseDClick(viewport, Qt.MouseButton.LeftButton, pos=centre)  # the second press
    qtbot.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=centre)
    plots.redraw()
    qtbot.wait(50)
    assert app.viewRange()[0][0] <= 1 and app.viewRange()[0][1] >= 599 and plots.follow
    assert app.viewRange()[1] == pytest.approx(y_before, rel=0.05)  # y follows the data again


def test_nothing_before_the_run_start_and_panning_back_stops_following(qtbot):
    plots = _plots(qtbot)
    _feed(plots, 600, every=1.0)
    plots.redraw()
    plots.set_window(500, 600)
    plots.redraw()
    assert plots.follow  # a window at the newest samples slides with the run
    plots.set_window(-200, -100)  # asked before the start: held at it
    plots.redraw()
    lo, _hi = plots.x_range()
    assert lo >= 0
    assert not plots.follow  # back in time: it stays there


def test_a_gap_in_the_samples_is_a_gap_in_the_line(qtbot):
    # 30 s of samples, a 35 s mkfs with none, 30 s more: no line across the 35 s
    plots = _plots(qtbot, which=("cpu",))
    for i in range(190):
        s = i * 0.5
        if 30 <= s < 65:
            continue
        plots.add_sample("cpu_pct", 1000.0 + s, 10.0 if s < 30 else 50.0)
    plots.redraw()
    qtbot.wait(100)
    green = QColor(PALETTE[2])
    assert _column(plots, "cpu", 47.5, green) == 0  # no ramp from 10 to 50 %
    assert _column(plots, "cpu", 15.0, green) > 0 and _column(plots, "cpu", 80.0, green) > 0
    assert plots.values_at(47.5).endswith("CPU: —")  # nothing was measured there
    assert plots.values_at(80.2).endswith("CPU: 50 %")
    connect = plots.gaps["cpu_pct"].connect(plots.curves["cpu_pct"].data()[0])
    assert list(connect).count(False) == 1


def test_the_crosshair_reads_the_samples_and_the_csv_holds_the_window_rows(qtbot, tmp_path):
    plots = _plots(qtbot)
    rng = np.random.default_rng(3)
    values = rng.uniform(10, 900, size=2001)
    for i, v in enumerate(values):
        plots.add_sample("app_wchar_bps", 1000.0 + i * 0.5, v * MiB)
        plots.add_sample("device_write_bps", 1000.0 + i * 0.5, v / 2 * MiB)
    plots.redraw()
    text = plots.values_at(123.4)  # nearest sample: 123.5 s, the 247th
    assert f"write {values[247]:.4g} MiB/s" in text and f"write {values[247] / 2:.4g}" in text
    plots.set_window(100.2, 200.2)
    plots.redraw()
    path = export_csv(plots, str(tmp_path / "shown.csv"))
    rows = list(csv.reader(io.StringIO(Path(path).read_text(encoding="utf-8"))))
    assert rows[0] == ["t_s", "Application write (MiB/s)", "Device write (MiB/s)"]
    lo, hi = plots.x_range()
    expect = [i for i in range(len(values)) if lo <= i * 0.5 <= hi]
    assert [float(r[0]) for r in rows[1:]] == [i * 0.5 for i in expect]
    assert [float(r[1]) for r in rows[1:]] == [values[i] for i in expect]  # every sample


def test_samples_csv_leaves_a_series_without_a_sample_at_a_time_empty():
    a = (np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]))
    b = (np.array([1.5]), np.array([7.0]))
    text = samples_csv([("a (x)", *a), ("b (y)", *b)], 0.5, 2.0)
    assert text.splitlines() == ["t_s,a (x),b (y)", "1.000,2.0,", "1.500,,7.0", "2.000,3.0,"]


def test_log_y_from_the_menu_draws_log10_and_back(qtbot):
    plots = _plots(qtbot, which=("app",))
    _feed(plots, 20, value=lambda s: 10.0 ** (1 + s / 10))
    plots.redraw()
    view = plots.plots["app"].getViewBox()
    view.log_y.setChecked(True)  # the menu's "Log y"
    plots.redraw()
    _t, y = plots.curves["app_wchar_bps"].data()
    assert y.max() == pytest.approx(3.0) and y.min() == pytest.approx(1.0)
    assert plots.plots["app"].getAxis("left").logMode
    view.log_y.setChecked(False)
    plots.redraw()
    assert plots.curves["app_wchar_bps"].data()[1].max() == pytest.approx(1000.0)


def test_markers_are_labelled_lines_on_every_plot_with_details_on_hover(qtbot):
    plots = _plots(qtbot)
    plots.add_marker(1000.0, "#1", detail="case 1, repeat 1: engine randread")
    plots.add_marker(1030.0, "ext4", kind="config", detail="configuration ext4 applied")
    _feed(plots, 60)
    plots.redraw()
    qtbot.wait(50)
    assert [m.shown for m in plots.markers] == [True, True]
    assert all(len(m.lines) == 2 for m in plots.markers)  # one line per plot
    assert plots.markers[1].lines[0].label.toPlainText() == "ext4"
    assert "configuration ext4 applied" in plots.markers[1].lines[1].toolTip()
    orange = QColor(200, 120, 40)
    assert _column(plots, "device", 30.0, orange, reach=1) > 20  # a dashed line


def test_a_theme_switch_reaches_the_plots(qtbot):
    from disklab.gui.app import apply_theme

    app = QApplication.instance()
    plots = _plots(qtbot, which=("app",))
    centre = plots.layout_widget.mapFromScene(
        plots.plots["app"].getViewBox().sceneBoundingRect().center())
    try:
        apply_theme(app, dark=True)
        qtbot.waitUntil(lambda: QColor(_image(plots).pixel(centre)).lightness() < 80,
                        timeout=2000)
    finally:
        apply_theme(app, dark=False)
    qtbot.waitUntil(lambda: QColor(_image(plots).pixel(centre)).lightness() > 200, timeout=2000)


def test_a_drag_after_hovering_pans_time_in_every_plot(qtbot):
    # a person hovers (the crosshair's values change) and then drags: the drag pans time in
    # all plots (a relayout of the values' line under the pressed button lost the drag)
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QMouseEvent

    plots = _plots(qtbot)
    _feed(plots, 600, every=1.0)
    plots.redraw()
    plots.set_window(300, 400)
    plots.redraw()
    viewport = plots.layout_widget.viewport()
    start = QPointF(_px(plots, "device", 350.0, 0.0))
    start.setY(start.y() - 20)

    def send(kind, pos, button, buttons) -> None:
        QApplication.sendEvent(viewport, QMouseEvent(kind, pos, viewport.mapToGlobal(pos),
                                                     button, buttons,
                                                     Qt.KeyboardModifier.NoModifier))
        QApplication.processEvents()

    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(QEvent.Type.MouseMove, start, none, none)
    assert plots.readout.text().startswith("t = 350")  # the crosshair's values
    send(QEvent.Type.MouseButtonPress, start, left, left)
    for dx in range(10, 201, 10):
        send(QEvent.Type.MouseMove, start + QPointF(dx, 0), none, left)
    send(QEvent.Type.MouseButtonRelease, start + QPointF(200, 0), left, none)
    lo, hi = plots.x_range()
    assert lo < 290 and hi - lo == pytest.approx(100, rel=0.01)  # earlier times, same width
    assert plots.plots["app"].getViewBox().viewRange()[0] == pytest.approx([lo, hi])
    assert not plots.follow


def test_a_drag_that_begins_on_a_legend_pans_time_and_the_legend_stays(qtbot):
    # pyqtgraph's legends move on a left drag: a person who began a pan over the App plot's
    # names (or who had just hovered them) moved the legend and panned nothing
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QMouseEvent

    plots = _plots(qtbot)
    _feed(plots, 600, every=1.0)
    plots.redraw()
    plots.set_window(300, 400)
    plots.redraw()
    viewport = plots.layout_widget.viewport()
    legend = plots.plots["app"].legend
    where = legend.pos()
    start = QPointF(plots.layout_widget.mapFromScene(legend.sceneBoundingRect().center()))

    def send(kind, pos, button, buttons) -> None:
        QApplication.sendEvent(viewport, QMouseEvent(kind, pos, viewport.mapToGlobal(pos),
                                                     button, buttons,
                                                     Qt.KeyboardModifier.NoModifier))
        QApplication.processEvents()

    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(QEvent.Type.MouseMove, start, none, none)
    send(QEvent.Type.MouseButtonPress, start, left, left)
    for dx in range(10, 201, 10):
        send(QEvent.Type.MouseMove, start + QPointF(dx, 0), none, left)
    send(QEvent.Type.MouseButtonRelease, start + QPointF(200, 0), left, none)
    lo, hi = plots.x_range()
    assert lo < 290 and hi - lo == pytest.approx(100, rel=0.01)  # earlier times, same width
    assert legend.pos() == where
