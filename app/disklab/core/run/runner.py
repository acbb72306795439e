"""run_plan(): the whole run as a generator of events (DESIGN.md rule 4).

The CLI iterates it directly; the GUI iterates it in one worker thread. Everything a run does is in
an event, and the library stores every event, so what the user saw is what is kept.

The plan is expanded once, into the session's `schedule`, before the first event; every
later step reads it. The session's rooms: `session` (set-up, host record, first event),
`targets` (the target's shape: directories, a raw device, configurations on images, devices
and partitions), `sections` (each section's runs in order, and the tally), `case` (one case x
repeat), `cgroup_limit` (page-cache limits), `records` (what a kill would leave behind) and
`helper` (the privileged helper, started on first use). Nothing is left behind whatever
happens, including a failure, a cancel, or the caller closing the generator.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator

from disklab.core.fs.apply import session_state
from disklab.core.hosts.ssh import Ask
from disklab.core.run.case import CaseKit
from disklab.core.run.cgroup_limit import PageCacheLimits
from disklab.core.run.helper import SessionHelper
from disklab.core.run.progress import OverallProgress
from disklab.core.run.records import Records
from disklab.core.run.resume import Resumption
from disklab.core.run.schedule import Schedule
from disklab.core.run.sections import Sections, Tally
from disklab.core.run.session import (
    host_record,
    session_start,
    start_servers,
    tool_versions,
    version_changes,
)
from disklab.core.run.targets import run_target
from disklab.core.run.watch import CancelFlag
from disklab.core.vocab.events import Event, Notice, SessionFinished
from disklab.core.vocab.model import Plan

__all__ = ["SAMPLE_INTERVAL", "run_plan", "tool_versions"]

SAMPLE_INTERVAL = 0.5  # seconds between monitor samples: DESIGN.md asks for 250-1000 ms


class _Never:
    def is_set(self) -> bool:
        return False


def run_plan(
    plan: Plan,
    *,
    warnings: tuple[str, ...] = (),
    cancel: CancelFlag | None = None,
    python: str = sys.executable,
    sample_interval: float = SAMPLE_INTERVAL,
    state_dir: str | None = None,
    library_path: str | None = None,
    password: Callable[[], str] | None = None,
    privileged_tools: bool | None = None,
    resume: Resumption | None = None,
    ask: Ask | None = None,
) -> Iterator[Event]:
    """Run every case of `plan` `repeats` times, yielding events as they happen.

    `resume`: take up that incomplete session instead (its plan is `plan`): SessionResumed
    comes instead of SessionStarted, and only its runs without a complete result run.

    A directory target runs as it is. An image or format target gets each configuration made,
    mounted, read back and undone in turn (disklab.core.fs.apply); `state_dir` keeps the record of
    what is set up, so that the next start can clean up after a kill. `password` is asked (once)
    when sudo needs one for the privileged helper. `privileged_tools`: the tools of an image,
    format or device target run through the helper (default: when DiskLab is not root).
    `ask`: how ssh's questions (host key, password, passphrase) reach a person, when a plan's
    hosts are started over SSH; their servers are stopped when the run ends, however it ends.
    """
    cancel = cancel or _Never()
    state_dir = state_dir or tempfile.gettempdir()
    via_helper = plan.target.needs_root and (os.geteuid() != 0 if privileged_tools is None
                                             else privileged_tools)
    only = frozenset(resume.runs) if resume is not None else None
    schedule = Schedule.of(plan, python, as_root=via_helper, only=only)
    versions = tool_versions(schedule.tools)
    host = host_record(plan, versions)
    record = session_state(state_dir)
    helper = SessionHelper(password, record)
    limits = PageCacheLimits.of(plan, helper, via_helper, state_dir)
    records = Records(record, via_helper)
    servers, host_problems = start_servers(plan, ask, cancel.is_set, record,
                                           versions.get("fio"))
    try:  # from here the servers are stopped and the helper closed however the session ends
        if servers is not None:
            host["hosts"] = dict(servers.facts())
        if limits is not None:  # which figures were taken under a page-cache limit
            host["page_cache_limit"] = limits.to_json()
        yield session_start(plan, schedule.cases, host, warnings, resume)
        if resume is not None:
            warnings = (*warnings, *version_changes(resume, versions))
        for w in (*warnings, *host_problems):
            yield Notice(level="warning", message=w, t=time.time())
        work = schedule.work
        tally = Tally(total_bytes=work.total_bytes, run_count=work.runs,
                      overall=OverallProgress(work, time.monotonic()))
        kit = CaseKit(plan, helper, via_helper, library_path, records, limits, servers, cancel,
                      sample_interval)
        if via_helper:
            yield Notice(level="info", t=time.time(), message=(
                "the tools run as root through the privileged helper: the target is root's"))
        yield from run_target(Sections(schedule, kit, tally, versions), state_dir)
        yield from helper.log()  # the teardown's commands
    finally:
        if servers is not None:
            servers.close()
        workdir = helper.close()
        if workdir:
            records.forget_dir(workdir)
    yield _finished(tally, cancel)


def _finished(tally: Tally, cancel: CancelFlag) -> SessionFinished:
    """The session's last event: cancelled whenever the cancel came (even during the last
    teardown), failed when a run failed, else finished."""
    if cancel.is_set():
        tally.status = "cancelled"
    elif tally.status == "finished" and tally.failed:
        tally.status = "failed"
    return SessionFinished(status=tally.status, failed_cases=tally.failed, t=time.time())
