"""Charts to PNG (and SVG of the chart as the window draws it) through pyqtgraph, offscreen.

Only what needs Qt is here: the tables, HTML, Markdown, CSV, JSON and the Qt-free SVG are in
core.results.documents and core.results.svg, which the CLI uses without importing the GUI.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from disklab.core.results.charts import ChartSpec
from disklab.gui.plots import ChartView


def write_chart(spec: ChartSpec, path: str | Path, width: int = 1000, height: int = 560) -> Path:
    """One chart to PNG or SVG (by extension) through an offscreen pyqtgraph widget, so the
    file looks like the window."""
    view = ChartView()
    view.resize(width, height)
    view.show_spec(spec)
    try:
        return view.export(path)
    finally:
        view.deleteLater()


def write_charts(specs: Sequence[ChartSpec], out: str | Path, fmt: str = "png") -> list[Path]:
    """Several charts: `out` is a file (one chart) or a directory (one file per chart)."""
    out = Path(out)
    if len(specs) == 1 and out.suffix:
        return [write_chart(specs[0], out)]
    out.mkdir(parents=True, exist_ok=True)
    return [write_chart(spec, out / f"{i:02d}-{spec.slug()}.{fmt}")
            for i, spec in enumerate(specs, start=1)]
