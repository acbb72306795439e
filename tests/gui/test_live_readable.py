"""Live plots a person can read over a run of hours: time in s, min:s or h:min, case labels
that never overprint (the rest on hover), follow-the-run, legends on a background."""

from __future__ import annotations

import itertools

import pytest

from disklab.core.vocab.units import MiB
from disklab.gui.plot_axes import clock, time_step, time_unit
from disklab.gui.plots import LivePlots


@pytest.fixture
def plots(qtbot):
    p = LivePlots()
    qtbot.addWidget(p)
    p.resize(900, 700)
    p.show()
    qtbot.wait(50)
    return p


def _feed(plots: LivePlots, seconds: int, every: float = 1.0) -> None:
    t = 0.0
    while t <= seconds:
        plots.add_sample("app_wchar_bps", 1000.0 + t, (100 + (t % 50)) * MiB)
        t += every


def _time_title(plots: LivePlots) -> str:
    return list(plots.plots.values())[-1].getAxis("bottom").labelText


def test_a_run_of_hours_reads_in_hours_and_a_zoom_in_seconds(qtbot, plots):
    _feed(plots, 3 * 3600, every=10.0)
    plots.redraw()
    assert _time_title(plots) == "elapsed (h:min)"
    lo, hi = plots.x_range()  # the span the user sees
    major = time_step(hi - lo, plots._plot_width())
    assert major in (900, 1800, 3600)  # round quarters, halves or hours, not 2000 s
    assert [clock(v, time_unit(hi - lo)) for v in (0.0, 3600.0, 5400.0)] == [
        "0:00", "1:00", "1:30"]  # the axis's labels
    plots.set_window(600, 690)
    qtbot.wait(200)  # the zoom's own redraw
    plots.redraw()
    assert _time_title(plots) == "elapsed (s)"
    assert [clock(v, time_unit(90)) for v in (600.0, 630.0)] == ["600 s", "630 s"]
    assert clock(754, "min") == "12:34"


def test_case_labels_do_not_overprint_and_every_marker_has_its_details(qtbot, plots):
    for i in range(120):  # a case every 30 s for an hour
        plots.add_marker(1000.0 + 30 * i, f"#{i + 1} r2", detail=f"case {i + 1}, repeat 2")
    plots.add_marker(1000.0, "ext4 journal=1g", kind="config", detail="configuration")
    _feed(plots, 3600, every=5.0)
    plots.redraw()
    shown = [m for m in plots.markers if m.shown]
    hidden = [m for m in plots.markers if not m.shown]
    assert shown and hidden  # not all fit on 900 px
    lo, hi = plots.x_range()  # the time span the user sees, over the plots' width
    scale = plots._plot_width() / (hi - lo)
    for kind in ("case", "config"):
        xs = [((m.x - lo) * scale, m.width) for m in shown if m.kind == kind]
        for (x0, w0), (x1, _w1) in itertools.pairwise(xs):
            assert x1 >= x0 + w0, "two labels overlap"
    assert any(m.kind == "config" for m in shown)
    assert all(m.tip for m in plots.markers)  # the details on hover
    assert "case 7, repeat 2" in plots.markers[6].tip
    # zoomed in on 5 minutes, every case there has room for its label
    plots.set_window(600, 900)
    qtbot.wait(300)
    plots.redraw()
    inside = [m for m in plots.markers if m.kind == "case" and 600 <= m.x <= 870]
    assert inside and all(m.shown for m in inside)


def test_follow_the_run_slides_a_zoomed_window_and_panning_back_stops_it(qtbot, plots):
    _feed(plots, 300)
    plots.redraw()
    plots.set_window(240, 300)  # a 60 s window at the end
    qtbot.wait(300)
    assert plots.follow
    for t in range(301, 400):
        plots.add_sample("app_wchar_bps", 1000.0 + t, 100 * MiB)
    plots.redraw()
    lo, hi = plots.x_range()
    assert hi >= 399 and hi - lo == pytest.approx(60, rel=0.01)
    plots.set_window(100, 160)  # back in time
    qtbot.waitUntil(lambda: not plots.follow_box.isChecked(), timeout=2000)
    for t in range(400, 450):
        plots.add_sample("app_wchar_bps", 1000.0 + t, 100 * MiB)
    plots.redraw()
    assert plots.x_range()[0] == pytest.approx(100, abs=0.5)  # it stays where it was put
    plots.show_whole_run()
    qtbot.wait(300)
    plots.redraw()
    assert plots.follow and plots.x_range()[0] <= 0 and plots.x_range()[1] >= 449


def test_legends_have_a_background(qtbot, plots):
    _feed(plots, 60)
    plots.redraw()
    qtbot.wait(50)
    for key, plot in plots.plots.items():
        brush = plot.legend.opts["brush"]  # drawn over the curves: the plot's colour behind
        assert brush.color().alpha() > 150, key
        assert plots.legend(key)  # names the curves
