"""The main window: a sidebar of pages in the order of the work, menus, shortcuts, window state.

Only wiring lives here; each page is its own module, registered in PAGES (key, class): a new
page is one row there. QSettings keeps geometry and the last page; the plan being edited is
autosaved beside the settings (draft.toml) and given back at the next start, and closing with
unsaved changes asks Save / Discard / Cancel.

F5 checks the plan first: with problems, they are listed at the top of the page you are on
(each one a link to its field) and the Run page is left as it is.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, QSize, Qt
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from disklab import __version__
from disklab.core.plan.draft import PlanDraft
from disklab.core.plan.keys import PlanKey
from disklab.core.resources import icon_path
from disklab.core.run.summary import PlanSummary, check_plan
from disklab.gui.draft_keeper import DraftKeeper, ask_save
from disklab.gui.enter_presses import EnterPresses
from disklab.gui.pages.compare import ComparePage
from disklab.gui.pages.configs import ConfigsPage
from disklab.gui.pages.history import HistoryPage
from disklab.gui.pages.hosts import HostsPage
from disklab.gui.pages.library import LibraryPage, dropped_paths
from disklab.gui.pages.matrix import MatrixPage
from disklab.gui.pages.run import RunPage
from disklab.gui.pages.target import TargetPage
from disklab.gui.run_notices import RunNotices
from disklab.gui.state import Workbench
from disklab.gui.threads import abandon_calls, run_in_background
from disklab.gui.typed_edits import TypedEdits
from disklab.gui.units_menu import UnitsMenu, kept_units

# The pages in the order of the work: (key, class). The window keeps each as an attribute of
# that key (window.target, window.matrix...); a new page is one row here.
PAGES: tuple[tuple[str, type[QWidget]], ...] = (
    ("target", TargetPage), ("configs", ConfigsPage), ("matrix", MatrixPage), ("run", RunPage),
    ("library", LibraryPage), ("compare", ComparePage), ("history", HistoryPage),
    ("hosts", HostsPage),
)
PAGE_KEYS = tuple(key for key, _cls in PAGES)


PROBLEM_PAGES = {"target": "target", "targets": "target", "config": "configs"}


def page_of_problem(key: str) -> str:
    """The page whose field a plan key belongs to: target.* on Target, config[N].* on
    Configurations, a key named like a page (hosts.h1.address on a Hosts page) on that page,
    everything else (tests, name, repeats, caches) on the Test matrix."""
    head = PlanKey.parse(key).section
    page = PROBLEM_PAGES.get(head, head)
    return page if page in PAGE_KEYS else "matrix"


class ProblemsBar(QFrame):
    """The plan's problems at the top of whatever page is shown, when F5 could not start:
    each a link to its field; hidden again once the plan checks clean or it is dismissed."""

    def __init__(self, go_to: Callable[[str], None], parent: QWidget | None = None):
        super().__init__(parent)
        self.go_to = go_to
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet("ProblemsBar { background: #fdecea; border: 1px solid #e0a0a0; }")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        head = QHBoxLayout()
        self.title = QLabel()
        self.title.setStyleSheet("color: #8a1c1c;")
        close = QPushButton("Hide")
        close.clicked.connect(self.hide)
        head.addWidget(self.title, 1)
        head.addWidget(close)
        lay.addLayout(head)
        self.list = QListWidget()
        self.list.setStyleSheet("QListWidget { background: white; color: #8a1c1c; }")
        self.list.itemActivated.connect(self._go)
        self.list.itemClicked.connect(self._go)
        lay.addWidget(self.list)
        self.hide()

    def show_problems(self, summary: PlanSummary) -> None:
        self.list.clear()
        errors = [p for p in summary.problems if p.severity == "error"]
        for problem in errors:
            item = QListWidgetItem(f"{problem.key}: {problem.message}")
            item.setData(Qt.ItemDataRole.UserRole, problem.key)
            item.setToolTip("click to go to the field")
            self.list.addItem(item)
        if not errors:  # an exception, not problems: say it as it came
            for text in summary.errors:
                self.list.addItem(text)
        self.title.setText(f"<b>The plan cannot run yet:</b> {len(summary.errors)} problem(s). "
                           "Click one to go to its field.")
        rows = min(max(self.list.count(), 1), 4)  # as tall as the problems, up to four
        self.list.setFixedHeight(rows * self.list.sizeHintForRow(0) + 2 * self.list.frameWidth()
                                 + 4)
        self.show()

    def _go(self, item: QListWidgetItem) -> None:
        key = item.data(Qt.ItemDataRole.UserRole)
        if key:
            self.go_to(str(key))


def app_icon() -> QIcon:
    """The icon shipped inside the package (core.resources), so an installed wheel has it."""
    return QIcon(str(icon_path()))


class MainWindow(QMainWindow):
    def __init__(self, wb: Workbench | None = None, settings: QSettings | None = None):
        super().__init__()
        self.wb = wb or Workbench(parent=self)
        self.settings = settings or QSettings("DiskLab", "DiskLab")
        self.wb.set_units(kept_units(self.settings))  # before any page writes a figure
        # replaced in tests; asks the user otherwise
        self.ask: Callable[[str, str], bool] = self._ask
        self.quitting: str | None = None  # the signal that asked to quit, without asking
        self._closing_after_run = False  # closed with a run going: closes when it has ended
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)  # bundles, libraries, tool outputs: the Library imports them
        # replaced in tests; asks Save / Discard / Cancel before `doing` otherwise
        self.ask_save: Callable[[str], str] = lambda doing: ask_save(self, self.wb.draft, doing)
        self.keeper = DraftKeeper(self.wb, self.settings.fileName(), self)  # draft.toml
        self.keeper.failed.connect(self.statusBar().showMessage)
        self.pages: dict[str, QWidget] = {}
        for key, cls in PAGES:
            page = cls(self.wb)  # type: ignore[call-arg]
            self.pages[key] = page
            setattr(self, key, page)
        self.target: TargetPage
        self.configs: ConfigsPage
        self.matrix: MatrixPage
        self.run: RunPage
        self.library: LibraryPage
        self.compare: ComparePage
        self.history: HistoryPage
        self.hosts: HostsPage
        self.sidebar = QListWidget()
        self.sidebar.setFixedWidth(170)
        self.sidebar.setIconSize(QSize(20, 20))
        self.stack = QStackedWidget()
        for i, (key, page) in enumerate(self.pages.items()):
            item = QListWidgetItem(f"{i + 1}  {page.title}")
            item.setData(Qt.ItemDataRole.UserRole, key)
            item.setSizeHint(QSize(150, 36))
            self.sidebar.addItem(item)
            self.stack.addWidget(page)
        self.sidebar.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.problems_bar = ProblemsBar(self.go_to_problem)
        central = QWidget()
        lay = QHBoxLayout(central)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.sidebar)
        right = QVBoxLayout()
        right.addWidget(self.problems_bar)
        right.addWidget(self.stack, 1)
        lay.addLayout(right, 1)
        self.setCentralWidget(central)
        # the library for good on the right; what is happening now on the left
        self.library_label = QLabel(f"Library: {self.wb.library_path}")
        self.statusBar().addPermanentWidget(self.library_label)
        self._starting = False
        self.last_session: int | None = None  # made by the last run in this window
        self._menus()
        self.notices = RunNotices(self, self.statusBar(), app_icon())
        self.wb.page_requested.connect(self.show_page)
        self.wb.problem_requested.connect(self.go_to_problem)
        self.wb.plan_checked.connect(self._plan_checked)
        self.run.started.connect(self._run_started)
        self.run.finished.connect(self._run_finished)
        self.wb.runs.event.connect(self.notices.on_event)
        self.wb.draft_changed.connect(self.show_title)
        # a key typed into a plan's field: the unsaved mark at once, not when the field is left
        self.typed = TypedEdits([self.target, self.configs, self.matrix], self)
        self.typed.typed.connect(self._typed)
        self.enter_presses = EnterPresses(self)  # Enter clicks a focused button, as Space does
        self.wb.status.connect(lambda text: self.statusBar().showMessage(text, 15000))
        self.wb.draft_saved.connect(self.show_title)
        self._restore()
        self.show_title()

    # --- menus and shortcuts
    def _menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self._action(file_menu, "&New plan", QKeySequence.StandardKey.New, self.new_plan)
        self._action(file_menu, "&Open plan…", QKeySequence.StandardKey.Open, self.matrix._open)
        self._action(file_menu, "&Save plan", QKeySequence.StandardKey.Save, self.matrix._save)
        self._action(file_menu, "Save plan &as…", QKeySequence.StandardKey.SaveAs,
                     self.matrix._save_as)
        export = file_menu.addMenu("&Export")
        for fmt, text in (("png", "Chart as &PNG…"), ("svg", "Chart as S&VG…"),
                          ("csv", "Table as &CSV…"), ("md", "Table as &Markdown…"),
                          ("html", "&HTML report…")):
            self._action(export, text, None, lambda _c=False, f=fmt: self.export(f))
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close)
        run_menu = bar.addMenu("&Run")
        self._action(run_menu, "&Start", QKeySequence("F5"), self.start_run)
        self._action(run_menu, "&Cancel", QKeySequence("Ctrl+."), self.cancel_run)
        self._action(run_menu, "C&ompare the last run", QKeySequence("Ctrl+K"),
                     self.compare_last_run)
        view = bar.addMenu("&View")
        for i, (key, page) in enumerate(self.pages.items()):
            self._action(view, page.title, QKeySequence(f"Ctrl+{i + 1}"),
                         lambda _c=False, k=key: self.show_page(k))
        view.addSeparator()
        self.units_menu = UnitsMenu(view, self.wb, self.settings, self)
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "&About DiskLab", None, self.about)

    def _action(self, menu: QMenu, text: str, key: QKeySequence | QKeySequence.StandardKey | None,
                slot: Callable[..., object]) -> QAction:
        action = QAction(text, self)
        if key is not None:
            action.setShortcut(key)
        action.triggered.connect(slot)
        menu.addAction(action)
        self.addAction(action)
        return action

    def export(self, fmt: str) -> None:
        """File > Export: what the page shown exports (its chart, table or report), from the
        keyboard as from its buttons; the Compare page when the page shown has nothing to
        export."""
        page = self.pages[self.current_page()]
        if not hasattr(page, "ask_export"):
            page = self.pages["compare"]
            self.show_page("compare")
        page.ask_export(fmt)  # type: ignore[attr-defined]

    def compare_last_run(self) -> None:
        """The session the last run made, on the Compare page (its cases side by side)."""
        if self.last_session is None:
            self.statusBar().showMessage("No run yet in this window: tick sessions on the "
                                         "Compare page.")
            self.show_page("compare")
            return
        self.wb.compare_requested.emit([self.last_session])

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if dropped_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        """Files dropped anywhere on the window go to the Library page, which imports them."""
        paths = dropped_paths(event.mimeData())
        if paths:
            event.acceptProposedAction()
            self.show_page("library")
            self.library.import_files(paths)

    def show_page(self, key: str) -> None:
        if key in self.pages:
            self.sidebar.setCurrentRow(PAGE_KEYS.index(key))

    def go_to_problem(self, key: str) -> None:
        """Show the page and the field a plan key names (test[2].block_size: the Test matrix,
        its second test, that field), marked and focused."""
        page = page_of_problem(key)
        self.show_page(page)
        focus = getattr(self.pages[page], "focus_problem", None)
        if focus is not None:
            focus(key)

    # --- F5: check first; problems are shown where the user is
    def start_run(self) -> None:
        if self.wb.runs.running or self._starting:
            return
        if self.current_page() == "run":
            self.problems_bar.hide()
            self.run.start()
            return
        self._starting = True
        self.statusBar().showMessage("Checking the plan before starting…")
        text = self.wb.draft.to_text()
        library = str(self.wb.library_path)
        run_in_background(lambda: check_plan(text, library), self._start_checked, self)

    def _start_checked(self, summary: PlanSummary | None, error: Exception | None) -> None:
        self._starting = False
        if error is not None or summary is None:
            summary = PlanSummary(errors=[f"cannot check the plan: {error}"])
        if summary.errors or summary.plan is None:
            self.problems_bar.show_problems(summary)
            self.statusBar().showMessage(
                f"Not started: {len(summary.errors)} problem(s) in the plan, listed above.")
            self.wb.plan_checked.emit(summary)
            return
        self.problems_bar.hide()
        self.run.start()

    def _plan_checked(self, summary: PlanSummary) -> None:
        if self.problems_bar.isVisible() and not summary.errors:
            self.problems_bar.hide()

    # --- the status bar: what is happening now
    def cancel_run(self) -> None:
        if self.wb.runs.running:
            self.statusBar().showMessage("Cancelling: stopping the tool and tearing down…")
        self.run.cancel()

    def _run_started(self) -> None:
        self.problems_bar.hide()
        self.show_page("run")
        self.notices.started()

    def current_page(self) -> str:
        return PAGE_KEYS[self.stack.currentIndex()]

    def about_text(self) -> str:
        import platform

        import numpy
        import PySide6
        from PySide6.QtCore import qVersion

        return (f"<h3>DiskLab {__version__}</h3><p>A workbench for storage and filesystem "
                f"benchmarks on Linux.</p><p>Python {platform.python_version()}<br>"
                f"PySide6 {PySide6.__version__} (Qt {qVersion()})<br>numpy "
                f"{numpy.__version__}<br>library: {self.wb.library_path}</p>"
                "<p>Licence: GPL-3.0-or-later</p>")

    def about(self) -> None:
        QMessageBox.about(self, "About DiskLab", self.about_text())

    # --- run end: notify
    def _run_finished(self, session_id: object, status: str) -> None:
        if isinstance(session_id, int):
            self.last_session = session_id
        self.notices.finished(session_id, status)

    # --- state
    def _restore(self) -> None:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 820)
        state = self.settings.value("window/state")
        if state is not None:
            self.restoreState(state)
        page = self.settings.value("window/page", "target")
        if self.wb.draft.is_blank or page not in PAGE_KEYS:
            page = "target"  # nothing chosen yet: start where the work starts
        self.show_page(str(page))
        if self.wb.draft.is_blank:
            self.target.show_start_hint(True)

    def save_state(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/page", self.current_page())
        self.settings.sync()

    def _ask(self, title: str, text: str) -> bool:
        return QMessageBox.question(self, title, text) == QMessageBox.StandardButton.Yes

    def _confirm_unsaved(self) -> bool:
        """Ask about a changed plan before closing; False: stay open."""
        draft = self.wb.draft
        if self.quitting or not draft.modified or draft.is_blank:
            return True
        answer = self.ask_save("closing")
        if answer == "cancel":
            return False
        if answer == "save":
            self.matrix._save()
            return not self.wb.draft.modified  # the file dialog was cancelled: stay open
        self.keeper.discard()
        return True

    def show_title(self) -> None:
        """The plan's file in the title bar, and a mark while it has unsaved changes: the
        draft's, once a field's value is in it (the edit may also have changed nothing)."""
        draft = self.wb.draft
        name = Path(draft.path).name if draft.path else "new plan"
        self.setWindowTitle(f"{name}[*] — DiskLab")
        self.setWindowModified(draft.modified and not draft.is_blank)

    def _typed(self) -> None:
        self.setWindowModified(True)

    def new_plan(self) -> None:
        """File ▸ New plan: a blank plan on the Target page, after asking about changes."""
        if self.wb.runs.running:
            self.statusBar().showMessage("A run is going: a new plan once it has ended.")
            return
        draft = self.wb.draft
        if draft.modified and not draft.is_blank:
            answer = self.ask_save("starting a new plan")
            if answer == "cancel" or (answer == "save" and not self.matrix._save()):
                return
        self.wb.set_draft(PlanDraft())
        self.show_page("target")

    def quit_on_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP (a kill, a logout, a shutdown): Cancel-and-quit without asking.
        The run is cancelled and torn down (tool stopped, its files removed, mounts and loop
        devices undone), what finished is kept, the session is stored as cancelled, and the
        application quits, within the seconds a session manager gives. The window leaves the
        screen at once; the application quits when the run's thread has ended (closeEvent)."""
        if self.quitting:
            return
        self.quitting = signal.Signals(signum).name
        self.statusBar().showMessage(f"{self.quitting}: cancelling the run and quitting…")
        self.close()
        if not self._closing_after_run:
            QApplication.quit()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Close, asking first about a changed plan and a run going. With a run going the
        close never blocks the event loop: the window is hidden at once, the run is
        cancelled, this close is ignored, and the window closes again (and the application
        quits) when the run's thread has ended (`_close_after_run`); the teardown (tool
        stopped, files removed, mounts undone) goes on without a window."""
        if self._closing_after_run:  # asked and cancelled already: wait for the run's end
            event.ignore()
            return
        if not self._confirm_unsaved():
            event.ignore()
            return
        self.keeper.stop()
        if self.wb.runs.running and not self.quitting and not self.ask(
                "A run is going", "Cancel the run and close DiskLab? What finished is kept "
                "in the library."):
            event.ignore()
            return
        # the pages' plan checks and device lists still running report to nobody, and ssh's
        # questions are declined (a run's worker waiting for an answer would never end)
        abandon_calls(self)
        self.hosts.questions.decline_all()
        self._starting = False
        if self.wb.runs.running:
            self._closing_after_run = True
            self.hide()
            self.wb.runs.finished.connect(self._close_after_run)
            self.run.cancel()
            event.ignore()
            return
        self._closed()
        event.accept()

    def _close_after_run(self, *_args: object) -> None:
        """The cancelled run's thread has ended: the close it deferred now happens, and the
        application quits (a hidden window's close does not end the event loop by itself)."""
        self.wb.runs.finished.disconnect(self._close_after_run)
        self._closing_after_run = False
        self._closed()
        QApplication.quit()

    def _closed(self) -> None:
        """What a close leaves behind: the window's state kept, the library let go."""
        self.save_state()
        self.wb.close_library()
        self.notices.close()
