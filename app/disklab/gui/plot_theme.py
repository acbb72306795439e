"""The plots' theme (pyqtgraph's config options), kept until pyqtgraph is imported.

app.py sets the theme (light or dark background, no antialiasing) when the window starts, and
pyqtgraph is imported only when the first plot is made (gui/lazy.py, bench figure 6); so the
options wait here and plots.py applies them as it imports pyqtgraph. A theme switch later (the
desktop's light/dark) reaches pyqtgraph at once if it is imported.
"""

from __future__ import annotations

import sys
from typing import Any

PLOT_OPTIONS: dict[str, Any] = {}  # pyqtgraph config options, applied once it is imported


def plot_options(**options: Any) -> None:
    """Set pyqtgraph config options now if it is imported, else when it is (plots.py)."""
    PLOT_OPTIONS.update(options)
    pg = sys.modules.get("pyqtgraph")
    if pg is not None:
        pg.setConfigOptions(**options)
