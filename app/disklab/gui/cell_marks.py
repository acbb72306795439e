"""A table cell's verdict marks, drawn in its corner beside the figure (core/results/legend.py):
the cell's text stays the text every export writes, the marks ride in an item role, and the
page's one-line legend says what each letter means. In a cell of one line they sit at its top
left; in a cell of several (a figure above its comparison) at its bottom left, beside the
short last line, so the column needs no room for them."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem, QTableWidget

MARK_ROLE = Qt.ItemDataRole.UserRole + 7  # a cell's marks ('DC'), '' for none
MARK_GAP = 6  # px between the marks and the figure
MARK_ON_COLOUR = QColor(30, 60, 150)


class MarkDelegate(QStyledItemDelegate):
    """Paints a cell as usual, then its marks in small bold letters at its top left (the
    figures are right-aligned, so the marks never cover them once mark_cells widened the
    column)."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        super().paint(painter, option, index)
        marks = index.data(MARK_ROLE)
        if not marks:
            return
        painter.save()
        painter.setFont(mark_font(option.font))
        # on a coloured cell (better, worse: light in either theme) a dark blue, else the
        # theme's link colour
        coloured = index.data(Qt.ItemDataRole.BackgroundRole) is not None
        painter.setPen(MARK_ON_COLOUR if coloured
                       else option.palette.color(QPalette.ColorRole.Link))
        corner = (Qt.AlignmentFlag.AlignBottom if "\n" in str(index.data() or "")
                  else Qt.AlignmentFlag.AlignTop)
        painter.drawText(option.rect.adjusted(3, 1, -3, -1),
                         int(Qt.AlignmentFlag.AlignLeft | corner), marks)
        painter.restore()


def mark_font(base: QFont) -> QFont:
    font = QFont(base)
    font.setBold(True)
    font.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
    return font


def mark_cells(table: QTableWidget, marks: list[list[str]]) -> None:
    """Give each cell its marks (rows x columns, '' for none) and widen a column that has some
    by the room they take, so they sit beside its figures, not on them: beside the first line
    of a cell of one line, beside the last (shorter) line of a cell of several."""
    if not isinstance(table.itemDelegate(), MarkDelegate):
        table.setItemDelegate(MarkDelegate(table))
    wide, plain = QFontMetrics(mark_font(table.font())), QFontMetrics(table.font())
    for j in range(table.columnCount()):
        room = 0
        for i in range(min(table.rowCount(), len(marks))):
            item = table.item(i, j)
            text = marks[i][j] if j < len(marks[i]) else ""
            if item is not None:
                item.setData(MARK_ROLE, text)
                if text:
                    lines = item.text().split("\n")
                    need = wide.horizontalAdvance(text) + MARK_GAP
                    if len(lines) > 1:  # beside the last line, in the width the others take
                        need -= table.columnWidth(j) - plain.horizontalAdvance(lines[-1]) - 8
                    room = max(room, need)
        if room:
            table.setColumnWidth(j, table.columnWidth(j) + room)
