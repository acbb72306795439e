"""The window's units setting: View > Units, SI (MB/s, GB: KDiskMark's, the default) or IEC
(MiB/s, GiB). The choice is kept in the window's QSettings, like its other settings, and read
before the pages are made, so a restarted window writes every figure in it from the first
paint; a change is handed to every page at once (Workbench.set_units, units_changed)."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QWidget

from disklab.core.vocab.units import (
    DEFAULT_UNITS,
    UNIT_SYSTEMS,
    UNITS_WORDS,
    check_units,
    unit_system,
)
from disklab.gui.state import Workbench

UNITS_KEY = "view/units"  # QSettings: "si" or "iec"


def kept_units(settings: QSettings) -> str:
    """The units choice kept in `settings`; the default for none or a value that is not one."""
    try:
        return check_units(settings.value(UNITS_KEY, DEFAULT_UNITS))
    except ValueError:
        return DEFAULT_UNITS


class UnitsMenu:
    """View > Units: one checkable action per choice, the current one checked."""

    def __init__(self, menu: QMenu, wb: Workbench, settings: QSettings, parent: QWidget):
        self.wb, self.settings = wb, settings
        self.menu = menu.addMenu("&Units")
        self.menu.setToolTipsVisible(True)
        self.group = QActionGroup(parent)
        self.group.setExclusive(True)
        self.actions: dict[str, QAction] = {}
        for system in UNIT_SYSTEMS:
            action = QAction(UNITS_WORDS[system], parent)
            action.setCheckable(True)
            action.setToolTip("Rates and sizes on every page, chart and export of this window")
            action.triggered.connect(lambda _c=False, s=system: self.choose(s))
            self.group.addAction(action)
            self.menu.addAction(action)
            self.actions[system] = action
        wb.units_changed.connect(self.show)
        self.show(unit_system())

    def choose(self, system: str) -> None:
        """The user's choice: every page in it now, and at the next start."""
        self.settings.setValue(UNITS_KEY, system)
        self.settings.sync()
        self.wb.set_units(system)

    def show(self, system: str) -> None:
        self.actions[system].setChecked(True)
