"""What the pages share: the plan being edited, the library's path, the run controller.

Pages talk through this object's signals rather than to each other, so each page can be driven
alone in tests.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from disklab.core.library import Library
from disklab.core.system.directories import library_path as resolve_library_path
from disklab.gui.draft import PlanDraft
from disklab.gui.worker import RunController


class Workbench(QObject):
    draft_changed = Signal()  # the plan was edited or replaced
    draft_saved = Signal()  # the plan was written to its file
    status = Signal(str)  # a page says what it did (an export written): the status bar
    run_requested = Signal()  # a page asks the Run page to start the plan (one click)
    library_changed = Signal()  # a session was added, edited or deleted
    compare_requested = Signal(list)  # session ids to open in the Compare page
    page_requested = Signal(str)  # a page asks to be shown ("run", "library", ...)
    resume_requested = Signal(int)  # a session to resume on the Run page
    plan_checked = Signal(object)  # a PlanSummary of the draft: pages mark their fields
    problem_requested = Signal(str)  # a plan key (test[2].block_size): show its field

    def __init__(self, library_path: str | Path | None = None, parent: QObject | None = None):
        super().__init__(parent)
        # None: $DISKLAB_LIBRARY, else the XDG default, as for the command line
        self.library_path = resolve_library_path(library_path)
        self.draft = PlanDraft()
        self.runs = RunController(self)

    def set_draft(self, draft: PlanDraft) -> None:
        self.draft = draft
        self.draft_changed.emit()

    def touch(self) -> None:
        """A page edited the draft in place."""
        self.draft_changed.emit()

    def open_library(self) -> Library:
        """A connection for the GUI thread (Library.open makes the parent directory)."""
        return Library.open(self.library_path)
