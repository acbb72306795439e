"""The Block devices list of the Target page: every block device with its safety verdict and
why, and Refresh.

Devices come from core.system.devices (lsblk, run in the thread pool) with the free space of
their filesystems; a device that cannot be used (refused, size 0, read-only) is shown greyed,
not selectable, with the reason in its last column and tooltip. Choosing a usable one emits
`picked`: what follows (the typed confirmation, the plan's `format`) is the page's, which owns
the plan's target. A widget of its own so that the page holds the form and this the list.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from disklab.core.system.devices import Device, device_note, list_devices
from disklab.core.system.space import free_space
from disklab.core.vocab.units import human_bytes
from disklab.gui.state import Workbench
from disklab.gui.threads import run_in_background

HEADERS = ["device", "model", "serial", "size", "free", "rotational", "safety", "why"]
READY = ("Greyed devices cannot be used: the last column says why. Choosing a usable device "
         "will ask you to type its path, because its data will be destroyed.")


class DeviceList(QGroupBox):
    """The "Block devices" box: a note (reading, ready, or why not), the table, Refresh."""

    loaded = Signal()  # a reading asked for last is shown (devices, or none and why)
    picked = Signal(object)  # a usable Device the user selected in the table

    def __init__(self, wb: Workbench, parent: QWidget | None = None):
        super().__init__("Block devices", parent)
        self.wb = wb
        self.devices: list[Device] = []
        self.free: dict[str, int] = {}  # device path -> free bytes of its filesystem
        dl = QVBoxLayout(self)
        self.note = QLabel()
        self.note.setWordWrap(True)
        dl.addWidget(self.note)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.
                                                           ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.itemSelectionChanged.connect(self._selected)
        dl.addWidget(self.table)
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.refresh)
        dl.addWidget(refresh, 0, Qt.AlignmentFlag.AlignLeft)

    def refresh(self) -> None:
        """Read the block devices off the GUI thread; only the last reading asked for is shown
        (`latest`: the window's first reading, ending after a Refresh's on a busy machine, put
        a list from before it back)."""
        self.note.setText("Reading block devices…")
        library = str(self.wb.library_path)

        def read() -> tuple[list[Device], dict[str, int]]:
            devices = list_devices(library)
            return devices, free_space(devices)

        run_in_background(read, self._done, self, latest="devices")

    def _done(self, found: tuple[list[Device], dict[str, int]] | None,
              error: Exception | None) -> None:
        devices, self.free = found if found else ([], {})
        if error is not None:
            self.note.setText(f"Could not read block devices: {error}")
            self.devices = []
        else:
            self.devices = devices
            self.note.setText(READY)
        self._fill()
        self.loaded.emit()

    def _fill(self) -> None:
        self.table.setRowCount(len(self.devices))
        for row, d in enumerate(self.devices):
            free = self.free.get(d.path)
            why = d.unusable
            cells = [d.path, d.model or "", d.serial or "", human_bytes(d.size),
                     human_bytes(free) if free is not None else "",
                     "yes" if d.rotational else "no",
                     d.safety if why is None or d.refused else "unusable",
                     device_note(d)]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if why is not None:
                    item.setFlags(Qt.ItemFlag.NoItemFlags)
                    item.setToolTip(why)
                self.table.setItem(row, col, item)

    def selected(self) -> Device | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        return self.devices[rows[0].row()]

    def _selected(self) -> None:
        dev = self.selected()
        if dev is not None and dev.unusable is None:
            self.picked.emit(dev)
