"""What the pages share: the plan being edited, the library's path, the run controller.

Pages talk through this object's signals rather than to each other, so each page can be driven
alone in tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from disklab.core.library import Library
from disklab.core.plan.draft import PlanDraft
from disklab.core.system.directories import library_path as resolve_library_path
from disklab.core.vocab.units import unit_system, use_units
from disklab.gui.worker import RunController


@dataclass(frozen=True)
class LibraryChange:
    """What changed in the library, so that each page decides whether it must read it again
    (the Compare page ignores a note on a session it does not show).

    kind: "added" (a run's session, an import), "edited" (name, notes, tags), "deleted"."""

    kind: str
    session_ids: tuple[int, ...] = ()

    def touches(self, ids: set[int] | list[int]) -> bool:
        """Whether any of `ids` is among the changed sessions (an empty list: unknown, yes)."""
        return not self.session_ids or bool(set(self.session_ids) & set(ids))


class Workbench(QObject):
    draft_changed = Signal()  # the plan was edited or replaced
    draft_saved = Signal()  # the plan was written to its file
    status = Signal(str)  # a page says what it did (an export written): the status bar
    # a page asks the Run page to start a plan (one click): its TOML text, or None for the
    # draft; the standard set runs its own plan and leaves the plan being edited as it is
    run_requested = Signal(object)
    library_changed = Signal(object)  # a LibraryChange: a session added, edited or deleted
    compare_requested = Signal(list)  # session ids to open in the Compare page
    page_requested = Signal(str)  # a page asks to be shown ("run", "library", ...)
    resume_requested = Signal(int)  # a session to resume on the Run page
    history_requested = Signal(object)  # a session whose series the History page shows
    plan_checked = Signal(object)  # a PlanSummary of the draft: pages mark their fields
    problem_requested = Signal(str)  # a plan key (test[2].block_size): show its field
    # the units choice (core.vocab.units: "si" or "iec") changed: each page writes its
    # figures again in it
    units_changed = Signal(str)

    def __init__(self, library_path: str | Path | None = None, parent: QObject | None = None):
        super().__init__(parent)
        # None: $DISKLAB_LIBRARY, else the XDG default, as for the command line
        self.library_path = resolve_library_path(library_path)
        self.draft = PlanDraft()
        self.runs = RunController(self)
        self._library: Library | None = None

    def set_draft(self, draft: PlanDraft) -> None:
        self.draft = draft
        self.draft_changed.emit()

    def set_units(self, system: str) -> None:
        """Every figure in `system` from now on, on every page (ValueError for a choice that
        is neither 'si' nor 'iec')."""
        before = unit_system()
        use_units(system)
        if unit_system() != before:
            self.units_changed.emit(unit_system())

    def touch(self) -> None:
        """A page edited the draft in place."""
        self.draft_changed.emit()

    def library(self) -> Library:
        """The window's one connection to the library, for the GUI thread (opened when first
        asked; a run's worker opens its own: SQLite connections are not shared between
        threads). Pages read and edit through it and announce changes with `changed`."""
        if self._library is None:
            self._library = Library.open(self.library_path)
        return self._library

    def close_library(self) -> None:
        if self._library is not None:
            self._library.close()
            self._library = None

    def changed(self, kind: str, session_ids: list[int] | tuple[int, ...] = ()) -> None:
        """Tell the pages what changed in the library (library_changed)."""
        self.library_changed.emit(LibraryChange(kind, tuple(int(i) for i in session_ids)))

    def open_library(self) -> Library:
        """Another connection (tests, a thread of its own); the window's is `library()`."""
        return Library.open(self.library_path)
