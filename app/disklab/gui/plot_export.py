"""What the live plots' Export menu writes (of a gui.plots.LivePlots, `plots` below): the
stored samples of the time window shown as CSV (time in seconds from the run's start, a column
per series named with its plot, its name and its unit), or the plots as drawn as PNG or SVG.

The CSV is made from the series' buffers, not from the curves: a curve holds about two points a
pixel column (plots.peak_window), the buffers every sample, and a person exporting "what is
shown" wants the samples behind it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from disklab.gui.export import ask_export_path
from disklab.gui.plot_series import PLOT_NAMES, plot_unit


def samples_csv(columns: Sequence[tuple[str, np.ndarray, np.ndarray]], lo: float,
                hi: float) -> str:
    """A CSV of the samples with lo <= t <= hi: `columns` are (header, times, values) with
    times in seconds from the run's start; one row per distinct sample time, in order, a
    series without a sample at a row's time left empty."""
    cut = []
    for header, t, y in columns:
        i0, i1 = int(np.searchsorted(t, lo, "left")), int(np.searchsorted(t, hi, "right"))
        cut.append((header, t[i0:i1], y[i0:i1]))
    times = np.unique(np.concatenate([t for _h, t, _y in cut])) if cut else np.empty(0)
    table: list[list[str]] = [[""] * len(cut) for _ in range(len(times))]
    for col, (_header, t, y) in enumerate(cut):
        rows = np.searchsorted(times, t)
        for row, value in zip(rows.tolist(), y.tolist(), strict=True):
            table[row][col] = repr(float(value))
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["t_s", *(h for h, _t, _y in cut)])
    for when, cells in zip(times.tolist(), table, strict=True):
        w.writerow([f"{when:.3f}", *cells])
    return out.getvalue()


def columns(plots: Any) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(header, times, values) of every visible curve with samples: 'Device write (MB/s)'."""
    return [(f"{series_title(c.plot, c.name())} ({plot_unit(c.plot)})", *plots.buffers[s].data())
            for s, c in plots.curves.items() if c.isVisible() and len(plots.buffers[s])]


def series_title(plot: str, name: str) -> str:
    """A curve's name with its plot's: 'Device write', 'CPU' (not 'CPU CPU')."""
    return name if name == PLOT_NAMES[plot] else f"{PLOT_NAMES[plot]} {name}"


def export_csv(plots: Any, path: str | None = None) -> str | None:
    """The menu's CSV: the stored samples of the time window shown, to `path` or where the
    user says."""
    path = path or ask_export_path(plots, "Export the samples shown (CSV)",
                                   "live-samples.csv", "csv")
    if path:
        lo, hi = plots.x_range()
        Path(path).write_text(samples_csv(columns(plots), lo, hi), encoding="utf-8")
    return path


def export_image(plots: Any, ext: str, path: str | None = None) -> str | None:
    """The menu's PNG or SVG: the plots as drawn."""
    path = path or ask_export_path(plots, f"Export the plots ({ext.upper()})",
                                   f"live-plots.{ext}", ext)
    if path and ext == "png":
        plots.layout_widget.grab().save(path, "PNG")
    elif path:
        from pyqtgraph.exporters import SVGExporter
        SVGExporter(plots.layout_widget.scene()).export(path)
    return path
