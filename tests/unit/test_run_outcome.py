"""A measured step's outcome is decided by runner.outcome() from the tool's output and what the
case watcher saw, and nothing else: so each way a case ends is checked here on real dd outputs,
without running a tool."""

from __future__ import annotations

from disklab.core import tools
from disklab.core.run.watch import Ending, Watched, outcome
from disklab.core.tools.base import ToolOutput
from disklab.core.vocab.events import CaseCancelled, CaseFailed, CaseFinished
from disklab.core.vocab.model import Case
from tests.helpers import fixture_text

DD = tools.get_adapter("dd")
CASE = Case(id="c1", index=0, config="ext4", tool="dd", test_index=0,
            params={"mode": "read", "block_size": 1 << 20, "count": 1024, "direct": True})
READ = fixture_text("dd/read_1m_iflag-direct_progress_ext4.stderr.txt")
ENOSPC = fixture_text("dd/error_enospc_write_1m_x5120_progress_ext4.stderr.txt")
ENDING = Ending(tail="last lines", signal=None, duration=3.5, t=1000.0)


def _output(text: str, status: int | None = 0) -> ToolOutput:
    return ToolOutput(stdout="", stderr=text, exit_status=status)


def test_a_tool_that_ends_well_gives_its_figures() -> None:
    ended = outcome(CASE, 2, DD, _output(READ), Watched(), ENDING)
    assert isinstance(ended, CaseFinished)
    assert (ended.case_id, ended.repeat, ended.duration, ended.t) == ("c1", 2, 3.5, 1000.0)
    assert [m.name for m in ended.metrics] == [m.name for m in DD.parse_result(
        _output(READ), CASE.params)]
    assert not any(m.note and "partial" in m.note for m in ended.metrics)


def test_a_cancelled_case_keeps_its_figures_as_partial() -> None:
    ended = outcome(CASE, 0, DD, _output(READ, -15), Watched(cancelled=True),
                    Ending("tail", 15, 1.0, 1.0))
    assert isinstance(ended, CaseCancelled)
    assert ended.signal == 15 and ended.transcript_tail == "tail"
    assert ended.metrics and all("partial" in (m.note or "") for m in ended.metrics)


def test_a_stuck_tool_fails_its_case_saying_so() -> None:
    ended = outcome(CASE, 0, DD, _output(READ, -15), Watched(stalled=True), ENDING)
    assert isinstance(ended, CaseFailed)
    assert "printed nothing and moved no data" in ended.error and "(stuck)" in ended.error


def test_a_killed_or_failing_tool_fails_its_case_with_the_reason() -> None:
    killed = outcome(CASE, 0, DD, _output(READ, -9), Watched(), Ending("", 9, 1.0, 1.0))
    assert isinstance(killed, CaseFailed) and killed.error == "dd was killed by signal 9"
    full = outcome(CASE, 0, DD, _output(ENOSPC, 1), Watched(), ENDING)
    assert isinstance(full, CaseFailed) and full.exit_status == 1
    assert full.error.startswith("dd exited with status 1")


def test_an_output_that_does_not_parse_fails_the_case_with_the_parsers_words() -> None:
    ended = outcome(CASE, 0, DD, _output("nothing dd would say\n"), Watched(), ENDING)
    assert isinstance(ended, CaseFailed)
    assert ended.error and ended.metrics == ()
