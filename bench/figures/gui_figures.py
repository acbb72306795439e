"""Figures 3 (a simulated 24-hour run in the Run page) and 6 (GUI cold start). They need the
desktop GUI (issue 5)."""

from __future__ import annotations

import importlib.util


def run(only: set[str]) -> list[dict]:
    if importlib.util.find_spec("disklab.gui") is None:
        why = "not measured: the desktop GUI (disklab.gui) has not landed"
        return [{"figure": f, "value": "-", "target": t, "verdict": why, "details": {}}
                for f, t in (("3 24 h replay in the Run page", "RSS +30 MB, 16 ms, 100 ms"),
                             ("6 GUI cold start", "< 1.0 s"))]
    from disklab.gui import benchmarks  # provided with the GUI

    return benchmarks.run(only)
