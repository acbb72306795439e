"""The real window, opened as `disklab gui` opens it (gui.app.open_window), with a plan loaded
and a probe that writes what the Run page's live plots show to a JSON file five times a second:
test_real_input_plots.py drives the window with real X input (xdotool) and reads the probe.

argv: LIBRARY PLAN.toml PROBE.json. The probe only reads the plots; it changes nothing.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from PySide6.QtCore import QPoint, QTimer

from disklab.core.plan.draft import PlanDraft
from disklab.gui.app import open_window


def _rect(widget, scene_rect) -> list[int]:
    """A scene rectangle of the plots as [x, y, w, h] on the screen."""
    top_left = widget.mapToGlobal(widget.mapFromScene(scene_rect.topLeft()))
    return [top_left.x(), top_left.y(), round(scene_rect.width()), round(scene_rect.height())]


def _state(window) -> dict | None:
    plots = window.run.plots
    if not getattr(plots, "made", False):
        return None
    real = plots.real()
    widget = real.layout_widget
    out = {"t0": real.t0, "follow": real.follow, "readout": real.readout.text(),
           "status": window.run.status, "session": window.run.session_id,
           "views": {}, "plot_rects": {}, "axis_rects": {}, "ticks": {}}
    for key, plot in real.plots.items():
        view = plot.getViewBox()
        out["views"][key] = view.viewRange()
        out["plot_rects"][key] = _rect(widget, view.sceneBoundingRect())
        axis = plot.getAxis("left")
        out["axis_rects"][key] = _rect(widget, plot.mapRectToScene(axis.geometry()))
        lo, hi = view.viewRange()[1]
        levels = axis.tickValues(lo, hi, view.height())
        out["ticks"][key] = [v for _spacing, values in levels for v in values]
    button = real.whole_btn
    corner = button.mapToGlobal(QPoint(0, 0))
    out["whole_button"] = [corner.x(), corner.y(), button.width(), button.height()]
    origin = window.mapToGlobal(QPoint(0, 0))
    out["window"] = [origin.x(), origin.y(), window.width(), window.height()]
    return out


def main() -> int:
    library, plan, probe = sys.argv[1:4]
    app, window = open_window(library)
    window.wb.set_draft(PlanDraft.from_text(Path(plan).read_text(encoding="utf-8")))

    def write() -> None:
        state = _state(window)
        if state is not None:
            tmp = probe + ".tmp"
            Path(tmp).write_text(json.dumps(state), encoding="utf-8")
            os.replace(tmp, probe)

    timer = QTimer()
    timer.timeout.connect(write)
    timer.start(200)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
