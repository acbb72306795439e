"""Page-cache limits: a case whose test has one runs every step in a memory cgroup of its own,
so that its buffered figures are the device's and not the RAM's.

The group is made here (DiskLab as root, or in a delegated subtree), or by the privileged helper
when the tools run there; recorded on disk while it exists (core.fs.apply.CgroupRecord) and
removed after the case. A plan without a limit has no PageCacheLimits: it looks for no memory
controller and makes no group. From outside an OOM kill in the group is a plain signal 9; the
group's own counter tells it apart, and `oom_words` says what to change.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator
from dataclasses import replace
from typing import Any

from disklab.core.fs.apply import CgroupRecord
from disklab.core.fs.options import journalled_data_seconds
from disklab.core.helper_client.protocol import CgroupCreate
from disklab.core.run.helper import SessionHelper
from disklab.core.run.planning import Planned
from disklab.core.system.cgroups import (
    MemoryController,
    create_group,
    find_memory_controller,
    group_name,
    oom_kills,
    remove_group,
)
from disklab.core.vocab.errors import DisklabError
from disklab.core.vocab.events import CaseFailed, Event, LogLine
from disklab.core.vocab.model import Case, Plan
from disklab.core.vocab.units import format_size


def limits(plan: Plan) -> dict[str, int]:
    """The page-cache limit of each [[test]] table that has one ("test[N]" -> bytes)."""
    return {f"test[{s.index + 1}]": limit for s in plan.tests
            if (limit := plan.page_cache_limit_of(s.index)) is not None}


class PageCacheLimits:
    """The memory cgroups of one session's limited cases, by the case's tag. `via_helper`:
    the helper makes and removes them (the tools run there)."""

    def __init__(self, plan: Plan, helper: SessionHelper, via_helper: bool,
                 state_dir: str) -> None:
        self.plan = plan
        self.helper = helper
        self.via_helper = via_helper
        self.tests = limits(plan)
        self.controller: MemoryController | None = find_memory_controller()
        self.record = CgroupRecord(state_dir)
        self.groups: dict[str, tuple[str, dict[str, Any]]] = {}  # tag -> (path, record step)

    @classmethod
    def of(cls, plan: Plan, helper: SessionHelper, via_helper: bool,
           state_dir: str) -> PageCacheLimits | None:
        """The session's limits, or None when no test has one."""
        return cls(plan, helper, via_helper, state_dir) if limits(plan) else None

    def to_json(self) -> dict[str, Any]:
        """The session's record of its page-cache limits: the plan's, each test's, the memory
        controller that held them and who made the groups."""
        return {"plan": self.plan.page_cache_limit, "tests": self.tests,
                "controller": self.controller.to_json() if self.controller else None,
                "made_by": "privileged helper" if self.via_helper else "disklab"}

    def group_of(self, run: Planned) -> str | None:
        """The directory of the case's group while it exists."""
        made = self.groups.get(run.target.tag)
        return made[0] if made is not None else None

    def limit(self, run: Planned) -> Generator[Event, None, str | None]:
        """Make the case's memory cgroup when its test has a page-cache limit; returns why it
        could not, or None."""
        limit = self.plan.page_cache_limit_of(run.case.test_index)
        if limit is None:
            return None
        tag = run.target.tag
        try:
            made = self._make(tag, limit)
        except DisklabError as e:
            yield from self.helper.log()
            return f"page_cache_limit: {e}"
        if isinstance(made, str):
            return made
        self.groups[tag] = made
        yield LogLine(case_id=run.case.id, stream="disklab", repeat=run.repeat, t=time.time(),
                      text=f"page cache limited to {format_size(limit)}: every step runs in "
                           f"the memory cgroup {made[0]}")
        return None

    def _make(self, tag: str, limit: int) -> tuple[str, dict[str, Any]] | str:
        """(path, record step) of a new group, or why there is none; DisklabError when making
        it failed."""
        if self.via_helper:
            path = self.helper.get().call(CgroupCreate(tag, limit)).path
            return path, self.record.add(path)
        if self.controller is None:
            return "page_cache_limit: no memory cgroup controller is available"
        name = group_name(tag)
        step = self.record.add(self.controller.base / name)
        try:
            return str(create_group(self.controller, name, limit)), step
        except BaseException:
            self.record.done(step)
            raise

    def remove(self, run: Planned) -> list[str]:
        """Remove the case's memory cgroup (the helper's tool_cleanup already removed its
        own); what is left. Never raises, never yields."""
        made = self.groups.pop(run.target.tag, None)
        if made is None:
            return []
        path, step = made
        if not self.via_helper:
            try:
                remove_group(path)
            except DisklabError:
                return [path]
        elif os.path.isdir(path):
            return []  # tool_cleanup named it; the record stays for the next start to remove it
        self.record.done(step)
        return []

    def explain_oom(self, run: Planned, events: Generator[Event, None, str]
                    ) -> Generator[Event, None, str]:
        """The case's events, with a SIGKILL that the group's OOM killer dealt said as such:
        the limit was reached, and what to change (the counter is read before the group
        goes)."""
        group = self.group_of(run)
        try:
            while True:
                try:
                    event = next(events)
                except StopIteration as stop:
                    ended: str = stop.value
                    return ended
                if (group is not None and isinstance(event, CaseFailed) and event.signal == 9
                        and oom_kills(group) > 0):
                    event = replace(event, error=oom_words(self.plan, run.case))
                yield event
        finally:
            events.close()


def oom_words(plan: Plan, case: Case) -> str:
    """What the OOM kill means for this case: the limit, and data=journal's part in it."""
    limit = plan.page_cache_limit_of(case.test_index)
    words = (f"{case.tool} was killed by the kernel's OOM killer: the memory cgroup's limit of "
             f"{format_size(limit or 0)} (page_cache_limit) was reached")
    config = next((c for c in plan.configs if c.label == case.config), None)
    held = journalled_data_seconds(config.fs, config.mount) if config else None
    if held is not None:
        words += (f"; data=journal with commit={held} keeps up to {held} s of written data in "
                  "memory until the journal commits (or fills): raise page_cache_limit, "
                  "lower commit or make the journal smaller")
    return words

