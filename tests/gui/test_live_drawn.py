"""The live plots as pyqtgraph draws them (the one plot stack, issue 29): what the user sees is
where the data says, with axes, tick labels, units and legends; one setData per changed curve
a refresh and none without one; the wheel zooms and "Whole run" brings the whole run back;
markers are drawn and named; a theme switch reaches the plots."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QImage, QWheelEvent
from PySide6.QtWidgets import QApplication

from disklab.core.results.charts import PALETTE
from disklab.core.units import MiB
from disklab.gui.plots import LivePlots


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


def _at(plots: LivePlots, key: str, t: float, v: float) -> tuple[int, int]:
    """Where (t, v) of plot `key` is on the plots' widget, in pixels."""
    scene = plots.plots[key].getViewBox().mapViewToScene(QPointF(t, v))
    p = plots.layout_widget.mapFromScene(scene)
    return p.x(), p.y()


def _near(img: QImage, x: int, y: int, colour: QColor, reach: int = 2) -> bool:
    """A pixel of `colour` within `reach` rows of (x, y)."""
    want = colour.rgb() & 0xFFFFFF
    return any(img.pixel(x, y + d) & 0xFFFFFF == want for d in range(-reach, reach + 1))


def test_a_curve_is_drawn_where_its_data_says(qtbot):
    plots = _plots(qtbot)
    for s in range(61):  # 100 MiB/s for a minute, 300 MiB/s from 30 s on
        plots.add_sample("app_wchar_bps", 1000.0 + s, (100 if s < 30 else 300) * MiB)
    plots.redraw()
    qtbot.wait(50)
    img = _image(plots)
    colour = QColor(PALETTE[0])  # the application's write curve
    for t, v in ((10, 100), (20, 100), (40, 300), (55, 300)):
        x, y = _at(plots, "app", t, v)
        assert _near(img, x, y, colour), (t, v, x, y)
        # and not where the data is not: the other level at the same time
        x, y = _at(plots, "app", t, 300 if v == 100 else 100)
        assert not _near(img, x, y, colour, reach=1), (t, x, y)
    (x0, x1), (y0, y1) = plots.plots["app"].getViewBox().viewRange()
    assert x0 <= 0 and x1 >= 60 and y0 <= 0 and y1 >= 300  # the whole run, from zero up


def test_axes_have_ticks_units_and_time_and_legends_name_the_curves(qtbot):
    plots = _plots(qtbot, which=("app", "device", "memory", "cpu"), size=(900, 520))
    for s in range(0, 200):
        plots.add_sample("app_wchar_bps", 1000.0 + s, 150 * MiB)
        plots.add_sample("device_write_bps:a", 1000.0 + s, 100 * MiB)
        plots.add_sample("device_write_bps:b", 1000.0 + s, 50 * MiB)
        plots.add_sample("device_write_bps:all", 1000.0 + s, 150 * MiB)  # the monitor's total
    plots.redraw()
    qtbot.wait(50)
    for key in ("app", "device", "memory", "cpu"):
        axis = plots.plots[key].getAxis("left")
        lo, hi = plots.plots[key].getViewBox().viewRange()[1]
        values = [v for _spacing, level in axis.tickValues(lo, hi, axis.height())
                  for v in level if lo <= v <= hi]
        assert len(values) >= 2, (key, values)  # a scale, never the lone `0` tick
        assert axis.labelText in ("MiB/s", "MiB", "%")
    bottom = plots.plots["cpu"].getAxis("bottom")
    assert bottom.labelText == "elapsed (min:s)"  # 200 s shown as min:s
    names = [label.text for _sample, label in plots.plots["device"].legend.items]
    assert {"write a", "write b", "write all"} <= set(names)  # a curve per target, their total
    assert "write" not in names  # the case's own device curve stepped aside
    assert [label.text for _s, label in plots.plots["app"].legend.items][:2] == ["write",
                                                                                 "read"]
    # the device curves are drawn in their colours where the data says
    img = _image(plots)
    curve = plots.curves["device_write_bps:a"]
    x, y = _at(plots, "device", 100, 100)
    assert _near(img, x, y, curve.opts["pen"].color())


def test_one_setdata_per_changed_curve_a_refresh_and_none_without_one(qtbot):
    plots = _plots(qtbot, which=("app", "device", "memory", "cpu"))
    calls: dict[str, int] = {}
    for series, curve in plots.curves.items():
        original = curve.setData

        def counted(*args, _s=series, _f=original, **kwargs):
            calls[_s] = calls.get(_s, 0) + 1
            return _f(*args, **kwargs)

        curve.setData = counted
    plots.add_sample("app_wchar_bps", 0.0, MiB)
    plots.redraw()
    calls.clear()
    for k in range(1, 11):
        for s in ("app_wchar_bps", "device_write_bps", "dirty_bytes", "cpu_pct"):
            plots.add_sample(s, float(k), 100 * MiB)
        plots.redraw()
        QApplication.processEvents()
    assert calls == {"app_wchar_bps": 10, "device_write_bps": 10, "dirty_bytes": 10,
                     "cpu_pct": 10}  # one each a refresh; the series without samples none
    drawn = plots.redraws
    plots.redraw()
    assert plots.redraws == drawn and sum(calls.values()) == 40  # nothing new: nothing drawn


def test_the_wheel_zooms_and_whole_run_brings_the_run_back(qtbot):
    plots = _plots(qtbot, which=("app",))
    for s in range(601):
        plots.add_sample("app_wchar_bps", 1000.0 + s, 100 * MiB)
    plots.redraw()
    qtbot.wait(50)
    x, y = _at(plots, "app", 300, 50)
    viewport = plots.layout_widget.viewport()
    middle = QPointF(x, y)
    wheel = QWheelEvent(middle, viewport.mapToGlobal(middle), QPoint(0, 0), QPoint(0, 360),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(viewport, wheel)
    qtbot.wait(150)  # the urgent redraw of a moved view
    plots.redraw()
    lo, hi = plots.x_range()
    assert hi - lo < 400 and lo > 0  # zoomed in around the middle
    t, _y = plots.curves["app_wchar_bps"].getData()
    assert len(t) < 450  # only the window is handed over (clip to view)
    qtbot.mouseClick(plots.whole_btn, Qt.MouseButton.LeftButton)
    qtbot.wait(150)
    plots.redraw()
    lo, hi = plots.x_range()
    assert lo <= 0 and hi >= 600 and plots.follow


def test_a_marker_is_drawn_named_on_the_strip_and_explained_on_hover(qtbot):
    plots = _plots(qtbot, which=("app",))
    plots.add_marker(1000.0, "#1", detail="case 1, repeat 1: engine randread")
    plots.add_marker(1030.0, "ext4", kind="config", detail="configuration ext4 applied")
    for s in range(61):
        plots.add_sample("app_wchar_bps", 1000.0 + s, 100 * MiB)
    plots.redraw()
    qtbot.wait(50)
    assert [m.text.isVisible() for m in plots.markers] == [True, True]
    img = _image(plots)
    x, _y = _at(plots, "app", 30.0, 0)
    _x, top = _at(plots, "app", 30.0, 130)
    _x, bottom = _at(plots, "app", 30.0, 0)
    orange = QColor(200, 120, 40).rgb() & 0xFFFFFF
    line = [any(img.pixel(x + d, y) & 0xFFFFFF == orange for d in (-1, 0, 1))
            for y in range(top, bottom)]
    assert sum(line) > len(line) / 3  # a dashed line through the plot
    text = plots.markers[1].text
    assert text.textItem.toPlainText() == "ext4"
    assert "configuration ext4 applied" in plots.markers[1].lines[0].toolTip()


def test_a_theme_switch_reaches_the_plots(qtbot):
    from disklab.gui.app import apply_theme

    app = QApplication.instance()
    plots = _plots(qtbot, which=("app",))

    def background() -> QColor:
        centre = plots.plots["app"].getViewBox().sceneBoundingRect().center()
        p = plots.layout_widget.mapFromScene(centre)
        return QColor(_image(plots).pixel(p.x(), p.y()))

    apply_theme(app, dark=False)
    qtbot.waitUntil(lambda: background().lightness() > 200, timeout=2000)
    try:
        apply_theme(app, dark=True)
        qtbot.waitUntil(lambda: background().lightness() < 80, timeout=2000)
    finally:
        apply_theme(app, dark=False)
    qtbot.waitUntil(lambda: background().lightness() > 200, timeout=2000)
