"""Stores a run's events as they come, in batched transactions.

Samples and transcript lines arrive many times a second; committing each would cost an fsync
per row with synchronous=FULL. They are buffered and written with executemany inside one
transaction that is committed at least once a second, and at once when a case finishes or fails
and when the session starts or ends. Those commits are durable (synchronous=FULL: fsync'd);
the once-a-second ones are not (the WAL written, not fsync'd), because the run's loop that
samples the kernel's counters waits for each commit, and on a disk the tool keeps busy an
fsync waits behind its queue for seconds (a 256 GiB fio write stored 55 samples in 104 s, in
bursts 5 s apart). A killed or crashed DiskLab loses at most the last second of samples; a
power cut, at most those since the last case ended, whose figures are durable.
The SQL itself is in writer.py (SessionWriter); this module decides what is written when.
"""

from __future__ import annotations

import os
import time
from typing import Any

import psutil

from disklab.core.library.writer import SessionWriter
from disklab.core.vocab.errors import LibraryError
from disklab.core.vocab.events import (
    CaseCancelled,
    CaseFailed,
    CaseFinished,
    CaseStarted,
    ConfigApplied,
    ConfigTornDown,
    Event,
    LogLine,
    Notice,
    Progress,
    Sample,
    SessionFinished,
    SessionResumed,
    SessionStarted,
)

COMMIT_INTERVAL = 1.0  # seconds: the most a crash may lose
PARTIAL = "partial"


def _flag_partial(note: str | None) -> str:
    """Figures of a case that failed or stopped early are kept, flagged 'partial'."""
    if not note:
        return PARTIAL
    return note if PARTIAL in note else f"{note}; {PARTIAL}"


def _same(note: str | None) -> str | None:
    return note


class SessionRecorder:
    """handle() every event of one session; close() at the end (also after an exception)."""

    def __init__(self, writer: SessionWriter, commit_interval: float = COMMIT_INTERVAL):
        self.writer = writer
        self.commit_interval = commit_interval
        self.session_id: int | None = None
        self._finished = False
        self._samples: list[tuple[Any, ...]] = []  # (session, series id, t, value)
        self._series: dict[tuple[str, int, str], int] = {}  # (case, repeat, name) -> series id
        self._lines: list[tuple[Any, ...]] = []  # (session, case, repeat, t, stream, text)
        self._last_commit = time.monotonic()
        self._last_t = 0.0
        writer.relaxed()  # the once-a-second commits are not fsync'd (see the module)

    def flush(self, durable: bool = True) -> None:
        """Write what is buffered and commit (fsync'd when `durable`: see the module)."""
        if self.session_id is None:
            return
        try:
            self._write_buffers()
            self.writer.commit(self._last_t, durable=durable)
        except LibraryError:
            self._series.clear()  # ids made in a transaction that may not have committed
            raise
        self._last_commit = time.monotonic()

    def close(self, cancelled: bool = False) -> None:
        """Flush. A session that did not get its SessionFinished (the runner raised) is marked
        'interrupted' now rather than staying 'running' while this process lives on; or
        'cancelled' when the user's cancel stopped it that way (a second Ctrl-C)."""
        if self.session_id is not None and not self._finished:
            self.writer.interrupt(self._last_t, "cancelled" if cancelled else "interrupted")
            self._finished = True
        self.flush()
        self.writer.strict()

    def handle(self, event: Event) -> None:
        """Store one event; commits when a second has passed since the last commit, and at
        once for the events that must survive a crash (start, case end, session end)."""
        if type(event) is Sample:  # the hot path: thousands a second, kept lean
            key = (event.case_id, event.repeat, event.series)
            series_id = self._series.get(key) or self._new_series(key)
            self._samples.append((self.session_id, series_id, event.t, event.value))
            self._last_t = event.t or self._last_t
            if time.monotonic() - self._last_commit >= self.commit_interval:
                self.flush(durable=False)
            return
        self._last_t = event.t or time.time()
        sid = self.session_id
        if sid is None and not isinstance(event, SessionStarted | SessionResumed):
            raise LibraryError(f"{type(event).__name__} before SessionStarted: the recorder "
                               "stores one session, and it starts with SessionStarted (or "
                               "SessionResumed)")
        w = self.writer
        if isinstance(event, Sample):  # a subclass of Sample, off the hot path
            key = (event.case_id, event.repeat, event.series)
            series_id = self._series.get(key) or self._new_series(key)
            self._samples.append((sid, series_id, event.t, event.value))
        elif isinstance(event, LogLine):
            self._lines.append((sid, event.case_id, event.repeat, event.t, event.stream,
                                event.text))
        elif isinstance(event, Progress):
            pass  # the samples and the finished cases say the same, durably
        elif isinstance(event, SessionStarted):
            self._started(event)
            return
        elif isinstance(event, SessionResumed):
            self._resumed(event)
            return
        elif isinstance(event, CaseStarted):
            w.start_run(event.case.id, event.repeat, event.argv, event.tool_version,
                        event.planned_bytes, event.t)
        elif isinstance(event, CaseFinished | CaseFailed | CaseCancelled):
            self._case_ended(event)
            return
        elif isinstance(event, Notice):
            w.add_event(self._last_t, "Notice", event.case_id,
                        {"level": event.level, "message": event.message})
        elif isinstance(event, ConfigApplied):
            w.add_event(self._last_t, "ConfigApplied", None,
                        {"config": event.config, "readback": dict(event.readback),
                         "mismatches": list(event.mismatches)})
        elif isinstance(event, ConfigTornDown):
            w.add_event(self._last_t, "ConfigTornDown", None, {"config": event.config})
        elif isinstance(event, SessionFinished):
            self._write_buffers()
            w.end_session(event.status, self._last_t)
            self._finished = True
            self.flush()
            return
        if time.monotonic() - self._last_commit >= self.commit_interval:
            self.flush(durable=False)

    def _case_ended(self, event: CaseFinished | CaseFailed | CaseCancelled) -> None:
        """A case's end: its figures (partial ones flagged) and its run's status, committed at
        once (a crash must not lose a finished case)."""
        self._write_buffers()
        w = self.writer
        if isinstance(event, CaseFinished):
            w.add_metrics(event.case_id, event.repeat, event.metrics,
                          _flag_partial if event.partial else _same)
            w.finish_run(event.case_id, event.repeat, "partial" if event.partial else "ok",
                         event.exit_status, event.duration)
        elif isinstance(event, CaseFailed):
            w.add_metrics(event.case_id, event.repeat, event.metrics, _flag_partial)
            w.fail_run(event.case_id, event.repeat, exit_status=event.exit_status,
                       signal=event.signal, error=event.error,
                       transcript_tail=event.transcript_tail, duration=event.duration)
            w.add_event(self._last_t, "CaseFailed", event.case_id, {"error": event.error})
        else:
            w.add_metrics(event.case_id, event.repeat, event.metrics, _flag_partial)
            w.fail_run(event.case_id, event.repeat, status="cancelled",
                       exit_status=event.exit_status, signal=event.signal,
                       error=None, transcript_tail=event.transcript_tail,
                       duration=event.duration)
            w.add_event(self._last_t, "CaseCancelled", event.case_id,
                        {"partial_figures": len(event.metrics)})
        self.flush()

    def _write_buffers(self) -> None:
        if self._samples:
            self.writer.add_samples(self._samples)
            self._samples.clear()
        if self._lines:
            self.writer.add_lines(self._lines)
            self._lines.clear()

    def _new_series(self, key: tuple[str, int, str]) -> int:
        """The id of a (case, repeat, series name), made on its first sample."""
        if self.session_id is None:
            raise LibraryError("Sample before SessionStarted: the recorder stores one session, "
                               "and it starts with SessionStarted")
        self._series[key] = series_id = self.writer.new_series(*key)
        return series_id

    def _resumed(self, event: SessionResumed) -> None:
        """Take the session up again: it is 'running' in this process, and the earlier
        attempts of the runs about to run again are set aside (writer.resume_session)."""
        self.session_id = self.writer.resume_session(
            event.session_id, resumed=event.t, pid=os.getpid(),
            pid_started=psutil.Process(os.getpid()).create_time(), runs=event.runs,
            previous_status=event.previous_status, complete=event.complete, host=event.host)
        self.flush()

    def _started(self, event: SessionStarted) -> None:
        self.session_id = self.writer.create_session(
            name=event.name, started=event.t, pid=os.getpid(),
            pid_started=psutil.Process(os.getpid()).create_time(), host=event.host,
            plan_text=event.plan_text, warnings=event.warnings, repeats=event.repeats,
            cases=event.cases)
        self.flush()
