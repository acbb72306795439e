"""The whole flow by pointing and clicking: target, matrix, a real run with the built-in engine,
live progress and plot data, the results table, the library, a comparison, and the exports."""

from __future__ import annotations

import csv
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from disklab.core.plan.draft import PlanDraft
from disklab.core.results.format import format_mean_std
from disklab.core.run.summary import check_plan
from disklab.gui.case_table import RESULT, STATUS
from tests.helpers import engine_plan


def _run_once(qtbot, window, timeout: int = 90_000) -> tuple[object, str]:
    """Press Start and wait for the end; a run that did not finish shows its log."""
    with qtbot.waitSignal(window.run.finished, timeout=timeout) as blocker:
        qtbot.mouseClick(window.run.start_btn, Qt.MouseButton.LeftButton)
    window.run.flush()
    assert blocker.args[1] == "finished", (window.run.state_label.text(), window.run.model.failures,
                                           window.run.log.toPlainText()[-3000:])
    return blocker.args[0], blocker.args[1]


def test_build_run_watch_browse_compare_export(qtbot, window, target_dir, tmp_path):
    # Target: a directory
    window.show_page("target")
    window.target.set_directory(str(target_dir))
    assert window.wb.draft.target == {"directory": str(target_dir)}
    assert "free" in window.target.dir_info.text()

    # Test matrix: one engine test, parameters typed into the fields
    window.show_page("matrix")
    window.matrix.name.setText("engine buffered")
    window.matrix.name.textEdited.emit("engine buffered")
    engine_row = next(i for i in range(window.matrix.tools.count())
                      if window.matrix.tools.item(i).data(Qt.ItemDataRole.UserRole) == "engine")
    window.matrix.tools.setCurrentRow(engine_row)
    window.matrix.add_test("engine")
    for key, text in (("mode", "write, read"), ("block_size", "1m"), ("size", "16m"),
                      ("runtime", "1s"), ("direct", "false")):
        window.matrix.set_param(key, text)
    assert window.wb.draft.tests == [{"tool": "engine", "mode": ["write", "read"],
                                      "block_size": "1m", "size": "16m", "runtime": "1s",
                                      "direct": False}]
    with qtbot.waitSignal(window.matrix.checked, timeout=10_000) as checked:
        window.matrix.validate()
    summary = checked.args[0]
    assert summary.errors == []
    assert summary.cases == 2
    assert "2 case(s)" in window.matrix.summary_label.text()
    # buffered on a file far below 2 x RAM: the page-cache warning is shown
    assert any("2 x RAM" in w for w in summary.warnings)

    # Run it for real
    samples_seen: list[str] = []
    window.wb.runs.event.connect(
        lambda ev: samples_seen.append(ev.series) if type(ev).__name__ == "Sample" else None)
    session_a, status = _run_once(qtbot, window)
    assert status == "finished", window.run.log.toPlainText()[-2000:]
    assert window.current_page() == "run"
    assert window.run.model.progress_seen > 0
    assert "app_write_bps" in samples_seen
    t, y = window.run.plots.series_data("app_wchar_bps")
    assert len(t) >= 1 and len(t) == len(y)
    qtbot.waitUntil(lambda: window.run.plots.redraws > 0, timeout=2000)
    table = window.run.table
    assert table.rowCount() == 2
    for row in range(2):
        assert table.item(row, STATUS).text() == "done"
        assert "MB/s" in table.item(row, RESULT).text()
    assert window.run.bars.overall.value() == 1000
    assert "$ " in window.run.log.toPlainText()

    # A second session to compare: the same plan, renamed
    window.matrix.name.setText("engine buffered again")
    window.matrix.name.textEdited.emit("engine buffered again")
    session_b, status = _run_once(qtbot, window)
    assert status == "finished"

    # Library: both sessions, filterable; open one
    window.show_page("library")
    lib_page = window.library
    ids = [r["id"] for r in lib_page.model.rows]
    assert session_a in ids and session_b in ids
    lib_page.filter.setText("again")
    assert lib_page.proxy.rowCount() == 1
    lib_page.filter.setText("")
    assert lib_page.select_session(session_a)
    assert lib_page.current["id"] == session_a
    assert lib_page.results_table.rowCount() >= 2
    assert "engine" in lib_page.texts["plan"].toPlainText()
    lib_page.notes.setText("first try")
    lib_page.tags.setText("baseline, ext4")
    lib_page.save_notes()
    row = next(r for r in lib_page.model.rows if r["id"] == session_a)
    assert row["tags"] == ["baseline", "ext4"]

    # Compare the two sessions against the first
    window.compare.compare_ids([session_a, session_b], baseline=session_a)
    assert window.current_page() == "compare"
    c = window.compare.comparison
    assert c is not None and len(c.rows) == 2 and c.baseline.startswith(f"{session_a} ")
    # the table against the baseline is written when its tab is shown
    assert window.compare.tabs.currentWidget() is not window.compare.table
    assert window.compare.table.rowCount() == 0
    window.compare.tabs.setCurrentWidget(window.compare.table)
    assert window.compare.table.rowCount() == 2
    assert any("write" in col for col in c.columns)
    base_cell = c.cells[(c.rows[0], next(col for col in c.columns if "engine write" in col))]
    assert base_cell.delta_pct == 0.0
    assert window.compare.charts, "grouped bar chart of the comparison"

    # Exports: PNG, SVG, CSV, Markdown, HTML
    out = tmp_path / "out"
    out.mkdir()
    png = Path(window.compare.export("png", str(out / "cmp.png")))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = Path(window.compare.export("svg", str(out / "cmp.svg")))
    root = ET.fromstring(svg.read_text())
    assert root.tag.endswith("svg")
    assert len(list(root.iter())) > 20
    cmp_csv = Path(window.compare.export("csv", str(out / "cmp.csv")))
    rows = list(csv.DictReader(cmp_csv.open()))
    assert {r["configuration"] for r in rows} == set(c.rows)
    assert all(float(r["mean"]) > 0 for r in rows if r["unit"] == "B/s")
    md = Path(window.compare.export("md", str(out / "cmp.md"))).read_text()
    assert md.startswith("| configuration |") and "(baseline)" in md
    html = Path(window.compare.export("html", str(out / "cmp.html"))).read_text()
    assert "<svg" in html and "Comparison" in html and "engine buffered again" in html

    session_html = Path(lib_page.export("html", str(out / "session.html"))).read_text()
    assert "<svg" in session_html and "engine buffered" in session_html
    assert "Throughput over time" in session_html  # the live samples are in the report
    with open(lib_page.export("csv", str(out / "s.csv"))) as fp:
        session_csv = list(csv.DictReader(fp))
    assert {r["metric"] for r in session_csv} >= {"write", "read"}
    md = Path(lib_page.export("md", str(out / "s.md"))).read_text()
    assert md.startswith(f"# Session {session_a}: engine buffered") and "| as is | engine |" in md
    lib_page.tabs.setCurrentWidget(lib_page.chart_host)
    assert lib_page.chart_pick.count() >= 2  # bars per tool, throughput over time
    svg = Path(lib_page.export("svg", str(out / "s.svg"))).read_text()
    assert ET.fromstring(svg).tag.endswith("svg")


def test_saved_plan_round_trips_and_reruns_from_library(qtbot, window, target_dir,
                                                        tmp_path):
    text = engine_plan(target_dir, name="rerun me", runtime="0.5s")
    path = tmp_path / "plan.toml"
    path.write_text(text)
    window.matrix.load_file(str(path))
    assert window.wb.draft.get("name") == "rerun me"
    saved = tmp_path / "saved.toml"
    window.wb.draft.save(saved)
    assert PlanDraft.load(saved).doc == PlanDraft.from_text(text).doc
    session, status = _run_once(qtbot, window)
    assert status == "finished"
    window.library.select_session(session)
    window.wb.set_draft(PlanDraft())
    window.library.rerun()
    assert window.current_page() == "matrix"
    assert window.wb.draft.get("name") == "rerun me"


def test_cancel_keeps_session_cancelled(qtbot, window, target_dir):
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, name="to cancel",
                                                        runtime="30s")))
    with qtbot.waitSignal(window.run.finished, timeout=60_000) as blocker:
        window.run.start()
        qtbot.waitUntil(lambda: window.run.model.progress_seen > 0, timeout=20_000)
        window.run.cancel()
    assert blocker.args[1] == "cancelled"
    assert "Cancelled" in window.run.state_label.text()
    assert list(target_dir.iterdir()) == []  # the case's files were removed
    lib = window.wb.open_library()
    try:
        assert lib.session(blocker.args[0])["status"] == "cancelled"
    finally:
        lib.close()


def test_plan_problems_block_start(qtbot, window, tmp_path):
    window.wb.set_draft(PlanDraft.from_text(engine_plan(tmp_path / "missing")))
    window.run.start()
    qtbot.waitUntil(lambda: "cannot run" in window.run.state_label.text(), timeout=10_000)
    assert "does not exist" in window.run.state_label.text()
    assert not window.wb.runs.running


def test_session_json_of_results_is_what_the_table_shows(qtbot, window, target_dir):
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, repeats=2,
                                                        runtime="0.3s")))
    session, status = _run_once(qtbot, window)
    assert status == "finished"
    lib = window.wb.open_library()
    try:
        results = lib.results(session)
    finally:
        lib.close()
    # the session's results as JSON (what an export or `disklab show --json` hands on), read
    # back: each case's row in the table shows the main figures those numbers make
    rows = json.loads(json.dumps(results, default=str))
    main = [r for r in rows if ":" not in r["metric"]]
    assert {r["metric"] for r in main} == {"write", "read"} and all(r["n"] == 2 for r in main)
    assert set(window.run.rows) == {r["case_id"] for r in main}
    for case_id, table_row in window.run.rows.items():
        # the cell: the case's headline figures, throughput first ('write ... | write:iops
        # ...'), each exactly as the stored numbers print
        shown = window.run.table.item(table_row, RESULT).text().split(" | ")
        mine = {r["metric"]: r for r in rows if r["case_id"] == case_id}
        assert ":" not in shown[0].split(" ", 1)[0]
        for part in shown:
            r = mine[part.split(" ", 1)[0]]
            figure = format_mean_std(r["mean"], r["stddev"], r["n"], r["unit"])
            assert "±" in figure  # two repeats: mean ± stddev
            assert part == f"{r['metric']} {figure}", (part, r)


def test_every_event_reaches_the_page_in_order_before_the_run_ends(qtbot, window, target_dir):
    # the worker queues events and the GUI takes them in batches: none may be lost, reordered
    # or arrive after `finished` (the page would then show a session that is still running)
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, repeats=2,
                                                        runtime="0.6s")))
    seen: list[str] = []
    window.wb.runs.event.connect(lambda ev: seen.append(type(ev).__name__))
    window.run.finished.connect(lambda *_a: seen.append("finished"))
    session, status = _run_once(qtbot, window)
    assert status == "finished"
    assert seen[0] == "SessionStarted" and seen[-2:] == ["SessionFinished", "finished"]
    assert seen.count("CaseStarted") == seen.count("CaseFinished") == 4  # 2 cases x 2 repeats
    assert window.run.model.events_seen == len(seen) - 1
    lib = window.wb.open_library()
    try:  # what the page was shown is what the library stored
        stored = lib.db.execute("SELECT count(*) FROM sample WHERE session_id = ?",
                                (session,)).fetchone()[0]
    finally:
        lib.close()
    assert stored == seen.count("Sample")


@pytest.mark.root
@pytest.mark.slow
def test_scratch_image_two_configs_run_and_compare(qtbot, window, tmp_path):
    """The configurations flow: a scratch image, two ext4 configurations, a real run, the
    comparison of the two configurations with the mount options that differ."""
    if os.geteuid() != 0:
        pytest.skip("attaching a scratch image needs root")
    image = tmp_path / "scratch.img"
    window.target.set_image(str(image), 1)
    assert window.wb.draft.target == {"image": {"path": str(image), "size": "1g"}}
    window.configs.add_config({"label": "ext4 ordered", "fs": "ext4",
                               "mount": ["data=ordered"]})
    window.configs.add_config()
    window.configs.set_field("label", "ext4 journal")
    window.configs.set_field("mount.data", "journal")
    assert [c["label"] for c in window.wb.draft.configs] == ["ext4 ordered", "ext4 journal"]
    window.wb.draft.set("name", "two journal modes")
    window.wb.draft.tests.append({"tool": "engine", "mode": ["write", "read"],
                                  "block_size": "1m", "size": "16m", "runtime": "0.5s"})
    window.wb.touch()
    session, _status = _run_once(qtbot, window, timeout=180_000)
    assert window.run.table.rowCount() == 4  # 2 configs x 2 modes
    configs = {window.run.table.item(r, 3).text() for r in range(4)}
    assert configs == {"ext4 ordered", "ext4 journal"}
    assert not image.exists()  # the scratch image is removed after the session
    # compare the two configurations of the one session, from the Library page
    window.show_page("library")
    assert window.library.select_session(session)
    # the commands run as root (mkfs, mount, teardown) are kept with the session and shown
    transcript = window.library.texts["transcript"].toPlainText()
    assert "# mke2fs -t ext4" in transcript and "# losetup --detach" in transcript
    window.library.compare_selected()
    assert window.current_page() == "compare"
    c = window.compare.comparison
    assert c.rows == (f"{session} two journal modes / ext4 ordered",
                      f"{session} two journal modes / ext4 journal")
    window.compare.tabs.setCurrentWidget(window.compare.table)
    assert c.baseline == c.rows[0] and window.compare.table.rowCount() == 2
    # the config diff lists the mount options as read back
    diff = dict(window.compare.diff)
    assert any("data=journal" in v for values in diff.values() for v in values.values())
    # the other configuration as the baseline
    window.compare.baseline.setCurrentIndex(1)
    window.compare.compare()
    assert window.compare.comparison.baseline == c.rows[1]
    html = Path(window.compare.export("html", str(tmp_path / "configs.html"))).read_text()
    assert "ext4 journal (baseline)" in html and "data=journal" in html


def test_sudo_password_is_asked_once_before_the_run_and_reaches_the_worker(qtbot, window,
                                                                           target_dir):
    """When sudo wants a password for the privileged helper (a user who is not root, on an
    image, a device or with drop_caches), the Run page asks for it before the run, in a dialog
    that leaves the event loop running; Cancel there starts nothing."""
    text = engine_plan(target_dir, name="with sudo")
    summary = check_plan(text, str(window.wb.library_path))
    assert summary.errors == [] and summary.needs_password is False  # root needs none
    summary.needs_password = True  # what the check says for a user whose sudo asks

    window.run.launcher.plan_checked(summary, None)
    dialog = window.run.launcher.password_dialog
    assert dialog is not None and dialog.isVisible()
    assert not window.wb.runs.running
    dialog.reject()
    assert "no password" in window.run.state_label.text()
    assert window.run.start_btn.isEnabled() and not window.wb.runs.running

    window.run.launcher.plan_checked(summary, None)
    dialog = window.run.launcher.password_dialog
    dialog.setTextValue("s3cret")
    with qtbot.waitSignal(window.run.finished, timeout=90_000) as blocker:
        dialog.accept()
        assert window.wb.runs.worker is not None
        assert window.wb.runs.worker.password == "s3cret"
    assert blocker.args[1] == "finished"
