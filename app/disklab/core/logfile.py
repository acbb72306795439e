"""DiskLab's log file: disklab.log in the XDG state directory, rotated, so that what the window
did before a crash, and the crash's traceback, are there to attach to a bug report.

The window writes it (gui.app starts it and installs the exception hooks), and so does the
command line (cli.main: each command, how it ended, a crash's traceback). Rotation keeps it
small: 1 MiB, three old files.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import types
from logging.handlers import RotatingFileHandler
from pathlib import Path

from disklab import __version__
from disklab.core.system.directories import state_dir

LOGGER = "disklab"
LOG_NAME = "disklab.log"
MAX_BYTES = 1 << 20
BACKUPS = 3

log = logging.getLogger(LOGGER)


def log_path(directory: Path | None = None) -> Path:
    return (directory or state_dir()) / LOG_NAME


def start_log(directory: Path | None = None) -> Path:
    """Log the `disklab` logger (INFO and up) to the rotating file; the file's path. Calling it
    again for the same file adds no second handler."""
    path = log_path(directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    for handler in log.handlers:
        if isinstance(handler, RotatingFileHandler) and Path(handler.baseFilename) == path:
            return path
    handler = RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS,
                                  encoding="utf-8")
    handler.setFormatter(logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.info("DiskLab %s started: Python %s, pid %d", __version__, sys.version.split()[0],
             os.getpid())
    return path


def _log_exception(where: str, exc_type: type[BaseException], exc: BaseException | None,
                   tb: types.TracebackType | None) -> None:
    log.critical("unexpected exception in %s", where, exc_info=(exc_type, exc, tb))
    for handler in log.handlers:
        handler.flush()


def install_exception_hooks() -> None:
    """Every exception nobody caught, in the main thread (Qt's slots report theirs through
    sys.excepthook) or in another thread, goes to the log with its traceback, then to the
    previous hook (which prints it on stderr)."""
    previous = sys.excepthook
    previous_thread = threading.excepthook

    def hook(exc_type: type[BaseException], exc: BaseException,
             tb: types.TracebackType | None) -> None:
        if not issubclass(exc_type, KeyboardInterrupt):
            _log_exception("the main thread", exc_type, exc, tb)
        previous(exc_type, exc, tb)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        name = args.thread.name if args.thread is not None else "a thread"
        _log_exception(f"thread {name}", args.exc_type, args.exc_value, args.exc_traceback)
        previous_thread(args)

    sys.excepthook = hook
    threading.excepthook = thread_hook
