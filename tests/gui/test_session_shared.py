"""The command line and the window share core.run.summary: the same plan gets the same summary and
tool rows from `disklab plan validate` (a real subprocess) and the Test matrix page (offscreen),
and a run through `disklab run` and through the GUI's RunWorker leaves the same session in a
real library file."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt

from disklab.core.library import Library
from disklab.core.plan.draft import PlanDraft
from disklab.core.run.summary import check_plan, summary_text
from disklab.gui.state import Workbench

PLAN = """\
name = "{name}"
repeats = 2

[target]
directory = "{directory}"

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = ["1m", "256k"]
size = "8m"
direct = false

[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "8m"
direct = false
"""


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=300)


def test_plan_validate_and_the_matrix_page_say_the_same(qtbot, window, target_dir, tmp_path):
    text = PLAN.format(name="same verdict", directory=target_dir)
    plan = tmp_path / "plan.toml"
    plan.write_text(text)
    cli = disklab("plan", "validate", str(plan), "--library", str(window.wb.library_path))
    assert cli.returncode == 0, cli.stderr
    lines = cli.stdout.splitlines()

    page = window.matrix
    window.wb.set_draft(PlanDraft.from_text(text))
    with qtbot.waitSignal(page.checked, timeout=10_000) as checked:
        page.validate()
    summary = checked.args[0]
    assert summary.errors == [] and summary.cases == 5 and summary.runs == 10

    # the summary line, word for word
    assert lines[1] == page.summary_label.text() == summary_text(summary)
    assert "5 case(s) × 2 repeat(s) = 10 run(s)" in lines[1]
    # each tool of the plan, as the page's tool list names it
    shown = {page.tools.item(i).data(Qt.ItemDataRole.UserRole): page.tools.item(i).text()
             for i in range(page.tools.count())}
    cli_tools = [line.removeprefix("tool: ").split(" (sudo apt")[0]
                 for line in lines if line.startswith("tool: ")]
    assert cli_tools == [shown["engine"], shown["dd"]] == [r.label for r in summary.tools]
    # and the same warnings (the page checks its own TOML text: other line numbers)
    assert [_unlined(line.removeprefix("warning: ")) for line in lines
            if line.startswith("warning: ")] == [_unlined(w) for w in summary.warnings]
    assert summary.warnings


def _unlined(warning: str) -> str:
    return re.sub(r"^line \d+: ", "", warning)


def _session(library: Path, session_id: int) -> dict[str, object]:
    """What a run leaves in the library, without the figures that differ run to run."""
    with Library.open(library) as lib:
        s = lib.session(session_id)
        return {
            "name": s["name"], "status": s["status"], "repeats": s["repeats"],
            "cases": [(c["case_id"], c["tool"], c["params"]) for c in lib.cases(session_id)],
            "runs": sorted((r["case_id"], r["repeat"], r["status"], tuple(r["argv"]))
                           for r in lib.runs(session_id)),
            "results": sorted((r["case_id"], r["metric"], r["unit"], r["n"])
                              for r in lib.results(session_id)
                              if r["metric"] in ("write", "read")),
        }


def test_cli_run_and_gui_worker_record_the_same_session(qtbot, library_path, target_dir,
                                                        tmp_path):
    text = PLAN.format(name="recorded twice", directory=target_dir)
    plan = tmp_path / "plan.toml"
    plan.write_text(text)

    done = disklab("run", str(plan), "--library", str(library_path), "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["event"] == "SessionStarted" and events[-1]["status"] == "finished"

    wb = Workbench(library_path)
    summary = check_plan(text, str(library_path))
    assert summary.plan is not None
    seen = []
    wb.runs.event.connect(seen.append)
    with qtbot.waitSignal(wb.runs.finished, timeout=120_000) as finished:
        wb.runs.start(summary.plan, tuple(summary.warnings), library_path)
    gui_id = finished.args[0]
    assert type(seen[0]).__name__ == "SessionStarted"
    assert type(seen[-1]).__name__ == "SessionFinished" and seen[-1].status == "finished"

    with Library.open(library_path) as lib:
        ids = [s["id"] for s in lib.list_sessions()]
    assert len(ids) == 2 and gui_id in ids
    cli_id = next(i for i in ids if i != gui_id)
    from_cli, from_gui = _session(library_path, cli_id), _session(library_path, gui_id)
    assert from_cli == from_gui
    assert from_cli["status"] == "finished"
    assert len(from_cli["results"]) == 5  # type: ignore[arg-type]
    assert all(n == 2 for *_k, n in from_cli["results"])  # type: ignore[misc, union-attr]
