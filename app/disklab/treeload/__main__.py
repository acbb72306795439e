"""`python -m disklab.treeload`: see disklab.treeload.

SIGTERM and SIGINT are caught before anything else is imported, so that a stop in the first
tenths of a second still ends with the tree removed and a partial summary.
"""

import signal
import sys

_early: list[int] = []


def _remember(signum: int, frame: object) -> None:
    _early.append(signum)


signal.signal(signal.SIGTERM, _remember)
signal.signal(signal.SIGINT, _remember)

from disklab.treeload.cli import main  # noqa: E402

sys.exit(main(early_signals=_early))
