"""One click to a first result: KDiskMark's standard set from the Target page (issue 29).

- The button on the Target page, with a directory chosen, runs the standard set on that
  directory as a plan of its own: the plan being edited (its tests, its unsaved changes) stays
  the draft for the next Start. The fio command lines it runs carry KDiskMark's own
  settings (src/benchmark.cpp, src/appsettings.h of JonMagon/KDiskMark: libaio, --direct=1,
  --end_fsync=1, 1 GiB file, 1 MiB / 4 KiB blocks, queue depths 8, 1, 32, 1, one thread, 5
  loops averaged).
- The same set, made small (16 MiB, 1 s a run), runs for real: the Run page shows eight tiles,
  each the figure of the stored session (`disklab show --json`) in MB/s (10^6 bytes a second,
  the units choice's default) with its IOPS, the same figure and unit as the Run table's row of
  the case (they said 1662 MB/s and 1623 MiB/s), and the session is in the Library like any
  other.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pytestqt.exceptions import TimeoutError

from disklab.core import proc
from disklab.core.plan.draft import PlanDraft
from disklab.core.results.format import number
from disklab.core.standard_set import NAME, standard_plan
from disklab.core.vocab.events import CaseStarted
from disklab.gui.case_table import RESULT

pytestmark = [pytest.mark.slow]

# KDiskMark's published set: (rw, bs in bytes, iodepth, numjobs)
KDISKMARK = {("read", 1 << 20, 8, 1), ("write", 1 << 20, 8, 1), ("read", 1 << 20, 1, 1),
             ("write", 1 << 20, 1, 1), ("randread", 4096, 32, 1), ("randwrite", 4096, 32, 1),
             ("randread", 4096, 1, 1), ("randwrite", 4096, 1, 1)}


def _option(argv: list[str] | tuple[str, ...], name: str) -> str | None:
    for a in argv:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return None


@pytest.fixture
def fio() -> None:
    if proc.which("fio") is None:
        pytest.skip("fio is not installed (the engine runs the set then)")


def test_the_button_runs_kdiskmarks_settings(qtbot, window, tmp_path: Path, fio) -> None:
    target = tmp_path / "t"
    target.mkdir()
    window.show_page("target")
    window.target.set_directory(str(target))
    # the plan being edited: a test of its own, not saved
    window.wb.draft.doc["test"] = [{"tool": "dd", "mode": ["write"], "block_size": ["1m"]}]
    window.wb.touch()
    edited = window.wb.draft.to_text()
    launches: list[object] = []
    window.run.launcher.go.connect(launches.append)
    window.target.standard_button.click()
    assert window.current_page() == "run"
    qtbot.waitUntil(lambda: bool(launches) or "cannot run" in window.run.state_label.text(),
                    timeout=60_000)
    assert launches, window.run.state_label.text()
    ran = launches[0].plan  # type: ignore[attr-defined]
    assert ran.name == NAME and ran.repeats == 5
    assert window.wb.draft.to_text() == edited and window.wb.draft.modified  # still the draft
    # what fio will run, as `disklab plan show` prints it: every case's command line
    plan = tmp_path / "standard.toml"
    plan.write_text(PlanDraft(standard_plan({"directory": str(target)})).to_text())
    shown = subprocess.run([sys.executable, "-m", "disklab", "plan", "show", str(plan)],
                           capture_output=True, text=True, check=True).stdout
    runs = [line.split()[1:] for line in shown.splitlines() if line.strip().startswith("run:")]
    assert len(runs) == 8
    seen = set()
    for argv in runs:
        assert _option(argv, "ioengine") == "libaio" and _option(argv, "direct") == "1"
        assert _option(argv, "end_fsync") == "1"
        assert _option(argv, "size") == str(1 << 30)
        seen.add((_option(argv, "rw"), int(_option(argv, "bs") or 0),
                  int(_option(argv, "iodepth") or 0), int(_option(argv, "numjobs") or 0)))
    assert seen == KDISKMARK
    # it started: stop it (a full set lasts minutes)
    qtbot.waitUntil(lambda: window.wb.runs.running or "cannot run" in
                    window.run.state_label.text(), timeout=60_000)
    assert window.wb.runs.running, window.run.state_label.text()
    window.run.cancel()
    qtbot.waitUntil(lambda: not window.wb.runs.running, timeout=60_000)


def test_eight_tiles_say_what_the_session_stored(qtbot, window, tmp_path: Path,
                                                 library_path: Path, fio) -> None:
    target = tmp_path / "t"
    target.mkdir()
    window.target.set_directory(str(target))
    events: list[object] = []
    window.wb.runs.event.connect(events.append)
    window.target.run_standard_set(size="16m", runtime="1s", repeats=1)
    page = window.run
    try:
        qtbot.waitUntil(lambda: "cannot run" in page.state_label.text() or (
            page.session_id is not None and not window.wb.runs.running), timeout=240_000)
    except TimeoutError:
        raise AssertionError(page.state_label.text() + page.log.toPlainText()[-2000:]) from None
    assert page.status == "finished", page.log.toPlainText()[-2000:]
    assert page.tiles.isVisible()
    # the command lines that ran: KDiskMark's blocks, depths and threads
    ran = {(_option(e.argv, "rw"), int(_option(e.argv, "bs") or 0),
            int(_option(e.argv, "iodepth") or 0), int(_option(e.argv, "numjobs") or 0))
           for e in events if isinstance(e, CaseStarted)}
    assert ran == KDISKMARK
    out = subprocess.run([sys.executable, "-m", "disklab", "show", str(page.session_id),
                          "--json", "--library", str(library_path)],
                         capture_output=True, text=True, check=True).stdout
    rows = json.loads(out)["results"]
    tiles = page.tiles.shown()
    assert len(tiles) == 8 and "–" not in tiles.values(), tiles
    results = [page.table.item(i, RESULT).text() for i in range(page.table.rowCount())]
    for r in rows:
        p = r["params"]
        if r["metric"] not in ("read", "write"):
            continue
        kind = "SEQ1M" if p["bs"] == "1m" or p["bs"] == 1 << 20 else "RND4K"
        label = f"{kind} Q{p['iodepth']}T{p['numjobs']}"
        assert tiles[(label, r["metric"])] == number(r["mean"] / 1e6), (label, r)
        detail = page.tiles.labels[(label, r["metric"])][1].text()
        assert detail.startswith("MB/s") and "IOPS" in detail
        # the Run table's row of the case: the same figure, the same unit
        assert any(f"{r['metric']} {tiles[(label, r['metric'])]} MB/s" in c
                   for c in results), (label, r["metric"], tiles, results)
    assert re.search(r"SEQ1M Q8T1", " ".join(k for k, _d in tiles))
    shots = os.environ.get("DISKLAB_SCREENSHOTS")  # `make screenshots`: the tiles, looked at
    if shots:
        window.resize(1280, 820)
        qtbot.wait(100)
        assert window.grab().save(str(Path(shots) / "run-standard-set.png"))
    window.show_page("library")
    window.library.refresh()
    assert window.library.select_session(page.session_id)
