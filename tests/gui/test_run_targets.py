"""The Run page during a run on several targets, and a failed case's reason in its log.

Several targets: a real run of the built-in engine on two scratch ext4 filesystems (loop
devices) as targets a and b, placed "a" then "a+b": the live device plot gets a curve per
target and their total, the application plot the tool's rate per target, and the case's single
device curve steps aside (it was one target's disk). A failed case: a host that cannot be
reached (a real fio server for the other host), whose case fails with no output at all: its
reason must still be in the page's log."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from pytestqt.exceptions import TimeoutError

from disklab.core import proc
from disklab.core.plan.draft import PlanDraft
from disklab.core.plan.parse import parse_plan
from disklab.core.vocab.events import CaseFailed, CaseStarted, Progress, Sample
from tests.helpers import Loops, loopback
from tests.integration.test_hosts import PORT, fio_processes, start_server

PLACED = """\
name = "two luns"
repeats = 1

[targets.a]
directory = "{a}"
[targets.b]
directory = "{b}"

[[test]]
tool = "engine"
mode = "write"
block_size = "256k"
size = "24m"
runtime = "3s"
direct = true
on = ["a", "a+b"]
"""

UNREACHABLE = """\
name = "a host gone"
stop_on_failure = false

[target]
directory = "{directory}"

[hosts.h1]
address = "{h1_address}"
port = {port}
start = "running"
directory = "{h1}"

[hosts.gone]
address = "{gone_address}"
start = "running"

[[test]]
tool = "fio"
rw = "write"
bs = "64k"
size = "4m"
hosts = [["h1"], ["h1", "gone"]]
"""


@pytest.fixture
def loops(tmp_path: Path) -> Iterator[Loops]:
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mkfs, mount)")
    made = Loops(tmp_path)
    try:
        yield made
    finally:
        made.cleanup()


def _run(qtbot, window, text: str, timeout_ms: int = 90_000) -> list[object]:
    events: list[object] = []
    window.wb.runs.event.connect(events.append)
    window.wb.set_draft(PlanDraft.from_text(text))
    window.run.start()
    try:
        qtbot.waitUntil(lambda: "cannot run" in window.run.state_label.text() or (
            any(type(e).__name__ == "SessionFinished" for e in events)
            and not window.wb.runs.running), timeout=timeout_ms)
    except TimeoutError:
        raise AssertionError(window.run.state_label.text() + "\n"
                             + window.run.log.toPlainText()[-3000:]) from None
    assert "cannot run" not in window.run.state_label.text(), window.run.state_label.text()
    window.run.flush()  # what arrived since the page's last tick
    return events


def test_a_placed_run_draws_a_curve_per_target_and_their_total(qtbot, window, loops: Loops,
                                                               ) -> None:
    a = loops.mount(loops.device("a", "96M"), "lun-a")
    b = loops.mount(loops.device("b", "96M"), "lun-b")
    events = _run(qtbot, window, PLACED.format(a=a, b=b))
    assert window.run.status == "finished", window.run.log.toPlainText()[-2000:]
    plots = window.run.plots
    plots.redraw()
    per_target = {e.series for e in events if isinstance(e, Sample) and ":" in e.series}
    assert {"device_write_bps:a", "device_write_bps:b"} <= per_target
    assert any(isinstance(e, Progress) and e.target == "b" for e in events)
    # a curve per target and the total, on the device plot; the tool's rate per target
    for series in ("device_write_bps:a", "device_write_bps:b", "device_write_bps:all",
                   "tool_bps:a", "tool_bps:b"):
        assert series in plots.curves, (series, sorted(plots.curves))
        t, y = plots.curves[series].data()
        assert t is not None and len(t) and np.nanmax(y) > 0, series
    legend = set(plots.legend("device"))
    assert {"write a", "write b", "write all"} <= legend
    assert "write" not in legend  # the case's single device curve stepped aside
    assert not plots.curves["device_write_bps"].isVisible()
    # the total is the targets' sum at each sampling time (MiB/s, as plotted)
    ta, ya = plots.series_data("device_write_bps:a")
    tb, yb = plots.series_data("device_write_bps:b")
    tt, yt = plots.series_data("device_write_bps:all")
    common = sorted(set(ta.tolist()) & set(tb.tolist()))
    assert common
    for x in common:
        want = ya[ta.tolist().index(x)] + yb[tb.tolist().index(x)]
        assert yt[tt.tolist().index(x)] == pytest.approx(want)
    # b wrote only in the a+b case: its curve is zero through "a" and rises after
    started = [e.t for e in events if isinstance(e, CaseStarted)]
    assert len(started) == 2
    second = started[1] - plots.t0
    assert np.max(yb[tb < second - 0.5], initial=0.0) < 1.0  # < 1 MiB/s: nothing of ours
    assert np.max(yb[tb > second]) > 1.0
    # a new run starts with the plain curves again
    plots.clear()
    assert not [s for s in plots.curves if ":" in s]
    assert plots.curves["device_write_bps"].isVisible()


def test_a_failed_case_says_why_in_the_log(qtbot, window, tmp_path: Path) -> None:
    # a host that cannot be reached: its case fails with no output of fio's at all (what a
    # GUI run showed as "failed" with nothing in the log)
    if proc.which("fio") is None:
        pytest.skip("fio is not installed")
    server = start_server("h1", loopback(41), tmp_path)
    try:
        events = _run(qtbot, window, UNREACHABLE.format(directory=tmp_path,
                                                        h1=server.directory, port=PORT,
                                                        h1_address=server.address,
                                                        gone_address=loopback(49)))
    finally:
        server.kill()
    failed = [e for e in events if isinstance(e, CaseFailed)]
    assert len(failed) == 1, window.run.log.toPlainText()[-2000:]
    assert "host gone" in failed[0].error
    assert not failed[0].transcript_tail.strip()  # nothing of fio's: only the reason
    log = window.run.log.toPlainText()
    assert "FAILED: " in log and failed[0].error in log
    assert window.run.status == "failed"
    assert fio_processes([loopback(41), loopback(49)]) == []


def test_a_plan_of_several_targets_keeps_them_through_the_pages(qtbot, window,
                                                                tmp_path: Path) -> None:
    # the Target and Configurations pages read "the target": they must not add a [target]
    (tmp_path / "b").mkdir()
    text = PLACED.format(a=tmp_path, b=tmp_path / "b")
    window.wb.set_draft(PlanDraft.from_text(text))
    for page in ("target", "configs", "matrix", "run"):
        window.show_page(page)
    saved = parse_plan(window.wb.draft.to_text())
    assert list(saved.plan.targets) == ["a", "b"]
    assert "[target]" not in window.wb.draft.to_text()
