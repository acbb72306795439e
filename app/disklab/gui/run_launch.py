"""What happens between Start (or Resume) and the worker: the plan, or the session to resume,
checked off the GUI thread; a resumed format or device target confirmed by typing its path
again; sudo's password asked once, in a window-modal dialog that leaves the event loop
running (rule 5). Then `go` hands the page what to run; `refused` says why nothing runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QInputDialog, QLineEdit, QWidget

from disklab.core.helper_client import password_needed
from disklab.core.library import Library
from disklab.core.run.resume import Resumption, prepare_resume
from disklab.core.run.summary import PlanSummary, check_plan
from disklab.core.vocab.model import Plan
from disklab.gui.state import Workbench
from disklab.gui.threads import run_in_background


@dataclass(frozen=True)
class Launch:
    """A run the checks let through: the plan, its warnings, sudo's password if it wanted
    one, the session it resumes if any, and the state line's words while it runs."""

    plan: Plan
    warnings: tuple[str, ...]
    password: str | None
    resumption: Resumption | None
    text: str


class Launcher(QObject):
    """The checks and questions before a run, for `page` (their dialogs' parent, and the
    owner of the checks in the thread pool: a closed window's answers go nowhere)."""

    go = Signal(object)  # a Launch
    refused = Signal(str, str)  # the state line's words, and lines for the log (or "")

    def __init__(self, wb: Workbench, page: QWidget):
        super().__init__(page)
        self.wb = wb
        self.page = page
        self.password_dialog: QInputDialog | None = None  # open while sudo wants a password

    def check_plan(self, text: str | None = None) -> None:
        """Check `text` (a plan's TOML; the draft's when None) off the GUI thread."""
        text = self.wb.draft.to_text() if text is None else text
        library = str(self.wb.library_path)
        run_in_background(lambda: check_plan(text, library), self.plan_checked, self.page)

    def plan_checked(self, summary: PlanSummary | None, error: Exception | None) -> None:
        if error is not None or summary is None or summary.errors or summary.plan is None:
            problems = [str(error)] if error else (summary.errors if summary else [])
            self.refused.emit(f"The plan cannot run: {len(problems)} problem(s): "
                              + "; ".join(problems[:6]),
                              "\n".join(["[plan] the plan cannot run:",
                                         *(f"  {p}" for p in problems)]))
            return
        plan, warnings = summary.plan, tuple(summary.warnings)

        def launch(password: str | None) -> None:
            self.go.emit(Launch(plan, warnings, password, None, f"Running {plan.name!r}…"))
        if summary.needs_password:
            self._ask_password(launch)
            return
        launch(None)

    def check_resume(self, session_id: int) -> None:
        """May the session resume (core.run.resume: its status, the same machine and target,
        the same cases): checked in the pool."""
        library = str(self.wb.library_path)
        run_in_background(lambda: _check_resume(library, session_id), self._resume_checked,
                          self.page)

    def _resume_checked(self, checked: tuple[Resumption, bool] | None,
                        error: Exception | None) -> None:
        if error is not None or checked is None:
            self.refused.emit(f"<b>Cannot resume:</b> {error}", "")
            return
        resumption, needs_password = checked
        target = resumption.plan.target
        if target.destructive and not self._confirm_destroy(target.path):
            self.refused.emit(f"Not resumed: {target.path} was not confirmed.", "")
            return

        def launch(password: str | None) -> None:
            self.go.emit(Launch(resumption.plan, resumption.warnings, password, resumption,
                                f"Resuming session {resumption.session_id} "
                                f"({resumption.name!r}): {len(resumption.runs)} run(s) to "
                                "do…"))
        if needs_password:
            self._ask_password(launch)
            return
        launch(None)

    def _confirm_destroy(self, path: str) -> bool:
        """A resumed format or device target destroys that device's data again: the user
        types its path, as for the first run (`disklab resume` wants --yes-destroy)."""
        text, ok = QInputDialog.getText(
            self.page, "Destroy the data on this device again?",
            f"Resuming formats or writes to {path} again; everything on it is lost.\n"
            "Type the device path to confirm:")
        return bool(ok and text.strip() == path)

    def _ask_password(self, then: Callable[[str], None]) -> None:
        """sudo wants a password for the session's privileged helper: asked once, here, in a
        window-modal dialog that does not block the event loop (rule 5)."""
        dialog = QInputDialog(self.page)
        dialog.setWindowTitle("Root is needed")
        dialog.setLabelText(
            "DiskLab makes, mounts and tests this target as root, through one privileged helper "
            "for the whole session.\nPassword for sudo:")
        dialog.setTextEchoMode(QLineEdit.EchoMode.Password)
        dialog.textValueSelected.connect(then)
        dialog.rejected.connect(lambda: self.refused.emit(
            "Not started: root is needed and no password was given.", ""))
        dialog.finished.connect(dialog.deleteLater)
        self.password_dialog = dialog
        dialog.open()


def _check_resume(library: str, session_id: int) -> tuple[Resumption, bool]:
    """On a pool thread: may the session resume (its own library connection: SQLite
    connections stay on their thread), and will sudo want a password."""
    with Library.open(library) as lib:
        resumption = prepare_resume(lib, session_id, library_path=library)
    return resumption, password_needed(resumption.plan)
