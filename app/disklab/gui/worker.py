"""RunWorker: iterates core.runner.run_plan on its own QThread and hands every event to the GUI.

The events are frozen dataclasses, so they cross to the GUI thread as they are. They go through a
deque that the RunController drains every DRAIN_MS, not through one queued signal each: a sample
tick is a burst of ~11 events, and a signal per event woke the GUI thread for each of them (bench
figure 2). The recorder (library writes) runs here too, on the worker's own Library connection,
so the GUI thread never waits for SQLite. Cancel sets a threading.Event the runner checks between
steps; the runner kills the tool's whole process tree and tears down.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections import deque
from pathlib import Path

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from disklab.core.events import Event, Notice, SessionFinished
from disklab.core.model import Plan

DRAIN_MS = 100  # how often the GUI takes the events that arrived: the live view's latency


class RunWorker(QObject):
    """Lives on a QThread; `run` is its whole life."""

    error = Signal(str)  # an exception outside the runner's own events (traceback text)
    done = Signal(object)  # session id (or None), after the recorder closed

    def __init__(self, plan: Plan, warnings: tuple[str, ...], library_path: str | Path,
                 password: str | None = None):
        super().__init__()
        self.plan = plan
        self.warnings = warnings
        self.password = password  # for sudo, asked by the Run page before the start
        self.library_path = str(library_path)
        self.outbox: deque[Event] = deque()  # every core.events.Event, in order (thread-safe)
        self.cancel_flag = threading.Event()
        self.ended = threading.Event()  # set when run() is about to return
        self.session_id: int | str | None = None
        self.status: str | None = None

    def cancel(self) -> None:
        """Thread-safe: only sets a flag."""
        self.cancel_flag.set()

    def _recover(self, state_dir: str) -> None:
        """Undo what a killed session left mounted or attached, and say so (shown, not stored:
        the library records sessions, and this belongs to none)."""
        try:
            from disklab.core.fs.apply import leftover_files, recover_leftovers
        except ImportError:
            return
        if leftover_files(state_dir):
            for line in recover_leftovers(state_dir, library_path=self.library_path):
                self.outbox.append(Notice(level="warning", t=time.time(),
                                          message=f"cleaned up after an earlier run: {line}"))

    @Slot()
    def run(self) -> None:
        from disklab.core.library import Library
        from disklab.core.runner import run_plan

        library = None
        recorder = None
        state_dir = str(Path(self.library_path).parent)
        try:
            library = Library.open(self.library_path)
            self._recover(state_dir)
            recorder = library.recorder()
            password = self.password
            for ev in run_plan(self.plan, warnings=self.warnings, cancel=self.cancel_flag,
                               state_dir=state_dir, library_path=self.library_path,
                               password=None if password is None else lambda: password):
                recorder.handle(ev)
                if isinstance(ev, SessionFinished):
                    self.status = ev.status
                self.outbox.append(ev)
        except Exception:
            self.error.emit(traceback.format_exc())
        finally:
            if recorder is not None:
                try:
                    recorder.close()
                    self.session_id = recorder.session_id
                except Exception:
                    self.error.emit(traceback.format_exc())
            if library is not None:
                library.close()
            self.ended.set()
            self.done.emit(self.session_id)


class RunController(QObject):
    """Owns one RunWorker and its QThread; the GUI talks to this. `event` is emitted in the GUI
    thread for every event of the run, in order, at most DRAIN_MS after the worker had it, and
    all of them before `finished`."""

    event = Signal(object)
    error = Signal(str)
    finished = Signal(object)  # session id

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.thread: QThread | None = None
        self.worker: RunWorker | None = None
        self._drain_timer = QTimer(self)
        self._drain_timer.setInterval(DRAIN_MS)
        self._drain_timer.timeout.connect(self._drain)

    @property
    def running(self) -> bool:
        return self.thread is not None

    def start(self, plan: Plan, warnings: tuple[str, ...], library_path: str | Path,
              password: str | None = None) -> None:
        if self.running:
            raise RuntimeError("a run is already going")
        self.thread = QThread(self)
        self.thread.setObjectName("disklab-run")
        self.worker = RunWorker(plan, warnings, library_path, password)
        self.worker.moveToThread(self.thread)
        self.thread.started.connect(self.worker.run)
        self.worker.error.connect(self.error)
        self.worker.done.connect(self._on_done)
        self._drain_timer.start()
        self.thread.start()

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def _drain(self) -> None:
        """Hand on what the worker queued since the last tick, in order."""
        worker = self.worker
        if worker is None:
            return
        outbox = worker.outbox
        while outbox:
            self.event.emit(outbox.popleft())

    def _on_done(self, session_id: object) -> None:
        self._drain()  # the worker queued its last events before it said done
        self._drain_timer.stop()
        thread, worker = self.thread, self.worker
        self.thread = None
        self.worker = None
        if thread is not None:
            thread.quit()
            thread.wait(2000)  # the worker has returned from run(): this is immediate
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
