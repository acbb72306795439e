"""Dropping files on the window imports them as `disklab import` does: a bundle from another
machine becomes its session with its host facts, a folder of fio outputs one session; the
Library lists them and says what happened."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from disklab.core.library import Library
from disklab.core.library.bundle import export_bundle
from disklab.core.vocab.model import Case, Metric
from tests.helpers import FIXTURES, record_session


def drop(widget, paths: list[Path]) -> bool:
    """A drop of these files on `widget` as the window system delivers it: the drag enters
    (accepted or not), then the drop."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    enter = QDragEnterEvent(QPoint(20, 20), Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, enter)
    if not enter.isAccepted():
        return False
    event = QDropEvent(QPointF(20, 20), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)
    return event.isAccepted()


def test_a_bundle_and_a_folder_dropped_on_the_window_are_imported(window, tmp_path: Path,
                                                                   qtbot) -> None:
    other = tmp_path / "other-machine.sqlite3"
    case = Case("c-dd-1", 0, "as is", "dd", 0, {"bs": 1048576})
    with Library.open(other) as lib:
        sid = record_session(lib, [(case, [(Metric("write", 9.0e8, "B/s"),)] * 2)],
                             name="array host", host={"hostname": "array1"})
        bundle = export_bundle(lib, [sid], tmp_path / "array.disklab")
    outputs = tmp_path / "fio-runs"
    outputs.mkdir()
    for name in ("seqwrite_1m_qd1_libaio_direct_ext4_jsonplus.json",):
        shutil.copy(FIXTURES / "fio" / name, outputs)
    assert drop(window, [bundle, outputs])
    assert window.current_page() == "library"
    with Library.open(window.wb.library_path) as lib:
        sessions = {s["name"]: s for s in lib.list_sessions()}
    assert sessions["array host"]["host"] == {"hostname": "array1"}
    assert sessions["fio-runs"]["status"] == "imported"
    shown = window.library.model.rowCount()
    assert shown == len(sessions) >= 2
    said = window.library.heading.text()
    assert "array.disklab: session &#x27;array host&#x27; -&gt; session" in said
    assert drop(window, [bundle])  # again: one copy
    assert "already in the library" in window.library.heading.text()
    assert drop(window.library.view, [bundle])  # on the sessions table: the window takes it
    assert not drop(window, [])  # nothing to import: the drag is refused


SWEEP = FIXTURES / "fio-plot-sweep"


def test_a_runs_fio_logs_show_as_its_time_series_in_the_library(window, tmp_path: Path) -> None:
    folder = tmp_path / "pm883"
    folder.mkdir()
    shutil.copy(SWEEP / "randread-16-1.json", folder)
    for log in SWEEP.glob("randread-iodepth-16-numjobs-1_*.log"):
        shutil.copy(log, folder)
    assert drop(window, [folder])
    page = window.library
    with Library.open(window.wb.library_path) as lib:
        sid = lib.find_session("pm883")["id"]
    page.select_session(sid)
    page.tabs.setCurrentWidget(page.chart_host)
    titles = [page.chart_pick.itemText(i) for i in range(page.chart_pick.count())]
    assert {"fio's logged throughput over time", "fio's logged IOPS over time",
            "fio's logged latency over time"} <= set(titles)
    iops = next(c for c in page.charts if c.title == "fio's logged IOPS over time")
    [series] = iops.series
    log = (SWEEP / "randread-iodepth-16-numjobs-1_iops.1.log").read_text().splitlines()
    assert len(series.x) == len(log)
    assert series.x[1] - series.x[0] == pytest.approx(0.25)
    latency = next(c for c in page.charts if c.title == "fio's logged latency over time")
    assert len(latency.series) == 3  # lat, clat, slat
