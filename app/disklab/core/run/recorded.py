"""Run a checked plan and store every event in the library as it comes (RecordedRun): the CLI
prints the events, the GUI worker hands them to the window. `RecordedRun.resuming` takes up an
incomplete session in place (core.run.resume checks that it may). Before the run, what an earlier,
killed session left (mounts, loop devices, servers' files) is cleaned up."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Self

from disklab.core.fs.apply import recover_leftovers
from disklab.core.hosts.leftovers import recover_remote_files
from disklab.core.hosts.servers import stale_probe_dirs
from disklab.core.hosts.ssh import Ask
from disklab.core.library import Library
from disklab.core.results.limits import store_session_limits
from disklab.core.run.resume import Resumption
from disklab.core.run.runner import run_plan
from disklab.core.run.watch import CancelFlag
from disklab.core.system.directories import state_dir
from disklab.core.vocab.errors import LibraryError
from disklab.core.vocab.events import Event, Notice, SessionFinished
from disklab.core.vocab.model import Plan


class RecordedRun:
    """Run a checked plan and keep it in the library: iterate for the events, each stored
    before it is handed on, so what a front end shows is what the library holds.

    The first events may be warnings that an earlier, killed session's leftovers (mounts, loop
    devices) were cleaned up; they come before SessionStarted and are not stored, because they
    belong to no session. Use it as a context manager (or call close()) so that a session that
    stops early is still marked as such in the library. `library` stays the caller's: open it
    on the thread that iterates (SQLite connections are not shared between threads).
    """

    def __init__(self, plan: Plan, library: Library, *, warnings: tuple[str, ...] = (),
                 cancel: CancelFlag | None = None,
                 password: Callable[[], str] | None = None,
                 resume: Resumption | None = None,
                 ask: Ask | None = None) -> None:
        self.plan = plan
        self.library = library
        self.warnings = warnings
        self.cancel = cancel
        self.password = password
        self.resume = resume
        self.ask = ask  # ssh's questions for hosts started over SSH (core.hosts.ssh)
        self.recorder = library.recorder()
        self.status: str | None = None  # SessionFinished's status once it came
        self._closed = False

    @classmethod
    def resuming(cls, resumption: Resumption, library: Library, *,
                 cancel: CancelFlag | None = None,
                 password: Callable[[], str] | None = None,
                 ask: Ask | None = None) -> RecordedRun:
        """Resume the session core.run.resume.prepare_resume checked: the same session, its plan,
        only the case x repeat pairs without a complete result; the first event is
        SessionResumed, and the library records when and how many runs."""
        return cls(resumption.plan, library, warnings=resumption.warnings, cancel=cancel,
                   password=password, resume=resumption, ask=ask)

    @property
    def session_id(self) -> int | None:
        """The library's id of the session, from its SessionStarted on."""
        return self.recorder.session_id

    def __iter__(self) -> Iterator[Event]:
        state = str(state_dir())
        for line in [*recover_remote_files(state),
                     *recover_leftovers(state, library_path=str(self.library.path)),
                     *stale_probe_dirs()]:
            yield Notice(level="warning", t=time.time(),
                         message=f"cleaned up after an earlier run: {line}")
        for event in run_plan(self.plan, warnings=self.warnings, cancel=self.cancel,
                              state_dir=state, library_path=str(self.library.path),
                              password=self.password, resume=self.resume, ask=self.ask):
            self.recorder.handle(event)
            if isinstance(event, SessionFinished):
                self.status = event.status
            yield event

    def close(self) -> None:
        """Write what is buffered; a session without its SessionFinished becomes
        'interrupted', or 'cancelled' when the cancel had been asked (a second Ctrl-C stops
        at once, and the teardown still runs as the runner is closed). Safe to call twice."""
        if not self._closed:
            self._closed = True
            cancelled = self.cancel is not None and self.cancel.is_set()
            if cancelled and self.status is None:
                self.status = "cancelled"
            self.recorder.close(cancelled=cancelled)
            if self.session_id is not None:  # its verdicts kept with its results summary
                with contextlib.suppress(LibraryError):  # else judged on its first read
                    store_session_limits(self.library, self.session_id)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
