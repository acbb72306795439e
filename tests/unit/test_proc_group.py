"""proc.ToolGroup: the streams of one case on several targets (one dd per target) start
together behind a barrier, read like one tool, and leave no process behind."""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import pytest

from disklab.core.proc.group import ToolGroup
from disklab.core.vocab.errors import ToolError


def test_members_start_together_after_the_release(tmp_path: Path) -> None:
    timing = tmp_path / "timing.json"
    # each member forks, then waits before exec; the first one sleeps before it prints, so
    # that a group started one by one would show it
    members = [("a", ["date", "+%s.%N"]), ("b", ["date", "+%s.%N"]),
               ("c", ["date", "+%s.%N"]), ("a", ["sleep", "0.2"])]
    with ToolGroup(members, timing_file=str(timing)) as group:
        group.start()
        lines = []
        while not group.poll():
            lines += group.read(0.5)
        assert group.wait() == 0
    printed = {line.text.split(" ")[0]: float(line.text.split(" ")[1]) for line in lines}
    assert set(printed) == {"[0:a]", "[1:b]", "[2:c]"}
    assert group.released is not None
    assert all(t >= group.released - 0.001 for t in printed.values())
    assert max(printed.values()) - min(printed.values()) < 0.1, printed
    doc = json.loads(timing.read_text())
    assert [s["target"] for s in doc["streams"]] == ["a", "b", "c", "a"]
    ends = [s["ended"] for s in doc["streams"]]
    assert ends[3] - doc["released"] >= 0.2  # the sleeper ended last, by its own time
    assert all(e >= doc["released"] for e in ends)


def test_a_member_that_cannot_start_stops_the_group() -> None:
    """When start() raises, the member that did start is already ended and reaped: not
    running, not a zombie, nothing to wait for."""
    group = ToolGroup([("a", ["sleep", "30"]), ("b", ["/nonexistent/tool"])])
    with pytest.raises(ToolError, match="nonexistent"):
        group.start()
    started = [pid for pid in group.pids if pid]
    assert len(started) == 1  # the sleep, forked and at the barrier before b failed
    assert not [pid for pid in started if psutil.pid_exists(pid)]
    # this process's own children (other tests, run at the same time, start their own)
    assert not [c.pid for c in psutil.Process().children(recursive=True) if c.pid in started]


def test_terminate_stops_every_member() -> None:
    with ToolGroup([("a", ["sleep", "30"]), ("b", ["sleep", "30"])]) as group:
        group.start()
        pids = group.pids
        group.terminate(1.0)
        assert group.wait(5.0) is not None
        assert group.signal is not None
    assert not [p for p in pids if psutil.pid_exists(p)
                and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
