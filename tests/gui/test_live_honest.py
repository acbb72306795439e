"""The live rates and plots say what they can see (issue 29, points 3 and 4).

- fio's libaio engine submits with io_submit, which rchar/wchar do not count: the Application
  figure says "not seen" and why, never a near-zero rate beside a disk busy writing;
- the tool's own report belongs to its case: the figure is cleared when the next case starts,
  and its dashed line is broken between cases (a real engine case, then a real fio case);
- one colour per direction on both rate plots; a short plot's y axis keeps a scale.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor

from disklab.core import proc
from disklab.core.plan.draft import PlanDraft
from disklab.core.vocab.events import CaseStarted
from disklab.gui.plot_axes import LABEL_HALF_PX, value_ticks
from disklab.gui.plots import PALETTE, LivePlots

PLAN = """\
name = "engine then fio libaio"

[target]
directory = "{target}"

[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "96m"
runtime = "3s"

[[test]]
tool = "fio"
rw = "write"
bs = "64k"
size = "96m"
ioengine = "libaio"
iodepth = 8
direct = true
runtime = "3s"
"""


def test_async_fio_and_the_tool_report_between_cases(qtbot, window, tmp_path: Path) -> None:
    if proc.which("fio") is None:
        pytest.skip("fio is not installed")
    target = tmp_path / "t"
    target.mkdir()
    events: list[object] = []
    window.wb.runs.event.connect(events.append)
    window.wb.set_draft(PlanDraft.from_text(PLAN.format(target=target)))
    page = window.run
    page.start()
    qtbot.waitUntil(lambda: "cannot run" in page.state_label.text()
                    or sum(isinstance(e, CaseStarted) for e in events) == 2, timeout=90_000)
    assert "cannot run" not in page.state_label.text(), page.state_label.text()
    # the engine's last report is not shown while fio sets up: cleared at its start
    page.flush()
    assert page.figures.labels["Tool's report"].text() == "–"
    qtbot.waitUntil(lambda: page.figures.labels["Device"].text() != "–", timeout=30_000)
    application = page.figures.labels["Application"]
    assert application.text() == "not seen"
    assert "io_submit" in application.toolTip()
    qtbot.waitUntil(lambda: not window.wb.runs.running, timeout=90_000)
    assert page.status == "finished", page.log.toPlainText()[-2000:]
    # the dashed line of the tool's report is broken between the engine's case and fio's
    t, y = page.plots.series_data("tool_bps")
    second = next(e.t for e in events if isinstance(e, CaseStarted) and e.case.tool == "fio")
    breaks = [b for b in page.plots.gaps["tool_bps"].breaks if b < second - page.plots.t0]
    assert breaks and breaks[-1] in t  # the engine's last report ends its line
    assert np.isfinite(y).all()  # no NaN in the buffers: no finite check when drawn
    after = t[t > breaks[-1]]
    connect = page.plots.gaps["tool_bps"].connect(t)
    assert len(after) and not connect[t == breaks[-1]][0]


def test_the_line_is_not_drawn_across_the_break(qtbot, iec_units) -> None:
    # iec_units: the samples are fed in MiB/s (tests/conftest.py)
    plots = LivePlots(which=("app",))
    qtbot.addWidget(plots)
    plots.resize(800, 300)
    plots.show()
    mib = 1 << 20
    for s in range(6):
        plots.add_sample("tool_bps", 100.0 + s, 1300 * mib)
    plots.break_line("tool_bps", 105.5)
    for s in range(6, 12):
        plots.add_sample("tool_bps", 100.0 + s, 100 * mib)
    plots.redraw()
    qtbot.wait(50)
    image = plots.layout_widget.grab().toImage()
    view = plots.plots["app"].getViewBox()
    pen = QColor(PALETTE[3])

    def column(t: float) -> list[QColor]:
        rect = view.sceneBoundingRect()
        x = plots.layout_widget.mapFromScene(view.mapViewToScene(QPointF(t, 0.0))).x()
        return [QColor(image.pixel(x, yy)) for yy in range(int(rect.top()) + 2,
                                                          int(rect.bottom()) - 2)]

    def near(colours: list[QColor]) -> list[QColor]:
        return [c for c in colours if abs(c.red() - pen.red()) + abs(c.green() - pen.green())
                + abs(c.blue() - pen.blue()) < 60]

    assert not near(column(5.5))  # nothing of the tool's line between 1300 at 5 s, 100 at 6 s
    def row(t0: float, t1: float, value: float) -> list[QColor]:
        a, b = (plots.layout_widget.mapFromScene(view.mapViewToScene(QPointF(t, value)))
                for t in (t0, t1))
        return [QColor(image.pixel(x, a.y() + d)) for x in range(a.x(), b.x())
                for d in (-1, 0, 1)]

    # while each side is drawn, dashed, at its own value
    assert len(near(row(0.5, 4.5, 1300.0))) > 20
    assert len(near(row(6.5, 10.5, 100.0))) > 20


def test_one_colour_per_direction_on_both_rate_plots(qtbot) -> None:
    plots = LivePlots()
    qtbot.addWidget(plots)
    curves = plots.curves
    for direction in ("write", "read"):
        app = curves[f"app_{'wchar' if direction == 'write' else 'rchar'}_bps"]
        dev = curves[f"device_{direction}_bps"]
        assert app.opts["pen"].color() == dev.opts["pen"].color(), direction
    assert (curves["app_wchar_bps"].opts["pen"].color()
            != curves["app_rchar_bps"].opts["pen"].color())


@pytest.mark.parametrize("pixels", [24, 40, 60, 90, 150, 400])
def test_a_short_plot_keeps_a_scale(pixels: int) -> None:
    # any range a plot fits, at every plot height: two ticks whose labels are drawn (none
    # within half a label of an edge, where pyqtgraph drops the label: a 52 px plot of
    # 0-2100 ticked at 0 and 2000 showed no number), one where two labels cannot fit
    for exp in range(-1, 6):
        for m in (1.0, 1.2, 1.5, 2.0, 2.1, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0):
            for high in (m * 10.0 ** exp, m * 10.0 ** exp * 1.35):
                marks = value_ticks(0.0, high, pixels)
                assert len(marks) >= (2 if pixels >= 40 else 1), (high, pixels, marks)
                edge = high * LABEL_HALF_PX / pixels
                assert all(edge <= v <= high - edge for v in marks), (high, pixels, marks)


DD_PLAN = """\
name = "dd write then read"

[target]
directory = "{target}"

[[test]]
tool = "dd"
mode = ["write", "read"]
block_size = "1m"
size = "1g"
"""


def test_a_dd_write_is_drawn_as_a_write(qtbot, window, tmp_path: Path) -> None:
    """dd copies /dev/zero to the file: its reads of /dev/zero (rchar) are as fast as its
    writes and were drawn as an orange "read" curve over the write. The Application plot and
    figure show a dd write as a write alone, a dd read as a read alone (its writes to
    /dev/null left out), and the device curves are all drawn."""
    target = tmp_path / "t"
    target.mkdir()
    events: list[object] = []
    window.wb.runs.event.connect(events.append)
    window.wb.set_draft(PlanDraft.from_text(DD_PLAN.format(target=target)))
    page = window.run
    page.start()
    qtbot.waitUntil(lambda: "cannot run" in page.state_label.text()
                    or (page.session_id is not None and not window.wb.runs.running),
                    timeout=120_000)
    assert page.status == "finished", page.log.toPlainText()[-2000:]
    starts = {e.case.params["mode"]: e.t for e in events if isinstance(e, CaseStarted)}
    assert set(starts) == {"write", "read"}
    read_from = starts["read"] - page.plots.t0
    wrote_t, _w = page.plots.series_data("app_wchar_bps")
    read_t, _r = page.plots.series_data("app_rchar_bps")
    sampled = [e for e in events if getattr(e, "series", None) == "app_rchar_bps"
               and e.t < starts["read"]]
    assert sampled  # dd did read /dev/zero while it wrote (rchar), and the monitor said so
    assert len(wrote_t[wrote_t < read_from]) > 0  # the write is drawn
    assert len(read_t[read_t < read_from]) == 0  # its reads of /dev/zero are not
    assert len(read_t[read_t >= read_from]) > 0  # the read is drawn
    assert len(wrote_t[wrote_t >= read_from]) == 0  # its writes to /dev/null are not
