"""The standard set's eight figures as tiles on the Run page (KDiskMark's view), filled as
the standard set's cases finish."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from disklab.core.standard_set import Tile, standard_tiles, unit_note


class StandardTiles(QWidget):
    """The standard set's eight figures as large tiles, as KDiskMark shows them: a column per
    test, read above write, each filling in as its case finishes (mean of the repeats so far,
    in the units choice every surface writes, and IOPS)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(4)
        big = QFont()
        big.setPointSizeF(big.pointSizeF() * 2.0)
        big.setBold(True)
        self.labels: dict[tuple[str, str], tuple[QLabel, QLabel]] = {}
        self.tiles = standard_tiles(())  # what is shown, written again in another unit
        for col, tile in enumerate(self.tiles[::2]):
            for row, direction in enumerate(("read", "write")):
                box = QWidget()
                box.setStyleSheet("background:#eef3f8; border-radius:4px;")
                v = QVBoxLayout(box)
                v.setContentsMargins(6, 2, 6, 2)
                v.setSpacing(0)
                v.addWidget(QLabel(f"{tile.test} {direction}"))
                value = QLabel("–")
                value.setFont(big)
                detail = QLabel()
                v.addWidget(value)
                v.addWidget(detail)
                grid.addWidget(box, row, col)
                self.labels[(tile.test, direction)] = (value, detail)
        self.show_tiles(self.tiles)

    def show_tiles(self, tiles: list[Tile]) -> None:
        """The tiles' figures, in the units choice (core.vocab.units)."""
        self.tiles = list(tiles)
        note = unit_note()
        self.setToolTip(note)
        for tile in tiles:
            value, detail = self.labels[(tile.test, tile.direction)]
            value.setText(tile.text)
            detail.setText(tile.detail)
            detail.setToolTip(note)

    def units_changed(self) -> None:
        """The same figures written in the units now chosen."""
        self.show_tiles(self.tiles)

    def shown(self) -> dict[tuple[str, str], str]:
        """What each tile says (its figure), for whoever reads the page."""
        return {key: value.text() for key, (value, _detail) in self.labels.items()}
