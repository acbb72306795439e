"""What the pages share: the plan being edited, the library's path, the run controller.

Pages talk through this object's signals rather than to each other, so each page can be driven
alone in tests.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from disklab.gui.draft import PlanDraft
from disklab.gui.worker import RunController


def default_library() -> Path:
    env = os.environ.get("DISKLAB_LIBRARY")
    if env:
        return Path(env)
    from disklab.core.library import default_library_path

    return Path(default_library_path())


class Workbench(QObject):
    draft_changed = Signal()  # the plan was edited or replaced
    library_changed = Signal()  # a session was added, edited or deleted
    compare_requested = Signal(list)  # session ids to open in the Compare page
    page_requested = Signal(str)  # a page asks to be shown ("run", "library", ...)

    def __init__(self, library_path: str | Path | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.library_path = Path(library_path) if library_path else default_library()
        self.draft = PlanDraft()
        self.runs = RunController(self)

    def set_draft(self, draft: PlanDraft) -> None:
        self.draft = draft
        self.draft_changed.emit()

    def touch(self) -> None:
        """A page edited the draft in place."""
        self.draft_changed.emit()

    def open_library(self):  # -> disklab.core.library.Library
        from disklab.core.library import Library

        self.library_path.parent.mkdir(parents=True, exist_ok=True)
        return Library.open(self.library_path)
