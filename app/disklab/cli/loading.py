"""Ctrl-C while DiskLab loads (the first ~0.8 s): nothing is open or written yet, so the
process ends with one line and exit 130, never an import's traceback. Installed when this
module loads, before anything else of the command line (cli.entry, the console script, and
cli.main import it first). `_signal` is the interpreter's built-in module: `signal` first
imports enum, a few milliseconds in which a Ctrl-C would still be a traceback."""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # built in (no stub), like os: nothing to load
import os


def cancelled_while_loading(signum: int, frame: object) -> None:
    """Ctrl-C while the modules load: one line on stderr, exit 130."""
    os.write(2, b"disklab: cancelled\n")
    os._exit(130)


def install() -> None:
    """Ctrl-C ends the process with one line from here on (until a command takes it)."""
    _signal.signal(_signal.SIGINT, cancelled_while_loading)


install()
