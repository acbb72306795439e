"""Qt table models over plain rows from the library (lists of dicts), sortable and filterable."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from disklab.core.results.facts import session_device, session_filesystems

Index = QModelIndex | QPersistentModelIndex


class RowsModel(QAbstractTableModel):
    """Columns are (title, function of a row -> display value). EditRole gives the sort key."""

    def __init__(self, columns: Sequence[tuple[str, Callable[[dict[str, Any]], Any]]],
                 parent: Any = None):
        super().__init__(parent)
        self.columns = list(columns)
        self.rows: list[dict[str, Any]] = []

    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.columns[section][0]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        value = self.columns[index.column()][1](row)
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return "" if value is None else str(value)  # the whole text of an elided cell
        if role == Qt.ItemDataRole.UserRole:  # sort key
            return value if isinstance(value, int | float) else str(value or "")
        if role == Qt.ItemDataRole.ForegroundRole and self.columns[index.column()][0] == "status":
            return STATUS_COLOURS.get(str(value))
        return None

    def row(self, r: int) -> dict[str, Any]:
        return self.rows[r]


STATUS_COLOURS = {
    "finished": QColor(30, 140, 60),
    "failed": QColor(200, 40, 40),
    "cancelled": QColor(190, 120, 0),
    "interrupted": QColor(190, 120, 0),
    "running": QColor(30, 110, 200),
}


def when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t else ""


def _device(s: dict[str, Any]) -> str:
    return session_device(s)


def _fs(s: dict[str, Any]) -> str:
    # 'filesystems' is filled by SessionPlaces from the configurations' read-back
    return str(s.get("filesystems") or session_filesystems(s, ()))


SESSION_COLUMNS: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("id", lambda s: s["id"]),
    ("name", lambda s: s.get("name", "")),
    ("date", lambda s: when(s.get("started"))),
    ("device", _device),
    ("filesystem", _fs),
    ("tools", lambda s: ", ".join(s.get("tools") or [])),
    ("cases", lambda s: s.get("cases", "")),
    ("status", lambda s: s.get("status", "")),
    ("tags", lambda s: ", ".join(s.get("tags") or [])),
]


def sessions_model(parent: Any = None) -> RowsModel:
    return RowsModel(SESSION_COLUMNS, parent)


class SessionPlaces:
    """Where each listed session ran, for the rows whose host facts lack the device or the
    filesystem (an image or a format target: the run made the filesystem): their plan's
    target and their configurations' read-back (core.results.facts), read once per session
    and kept, as the list is refreshed at every change of the library."""

    def __init__(self, library: Callable[[], Any]) -> None:
        self._library = library  # the window's one Library, asked for when rows come
        self._places: dict[int, tuple[str | None, str]] = {}

    def fill(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows, each lacking its place given 'plan_text' and 'filesystems'; a session
        the library cannot read is left as it is."""
        lib = self._library()
        for row in rows:
            host = row.get("host") or {}
            if host.get("device") and host.get("filesystem"):
                continue
            place = self._places.get(row["id"])
            if place is None:
                try:
                    full = lib.session(row["id"])
                    events = [e for e in lib.events(row["id"]) if e.get("kind") ==
                              "ConfigApplied"]
                except Exception:
                    continue
                place = self._places[row["id"]] = (full.get("plan_text"),
                                                   session_filesystems(full, events))
            row["plan_text"], row["filesystems"] = place
        return rows
