"""Every page fits a laptop's screen (issue 49, point 2): at 1024x768 and 1280x800 the window
takes that size (its minimum is not wider), and every control a person uses on each page lies
inside the window: none off the right edge or the bottom. What scrolls inside a scroll area (a
table's cells, a long form) is the scroll area's to show; the scroll area itself must fit.

A session of each kind sits in the library and is selected on the Library page (finished,
several targets, cancelled), so the widths their texts ask for are in play."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QComboBox,
    QLabel,
    QLineEdit,
    QStatusBar,
    QTabBar,
    QWidget,
)

from tests.helpers import engine_plan

SIZES = [(1024, 768), (1280, 800)]
CONTROLS = (QAbstractButton, QComboBox, QLineEdit, QTabBar, QAbstractScrollArea, QStatusBar,
            QLabel)


def _scrolled(w: QWidget) -> bool:
    """Inside a scroll area's viewport: shown by scrolling, not by the window's size."""
    parent = w.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea) and parent.viewport().isAncestorOf(w):
            return True
        parent = parent.parentWidget()
    return False


def _outside(window: QWidget) -> list[str]:
    box = window.rect()
    out = []
    for w in window.findChildren(QWidget):
        if not isinstance(w, CONTROLS) or not w.isVisibleTo(window) or _scrolled(w):
            continue
        if w.width() <= 1 or w.height() <= 1:
            continue
        top_left = w.mapTo(window, QPoint(0, 0))
        rect = QRect(top_left, w.size())
        if not box.contains(rect):
            text = getattr(w, "text", lambda: "")()
            out.append(f"{type(w).__name__} {text!r} at {rect.getRect()} outside "
                       f"{box.width()}x{box.height()}")
    return out


TWO_TARGETS = """\
name = "two targets on rather long directory names"
[targets.a]
directory = "{a}"
[targets.b]
directory = "{b}"
[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "8m"
on = ["a+b"]
"""


@pytest.fixture
def kinds(library_path: Path, tmp_path: Path) -> None:
    """Real sessions of each kind in the library: finished on two targets, and cancelled
    (SIGTERM while it runs)."""
    dirs = [tmp_path / f"a-rather-long-directory-name-for-target-{n}" for n in "ab"]
    for d in dirs:
        d.mkdir()
    plan = tmp_path / "two.toml"
    plan.write_text(TWO_TARGETS.format(a=dirs[0], b=dirs[1]))
    cli = [sys.executable, "-m", "disklab", "run", "--library", str(library_path)]
    done = subprocess.run([*cli, str(plan)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    long = tmp_path / "long.toml"
    long.write_text(engine_plan(dirs[0], name="stopped early", runtime="60s"))
    run = subprocess.Popen([*cli, str(long)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    end = time.monotonic() + 60
    while time.monotonic() < end and not _running(library_path):  # until it is recorded
        time.sleep(0.2)
    time.sleep(1)
    run.send_signal(signal.SIGTERM)
    run.wait(timeout=60)
    with sqlite3.connect(library_path) as db:
        assert [s for (s,) in db.execute("SELECT status FROM session ORDER BY id")] == \
            ["finished", "cancelled"]


def _running(library: Path) -> bool:
    try:
        with sqlite3.connect(f"file:{library}?mode=ro", uri=True) as db:
            return bool(db.execute("SELECT 1 FROM session WHERE status = 'running'").fetchall())
    except sqlite3.Error:
        return False


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_every_page_fits(qtbot, kinds, window, size: tuple[int, int]) -> None:
    width, height = size
    window.resize(width, height)
    qtbot.wait(50)
    assert window.minimumSizeHint().width() <= width, window.minimumSizeHint()
    assert window.minimumSizeHint().height() <= height, window.minimumSizeHint()
    problems = []
    for key in window.pages:
        window.show_page(key)
        if key == "library":
            window.library.refresh()
            assert window.library.proxy.rowCount() == 2
        qtbot.wait(50)
        assert (window.width(), window.height()) == size, (key, window.size())
        problems += [f"{key}: {p}" for p in _outside(window)]
        if key == "library":  # each kind of session selected in turn
            for row in range(window.library.proxy.rowCount()):
                window.library.view.selectRow(row)
                qtbot.wait(50)
                problems += [f"library, row {row}: {p}" for p in _outside(window)]
    assert not problems, "\n".join(problems)


def test_the_librarys_chart_text_is_readable(qtbot, kinds, window) -> None:
    """The Library's Charts tab at 1280x820: the chart is drawn at a scale where its smallest
    text is at least 9 px high (the pane scrolls rather than shrink it)."""
    from disklab.gui.chart import smallest_font

    window.resize(1280, 820)
    window.show_page("library")
    page = window.library
    page.refresh()
    for row in range(page.proxy.rowCount()):
        page.view.selectRow(row)
        if page.current and page.current["status"] == "finished":
            break
    page.tabs.setCurrentWidget(page.chart_host)
    qtbot.waitUntil(lambda: bool(page.chart.svg), timeout=10_000)
    qtbot.wait(50)
    drawn = getattr(page.chart, "view", page.chart)  # the widget the SVG is painted on
    natural = drawn.renderer().defaultSize()
    scale = min(drawn.width() / natural.width(), drawn.height() / natural.height())
    assert smallest_font(page.chart.svg) * scale >= 9, (scale, drawn.size(), natural)
    shots = os.environ.get("DISKLAB_SCREENSHOTS")
    if shots:
        assert window.grab().save(str(Path(shots) / "library-chart-1280x820.png"))


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_historys_chart_shows_whole_and_readable(qtbot, kinds, window,
                                                    size: tuple[int, int]) -> None:
    """The History page at a laptop's size: its chart, dates on the x axis included, is in
    sight without scrolling, its smallest text at least 9 px high; the table keeps a few
    rows below it."""
    from disklab.gui.chart import smallest_font

    window.resize(*size)
    window.history.show_history(1)
    window.show_page("history")
    chart = window.history.chart
    qtbot.waitUntil(lambda: bool(chart.svg), timeout=10_000)
    qtbot.wait(100)
    assert chart.verticalScrollBar().maximum() == 0, (chart.size(), chart.view.size())
    assert chart.horizontalScrollBar().maximum() == 0, (chart.size(), chart.view.size())
    assert smallest_font(chart.svg) * chart.scale >= 9, chart.scale
    table = window.history.table
    assert table.viewport().height() >= 3 * table.verticalHeader().defaultSectionSize()
