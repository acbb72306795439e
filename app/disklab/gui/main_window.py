"""The main window: a sidebar of pages in the order of the work, menus, shortcuts, window state.

Only wiring lives here; each page is its own module. QSettings keeps geometry and the last page
(window state only: plans are TOML files, sessions are in the library).
"""

from __future__ import annotations

import signal
from collections.abc import Callable

from PySide6.QtCore import QSettings, QSize, Qt
from PySide6.QtGui import QAction, QCloseEvent, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QMessageBox,
    QStackedWidget,
    QSystemTrayIcon,
    QWidget,
)

from disklab import __version__
from disklab.core.resources import icon_path
from disklab.gui.pages.compare import ComparePage
from disklab.gui.pages.configs import ConfigsPage
from disklab.gui.pages.hosts import HostsPage
from disklab.gui.pages.library import LibraryPage
from disklab.gui.pages.matrix import MatrixPage
from disklab.gui.pages.run import RunPage
from disklab.gui.pages.target import TargetPage
from disklab.gui.state import Workbench

PAGE_KEYS = ("target", "configs", "matrix", "run", "library", "compare", "hosts")


def app_icon() -> QIcon:
    """The icon shipped inside the package (core.resources), so an installed wheel has it."""
    return QIcon(str(icon_path()))


class MainWindow(QMainWindow):
    def __init__(self, wb: Workbench | None = None, settings: QSettings | None = None):
        super().__init__()
        self.wb = wb or Workbench(parent=self)
        self.settings = settings or QSettings("DiskLab", "DiskLab")
        # replaced in tests; asks the user otherwise
        self.ask: Callable[[str, str], bool] = self._ask
        self.quitting: str | None = None  # the signal that asked to quit, without asking
        self.setWindowTitle("DiskLab")
        self.setWindowIcon(app_icon())
        self.target = TargetPage(self.wb)
        self.configs = ConfigsPage(self.wb)
        self.matrix = MatrixPage(self.wb)
        self.run = RunPage(self.wb)
        self.library = LibraryPage(self.wb)
        self.compare = ComparePage(self.wb)
        self.hosts = HostsPage(self.wb)
        self.pages = dict(zip(PAGE_KEYS, (self.target, self.configs, self.matrix, self.run,
                                          self.library, self.compare, self.hosts), strict=True))
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
        central = QWidget()
        lay = QHBoxLayout(central)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.sidebar)
        lay.addWidget(self.stack, 1)
        self.setCentralWidget(central)
        self.statusBar().showMessage(f"Library: {self.wb.library_path}")
        self._menus()
        self.tray: QSystemTrayIcon | None = None
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.tray = QSystemTrayIcon(app_icon(), self)
            self.tray.setToolTip("DiskLab")
            self.tray.show()
        self.wb.page_requested.connect(self.show_page)
        self.run.started.connect(lambda: self.show_page("run"))
        self.run.finished.connect(self._run_finished)
        self._restore()

    # --- menus and shortcuts
    def _menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self._action(file_menu, "&Open plan…", QKeySequence.StandardKey.Open, self.matrix._open)
        self._action(file_menu, "&Save plan…", QKeySequence.StandardKey.Save, self.matrix._save)
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close)
        run_menu = bar.addMenu("&Run")
        self._action(run_menu, "&Start", QKeySequence("F5"), self.run.start)
        self._action(run_menu, "&Cancel", QKeySequence("Ctrl+."), self.run.cancel)
        view = bar.addMenu("&View")
        for i, (key, page) in enumerate(self.pages.items()):
            self._action(view, page.title, QKeySequence(f"Ctrl+{i + 1}"),
                         lambda _c=False, k=key: self.show_page(k))
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

    def show_page(self, key: str) -> None:
        if key in self.pages:
            self.sidebar.setCurrentRow(PAGE_KEYS.index(key))

    def current_page(self) -> str:
        return PAGE_KEYS[self.stack.currentIndex()]

    def about_text(self) -> str:
        import platform

        import pyqtgraph
        import PySide6
        from PySide6.QtCore import qVersion

        return (f"<h3>DiskLab {__version__}</h3><p>A workbench for storage and filesystem "
                f"benchmarks on Linux.</p><p>Python {platform.python_version()}<br>"
                f"PySide6 {PySide6.__version__} (Qt {qVersion()})<br>pyqtgraph "
                f"{pyqtgraph.__version__}<br>library: {self.wb.library_path}</p>"
                "<p>Licence: GPL-3.0-or-later</p>")

    def about(self) -> None:
        QMessageBox.about(self, "About DiskLab", self.about_text())

    # --- run end: notify
    def _run_finished(self, session_id: object, status: str) -> None:
        message = f"Session {session_id}: {status}"
        if self.tray is not None and self.tray.isVisible():
            icon = (QSystemTrayIcon.MessageIcon.Information if status == "finished"
                    else QSystemTrayIcon.MessageIcon.Warning)
            self.tray.showMessage("DiskLab run " + status, message, icon, 10000)
        QApplication.alert(self)
        self.statusBar().showMessage(message)

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
        page = self.settings.value("window/page", "matrix")
        self.show_page(str(page) if page in PAGE_KEYS else "matrix")

    def save_state(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/page", self.current_page())
        self.settings.sync()

    def _ask(self, title: str, text: str) -> bool:
        return QMessageBox.question(self, title, text) == QMessageBox.StandardButton.Yes

    def quit_on_signal(self, signum: int) -> None:
        """SIGTERM or SIGHUP (a kill, a logout, a shutdown): Cancel-and-quit without asking.
        The run is cancelled and torn down (tool stopped, its files removed, mounts and loop
        devices undone), what finished is kept, the session is stored as cancelled, and the
        application quits, within the seconds a session manager gives."""
        if self.quitting:
            return
        self.quitting = signal.Signals(signum).name
        self.statusBar().showMessage(f"{self.quitting}: cancelling the run and quitting…")
        self.close()
        QApplication.quit()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.wb.runs.running:
            if not self.quitting and not self.ask(
                    "A run is going", "Cancel the run and close DiskLab? What finished is kept "
                    "in the library."):
                event.ignore()
                return
            self.run.cancel()
            self.wb.runs.wait(60000)
        self.save_state()
        self.library.close_library()
        self.compare.close_library()
        if self.tray is not None:
            self.tray.hide()
        event.accept()
