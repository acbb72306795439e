"""The Run page's table of the session's cases: a row a case, filled as they run (status, mean
± stddev over the repeats done so far, what limited them), titled by what differs among them
(core.results.labels)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from disklab.core.results.labels import case_titles
from disklab.core.results.limit_words import limits_text, limits_tip
from disklab.core.results.limits import Limit
from disklab.core.vocab.model import Case

COLS = ("#", "status", "result", "config", "case", "limited by")
STATUS, RESULT, CONFIG, CASE, LIMITED = 1, 2, 3, 4, 5
# shown left to right: which test a row is, then how it went; the verdict before the
# result, whose throughput and IOPS can be wider than the pane
SHOWN = (0, CONFIG, CASE, STATUS, LIMITED, RESULT)
WIDTHS = {CONFIG: 80, CASE: 150, STATUS: 90, LIMITED: 130}  # px, elided; whole text on hover


class CaseTable(QTableWidget):
    """The cases' table; `rows` maps a case id to its row."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(0, len(COLS), parent)
        self.rows: dict[str, int] = {}
        self.setHorizontalHeaderLabels(COLS)
        self.verticalHeader().hide()
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        # which test a row is (config, case) at the left, at widths of their own, so a long
        # result or verdict never pushes them behind the scroll bar (520 px of pane at 1280)
        for shown, logical in enumerate(SHOWN):
            header.moveSection(header.visualIndex(logical), shown)
        for col, width in WIDTHS.items():
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            self.setColumnWidth(col, width)
        # one line a case, its end elided (the whole title on hover): a wrapped title was cut
        # in half by the row's height
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)

    def clear_cases(self) -> None:
        self.setRowCount(0)
        self.rows.clear()

    def fill(self, cases: Sequence[Case], states: Mapping[str, str]) -> None:
        """A row a case: its number, its state (`states` by case id, else "waiting"), its
        configuration and title; the whole text of each cell on hover, and what every case
        shares as the table's tooltip."""
        self.setRowCount(len(cases))
        titles, common = case_titles(cases)
        self.setToolTip(common)
        for row, case in enumerate(cases):
            self.rows[case.id] = row
            for col, text in enumerate((str(case.index + 1), states.get(case.id, "waiting"),
                                        "", case.config, titles[row])):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.setItem(row, col, item)

    def set_cell(self, case_id: str, col: int, text: str, colour: QColor | None = None) -> None:
        row = self.rows.get(case_id)
        if row is None:
            return
        item = self.item(row, col)
        if item is None:
            item = QTableWidgetItem()
            self.setItem(row, col, item)
        item.setText(text)
        if colour is not None:
            item.setForeground(colour)

    def set_limits(self, case_id: str, limits: Sequence[Limit]) -> None:
        """What limited the case's runs so far (core.results.limits), the evidence in the
        cell's tooltip."""
        self.set_cell(case_id, LIMITED, limits_text(limits))
        row = self.rows.get(case_id)
        if row is not None:
            self.item(row, LIMITED).setToolTip(limits_tip(limits))
