"""The window's plan kept beside the settings file (draft.toml), every few seconds when it
changed, so a restart, a logout or a crash gives it back; on a close without saving, the plan
as last saved in its file is kept instead (or none, for a plan never saved). The question
"Save changes?" is asked here too."""

from __future__ import annotations

import contextlib
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from disklab.core.plan.draft import PlanDraft
from disklab.gui.state import Workbench

DRAFT_FILE = "draft.toml"  # beside the settings file
EVERY_MS = 3000
DISCARDED = "discarded"  # what was kept: the saved file's plan, not the window's


class DraftKeeper(QObject):
    """Keeps `wb`'s draft in `file` (beside `settings_file`); restores it at the start."""

    failed = Signal(str)  # the plan could not be kept: why, for the status bar

    def __init__(self, wb: Workbench, settings_file: str, parent: QObject | None = None):
        super().__init__(parent)
        self.wb = wb
        self.file = Path(settings_file).with_name(DRAFT_FILE)
        restored = PlanDraft.restore(self.file)
        if restored is not None:
            wb.draft = restored
        self._kept: str | None = None  # what was last written (text, path, modified)
        self.timer = QTimer(self)
        self.timer.setInterval(EVERY_MS)
        self.timer.timeout.connect(self.autosave)
        self.timer.start()

    def autosave(self) -> None:
        """Write the plan, only when it changed since the last write."""
        text = self.wb.draft.to_text() + str(self.wb.draft.path) + str(self.wb.draft.modified)
        if text == self._kept:
            return
        try:
            self.wb.draft.autosave(self.file)
        except OSError as e:
            self.failed.emit(f"Could not keep the plan in {self.file}: {e}")
            return
        self._kept = text

    def discard(self) -> None:
        """Close without the changes: the next start shows the plan as last saved in its
        file (not a blank plan), or a new plan when it never was."""
        path = self.wb.draft.path
        saved = None
        if path:
            with contextlib.suppress(OSError, ValueError):
                saved = PlanDraft.load(path)
        if saved is not None:
            with contextlib.suppress(OSError):
                saved.autosave(self.file)
        else:
            with contextlib.suppress(OSError):
                self.file.unlink()
        self._kept = DISCARDED

    def stop(self) -> None:
        """The window closes: the plan kept a last time (unless discarded), then no more."""
        if self._kept != DISCARDED:
            self.autosave()
        self.timer.stop()


def ask_save(parent: QWidget, draft: PlanDraft, doing: str = "closing") -> str:
    """'save', 'discard' or 'cancel' for a plan changed since it was last saved; `doing` is
    what the question comes before ("closing", "starting a new plan")."""
    name = draft.path or repr(draft.get("name", "new plan"))
    box = QMessageBox(QMessageBox.Icon.Question, "Save changes?",
                      f"The plan {name} has changes that are not saved in a file.\n"
                      f"Save them before {doing}?",
                      QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                      | QMessageBox.StandardButton.Cancel, parent)
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    answer = box.exec()
    return {QMessageBox.StandardButton.Save: "save",
            QMessageBox.StandardButton.Discard: "discard"}.get(
                QMessageBox.StandardButton(answer), "cancel")
