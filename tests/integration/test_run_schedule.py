"""Issue 47, the run path: a session expands its plan once, into its Schedule, before the first
event (a three-configuration session on a scratch image through run_plan calls core.plan's
expand once, and runs what it ran before: every configuration made, read back and undone in
order, every case x repeat in the plan's order, each counted once)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from disklab.core.plan import matrix
from disklab.core.plan.parse import parse_plan
from disklab.core.run.runner import run_plan
from disklab.core.vocab.events import (
    CaseFailed,
    CaseFinished,
    CaseStarted,
    ConfigApplied,
    ConfigTornDown,
    SessionFinished,
    SessionStarted,
)
from tests.helpers import IS_ROOT

pytestmark = pytest.mark.slow

CONFIGS = ["ext4 default", "ext4 nodelalloc", "ext4 noatime"]

THREE_CONFIGS = """\
name = "three configs"
repeats = 2

[target]
image = {{ path = "{image}", size = "256m" }}

[[config]]
label = "ext4 default"
fs = "ext4"

[[config]]
label = "ext4 nodelalloc"
fs = "ext4"
mount = ["nodelalloc"]

[[config]]
label = "ext4 noatime"
fs = "ext4"
mount = ["noatime"]

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = "1m"
size = "8m"
direct = true
"""

DIRECTORY = """\
name = "engine on a directory"

[target]
directory = "{directory}"

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = "1m"
size = "16m"
direct = true
"""


def counting_expand(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Wrap core.plan.matrix.expand wherever a loaded module holds it; the calls, one entry
    each."""
    real = matrix.expand
    calls: list[int] = []

    def expand(plan: Any) -> Any:
        calls.append(1)
        return real(plan)

    for module in list(sys.modules.values()):
        if module is not None and getattr(module, "expand", None) is real:
            monkeypatch.setattr(module, "expand", expand)
    return calls


@pytest.mark.root
@pytest.mark.skipif(not IS_ROOT, reason="makes filesystems on a loop device: needs root")
def test_a_three_configuration_session_expands_its_plan_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    image = tmp_path / "scratch.img"
    plan = parse_plan(THREE_CONFIGS.format(image=image)).plan
    calls = counting_expand(monkeypatch)
    events = list(run_plan(plan, state_dir=str(tmp_path / "state")))
    assert len(calls) == 1

    # the session runs what it ran before: its shape, event by event
    (started,) = [e for e in events if isinstance(e, SessionStarted)]
    assert [(c.config, c.params["mode"]) for c in started.cases] == [
        (label, mode) for label in CONFIGS for mode in ("write", "read")]
    assert [e.config for e in events if isinstance(e, ConfigApplied)] == CONFIGS
    assert [e.config for e in events if isinstance(e, ConfigTornDown)] == CONFIGS
    runs = [e for e in events if isinstance(e, CaseStarted)]
    assert [(e.case.config, e.case.params["mode"], e.repeat) for e in runs] == [
        (label, mode, repeat) for label in CONFIGS for repeat in (1, 2)
        for mode in ("write", "read")]
    assert [e.run_index for e in runs] == list(range(12))
    assert {e.run_count for e in runs} == {12}
    assert {e.planned_bytes for e in runs} == {8 << 20}
    failed = [e for e in events if isinstance(e, CaseFailed)]
    assert failed == []
    finished = [(e.case_id, e.repeat) for e in events if isinstance(e, CaseFinished)]
    assert finished == [(e.case.id, e.repeat) for e in runs]
    # each run in its configuration's own mountpoint, its section's filesystem
    order = [e for e in events if isinstance(e, ConfigApplied | CaseStarted)]
    label = None
    for e in order:
        if isinstance(e, ConfigApplied):
            label = e.config
        else:
            assert e.case.config == label
    assert isinstance(events[-1], SessionFinished)
    assert (events[-1].status, events[-1].failed_cases) == ("finished", 0)
    assert not image.exists()
