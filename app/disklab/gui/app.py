"""Start the window: QApplication, theme that follows the desktop, main window, Unix signals.

`main()` is the gui-scripts entry (`disklab-gui`); `disklab gui` calls `run_gui()`.

Signals: SIGTERM and SIGHUP (a `kill`, a logout, a shutdown) cancel a running session and quit,
as Cancel-and-quit does, without asking: the tool is stopped, its files removed, mounts and loop
devices undone, what finished kept, the session stored as cancelled. SIGINT (Ctrl+C in the
terminal) closes the window, which asks first when a run is going.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from PySide6.QtCore import QObject, QSocketNotifier, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from disklab import __version__
from disklab.core.logfile import install_exception_hooks, start_log
from disklab.core.resources import APP_ID
from disklab.gui.activity import log_activity
from disklab.gui.main_window import MainWindow
from disklab.gui.plot_theme import set_plot_colours
from disklab.gui.sort_arrows import SortArrows
from disklab.gui.state import Workbench
from disklab.gui.threads import keep_gc_in_gui_thread


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
    app.setStyle(SortArrows())  # Fusion, its sort arrows as people read them
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
        set_plot_colours((30, 30, 34), (210, 210, 210))
    else:
        app.setPalette(app.style().standardPalette())
        set_plot_colours((255, 255, 255), (40, 40, 40))
    return dark


# Qt's raster engine splits every fill taller than ~96 lines into 64-line pieces run on its
# GUI thread pool ("Thread (pooled)") while the GUI thread waits: on a 2-CPU machine under test
# that was 75-157 wake-ups a second of the pool and ~20 of the GUI thread for the same work
# (bench figure 1d). Painting serially does it without any (read once, at the first paint).
SERIAL_PAINT = ("QT_NO_GUI_THREADPOOL", "1")


def make_app(argv: Sequence[str] | None = None) -> QApplication:
    app = QApplication.instance()
    if app is None:
        os.environ.setdefault(*SERIAL_PAINT)  # the user's own setting wins
        app = QApplication(list(argv or sys.argv[:1]))
    app.setApplicationName("DiskLab")
    app.setOrganizationName("DiskLab")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(APP_ID)  # the installed .desktop file, for the Wayland app id
    apply_theme(app)
    keep_gc_in_gui_thread()  # Qt objects are destroyed in the GUI thread only: gui.threads
    return app  # type: ignore[return-value]


class SignalBridge(QObject):
    """Unix signals into the Qt event loop.

    Python runs a signal handler only when the interpreter gets control, and the Qt event loop
    may sleep in C for as long as nothing happens on screen; so the C-level handler writes the
    signal's number to a socket (signal.set_wakeup_fd), a QSocketNotifier wakes the event loop,
    and the handler of that signal runs there, on the GUI thread, between two events (never in
    the middle of a Qt call, as a handler run at any bytecode could)."""

    def __init__(self, handlers: Mapping[int, Callable[[int], None]],
                 parent: QObject | None = None):
        super().__init__(parent)
        self.handlers = dict(handlers)
        self._read, self._write = socket.socketpair()
        self._read.setblocking(False)
        self._write.setblocking(False)
        self._old_fd = signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        self._old = {sig: signal.signal(sig, self._note) for sig in self.handlers}
        self.notifier = QSocketNotifier(self._read.fileno(), QSocketNotifier.Type.Read, self)
        self.notifier.activated.connect(self._dispatch)

    @staticmethod
    def _note(signum: int, frame: object) -> None:
        """The Python-level handler: nothing; the number went through the wake-up socket."""

    def _dispatch(self, *_args: object) -> None:
        try:
            data = self._read.recv(256)
        except (BlockingIOError, InterruptedError):
            return
        for signum in dict.fromkeys(data):  # each signal once per wake-up
            handler = self.handlers.get(signum)
            if handler is not None:
                handler(signum)

    def close(self) -> None:
        """Give the signals back to their previous handlers."""
        self.notifier.setEnabled(False)
        for sig, old in self._old.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, old)
        with contextlib.suppress(ValueError):
            signal.set_wakeup_fd(self._old_fd)
        self._read.close()
        self._write.close()


def open_window(library: str | Path | None = None) -> tuple[QApplication, MainWindow]:
    """The application and its shown window, with the desktop's theme and the Unix signals
    wired (run_gui runs its event loop). `library` None: the default
    (core.system.directories.library_path). What the window does, and any exception nobody
    caught, go to the log file in the XDG state directory (core.logfile)."""
    start_log()
    install_exception_hooks()
    app = make_app()
    window = MainWindow(Workbench(library))
    log_activity(window)
    hints = QGuiApplication.styleHints()
    if hasattr(hints, "colorSchemeChanged"):  # follow the desktop's light/dark switch
        hints.colorSchemeChanged.connect(lambda *_a: apply_theme(app))
    SignalBridge({signal.SIGINT: lambda _s: window.close(),
                  signal.SIGTERM: window.quit_on_signal,
                  signal.SIGHUP: window.quit_on_signal}, parent=window)
    window.show()
    return app, window


def run_gui(library: str | Path | None = None) -> int:
    """Open the window and run the event loop until it closes."""
    app, _window = open_window(library)
    return app.exec()


def main() -> int:
    """gui-scripts entry point: the library is $DISKLAB_LIBRARY or the XDG default."""
    return run_gui(None)


if __name__ == "__main__":
    sys.exit(main())
