"""Start the window: QApplication, theme that follows the desktop, main window.

`main()` is the gui-scripts entry (`disklab-gui`); `disklab gui` calls `run_gui()`.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from disklab import __version__
from disklab.core.logfile import install_exception_hooks, start_log
from disklab.core.resources import APP_ID
from disklab.gui.activity import log_activity
from disklab.gui.main_window import MainWindow
from disklab.gui.state import Workbench


def is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is not None and scheme() == Qt.ColorScheme.Dark:
        return True
    window = QGuiApplication.palette().color(QPalette.ColorRole.Window)
    return window.lightness() < 110


def apply_theme(app: QApplication, dark: bool | None = None) -> bool:
    """Fusion with a light or dark palette (the desktop's choice unless told), and the same
    background for the plots. Returns whether dark was applied."""
    dark = is_dark() if dark is None else dark
    app.setStyle("Fusion")
    if dark:
        p = QPalette()
        base, window, text = QColor(30, 30, 34), QColor(43, 43, 48), QColor(225, 225, 225)
        for role, colour in ((QPalette.ColorRole.Window, window),
                             (QPalette.ColorRole.WindowText, text),
                             (QPalette.ColorRole.Base, base),
                             (QPalette.ColorRole.AlternateBase, window),
                             (QPalette.ColorRole.ToolTipBase, window),
                             (QPalette.ColorRole.ToolTipText, text),
                             (QPalette.ColorRole.Text, text),
                             (QPalette.ColorRole.Button, window),
                             (QPalette.ColorRole.ButtonText, text),
                             (QPalette.ColorRole.Highlight, QColor(42, 130, 218)),
                             (QPalette.ColorRole.HighlightedText, QColor(255, 255, 255)),
                             (QPalette.ColorRole.PlaceholderText, QColor(140, 140, 140))):
            p.setColor(role, colour)
        p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor(110, 110, 110))
        p.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText,
                   QColor(110, 110, 110))
        app.setPalette(p)
        pg.setConfigOptions(background=(30, 30, 34), foreground=(210, 210, 210))
    else:
        app.setPalette(app.style().standardPalette())
        pg.setConfigOptions(background="w", foreground=(40, 40, 40))
    pg.setConfigOptions(antialias=False)
    return dark


def make_app(argv: Sequence[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(list(argv or sys.argv[:1]))
    app.setApplicationName("DiskLab")
    app.setOrganizationName("DiskLab")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(APP_ID)  # the installed .desktop file, for the Wayland app id
    apply_theme(app)
    return app  # type: ignore[return-value]


def run_gui(library: str | Path | None = None) -> int:
    """Open the window and run the event loop until it closes. `library` None: the default
    (core.session.library_path). What the window does, and any exception nobody caught, go to
    the log file in the XDG state directory (core.logfile)."""
    start_log()
    install_exception_hooks()
    app = make_app()
    window = MainWindow(Workbench(library))
    log_activity(window)
    hints = QGuiApplication.styleHints()
    if hasattr(hints, "colorSchemeChanged"):  # follow the desktop's light/dark switch
        hints.colorSchemeChanged.connect(lambda *_a: apply_theme(app))
    # Ctrl+C in the terminal closes the window (which asks about a running session): Python
    # handlers run only between bytecodes, so a no-op timer lets them run.
    signal.signal(signal.SIGINT, lambda *_a: window.close())
    tick = QTimer()
    tick.timeout.connect(lambda: None)
    tick.start(300)
    window.show()
    return app.exec()


def main() -> int:
    """gui-scripts entry point: the library is $DISKLAB_LIBRARY or the XDG default."""
    return run_gui(None)


if __name__ == "__main__":
    sys.exit(main())
