"""The Library page's Resume button: a session cancelled in the window is resumed by a click,
through the real run worker, in the same session, and ends finished with every repeat."""

from __future__ import annotations

from PySide6.QtCore import Qt

from disklab.core.plan.draft import PlanDraft
from disklab.gui.case_table import STATUS
from tests.helpers import engine_plan


def test_resume_button_resumes_a_cancelled_session_through_the_worker(qtbot, window,
                                                                      target_dir):
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, name="resume me",
                                                        repeats=2, runtime="0.5s")))
    with qtbot.waitSignal(window.run.finished, timeout=60_000) as cancelled:
        window.run.start()
        qtbot.waitSignal(window.run.case_done, timeout=30_000).wait()
        window.run.cancel()
    assert cancelled.args[1] == "cancelled"
    sid = cancelled.args[0]

    window.show_page("library")
    window.library.refresh()
    assert window.library.select_session(sid)
    button = window.library.buttons["resume"]
    assert button.isEnabled()
    with qtbot.waitSignal(window.run.finished, timeout=90_000) as resumed:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    window.run.flush()
    assert resumed.args == [sid, "finished"], window.run.log.toPlainText()[-2000:]
    assert window.current_page() == "run"
    assert "resumed (" in window.run.log.toPlainText()
    table = window.run.table
    assert {table.item(row, STATUS).text() for row in range(table.rowCount())} <= {
        "done", "done (kept)"}

    lib = window.wb.open_library()
    try:
        assert [s["id"] for s in lib.list_sessions()] == [sid]  # no new session
        assert lib.session(sid)["status"] == "finished"
        main = [r for r in lib.results(sid) if ":" not in r["metric"]]
        assert len(main) == 2 and {r["n"] for r in main} == {2}
        (resume,) = lib.resumes(sid)
        assert resume["previous_status"] == "cancelled" and resume["runs"] >= 1
    finally:
        lib.close()

    window.library.refresh()
    assert window.library.select_session(sid)
    assert "resumed" in window.library.heading.text()
    assert not button.isEnabled()  # a finished session has nothing to resume


def test_resume_refused_says_why_on_the_run_page(qtbot, window, target_dir, tmp_path):
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, name="gone",
                                                        repeats=2, runtime="0.5s")))
    with qtbot.waitSignal(window.run.finished, timeout=60_000) as cancelled:
        window.run.start()
        qtbot.waitSignal(window.run.case_done, timeout=30_000).wait()
        window.run.cancel()
    sid = cancelled.args[0]
    target_dir.rmdir()
    window.library.refresh()
    assert window.library.select_session(sid)
    qtbot.mouseClick(window.library.buttons["resume"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Cannot resume" in window.run.state_label.text(), timeout=10_000)
    assert "is gone" in window.run.state_label.text()
    assert not window.wb.runs.running and window.run.start_btn.isEnabled()
