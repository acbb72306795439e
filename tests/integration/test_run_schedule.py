"""Issue 47, the run path: a session expands its plan once, into its Schedule, before the first
event (a three-configuration session on a scratch image through run_plan calls core.plan's
expand once, and runs what it ran before: every configuration made, read back and undone in
order, every case x repeat in the plan's order, each counted once); a directory target with the
engine starts nothing it does not use (no fio server, no privileged helper, no memory cgroup):
its only child processes are the engine's."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
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
    Event,
    Notice,
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


A_CONFIG_FAILS = """\
name = "one config fails"
repeats = 2

[target]
image = {{ path = "{image}", size = "128m" }}

[[config]]
label = "bad"
fs = "ext4"
mount = ["no_such_mount_option"]

[[config]]
label = "good"
fs = "ext4"

[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "8m"
direct = true
"""


@pytest.mark.root
@pytest.mark.skipif(not IS_ROOT, reason="makes filesystems on a loop device: needs root")
def test_a_configuration_that_cannot_be_made_fails_its_runs_from_the_schedule(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel refuses the mount: that configuration's runs (read from the schedule, not
    from the plan expanded again) are failed with the reason and counted, the next one runs."""
    image = tmp_path / "scratch.img"
    plan = parse_plan(A_CONFIG_FAILS.format(image=image)).plan
    calls = counting_expand(monkeypatch)
    events = list(run_plan(plan, state_dir=str(tmp_path / "state")))
    assert len(calls) == 1
    (bad,) = [e for e in events if isinstance(e, Notice) and e.level == "error"]
    assert bad.message.startswith("bad: could not apply")
    failed = [e for e in events if isinstance(e, CaseFailed)]
    assert [e.repeat for e in failed] == [1, 2]
    assert all(e.error in bad.message for e in failed)
    assert [e.config for e in events if isinstance(e, ConfigApplied)] == ["good"]
    runs = [e for e in events if isinstance(e, CaseStarted)]
    assert [(e.case.config, e.repeat, e.run_index, e.run_count) for e in runs] == [
        ("good", 1, 2, 4), ("good", 2, 3, 4)]
    assert len([e for e in events if isinstance(e, CaseFinished)]) == 2
    assert isinstance(events[-1], SessionFinished)
    assert (events[-1].status, events[-1].failed_cases) == ("failed", 2)
    assert not image.exists()

def cgroups_of_disklab() -> set[str]:
    """Every memory or unified cgroup directory DiskLab names (disklab-PID-...), at the depth
    a session makes them."""
    found: set[str] = set()
    for root, dirs, _files in os.walk("/sys/fs/cgroup"):
        if root.count(os.sep) > 6:
            dirs[:] = []
            continue
        found.update(os.path.join(root, d) for d in dirs if d.startswith("disklab-"))
    return found


class Children:
    """The test process's descendants, polled every few milliseconds while a run goes on: pid
    -> the command lines it was seen with (a child caught between fork and exec still has
    this process's own)."""

    def __init__(self) -> None:
        self.me = psutil.Process()
        self.before = {p.pid for p in self.me.children(recursive=True)}
        self.seen: dict[int, list[list[str]]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self.stop.wait(0.003):
            for p in self.me.children(recursive=True):
                if p.pid in self.before:
                    continue
                try:
                    line = p.cmdline()
                except psutil.Error:
                    continue
                lines = self.seen.setdefault(p.pid, [])
                if line and line not in lines:
                    lines.append(line)

    def __enter__(self) -> Children:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()

    def programs(self) -> dict[int, list[str]]:
        """Each child's last command line other than this process's own."""
        mine = self.me.cmdline()
        return {pid: next((line for line in reversed(lines) if line != mine), mine)
                for pid, lines in self.seen.items()}


def engine_events(directory: Path, state: Path) -> Iterator[Event]:
    plan = parse_plan(DIRECTORY.format(directory=directory)).plan
    yield from run_plan(plan, state_dir=str(state))


def test_a_directory_target_with_the_engine_starts_only_the_engine(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    groups_before = cgroups_of_disklab()
    groups_during: set[str] = set()
    with Children() as children:
        events = []
        for event in engine_events(target, tmp_path / "state"):
            events.append(event)
            if isinstance(event, CaseStarted):
                groups_during |= cgroups_of_disklab() - groups_before
    assert [e.status for e in events if isinstance(e, SessionFinished)] == ["finished"]
    programs = children.programs()
    # the write's run, the read's layout and the read's run: the engine's, and nothing else
    assert len(programs) >= 3, programs
    others = {pid: line for pid, line in programs.items()
              if line[1:3] != ["-m", "disklab.engine"]}
    assert others == {}
    assert groups_during == set() and cgroups_of_disklab() == groups_before
    assert not list((tmp_path / "state").glob("*cgroups*"))
    assert list(target.iterdir()) == []  # its files removed
