"""The live plots as painted (gui/livepaint.LiveCanvas, the one plot stack: issue 29): what the
user sees is where the data says, with axes, tick labels, units and legends, one paint per
refresh and a curve handed over only when its samples or the view changed, and the mouse
zooms, pans and brings back the whole run."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QImage, QWheelEvent
from PySide6.QtWidgets import QApplication

from disklab.core.results.charts import PALETTE
from disklab.core.vocab.units import MiB
from disklab.gui.livepaint import AXIS_PX, TICK, nice_step, tick_text, ticks
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
    return plots.canvas.grab().toImage()


def _near(img: QImage, x: int, y: int, colour: QColor, reach: int = 2) -> bool:
    """A pixel of `colour` within `reach` rows of (x, y)."""
    want = colour.rgb() & 0xFFFFFF
    return any(img.pixel(x, y + d) & 0xFFFFFF == want for d in range(-reach, reach + 1))


def test_a_curve_is_painted_where_its_data_says(qtbot):
    plots = _plots(qtbot)
    for s in range(61):  # 100 MiB/s for a minute, 300 MiB/s from 30 s on
        plots.add_sample("app_wchar_bps", 1000.0 + s, (100 if s < 30 else 300) * MiB)
    plots.redraw()
    canvas = plots.canvas
    img = _image(plots)
    panel = canvas.by_key["app"]
    r = panel.rect
    (x0, x1), (y0, y1) = canvas.x, panel.y
    colour = QColor(PALETTE[0])  # the application's write curve

    def at(t: float, v: float) -> tuple[int, int]:
        return (round(r.left() + (t - x0) * r.width() / (x1 - x0)),
                round(r.bottom() - (v - y0) * r.height() / (y1 - y0)))

    for t, v in ((10, 100), (20, 100), (40, 300), (55, 300)):
        x, y = at(t, v)
        assert _near(img, x, y, colour), (t, v, x, y)
        # and not where the data is not: the other level at the same time
        x, y = at(t, 300 if v == 100 else 100)
        assert not _near(img, x, y, colour, reach=1), (t, x, y)
    # the whole run and its peak are in view, from zero up
    assert x0 <= 0 and x1 >= 60 and y0 <= 0 and y1 >= 300


def test_axes_have_tick_labels_units_and_time_and_legends_name_the_curves(qtbot):
    plots = _plots(qtbot)
    for s in range(0, 200):
        plots.add_sample("app_wchar_bps", 1000.0 + s, 150 * MiB)
        plots.add_sample("device_write_bps:a", 1000.0 + s, 100 * MiB)
        plots.add_sample("device_write_bps:b", 1000.0 + s, 50 * MiB)
        plots.add_sample("device_write_bps:all", 1000.0 + s, 150 * MiB)  # the monitor's total
    plots.redraw()
    canvas = plots.canvas
    img = _image(plots)
    bg = canvas.background.rgb() & 0xFFFFFF

    def ink(x0: float, x1: float, y0: float, y1: float) -> int:
        """Pixels not of the background (text is antialiased: shades of the foreground)."""
        return sum(img.pixel(x, y) & 0xFFFFFF != bg
                   for x in range(int(x0), int(x1)) for y in range(int(y0), int(y1)))

    for key in ("app", "device"):
        panel = canvas.by_key[key]
        r = panel.rect
        y0, y1 = panel.y
        step = nice_step(y1 - y0, r.height())
        values = ticks(y0, y1, step)
        assert len(values) >= 3 and tick_text(values[1], step) in {"50", "100", "20", "25"}
        for v in values:  # text left of every tick mark
            py = r.bottom() - (v - y0) * r.height() / (y1 - y0)
            assert ink(20, AXIS_PX - TICK - 2, py - 5, py + 5) > 3, (key, v)
        assert ink(0, 16, r.top(), r.bottom()) > 10  # the unit, upright
        assert ink(r.left(), r.right(), r.top() - 14, r.top()) > 30  # the title
    last = canvas.panels[-1].rect
    assert ink(last.left(), last.right(), last.bottom() + TICK, canvas.height()) > 60
    assert canvas.unit_title == "elapsed (min:s)"  # 200 s shown as min:s
    names = [name for name, _pen in canvas.by_key["device"].legend]
    assert {"write a", "write b", "write all"} <= set(names)  # a curve per target, their total
    assert "write" not in names  # the case's own device curve stepped aside
    assert [name for name, _pen in canvas.by_key["app"].legend][:2] == ["write", "read"]
    legend = canvas.by_key["device"].legend_pixmap
    assert legend is not None and legend.width() > 100  # drawn at the top right, cached


def test_one_paint_per_refresh_and_none_without_one(qtbot):
    plots = _plots(qtbot, which=("app", "device", "memory", "cpu"))
    plots.add_sample("app_wchar_bps", 0.0, MiB)
    plots.redraw()
    qtbot.wait(50)
    canvas = plots.canvas
    painted, drawn = canvas.paints, plots.redraws
    for k in range(1, 11):
        for s in ("app_wchar_bps", "device_write_bps", "dirty_bytes", "cpu_pct"):
            plots.add_sample(s, float(k), 100 * MiB)
        plots.redraw()
        QApplication.processEvents()
    assert plots.redraws - drawn == 10
    assert canvas.paints - painted == 10  # one paint each, not one per curve or axis
    qtbot.wait(300)
    QApplication.processEvents()
    assert canvas.paints - painted == 10  # nothing new: nothing painted
    handed: list[str] = []
    original = canvas.set_curve
    canvas.set_curve = lambda series, *a: (handed.append(series), original(series, *a))
    plots.add_sample("cpu_pct", 11.0, 50.0)
    plots.redraw()
    assert handed == ["cpu_pct"]  # only the curve with a new sample, once


def test_the_mouse_zooms_pans_and_a_double_click_shows_the_whole_run(qtbot):
    plots = _plots(qtbot, which=("app",))
    for s in range(601):
        plots.add_sample("app_wchar_bps", 1000.0 + s, 100 * MiB)
    plots.redraw()
    canvas = plots.canvas
    r = canvas.by_key["app"].rect
    middle = QPointF(r.center())
    wheel = QWheelEvent(middle, canvas.mapToGlobal(middle), QPoint(0, 0), QPoint(0, 360),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(canvas, wheel)
    plots.redraw()
    lo, hi = canvas.x
    assert hi - lo < 400 and lo > 0  # zoomed in around the middle
    assert len(canvas.curves["app_wchar_bps"].t) < 450  # only the window is handed over
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=r.center().toPoint())
    qtbot.mouseMove(canvas, r.center().toPoint() + QPoint(100, 0))
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=r.center().toPoint()
                       + QPoint(100, 0))
    plots.redraw()
    assert canvas.x[0] < lo  # dragged right: earlier times
    assert not plots.follow  # panned back in time: it stays there
    qtbot.mouseDClick(canvas, Qt.MouseButton.LeftButton, pos=r.center().toPoint())
    plots.redraw()
    assert canvas.x[0] <= 0 and canvas.x[1] >= 600 and plots.follow


def test_a_marker_is_drawn_named_on_the_strip_and_explained_on_hover(qtbot):
    plots = _plots(qtbot, which=("app",))
    plots.add_marker(1000.0, "#1", detail="case 1, repeat 1: engine randread")
    plots.add_marker(1030.0, "ext4", kind="config", detail="configuration ext4 applied")
    for s in range(61):
        plots.add_sample("app_wchar_bps", 1000.0 + s, 100 * MiB)
    plots.redraw()
    canvas = plots.canvas
    assert [m.shown for m in canvas.marks] == [True, True]
    img = _image(plots)
    px = round(canvas.to_px(30.0))
    r = canvas.by_key["app"].rect
    orange = QColor(200, 120, 40).rgb() & 0xFFFFFF
    line = [img.pixel(px, y) & 0xFFFFFF == orange for y in range(int(r.top()), int(r.bottom()))]
    assert sum(line) > len(line) / 3  # a dashed line through the plot
    bg = canvas.background.rgb() & 0xFFFFFF
    label = sum(img.pixel(x, y) & 0xFFFFFF != bg
                for x in range(px + 1, px + 30) for y in range(0, 38))
    assert label > 5  # its name on the strip above
    tips = [m.tip for m in canvas.marks if abs(canvas.to_px(m.x) - px) <= 4]
    assert tips and "configuration ext4 applied" in tips[0]


def test_a_theme_switch_reaches_the_painted_plots(qtbot):
    from disklab.gui.app import apply_theme

    app = QApplication.instance()
    plots = _plots(qtbot, which=("app",))
    try:
        apply_theme(app, dark=True)
        qtbot.waitUntil(lambda: plots.canvas.background.lightness() < 80, timeout=2000)
        img = _image(plots)
        assert QColor(img.pixel(AXIS_PX + 20, plots.canvas.by_key["app"].rect.center().y())
                      ).lightness() < 80  # the plot's background is dark
    finally:
        apply_theme(app, dark=False)
    qtbot.waitUntil(lambda: plots.canvas.background.lightness() > 200, timeout=2000)


def test_grid_and_axis_lines_filled_as_rectangles_paint_what_drawline_paints(qtbot):
    """The static layer fills its grid and axis lines as rectangles (a tenth of a stroked
    line's CPU): the very pixels an aliased 1 px drawLine paints, at whole and fractional
    coordinates (the panels' edges fall on halves and quarters), opaque and blended."""
    from PySide6.QtGui import QPainter, QPen

    from disklab.gui.livepaint import _hline, _vline

    for colour in (QColor(20, 30, 40), QColor(20, 30, 40, 51)):
        for f in (0.0, 0.25, 0.5, 0.75, 0.9):
            images = []
            for filled in (False, True):
                img = QImage(60, 60, QImage.Format.Format_RGB32)
                img.fill(QColor(250, 250, 245))
                p = QPainter(img)
                if filled:
                    _hline(p, 5 + f, 50 + f, 12 + f, colour)
                    _vline(p, 30 + f, 3 + f, 55 + f, colour)
                else:
                    p.setPen(QPen(colour, 1))
                    p.drawLine(QPointF(5 + f, 12 + f), QPointF(50 + f, 12 + f))
                    p.drawLine(QPointF(30 + f, 3 + f), QPointF(30 + f, 55 + f))
                p.end()
                images.append(img)
            assert images[0] == images[1], (colour.alpha(), f)
