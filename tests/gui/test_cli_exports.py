"""`disklab export --format html|png|svg` and `disklab compare` (cli/gui_cmd.py) on real sessions
made by the core runner, and the Qt-free chart and comparison code they share with the window."""

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

from disklab.cli import gui_cmd
from disklab.core import charts
from tests.helpers import engine_plan


def _record(library: Path, plan_text: str) -> int:
    from disklab.core.library import Library
    from disklab.core.plan import parse_plan
    from disklab.core.runner import run_plan

    checked = parse_plan(plan_text)
    lib = Library.open(library)
    rec = lib.recorder()
    try:
        for ev in run_plan(checked.plan):
            rec.handle(ev)
    finally:
        rec.close()
        lib.close()
    return int(rec.session_id)


@pytest.fixture(scope="module")
def two_sessions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    base = tmp_path_factory.mktemp("cli")
    target = base / "target"
    target.mkdir()
    library = base / "lib.sqlite3"
    a = _record(library, engine_plan(target, name="first", runtime="0.6s"))
    b = _record(library, engine_plan(target, name="second", runtime="0.6s"))
    return library, a, b


def _ns(**kw: object) -> argparse.Namespace:
    return argparse.Namespace(**kw)


def test_compare_markdown_to_stdout(two_sessions, capsys):
    library, a, b = two_sessions
    assert gui_cmd.compare(_ns(sessions=[str(a), "second"], baseline=None, format="md",
                               output=None, library=str(library))) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("| configuration | engine write")
    assert lines[2].startswith(f"| {a} first (baseline) |")
    assert lines[3].startswith(f"| {b} second |")
    assert "MiB/s" in lines[3] and "%)" in lines[3]  # a delta in per cent against the baseline


def test_compare_csv_json_html_files(two_sessions, tmp_path):
    library, a, b = two_sessions
    for fmt in ("csv", "json", "html"):
        out = tmp_path / f"c.{fmt}"
        assert gui_cmd.compare(_ns(sessions=[str(a), str(b)], baseline=str(b), format=fmt,
                                   output=str(out), library=str(library))) == 0
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
    assert gui_cmd.export_chart(_ns(session=str(a), format="html", output=str(html),
                                    library=str(library))) == 0
    text = html.read_text()
    assert "DiskLab session" in text and "<svg" in text and "Results" in text
    svg_dir = tmp_path / "svg"
    assert gui_cmd.export_chart(_ns(session="first", format="svg", output=str(svg_dir),
                                    library=str(library))) == 0
    svgs = sorted(svg_dir.glob("*.svg"))
    assert svgs
    for p in svgs:
        assert ET.fromstring(p.read_text()).tag.endswith("svg")
    png_dir = tmp_path / "png"
    assert gui_cmd.export_chart(_ns(session=str(a), format="png", output=str(png_dir),
                                    library=str(library))) == 0
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in png_dir.glob("*.png"))


def test_compare_needs_no_qt(two_sessions, tmp_path):
    """A headless server without the GUI extras can still compare and write HTML."""
    library, a, b = two_sessions
    code = (
        "import sys; sys.modules['PySide6'] = None; sys.modules['pyqtgraph'] = None\n"
        "import argparse\nfrom disklab.cli import gui_cmd\n"
        f"sys.exit(gui_cmd.compare(argparse.Namespace(sessions=['{a}', '{b}'], baseline=None,"
        f" format='html', output='{tmp_path / 'x.html'}', library='{library}')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2], timeout=60)
    assert done.returncode == 0, done.stderr
    assert "<svg" in (tmp_path / "x.html").read_text()


def test_gui_without_display_says_what_to_do(monkeypatch, capsys):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    assert gui_cmd.gui(_ns(library=None)) == 2
    assert "disklab start" in capsys.readouterr().err


# --- the shared Qt-free pieces, on hand-written rows ----------------------------------------

ROWS_A = [  # library.results() rows as the store returns them
    {"config": "as is", "tool": "iozone", "test": "write", "metric": "write", "unit": "B/s",
     "params": {"record_size": 4096, "file_size": 1 << 20}, "n": 3, "mean": 100 * 2**20,
     "stddev": 2 * 2**20, "values": []},
    {"config": "as is", "tool": "iozone", "test": "write", "metric": "write", "unit": "B/s",
     "params": {"record_size": 65536, "file_size": 1 << 20}, "n": 3, "mean": 200 * 2**20,
     "stddev": 4 * 2**20, "values": []},
]
ROWS_B = [dict(r, mean=r["mean"] * 1.1) for r in ROWS_A]


def test_comparison_deltas_and_colours():
    c = charts.compare_results([("A", ROWS_A), ("B", ROWS_B)], baseline="A")
    assert c.rows == ("A", "B") and c.baseline == "A"
    col = "iozone write record_size=4k"  # file_size is the same everywhere: said once
    assert c.columns == (col, "iozone write record_size=64k")
    assert c.common == {"file_size": 1 << 20}
    cell = c.cells[("B", col)]
    assert cell.delta == pytest.approx(10 * 2**20)
    assert cell.delta_pct == pytest.approx(10.0)
    assert charts.delta_class(c, "B", col) == "better"
    assert charts.cell_text(c.cells[("A", col)]) == "100.0 MiB/s ± 2 (+0.0 %)"
    assert charts.cell_text(c.cells[("B", col)]) == "110.0 MiB/s ± 2 (+10.0 %)"
    md = charts.comparison_markdown(c)
    assert "| A (baseline) | 100.0 MiB/s ± 2 | 200.0 MiB/s ± 4 |" in md


def test_sweep_chart_over_record_size():
    specs = charts.sweep_charts(ROWS_A)
    assert len(specs) == 1
    spec = specs[0]
    assert spec.kind == "line" and spec.log_x and spec.x_label == "record_size (KiB)"
    assert spec.series[0].x == (4.0, 64.0)
    assert spec.series[0].y == (100.0, 200.0)  # MiB/s
    svg = charts.to_svg(spec)
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert any(e.tag.endswith("path") for e in root.iter())


def test_config_diff_lists_only_what_differs():
    diff = charts.config_diff({
        "ext4 ordered": {"fstype": "ext4", "options": "rw,data=ordered", "readahead": 128},
        "ext4 journal": {"fstype": "ext4", "options": "rw,data=journal", "readahead": 128},
    })
    assert diff == [("options", {"ext4 ordered": "rw,data=ordered",
                                 "ext4 journal": "rw,data=journal"})]
