"""One wording of a run's events (core.run.model.event_text, issue 29): `disklab run`'s terminal
lines, the Run page's log pane and the Library's events of the stored session say the same
words for the same events of one real run."""

from __future__ import annotations

import io
from pathlib import Path

from disklab.cli.output import TerminalView
from disklab.core.library import Library
from disklab.core.plan.draft import PlanDraft
from disklab.core.vocab.events import ConfigApplied, Notice
from tests.helpers import engine_plan


def test_terminal_log_pane_and_library_say_the_same_words(qtbot, window,
                                                          target_dir: Path,
                                                          library_path: Path) -> None:
    events = []
    window.wb.runs.event.connect(events.append)
    window.wb.set_draft(PlanDraft.from_text(engine_plan(target_dir, name="words",
                                                        runtime="0.2s")))
    with qtbot.waitSignal(window.run.finished, timeout=60_000):
        window.run.start()
    window.run.flush()
    out = io.StringIO()
    terminal = TerminalView(out)
    for ev in events:
        terminal.show(ev)
    printed = out.getvalue().splitlines()
    log = window.run.log.toPlainText().splitlines()
    started = [line for line in printed if line.startswith("[1/2]")]
    done = [line for line in printed if line.startswith("    done in")]
    assert started and len(done) == 2
    for line in (*started, *done, printed[0]):
        assert line in log, line  # the terminal's line, word for word, in the log pane
    applied = [ev for ev in events if isinstance(ev, ConfigApplied)]
    notices = [ev for ev in events if isinstance(ev, Notice)]
    said = [window.run.model.event_text.line(ev) for ev in (*applied, *notices)]
    assert said and all(line in log for line in said)
    with Library.open(library_path) as lib:
        (row,) = lib.list_sessions()
    window.library.refresh()
    window.library.select_session(row["id"])
    stored = window.library.texts["warnings"].toPlainText().splitlines()
    for line in said:
        assert line in stored, (line, stored)  # the Library's events, in the same words
