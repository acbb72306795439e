"""The pivot and the exported charts as a person sees them, on a session the engine really ran
on two ext4 configurations of a scratch image (loop device, mkfs, mount, all undone by the run):

- `disklab compare S --rows config --columns test --format json` is a 2 x 2 table of the means;
- the Compare page's pivot and the HTML report hold the same figures;
- the chart's SVG, rendered by librsvg (rsvg-convert), draws each configuration's bars in its
  own colour at heights proportional to the means, at the SVG's own pixel size, and the PNG the
  window exports is that size too;
- headless Chromium renders the HTML report (the pivot and its charts open it);
- the config diff shows the mount option that differs, not mountpoints or raw dumps;
- the Library fills the device and filesystem columns of an image target's session.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from disklab.cli.main import main
from disklab.core.library import Library
from disklab.core.results.charts import PALETTE
from disklab.core.results.tables import cell_lines
from disklab.core.vocab.units import MiB
from tests.helpers import IS_ROOT

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="makes loop devices and mounts (root)")

PLAN = """\
name = "two journal modes"
repeats = 2

[target]
image = {{ path = "{image}", size = "256m" }}

[[config]]
label = "ordered"
fs = "ext4"
mount = ["data=ordered"]

[[config]]
label = "journal"
fs = "ext4"
mount = ["data=journal"]

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = "1m"
size = "32m"
direct = false
fsync = true
"""
SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """One real session: 2 configurations x 2 tests x 2 repeats."""
    base = tmp_path_factory.mktemp("pivot")
    plan = base / "plan.toml"
    plan.write_text(PLAN.format(image=base / "scratch.img"))
    library = base / "library.sqlite3"
    assert main(["run", str(plan), "--library", str(library)]) == 0
    assert not (base / "scratch.img").exists()
    with Library.open(library) as lib:
        return library, int(lib.list_sessions()[0]["id"])


class _Cells(HTMLParser):
    """The text of every <td> of the first table after an <h2>Pivot …</h2>."""

    def __init__(self) -> None:
        super().__init__()
        self.state = ""
        self.rows: list[list[str]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "h2" and not self.rows:
            self.state = "h2"
        elif tag == "tr" and self.state == "table":
            self.rows.append([])
        elif tag == "td" and self.state == "table":
            self.rows[-1].append("")
            self.state = "td"

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self.state == "td":
            self.state = "table"
        elif tag == "table" and self.state == "table":
            self.state = "done"

    def handle_data(self, data: str) -> None:
        if self.state == "h2" and data.startswith("Pivot"):
            self.state = "table"
        elif self.state == "h2":
            self.state = ""
        elif self.state == "td":
            self.rows[-1][-1] += data


def _rendered(svg_path: Path, png_path: Path) -> tuple[Any, int, int]:
    """An SVG rendered by librsvg at its own size: (QImage, width, height)."""
    from PySide6.QtGui import QImage

    text = svg_path.read_text()
    root = ET.fromstring(text)
    assert "vector-effect" not in text
    width, height = int(root.get("width")), int(root.get("height"))
    assert (width, height) == (1000, 560) and root.get("viewBox") == "0 0 1000 560"
    subprocess.run(["rsvg-convert", str(svg_path), "-o", str(png_path)], check=True)
    image = QImage(str(png_path))
    assert (image.width(), image.height()) == (width, height)
    return image, width, height


def _drawn(image: Any, bar: ET.Element, colour: Any) -> float:
    """How tall a bar is drawn: walking up from the axis while the pixels are its colour."""
    from PySide6.QtGui import QColor

    x = float(bar.get("x")) + float(bar.get("width")) / 4
    bottom = float(bar.get("y")) + float(bar.get("height"))
    y = int(bottom) - 2
    while y > 0 and _near(QColor(image.pixel(int(x), y)), colour):
        y -= 1
    return bottom - (y + 1)


def pivot_cells(html_text: str) -> list[list[str]]:
    parser = _Cells()
    parser.feed(html_text)
    return [r for r in parser.rows if r]


def compare_json(capsys: pytest.CaptureFixture[str], library: Path, sid: int,
                 *more: str) -> dict:
    capsys.readouterr()
    assert main(["compare", str(sid), "--rows", "config", "--columns", "test", "--format",
                 "json", "--library", str(library), *more]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_pivot_is_two_by_two(session: tuple[Path, int],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    library, sid = session
    doc = compare_json(capsys, library, sid)
    assert doc["rows"] == ["ordered", "journal"] and doc["columns"] == ["write", "read"]
    assert [len(r) for r in doc["cells"]] == [2, 2]
    with Library.open(library) as lib:
        results = lib.results(sid)
    for i, config in enumerate(doc["rows"]):
        for j, test in enumerate(doc["columns"]):
            row = next(r for r in results if r["config"] == config and r["metric"] == test)
            cell = doc["cells"][i][j]
            assert cell["n"] == 2 and cell["mean"] == pytest.approx(row["mean"])
            assert cell["stddev"] == pytest.approx(row["stddev"])
    assert doc["common"]["block_size"] == MiB and doc["common"]["tool"] == "engine"


def test_gui_pivot_html_chart_and_config_diff(qtbot, window, session: tuple[Path, int],
                                              tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QImage

    library, sid = session
    doc = compare_json(capsys, library, sid)
    window.wb.library_path = library
    window.wb.close_library()
    window.library.refresh()
    window.compare.refresh()

    # the Library lists the image target's device and the filesystem read back
    row = next(r for r in window.library.model.rows if r["id"] == sid)
    model = window.library.model
    texts = {model.headerData(j, Qt.Orientation.Horizontal):
             model.index(window.library.model.rows.index(row), j).data()
             for j in range(model.columnCount())}
    assert texts["device"].startswith("image ") and texts["device"].endswith("scratch.img")
    assert texts["filesystem"] == "ext4"

    # the Compare page's pivot: config x test, the same figures as the JSON
    window.compare.compare_ids([sid])
    page = window.compare
    assert page.rows_key.currentText() == "config" and page.cols_key.currentText() == "test"
    t = page.pivot_view
    assert (t.rowCount(), t.columnCount()) == (2, 2)
    # the page compares along the configurations with the baseline chosen on it
    doc = compare_json(capsys, library, sid, "--baseline", page.baseline.currentText())
    assert doc["baseline"] == "ordered" and doc["cells"][1][0]["compared_with"] == (
        "ordered / write")
    gui = [[t.item(i, j).text() for j in range(2)] for i in range(2)]
    assert [t.verticalHeaderItem(i).text() for i in range(2)] == doc["rows"]
    assert [[cell_lines(c["shown"]) for c in r] for r in doc["cells"]] == gui

    # the HTML report of the page holds the same cells, its pivot first
    html_path = Path(page.export("html", str(tmp_path / "report.html")))
    html_text = html_path.read_text()
    cells = pivot_cells(html_text)
    assert [c[1:] for c in cells] == [[c["shown"] for c in r] for r in doc["cells"]]
    assert html_text.index("<h2>Pivot") < html_text.index("<svg") < html_text.index(
        "<details>")
    # and so does the CLI's HTML of the same pivot
    capsys.readouterr()
    assert main(["compare", str(sid), "--rows", "config", "--columns", "test", "--format",
                 "html", "--baseline", "ordered", "--library", str(library)]) == 0
    assert [c[1:] for c in pivot_cells(capsys.readouterr().out)] == [c[1:] for c in cells]

    # the config diff: the option that differs, side by side, without noise
    diff = dict(page.diff)
    ordered, journal = (f"{sid} two journal modes / {c}" for c in ("ordered", "journal"))
    assert diff["plan.mount"] == {ordered: "data=ordered", journal: "data=journal"}
    assert not any(re.search(r"mountpoint|raw|loop\d|/tmp/", k) for k in diff)
    assert all("\n" not in v and not v.startswith("[") for vs in diff.values()
               for v in vs.values())
    assert page.diff_table.columnCount() == 2
    # readable at 1280 px: both configurations side by side in the table's width, and the
    # value that differs from the first configuration's marked
    from disklab.gui.pages.compare import DIFF_MARK

    page.tabs.setCurrentWidget(page.diff_table)
    page._fill_diff()
    t = page.diff_table
    used = t.verticalHeader().width() + sum(t.columnWidth(j) for j in range(2))
    assert used <= t.width(), (used, t.width())
    keys = [t.verticalHeaderItem(i).toolTip() for i in range(t.rowCount())]
    mount = keys.index("plan.mount")
    assert t.item(mount, 1).background().color() == DIFF_MARK
    assert t.item(mount, 1).font().bold() and not t.item(mount, 0).font().bold()

    # the charts, one per test (a write and a read never share an axis): each SVG rendered
    # by librsvg, read pixel by pixel
    for j, test in enumerate(doc["columns"]):
        page.chart_pick.setCurrentIndex(j)
        spec = page.charts[j]
        assert spec.categories == (test,) and spec.better == "higher is better"
        assert spec.title.startswith(f"{test} (MB/s)") and "n=2 per point" in spec.note
        svg_path = Path(page.export("svg", str(tmp_path / f"chart-{test}.svg")))
        image, width, height = _rendered(svg_path, tmp_path / f"rsvg-{test}.png")
        root = ET.fromstring(svg_path.read_text())
        bars = [r for r in root.iter(f"{SVG_NS}rect") if r.find(f"{SVG_NS}title") is not None]
        assert len(bars) == 2
        per_px = []
        for k, config in enumerate(doc["rows"]):
            drawn = _drawn(image, bars[k], QColor(PALETTE[k]))
            assert drawn >= 3, f"{config} {test}: no bar in its colour"
            per_px.append((doc["cells"][k][j]["mean"], drawn))
        # heights proportional to the means: each bar within 2 px of the tallest one's scale
        tallest_mean, tallest = max(per_px)
        for mean, drawn in per_px:
            assert drawn == pytest.approx(tallest * mean / tallest_mean, abs=2.0)
        # the PNG the window exports is the same chart at the same size
        png = QImage(page.export("png", str(tmp_path / f"chart-{test}.png")))
        assert (png.width(), png.height()) == (width, height)
        _near_image(png, image)
    png_path = tmp_path / "rsvg-write.png"

    # headless Chromium renders the report
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed")
    shot = tmp_path / "report.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", f"--screenshot={shot}", "--window-size=1280,2000",
                    html_path.as_uri()], check=True, capture_output=True, timeout=120)
    rendered = QImage(str(shot))
    # tall enough for both tables, their notes (what limited each cell too) and the chart
    assert (rendered.width(), rendered.height()) == (1280, 2000)
    colours = {QColor(rendered.pixel(x, y)).name() for x in range(0, 1280, 4)
               for y in range(0, 2000, 4)}
    assert PALETTE[0].lower() in colours and PALETTE[1].lower() in colours  # the bars
    keep = os.environ.get("DISKLAB_KEEP_RENDERS")  # a directory to look at them in
    if keep:
        shutil.copy(shot, Path(keep) / "report-html.png")
        shutil.copy(png_path, Path(keep) / "chart-rsvg.png")
        window.resize(1280, 820)
        for index, name in enumerate(("pivot", "chart", "baseline", "diff")):
            page.tabs.setCurrentIndex(index)
            qtbot.wait(100)
            window.grab().save(str(Path(keep) / f"compare-{name}.png"))
        window.show_page("library")
        window.library.select_session(sid)
        qtbot.wait(100)
        window.grab().save(str(Path(keep) / "library.png"))


def _near(a, b, tolerance: int = 40) -> bool:
    return (abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue())
            <= tolerance)


def _near_image(a, b) -> None:
    """Two renderings of one SVG agree on nearly every sampled pixel (anti-aliasing and font
    hinting differ at edges only)."""
    from PySide6.QtGui import QColor

    same = total = 0
    for x in range(0, a.width(), 7):
        for y in range(0, a.height(), 7):
            total += 1
            same += _near(QColor(a.pixel(x, y)), QColor(b.pixel(x, y)), 60)
    assert same / total > 0.97


def test_cli_png_and_svg_of_a_chart_are_the_size_asked(session: tuple[Path, int],
                                                       tmp_path: Path) -> None:
    from PySide6.QtGui import QImage

    library, sid = session
    # as a user runs it: its own process, its own offscreen QApplication
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen",
           "PYTHONPATH": os.pathsep.join(sys.path)}
    for fmt in ("svg", "png"):
        subprocess.run([sys.executable, "-m", "disklab", "export", str(sid), "--format", fmt,
                        "--size", "800x450", "-o", f"{tmp_path / fmt}/", "--library",
                        str(library)], check=True, env=env, capture_output=True, timeout=120)
    svgs = sorted((tmp_path / "svg").glob("*.svg"))
    pngs = sorted((tmp_path / "png").glob("*.png"))
    assert svgs and [p.stem for p in svgs] == [p.stem for p in pngs]
    for svg, png in zip(svgs, pngs, strict=True):
        root = ET.fromstring(svg.read_text())
        assert (root.get("width"), root.get("height")) == ("800", "450")
        image = QImage(str(png))
        assert (image.width(), image.height()) == (800, 450)
        rendered = tmp_path / f"{svg.stem}-rsvg.png"
        subprocess.run(["rsvg-convert", str(svg), "-o", str(rendered)], check=True)
        _near_image(image, QImage(str(rendered)))  # Qt and librsvg draw the same chart
