"""RunWorker: iterates core.run.recorded.RecordedRun on its own QThread and hands every event to the
GUI.

Running and recording are the core's (the CLI does the same with the same class); this module
is the thread and the signals. The events are frozen dataclasses, so they cross to the GUI
thread as they are. They go through a deque that the RunController drains every DRAIN_MS, not
through one queued signal each: a sample tick is a burst of ~11 events, and a signal per event
woke the GUI thread for each of them (bench figure 2). The recorder (library writes) runs here
too, on the worker's own Library connection, so the GUI thread never waits for SQLite. Cancel
sets a threading.Event the runner checks between steps; the runner kills the tool's whole
process tree and tears down.
"""

from __future__ import annotations

import gc
import threading
import traceback
from collections import deque
from pathlib import Path

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from disklab.core.hosts.ssh import Ask
from disklab.core.library import Library
from disklab.core.run.recorded import RecordedRun
from disklab.core.run.resume import Resumption
from disklab.core.vocab.events import Event
from disklab.core.vocab.model import Plan

DRAIN_MS = 100  # how often the GUI takes the events that arrived, unless a page asks for less


class RunWorker(QObject):
    """Lives on a QThread; `run` is its whole life."""

    error = Signal(str)  # an exception outside the runner's own events (traceback text)
    done = Signal(object)  # session id (or None), after the recorder closed

    def __init__(self, plan: Plan, warnings: tuple[str, ...], library_path: str | Path,
                 password: str | None = None, resume: Resumption | None = None):
        super().__init__()
        self.plan = plan
        self.resume = resume  # an incomplete session to take up again instead of a new one
        self.warnings = warnings
        self.password = password  # for sudo, asked by the Run page before the start
        self.library_path = str(library_path)
        self.outbox: deque[Event] = deque()  # every core.vocab.events.Event, in order (thread-safe)
        self.cancel_flag = threading.Event()
        self.ended = threading.Event()  # set when run() is about to return
        self.session_id: int | None = None
        self.status: str | None = None
        self.ask: Ask | None = None  # ssh's questions for hosts started over SSH (Hosts page)

    def cancel(self) -> None:
        """Thread-safe: only sets a flag."""
        self.cancel_flag.set()

    @Slot()
    def run(self) -> None:
        password = self.password
        recorded: RecordedRun | None = None
        try:
            # opened here: an SQLite connection belongs to the thread that uses it
            with Library.open(self.library_path) as library:
                asked = None if password is None else lambda: password
                if self.resume is not None:
                    recorded = RecordedRun.resuming(self.resume, library, cancel=self.cancel_flag,
                                                    password=asked, ask=self.ask)
                else:
                    recorded = RecordedRun(self.plan, library, warnings=self.warnings,
                                           cancel=self.cancel_flag, password=asked,
                                           ask=self.ask)
                with recorded:
                    for ev in recorded:
                        self.outbox.append(ev)
        except Exception:
            self.error.emit(traceback.format_exc())
        finally:
            if recorded is not None:
                self.session_id = recorded.session_id
                self.status = recorded.status
            self.ended.set()
            self.done.emit(self.session_id)


class RunController(QObject):
    """Owns one RunWorker and its QThread; the GUI talks to this. `event` is emitted in the GUI
    thread for every event of the run, in order, at most DRAIN_MS after the worker had it, and
    all of them before `finished`."""

    event = Signal(object)
    drained = Signal()  # after each batch of events (every interval while a run goes)
    error = Signal(str)
    finished = Signal(object)  # session id

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.thread: QThread | None = None
        self.worker: RunWorker | None = None
        self.ask: Ask | None = None  # set by the Hosts page: ssh's questions as dialogs
        self._drain_timer = QTimer(self)
        self._drain_timer.setInterval(DRAIN_MS)
        self._drain_timer.timeout.connect(self._drain)

    @property
    def running(self) -> bool:
        return self.thread is not None

    def start(self, plan: Plan, warnings: tuple[str, ...], library_path: str | Path,
              password: str | None = None, resume: Resumption | None = None) -> None:
        """Run `plan` as a new session, or with `resume` take up that incomplete session (its
        plan and warnings are the resumption's)."""
        if self.running:
            raise RuntimeError("a run is already going")
        # Python's cycle collector runs in whichever thread happens to allocate: Qt objects
        # left in cycles (a closed window's plots) collected by the worker thread destroy
        # them there, and ~QObject holding Qt's connection lock while it waits for the GIL
        # the GUI thread holds deadlocked a test run. The window runs the collector in the GUI
        # thread only (gui.threads.keep_gc_in_gui_thread); what is due is collected here too.
        gc.collect()
        self.thread = QThread(self)
        self.thread.setObjectName("disklab-run")
        self.worker = RunWorker(plan, warnings, library_path, password, resume)
        self.worker.ask = self.ask
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(self.worker.run)
        self.worker.error.connect(self.error)
        self.worker.done.connect(self._on_done)
        self._drain_timer.start()
        self.thread.start()

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def set_interval(self, ms: int) -> None:
        """Take the worker's events every `ms`: the Run page draws once per batch (`drained`),
        so one wake-up of the GUI thread per refresh does everything (ISSUE17 section 2: each
        separate timer woke the thread and repainted on its own)."""
        self._drain_timer.setInterval(max(10, int(ms)))

    def _drain(self) -> None:
        """Hand on what the worker queued since the last tick, in order."""
        worker = self.worker
        if worker is None:
            return
        outbox = worker.outbox
        while outbox:
            self.event.emit(outbox.popleft())
        self.drained.emit()

    def _on_done(self, session_id: object) -> None:
        self._drain()  # the worker queued its last events before it said done
        self._drain_timer.stop()
        thread, worker = self.thread, self.worker
        self.thread = None
        self.worker = None
        if thread is not None:
            thread.quit()
            # the worker emitted done as run()'s last act: this returns at once, and no later
            # than the thread's end, so the worker's objects are released in this thread
            thread.wait()
            thread.deleteLater()
        if worker is not None:
            worker.deleteLater()
        self.finished.emit(session_id)

    def wait(self, ms: int = 30000) -> bool:
        """For shutdown (cancel was requested): wait for the worker to return, without needing
        the GUI event loop (its done signal cannot be delivered while we block here)."""
        if self.thread is None or self.worker is None:
            return True
        if not self.worker.ended.wait(ms / 1000):
            return False
        self.thread.quit()
        return self.thread.wait(ms)
