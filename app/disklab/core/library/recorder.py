"""Stores a run's events as they come, in batched transactions.

Samples and transcript lines arrive many times a second; committing each would cost an fsync
per row with synchronous=FULL. They are buffered and written with executemany inside one
transaction that is committed at least once a second, and at once when a case finishes or fails
and when the session starts or ends. A crash loses at most the last second of samples.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

import psutil

from disklab.core.events import (
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
    SessionStarted,
)
from disklab.core.model import Metric

if TYPE_CHECKING:
    from disklab.core.library.store import Library

COMMIT_INTERVAL = 1.0  # seconds


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=list)


class SessionRecorder:
    """handle() every event of one session; close() at the end (also after an exception)."""

    def __init__(self, library: Library):
        self.db = library.db
        self.session_id: int | None = None
        self._samples: list[tuple[Any, ...]] = []
        self._lines: list[tuple[Any, ...]] = []
        self._last_commit = time.monotonic()
        self._in_tx = False
        self._last_t = 0.0

    def _begin(self) -> None:
        if not self._in_tx:
            self.db.execute("BEGIN")
            self._in_tx = True

    def flush(self) -> None:
        """Write what is buffered and commit."""
        if self.session_id is None:
            return
        if self._samples or self._lines:
            self._begin()
            if self._samples:
                self.db.executemany("INSERT INTO sample VALUES (?, ?, ?, ?, ?, ?)", self._samples)
                self._samples.clear()
            if self._lines:
                self.db.executemany("INSERT INTO transcript VALUES (?, ?, ?, ?, ?, ?)",
                                    self._lines)
                self._lines.clear()
        if self._in_tx:
            self.db.execute("UPDATE session SET last_activity = ? WHERE id = ?",
                            (self._last_t, self.session_id))
            self.db.execute("COMMIT")
            self._in_tx = False
        self._last_commit = time.monotonic()

    def close(self) -> None:
        self.flush()

    def handle(self, event: Event) -> None:
        self._last_t = event.t or time.time()
        sid = self.session_id
        if isinstance(event, Sample):
            self._samples.append((sid, event.case_id, event.repeat, event.t, event.series,
                                  event.value))
        elif isinstance(event, LogLine):
            self._lines.append((sid, event.case_id, event.repeat, event.t, event.stream,
                                event.text))
        elif isinstance(event, Progress):
            pass  # the samples and the finished cases say the same, durably
        elif isinstance(event, SessionStarted):
            self._started(event)
            return
        elif sid is None:
            raise RuntimeError("the first event of a session must be SessionStarted")
        elif isinstance(event, CaseStarted):
            self._begin()
            c = event.case
            self.db.execute(
                "INSERT OR REPLACE INTO run (session_id, case_id, repeat, argv, tool_version, "
                "planned_bytes, started, status) VALUES (?, ?, ?, ?, ?, ?, ?, 'running')",
                (sid, c.id, event.repeat, _json(list(event.argv)), event.tool_version,
                 event.planned_bytes, event.t))
        elif isinstance(event, CaseFinished):
            self._flush_buffers_into_tx()
            self._metrics(event.case_id, event.repeat, event.metrics)
            self.db.execute(
                "UPDATE run SET status = ?, exit_status = ?, duration = ? WHERE session_id = ? "
                "AND case_id = ? AND repeat = ?",
                ("partial" if event.partial else "ok", event.exit_status, event.duration, sid,
                 event.case_id, event.repeat))
            self.flush()
            return
        elif isinstance(event, CaseFailed):
            self._flush_buffers_into_tx()
            self._metrics(event.case_id, event.repeat, event.metrics)
            self.db.execute(
                "UPDATE run SET status = 'failed', exit_status = ?, signal = ?, error = ?, "
                "transcript_tail = ?, duration = ? WHERE session_id = ? AND case_id = ? AND "
                "repeat = ?",
                (event.exit_status, event.signal, event.error, event.transcript_tail,
                 event.duration, sid, event.case_id, event.repeat))
            self._event("CaseFailed", event.case_id, {"error": event.error})
            self.flush()
            return
        elif isinstance(event, Notice):
            self._event("Notice", event.case_id, {"level": event.level, "message": event.message})
        elif isinstance(event, ConfigApplied):
            self._event("ConfigApplied", None, {"config": event.config,
                                                "readback": dict(event.readback),
                                                "mismatches": list(event.mismatches)})
        elif isinstance(event, ConfigTornDown):
            self._event("ConfigTornDown", None, {"config": event.config})
        elif isinstance(event, SessionFinished):
            self._flush_buffers_into_tx()
            self.db.execute("UPDATE session SET status = ?, finished = ? WHERE id = ?",
                            (event.status, event.t, sid))
            self.flush()
            return
        if time.monotonic() - self._last_commit >= COMMIT_INTERVAL:
            self.flush()

    def _flush_buffers_into_tx(self) -> None:
        self._begin()
        if self._samples:
            self.db.executemany("INSERT INTO sample VALUES (?, ?, ?, ?, ?, ?)", self._samples)
            self._samples.clear()
        if self._lines:
            self.db.executemany("INSERT INTO transcript VALUES (?, ?, ?, ?, ?, ?)", self._lines)
            self._lines.clear()

    def _metrics(self, case_id: str, repeat: int, metrics: tuple[Metric, ...]) -> None:
        self.db.executemany(
            "INSERT INTO metric (session_id, case_id, repeat, name, value, unit, note, params) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(self.session_id, case_id, repeat, m.name, m.value, m.unit, m.note,
              _json(dict(m.params)) if m.params else None) for m in metrics])

    def _event(self, kind: str, case_id: str | None, data: dict[str, Any]) -> None:
        self._begin()
        self.db.execute("INSERT INTO event (session_id, t, kind, case_id, data) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (self.session_id, self._last_t, kind, case_id, _json(data)))

    def _started(self, event: SessionStarted) -> None:
        me = psutil.Process(os.getpid())
        self._begin()
        cur = self.db.execute(
            "INSERT INTO session (name, status, started, pid, pid_started, last_activity, host, "
            "plan_text, warnings, repeats) VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
            (event.name, event.t, os.getpid(), me.create_time(), event.t, _json(dict(event.host)),
             event.plan_text, _json(list(event.warnings)), event.repeats))
        self.session_id = int(cur.lastrowid or 0)
        self.db.executemany(
            "INSERT INTO case_ VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(self.session_id, c.id, c.index, c.config, c.tool, c.test_index, _json(dict(c.params)))
             for c in event.cases])
        self.flush()
