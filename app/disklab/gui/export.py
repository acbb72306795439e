"""Charts to PNG and SVG files: the one SVG of core.results.svg, and that SVG rasterised by Qt.

Every exported chart, from the window or from `disklab export --format png`, is drawn once, by
the Qt-free SVG writer: the SVG file is that text and the PNG its rendering at the very same
pixel size (the size asked for, 1000 x 560 by default). The Library and Compare pages show that
same SVG (gui/chart.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtGui import QAction, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QPushButton, QWidget

from disklab.core.results.charts import ChartSpec
from disklab.core.results.svg import HEIGHT, WIDTH, to_svg


def chart_app() -> QApplication:
    """The QApplication charts are drawn with (text needs one): the one that runs already (the
    window, a test) as it is, else a new one. The charts are SVG in their own colours on
    white, so no theme is applied: restyling a live application's widgets is not an export's
    business."""
    app = QApplication.instance()
    return app if isinstance(app, QApplication) else QApplication(sys.argv[:1])


def svg_image(svg: str, width: int, height: int) -> QImage:
    """An SVG document drawn into a width x height image on white."""
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.white)
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        renderer.render(painter)
    finally:
        painter.end()
    return image


def write_chart(spec: ChartSpec, path: str | Path, width: int = WIDTH,
                height: int = HEIGHT) -> Path:
    """One chart to SVG or PNG (by extension), width x height px either way."""
    path = Path(path)
    svg = to_svg(spec, width, height)
    if path.suffix.lower() == ".svg":
        path.write_text(svg, encoding="utf-8")
        return path
    if not svg_image(svg, width, height).save(str(path), "PNG"):
        raise OSError(f"cannot write {path}")
    return path


def write_charts(specs: Sequence[ChartSpec], out: str | Path, fmt: str = "png",
                 width: int = WIDTH, height: int = HEIGHT) -> list[Path]:
    """Several charts: `out` is a file (one chart) or a directory (one file per chart)."""
    out = Path(out)
    if len(specs) == 1 and out.suffix:
        return [write_chart(specs[0], out, width, height)]
    out.mkdir(parents=True, exist_ok=True)
    return [write_chart(spec, out / f"{i:02d}-{spec.slug()}.{fmt}", width, height)
            for i, spec in enumerate(specs, start=1)]


EXPORT_DIR_KEY = "export/dir"  # QSettings: the folder the last export went to


def ask_export_path(parent: QWidget | None, title: str, name: str, ext: str) -> str | None:
    """Where to write an export: a save dialog that opens in the folder of the last export
    (not the start folder each time), remembered for the next one."""
    settings = QSettings()
    folder = str(settings.value(EXPORT_DIR_KEY, "") or "")
    start = str(Path(folder) / name) if folder else name
    path, _ = QFileDialog.getSaveFileName(parent, title, start, f"*.{ext}")
    if not path:
        return None
    settings.setValue(EXPORT_DIR_KEY, str(Path(path).parent))
    return path


def export_button(formats: Sequence[tuple[str, str]],
                  export: Callable[[str], None]) -> tuple[QPushButton, dict[str, QAction]]:
    """One "Export" button whose menu holds a page's formats ((format, text) pairs), each
    calling `export(format)`: a row of five export buttons made the window wider than a
    1024 px screen. Returns the button and its actions by format."""
    button = QPushButton("Export")
    menu = QMenu(button)
    actions: dict[str, QAction] = {}
    for fmt, text in formats:
        action = menu.addAction(text)
        action.triggered.connect(lambda _on=False, f=fmt: export(f))
        actions[fmt] = action
    button.setMenu(menu)
    return button, actions
