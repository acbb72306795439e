"""`disklab show`, `disklab compare` and `disklab export` on real sessions made by the core
runner: the same figure reads the same in the terminal, the window and every file, and nothing
but the PNG export needs Qt."""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from disklab.cli import gui_cmd
from disklab.cli.main import main
from disklab.core.library import Library
from disklab.core.results.format import format_mean_std, format_spread, format_value
from disklab.core.results.rows import row_stats
from disklab.gui.main_window import MainWindow
from disklab.gui.state import Workbench
from tests.helpers import engine_plan, run_and_record


@pytest.fixture(scope="module")
def two_sessions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    base = tmp_path_factory.mktemp("cli")
    target = base / "target"
    target.mkdir()
    library = base / "lib.sqlite3"
    a = run_and_record(library, engine_plan(target, name="first", repeats=2, runtime="0.5s"))
    b = run_and_record(library, engine_plan(target, name="second", runtime="0.5s"))
    return library, a, b


def test_compare_markdown_to_stdout(two_sessions, capsys):
    library, a, b = two_sessions
    assert main(["compare", str(a), "second", "--library", str(library)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("| configuration | engine write")
    assert lines[2].startswith(f"| {a} first (baseline) |")
    assert lines[3].startswith(f"| {b} second |")
    # a delta in per cent against the baseline; one run on this side: no test
    assert "MB/s" in lines[3] and " % †" in lines[3] and "no test possible" not in lines[3]
    assert out.count("† one run: no test possible") == 1  # said once, under the table


def test_compare_csv_json_html_files(two_sessions, tmp_path):
    library, a, b = two_sessions
    for fmt in ("csv", "json", "html"):
        out = tmp_path / f"c.{fmt}"
        assert main(["compare", str(a), str(b), "--baseline", str(b), "--format", fmt,
                     "-o", str(out), "--library", str(library)]) == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "c.csv").read_text())))
    assert {r["baseline"] for r in rows} == {f"{b} second"}
    base_rows = [r for r in rows if r["configuration"] == f"{b} second"]
    assert all(float(r["delta"]) == 0.0 for r in base_rows if r["delta"])
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["baseline"] == f"{b} second" and len(doc["rows"]) == 2
    html = (tmp_path / "c.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") >= 1
    assert "first" in html and "second" in html


def test_export_session_html_png_svg(two_sessions, tmp_path):
    library, a, _b = two_sessions
    html = tmp_path / "s.html"
    assert main(["export", str(a), "--format", "html", "-o", str(html),
                 "--library", str(library)]) == 0
    text = html.read_text()
    assert "DiskLab session" in text and "<svg" in text and "Results" in text
    svg_dir = tmp_path / "svg"
    assert main(["export", "first", "--format", "svg", "-o", f"{svg_dir}/",
                 "--library", str(library)]) == 0
    svgs = sorted(svg_dir.glob("*.svg"))
    assert svgs
    for p in svgs:
        assert ET.fromstring(p.read_text()).tag.endswith("svg")
    png_dir = tmp_path / "png"
    assert main(["export", str(a), "--format", "png", "-o", f"{png_dir}/",
                 "--library", str(library)]) == 0
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in png_dir.glob("*.png"))


def test_compare_and_exports_never_import_the_gui(two_sessions, tmp_path):
    """A headless server without the GUI extras compares and exports everything but PNG:
    PySide6 and pyqtgraph cannot be imported in the child, and no disklab.gui module loads."""
    library, a, b = two_sessions
    calls = [["compare", str(a), str(b)]]
    calls += [["compare", str(a), str(b), "--format", f, "-o", str(tmp_path / f"c.{f}")]
              for f in ("md", "csv", "json", "html")]
    calls += [["export", str(a), "--format", f,  # several charts: into a directory, "/"
               "-o", str(tmp_path / f"s.{f}") + ("/" if f == "svg" else "")]
              for f in ("csv", "json", "html", "md", "svg")]
    code = (
        "import sys\n"
        "sys.modules['PySide6'] = None; sys.modules['pyqtgraph'] = None\n"
        "try:\n    import PySide6\nexcept ImportError:\n    pass\n"
        "else:\n    sys.exit('PySide6 was importable')\n"
        "from disklab.cli.main import main\n"
        f"codes = [main(c + ['--library', {str(library)!r}]) for c in {calls!r}]\n"
        "gui = sorted(m for m in sys.modules if m.startswith('disklab.gui'))\n"
        "print('GUI MODULES', gui)\n"
        "sys.exit(1 if gui or any(codes) else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "GUI MODULES []" in done.stdout
    assert "| configuration |" in done.stdout  # the comparison went to stdout
    assert "<svg" in (tmp_path / "c.html").read_text()
    svgs = list((tmp_path / "s.svg").glob("*.svg"))  # several charts: a directory of them
    assert svgs and all(ET.fromstring(p.read_text()).tag.endswith("svg") for p in svgs)


def test_same_text_for_the_same_figure_on_every_surface(two_sessions, qtbot, tmp_path,
                                                         capsys):
    """The check a user makes: one recorded figure (session a's mean write throughput over two
    repeats) as `disklab show`, `disklab compare`, the Library and Compare pages and every
    export write it."""
    library, a, b = two_sessions
    with Library.open(library) as lib:
        row = next(r for r in lib.results(a) if r["metric"] == "write")
    mean, std, n = row_stats(row)
    assert n == 2 and std is not None
    figure = format_value(mean, "B/s")  # e.g. '1380 MB/s'
    spread = format_value(std, "B/s")
    both = format_mean_std(mean, std, n, "B/s")
    assert both == f"{figure} ± {spread}"
    # a comparison cell adds n and the coefficient of variation (stddev / mean)
    cell = f"{both} ({format_spread(n, std / mean)})"
    assert cell == f"{both} (n=2, CV {100 * std / mean:.1f} %)"

    # the terminal
    assert main(["show", str(a), "--library", str(library)]) == 0
    shown = next(ln for ln in capsys.readouterr().out.splitlines() if " write " in ln)
    assert f" {figure} " in shown and f" {spread} " in shown
    assert main(["compare", str(a), str(b), "--library", str(library)]) == 0
    md = capsys.readouterr().out
    assert f"| {a} first (baseline) | {cell} |" in md

    # the window
    w = MainWindow(Workbench(library), QSettings(str(tmp_path / "s.ini"),
                                                 QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    try:
        assert w.library.select_session(a)
        t = w.library.results_table
        header = [t.horizontalHeaderItem(j).text() for j in range(t.columnCount())]
        cells = [[t.item(i, j).text() for j in range(t.columnCount())]
                 for i in range(t.rowCount())]
        gui_row = next(dict(zip(header, c, strict=True)) for c in cells if c[2] == "write")
        assert (gui_row["mean"], gui_row["± stddev"]) == (figure, spread)
        w.compare.tabs.setCurrentWidget(w.compare.table)  # the tab against the baseline
        w.compare.compare_ids([a, b], baseline=a)
        c = w.compare.comparison
        col = next(j for j, name in enumerate(c.columns) if name.startswith("engine write"))
        assert c.rows[0] == f"{a} first"
        assert w.compare.table.item(0, col).text() == cell
    finally:
        w.wb.close_library()

    # every file
    out = tmp_path / "files"
    out.mkdir()
    for fmt in ("csv", "json", "html", "md", "svg"):
        assert main(["export", str(a), "--format", fmt,  # several charts: a directory, "/"
                     "-o", str(out / f"s.{fmt}") + ("/" if fmt == "svg" else ""),
                     "--library", str(library)]) == 0
        assert main(["compare", str(a), str(b), "--format", fmt if fmt != "svg" else "md",
                     "-o", str(out / f"c.{fmt}"), "--library", str(library)]) == 0
    csv_row = next(r for r in csv.DictReader((out / "s.csv").open()) if r["metric"] == "write")
    assert float(csv_row["mean"]) == mean and csv_row["shown"] == both
    doc = json.loads((out / "s.json").read_text())
    assert next(r for r in doc["results"] if r["metric"] == "write")["shown"] == both
    html = (out / "s.html").read_text()
    assert f"<td>{figure}</td>" in html and f"<td>{spread}</td>" in html
    assert f"| {figure} | {spread} | 2 |" in (out / "s.md").read_text()
    assert any(f"as is: {figure}</title>" in p.read_text() for p in (out / "s.svg").glob("*.svg"))
    cmp_rows = list(csv.DictReader((out / "c.csv").open()))
    assert any(r["shown"] == cell for r in cmp_rows)
    assert any(d["shown"] == cell for d in json.loads((out / "c.json").read_text())["cells"])
    assert f">{cell}</td>" in (out / "c.html").read_text()
    assert f"| {cell} |" in (out / "c.md").read_text()


def test_gui_without_display_says_what_to_do(monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    assert gui_cmd.gui(argparse.Namespace(library=None)) == 2
    assert "disklab start" in capsys.readouterr().err


def test_png_without_the_gui_extras_says_so_and_a_gui_bug_is_not_hidden(two_sessions,
                                                                         tmp_path):
    """Without PySide6, `export --format png` says the GUI extras are missing (exit 2); with
    them installed, an import error inside disklab.gui itself is raised as what it is, not
    reported as a missing extra."""
    library, a, _b = two_sessions
    argv = ["export", str(a), "--format", "png", "-o", f"{tmp_path / 'png'}/",
            "--library", str(library)]
    missing = (
        "import sys\n"
        "sys.modules['PySide6'] = None\n"
        "from disklab.cli.main import main\n"
        f"sys.exit(main({argv!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", missing], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert "needs the GUI extra" in done.stderr and "Traceback" not in done.stderr
    broken = (
        "import sys\n"
        "sys.modules['disklab.gui.export'] = None  # a bug in the GUI package, extras present\n"
        "from disklab.cli.main import main\n"
        f"sys.exit(main({argv!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", broken], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0 and "needs the GUI extra" not in done.stderr
    assert "ImportError" in done.stderr or "ModuleNotFoundError" in done.stderr
