"""The `disklab` command's entry point (pyproject's console script): Ctrl-C handling begins on
this module's first lines, before anything else of DiskLab loads (cli.loading's handler, set
through the built-in `_signal` here so that not even the import of cli.loading can be
interrupted into a traceback), then the command line (cli.main) loads and runs."""

import _signal  # type: ignore[import-not-found]  # built in (no stub): nothing to load
import os


def _cancelled_while_loading(signum: int, frame: object) -> None:
    """Ctrl-C before cli.loading is in: one line on stderr, exit 130 (as cli.loading's)."""
    os.write(2, b"disklab: cancelled\n")
    os._exit(130)


_signal.signal(_signal.SIGINT, _cancelled_while_loading)

from disklab.cli.main import main  # noqa: E402  (after the handler: what Ctrl-C interrupts)

__all__ = ["main"]
