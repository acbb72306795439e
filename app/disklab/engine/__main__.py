"""`python -m disklab.engine`: see disklab.engine.

SIGTERM and SIGINT are caught before anything else is imported, so that a runner's stop in the
first tenths of a second still ends in a clean (partial) summary instead of a silent death.
"""

import signal
import sys

_early: list[int] = []


def _remember(signum: int, frame: object) -> None:
    _early.append(signum)


signal.signal(signal.SIGTERM, _remember)
signal.signal(signal.SIGINT, _remember)

from disklab.engine.cli import main  # noqa: E402

sys.exit(main(early_signals=_early))
