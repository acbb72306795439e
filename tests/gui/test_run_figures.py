"""The Run table's figures are the library's: a several-target run, repeated, read against
`disklab show --json` (issue 29, point 1).

A real run of the built-in engine on two directories named as targets a and b, placed "a",
"b" and "a+b", two repeats: each case's cell must show, per target and for "all", the mean ±
stddev that `disklab show --json` gives for the stored session, in the one figure format; never
one mean pooled over the targets. A cancelled run's case shows what the tool measured, marked
partial."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pytestqt.exceptions import TimeoutError

from disklab.core.plan.draft import PlanDraft
from disklab.core.results.format import format_mean_std

PLAN = """\
name = "two targets, twice"
repeats = 2

[targets.a]
directory = "{a}"
[targets.b]
directory = "{b}"

[[test]]
tool = "engine"
mode = "write"
block_size = "256k"
size = "16m"
on = ["a", "b", "a+b"]
"""


def _run(qtbot, window, text: str) -> None:
    window.wb.set_draft(PlanDraft.from_text(text))
    window.run.start()
    try:
        qtbot.waitUntil(lambda: "cannot run" in window.run.state_label.text() or (
            window.run.session_id is not None and not window.wb.runs.running),
            timeout=120_000)
    except TimeoutError:
        raise AssertionError(window.run.state_label.text() + "\n"
                             + window.run.log.toPlainText()[-3000:]) from None
    assert "cannot run" not in window.run.state_label.text(), window.run.state_label.text()


def _show_json(library: Path, session: int) -> dict:
    out = subprocess.run([sys.executable, "-m", "disklab", "show", str(session), "--json",
                          "--library", str(library)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_the_run_table_says_what_disklab_show_says(qtbot, window, tmp_path: Path,
                                                    library_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    _run(qtbot, window, PLAN.format(a=a, b=b))
    page = window.run
    assert page.status == "finished", page.log.toPlainText()[-2000:]
    shown = _show_json(library_path, page.session_id)
    rows = [r for r in shown["results"] if r["metric"] == "write"]
    by_case: dict[str, list[dict]] = {}
    for r in rows:
        by_case.setdefault(r["case_id"], []).append(r)
    assert len(by_case) == 3
    table = page.table
    for case_id, case_rows in by_case.items():
        cell = table.item(page.rows[case_id], 2).text()
        for r in case_rows:
            figure = format_mean_std(r["mean"], r["stddev"], r["n"], r["unit"])
            assert figure in cell, (case_id, r["params"].get("target"), figure, cell)
    # the a+b case: a figure per target and their total, each its own, a and b before all
    both = next(c for c, rs in by_case.items() if len(rs) == 3)
    cell = table.item(page.rows[both], 2).text()
    assert cell.index("target=a") < cell.index("target=b") < cell.index("target=all"), cell
    means = {r["params"]["target"]: r["mean"] for r in by_case[both]}
    pooled = sum(means.values()) / 3
    assert format_mean_std(pooled, None, 1, "B/s") not in cell


def test_a_cancelled_case_shows_its_partial_figure(qtbot, window, tmp_path: Path) -> None:
    from disklab.core.vocab.events import CaseCancelled, CaseStarted

    target = tmp_path / "t"
    target.mkdir()
    events: list[object] = []
    window.wb.runs.event.connect(events.append)
    window.wb.set_draft(PlanDraft.from_text(
        f'name = "long"\n[target]\ndirectory = "{target}"\n[[test]]\ntool = "engine"\n'
        'mode = "write"\nblock_size = "64k"\nsize = "64m"\nruntime = "30s"\n'))
    window.run.start()
    qtbot.waitUntil(lambda: any(isinstance(e, CaseStarted) for e in events), timeout=60_000)
    qtbot.wait(4000)
    window.run.cancel()
    qtbot.waitUntil(lambda: not window.wb.runs.running, timeout=60_000)
    cancelled = [e for e in events if isinstance(e, CaseCancelled)]
    assert cancelled
    assert any(m.value is not None for m in cancelled[0].metrics)  # the engine reports
    cell = window.run.table.item(0, 2).text()
    assert "MB/s" in cell and "partial" in cell, cell


def test_the_overall_line_at_the_start_and_after_a_cancel_mid_matrix(qtbot, window,
                                                                      tmp_path: Path) -> None:
    # four time-based cases; cancelled in the third: two complete, one cancelled, of four
    from disklab.core.vocab.events import CaseStarted

    target = tmp_path / "t"
    target.mkdir()
    events: list[object] = []
    window.wb.runs.event.connect(events.append)
    window.wb.set_draft(PlanDraft.from_text(
        f'name = "matrix"\n[target]\ndirectory = "{target}"\n[[test]]\ntool = "engine"\n'
        'mode = "write"\nblock_size = ["64k", "128k", "256k", "512k"]\nsize = "8m"\n'
        'runtime = "2s"\n'))
    window.run.start()
    qtbot.waitUntil(lambda: window.wb.runs.running, timeout=60_000)
    assert "no run going" not in window.run.bars.overall.format()  # set-up: not "no run going"
    qtbot.waitUntil(lambda: sum(isinstance(e, CaseStarted) for e in events) == 3,
                    timeout=90_000)
    qtbot.wait(700)
    window.run.cancel()
    qtbot.waitUntil(lambda: not window.wb.runs.running and window.run.session_id is not None,
                    timeout=60_000)
    text = window.run.bars.overall.format()
    assert "2 of 4 runs complete" in text and "1 cancelled" in text, text
    assert "ETA" not in text
