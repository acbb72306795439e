"""One units choice, SI or IEC, on every surface (issue 49, point 6: the tiles said 1662 MB/s
beside the Run table's 1623 MiB/s for the same figure).

Real sessions of the built-in engine, read back the way a person reads them: `disklab show`,
`compare`, `history` and `export` write MB/s by default (KDiskMark's SI units) and MiB/s with
`--units iec` or a plan's `[report] units = "iec"`, the JSON keeping the canonical B/s; a bad
`units` is one line naming the plan key, exit 2. In the window, View > Units switches the Run
page (its table, figures and plot axes), the Library, Compare and History pages at once, and a
restarted window opens in the units chosen.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from disklab.cli.main import main
from disklab.core.library import Library
from disklab.core.results.format import number
from disklab.core.vocab.units import DEFAULT_UNITS, MiB, unit_system, use_units
from disklab.gui.main_window import MainWindow
from disklab.gui.state import Workbench
from tests.helpers import engine_plan, run_and_record

SI, IEC = "MB/s", "MiB/s"



@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int, int]:
    """Two sessions of one plan on one target (a comparison, a history), and one whose plan's
    [report] asks for IEC units."""
    base = tmp_path_factory.mktemp("units")
    target = base / "target"
    target.mkdir()
    library = base / "lib.sqlite3"
    a = run_and_record(library, engine_plan(target, name="first", repeats=2, runtime="0.5s"))
    b = run_and_record(library, engine_plan(target, name="first", runtime="0.5s"))
    c = run_and_record(library, engine_plan(target, name="studied", runtime="0.5s")
                + '\n[report]\nunits = "iec"\n')
    return library, a, b, c


def _write_mean(library: Path, session: int) -> float:
    with Library.open(library) as lib:
        return float(next(r["mean"] for r in lib.results(session) if r["metric"] == "write"))


def _si(bps: float) -> str:
    return f"{number(bps / 1e6)} {SI}"


def _iec(bps: float) -> str:
    return f"{number(bps / MiB)} {IEC}"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_show_writes_mb_s_by_default_and_mib_s_when_asked(sessions, capsys) -> None:
    library, a, _b, _c = sessions
    mean = _write_mean(library, a)
    default = _cli(capsys, "show", str(a), "--library", str(library))
    assert _si(mean) in default and IEC not in default
    iec = _cli(capsys, "show", str(a), "--units", "iec", "--library", str(library))
    assert _iec(mean) in iec and SI not in iec
    # JSON: the canonical figure, the same whatever the units; its text in the units asked
    docs = [json.loads(_cli(capsys, "show", str(a), "--json", *units, "--library",
                            str(library))) for units in ((), ("--units", "iec"))]
    rows = [next(r for r in d["results"] if r["metric"] == "write") for d in docs]
    assert rows[0]["mean"] == rows[1]["mean"] == mean and rows[0]["unit"] == "B/s"
    assert rows[0]["shown"].startswith(_si(mean)) and rows[1]["shown"].startswith(_iec(mean))


def test_compare_in_every_format_writes_the_units_asked(sessions, capsys, tmp_path) -> None:
    library, a, b, _c = sessions
    mean = _write_mean(library, a)
    for fmt in ("md", "html"):
        default = _cli(capsys, "compare", str(a), str(b), "--format", fmt,
                       "--library", str(library))
        iec = _cli(capsys, "compare", str(a), str(b), "--format", fmt, "--units", "iec",
                   "--library", str(library))
        assert _si(mean) in default and IEC not in default, fmt
        assert _iec(mean) in iec and f" {SI}" not in iec, fmt
    # text: a pivot, its unit said once above the figures
    default = _cli(capsys, "compare", str(a), str(b), "--format", "text",
                   "--library", str(library))
    iec = _cli(capsys, "compare", str(a), str(b), "--format", "text", "--units", "iec",
               "--library", str(library))
    assert f"figures in {SI}" in default and f" {number(mean / 1e6)} ± " in default
    assert f"figures in {IEC}" in iec and f" {number(mean / MiB)} ± " in iec
    assert IEC not in default and f" {SI}" not in iec
    # CSV: canonical figures (B/s in the heading or the unit column) and `shown` in the units
    out = tmp_path / "c.csv"
    assert main(["compare", str(a), str(b), "--format", "csv", "-o", str(out), "--units",
                 "IEC", "--library", str(library)]) == 0
    text = out.read_text()
    assert _iec(mean) in text and f" {SI}" not in text and "B/s" in text
    # a pivot of one's own (--rows/--columns), in Markdown
    pivot = _cli(capsys, "compare", str(a), str(b), "--rows", "session", "--columns", "test",
                 "--format", "md", "--units", "iec", "--library", str(library))
    assert f"figures in {IEC}" in pivot and f" {SI}" not in pivot


def test_a_plans_report_says_the_units_and_units_is_checked(sessions, capsys,
                                                            tmp_path) -> None:
    library, _a, _b, c = sessions
    mean = _write_mean(library, c)
    shown = _cli(capsys, "show", str(c), "--library", str(library))
    assert _iec(mean) in shown and f" {SI}" not in shown  # the [report]'s units
    asked = _cli(capsys, "show", str(c), "--units", "si", "--library", str(library))
    assert _si(mean) in asked and IEC not in asked  # --units says otherwise
    # a units that is neither: one line naming the key and its line, exit 2
    plan = tmp_path / "bad.toml"
    plan.write_text(engine_plan(tmp_path, name="bad") + '\n[report]\nunits = "furlongs"\n')
    done = subprocess.run([sys.executable, "-m", "disklab", "plan", "validate", str(plan)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [ln for ln in done.stderr.splitlines() if "report.units" in ln]
    assert len(lines) == 1 and "'furlongs' is not a units choice" in lines[0], done.stderr
    assert "si" in lines[0] and "iec" in lines[0] and "Traceback" not in done.stderr
    bad = subprocess.run([sys.executable, "-m", "disklab", "show", "1", "--units", "kib"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--units" in bad.stderr and "Traceback" not in bad.stderr


def test_chart_exports_label_their_axis_in_the_units_asked(sessions, tmp_path) -> None:
    library, a, _b, _c = sessions
    for units, unit in ((None, SI), ("iec", IEC)):
        out = tmp_path / f"svg-{units}"
        given = ["--units", units] if units else []
        assert main(["export", str(a), "--format", "svg", "-o", f"{out}/", *given,
                     "--library", str(library)]) == 0
        axes = " ".join(re.findall(r">([^<>]*(?:MB/s|MiB/s)[^<>]*)<",
                                   " ".join(p.read_text() for p in out.glob("*.svg"))))
        assert f"{unit}, higher is better" in axes, axes
        assert (IEC if unit == SI else f" {SI}") not in axes, axes
        html = tmp_path / f"s-{units}.html"
        assert main(["export", str(a), "--format", "html", "-o", str(html), *given,
                     "--library", str(library)]) == 0
        text = html.read_text()
        assert f">{unit}, higher is better<" in text
        assert (f">{IEC}" if unit == SI else f">{SI}") not in text


def test_history_writes_the_units_asked(sessions, capsys) -> None:
    library, a, _b, _c = sessions
    default = _cli(capsys, "history", str(a), "--library", str(library))
    iec = _cli(capsys, "history", str(a), "--units", "iec", "--library", str(library))
    assert SI in default and IEC not in default
    assert IEC in iec and f" {SI}" not in iec


def _window(qtbot, library: Path, settings: Path) -> MainWindow:
    w = MainWindow(Workbench(library), QSettings(str(settings), QSettings.Format.IniFormat))
    w.ask = lambda title, text: True
    w.ask_save = lambda _doing: "discard"
    qtbot.addWidget(w)
    w.show()
    return w


def _texts(table) -> str:
    return " | ".join(table.item(i, j).text() for i in range(table.rowCount())
                      for j in range(table.columnCount()) if table.item(i, j) is not None)


def test_the_windows_units_setting_every_page_and_after_a_restart(
        qtbot, sessions, tmp_path) -> None:
    library, a, b, _c = sessions
    mean = _write_mean(library, a)
    settings = tmp_path / "settings.ini"
    w = _window(qtbot, library, settings)
    try:
        assert unit_system() == "si" and w.units_menu.actions["si"].isChecked()
        # a real run on the Run page: its table, figures and plots in MB/s
        target = tmp_path / "t"
        target.mkdir()
        w.show_page("run")
        w.run.start(engine_plan(target, name="watched", runtime="1s"))
        qtbot.waitUntil(lambda: w.run.session_id is not None and not w.wb.runs.running,
                        timeout=120_000)
        assert w.run.status == "finished", w.run.log.toPlainText()[-2000:]
        table = w.run.table
        cells = [table.item(r, 2).text() for r in range(table.rowCount())]
        assert all(SI in c and IEC not in c for c in cells), cells
        plots = w.run.plots.real()
        assert plots.plots["app"].getAxis("left").labelText == SI
        write = plots.buffers["app_wchar_bps"].data()[1].copy()
        w.library.select_session(a)
        assert _si(mean) in _texts(w.library.results_table)
        w.compare.compare_ids([a, b], baseline=a)
        pivot = w.compare.pivot_view  # figures in its cells, their unit said once in its notes
        assert f"{number(mean / 1e6)} ± " in _texts(pivot)
        assert f"in {SI}" in w.compare.pivot_note.text()

        # View > Units > IEC: every page at once
        w.units_menu.actions["iec"].trigger()
        assert unit_system() == "iec"
        cells = [table.item(r, 2).text() for r in range(table.rowCount())]
        assert all(IEC in c and f" {SI}" not in c for c in cells), cells
        assert plots.plots["app"].getAxis("left").labelText == IEC
        assert all(label.text() == "–" for label in w.run.figures.labels.values())  # ended
        now = plots.buffers["app_wchar_bps"].data()[1]
        assert now == pytest.approx(write * 1e6 / MiB)  # the same samples, in MiB/s
        assert _iec(mean) in _texts(w.library.results_table)
        assert f"{number(mean / MiB)} ± " in _texts(pivot)
        assert f"in {IEC}" in w.compare.pivot_note.text()
        labels = {spec.y_label for spec in w.compare.charts}
        assert IEC in labels and SI not in labels, labels
        w.history.show_history(a)
        assert w.history.chart.svg and f">{IEC}" in w.history.chart.svg
        shots = os.environ.get("DISKLAB_SCREENSHOTS")
        if shots:  # looked at: the Run page and the pivot after the switch
            w.resize(1280, 800)
            for page in ("run", "compare"):
                w.show_page(page)
                qtbot.wait(200)
                assert w.grab().save(str(Path(shots) / f"units-iec-{page}.png"))
        w.save_state()
    finally:
        w.wb.close_library()
        w.close()

    # a restart: the window reads the choice before any page writes a figure
    use_units(DEFAULT_UNITS)
    again = _window(qtbot, library, settings)
    try:
        assert unit_system() == "iec" and again.units_menu.actions["iec"].isChecked()
        again.library.select_session(a)
        assert _iec(mean) in _texts(again.library.results_table)
        again.units_menu.actions["si"].trigger()
        assert _si(mean) in _texts(again.library.results_table)
    finally:
        again.wb.close_library()
        again.close()
    assert QSettings(str(settings), QSettings.Format.IniFormat).value("view/units") == "si"
