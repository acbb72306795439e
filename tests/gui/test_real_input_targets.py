"""The real window on its own X server, driven by real X key presses (xdotool): a
several-target run started with F5, whose Run table figures are read against
`disklab show --json` of the stored session, and a matrix cancelled mid-way with Ctrl+. ,
whose overall progress line must count what finished and what was cancelled (issue 29).

The window is `disklab.gui.app.open_window` (what `disklab gui` runs) in a child process under
Xvfb; the child loads each plan into the window's draft (as Open plan would) and, when a run
has ended, prints the Run table's cells and the overall line as the window shows them: the
checks read what is on screen, the keys are real X input to the real window."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from disklab.core.results.format import format_mean_std
from tests.gui.test_real_input import Desktop
from tests.gui.test_run_figures import PLAN as TWO_TARGETS

MATRIX = """\
name = "matrix"
[target]
directory = "{t}"
[[test]]
tool = "engine"
mode = "write"
block_size = ["64k", "128k", "256k", "512k"]
size = "8m"
runtime = "2s"
"""

WINDOW = """
import json, sys
from disklab.gui.app import open_window
from disklab.core.plan.draft import PlanDraft

app, window = open_window(sys.argv[1])
window.ask = lambda title, text: True
window.ask_save = lambda _doing: "discard"
plans = [open(p).read() for p in sys.argv[2:]]

def load():
    window.wb.set_draft(PlanDraft.from_text(plans.pop(0)))
    window.show_page("run")
    print(json.dumps({"ready": True}), flush=True)

def seen(ev):
    if type(ev).__name__ == "CaseStarted":
        print(json.dumps({"case": ev.run_index + 1}), flush=True)

def ended(session_id, status):
    page = window.run
    cells = {case_id: page.table.item(row, 2).text() for case_id, row in page.rows.items()}
    print(json.dumps({"session": session_id, "status": status, "cells": cells,
                      "overall": page.bars.overall.text()}), flush=True)
    if plans:
        load()

window.wb.runs.event.connect(seen)
window.run.finished.connect(ended)
load()
sys.exit(app.exec())
"""


class Lines:
    """The child's JSON lines, waited for one by one."""

    def __init__(self, proc: subprocess.Popen[str]):
        self.proc = proc

    def next(self, key: str, timeout: float = 120) -> dict:
        end = time.monotonic() + timeout
        assert self.proc.stdout is not None
        while time.monotonic() < end:
            ready, _, _ = select.select([self.proc.stdout], [], [], 1)
            if ready:
                line = self.proc.stdout.readline()
                assert line, "the window exited"
                if line.startswith("{"):
                    got = json.loads(line)
                    if key in got:
                        return got
        raise AssertionError(f"no {key!r} line in {timeout} s")


def _show_json(library: Path, session: int) -> dict:
    out = subprocess.run([sys.executable, "-m", "disklab", "show", str(session), "--json",
                          "--library", str(library)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_real_keys_run_several_targets_and_cancel_a_matrix(tmp_path: Path) -> None:
    for tool in ("Xvfb", "xdotool"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed: scripts/install-system-packages.sh installs it")
    a, b, t = tmp_path / "a", tmp_path / "b", tmp_path / "t"
    for d in (a, b, t):
        d.mkdir()
    plans = [tmp_path / "targets.toml", tmp_path / "matrix.toml"]
    plans[0].write_text(TWO_TARGETS.format(a=a, b=b))
    plans[1].write_text(MATRIX.format(t=t))
    library = tmp_path / "lib" / "library.sqlite3"
    desk = Desktop(tmp_path, tmp_path)
    child = subprocess.Popen([sys.executable, "-c", WINDOW, str(library), *map(str, plans)],
                             cwd=tmp_path, env={**desk.env, "PYTHONPATH": os.pathsep.join(
                                 [str(Path(__file__).resolve().parents[2] / "app"),
                                  desk.env["PYTHONPATH"]])},
                             stdout=subprocess.PIPE, stderr=desk.log.open("w"), text=True)
    desk.app = child  # type: ignore[assignment]
    lines = Lines(child)
    try:
        lines.next("ready", 60)
        win = desk.window(" — DiskLab$")
        desk.xdo("windowfocus", "--sync", win)
        time.sleep(0.5)
        desk.key("F5")  # Run > Start: a real key press
        first = lines.next("session", 180)
        assert first["status"] == "finished", first
        shown = _show_json(library, first["session"])
        rows = [r for r in shown["results"] if r["metric"] == "write"]
        assert {r["params"].get("target") for r in rows} >= {"a", "b", "all"}
        for r in rows:  # every figure the library has is in its case's cell, as written
            figure = format_mean_std(r["mean"], r["stddev"], r["n"], r["unit"])
            assert figure in first["cells"][r["case_id"]], (figure, first["cells"])

        lines.next("ready", 30)
        desk.xdo("windowfocus", "--sync", win)
        desk.key("F5")
        while lines.next("case", 120)["case"] < 3:
            pass
        time.sleep(0.7)
        desk.key("ctrl+period")  # Run > Cancel, mid-matrix: in the third of four runs
        second = lines.next("session", 120)
    finally:
        desk.close()
    assert second["status"] == "cancelled", second
    text = second["overall"]
    assert "2 of 4 runs complete" in text and "1 cancelled" in text, text
    assert "ETA" not in text
    assert "Traceback" not in desk.log.read_text(), desk.log.read_text()[-3000:]
