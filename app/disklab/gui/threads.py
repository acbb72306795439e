"""Short blocking calls (lsblk, plan checks that probe the target, a host's connection test) off
the GUI thread, questions from other threads asked in it, and Python's cycle collector kept in it.

A Qt object must be used and destroyed in the thread that owns it: a pool thread that emits
on a deleted object, or drops the last reference to a page's wrapper, crashes the process. So:

- A pool thread touches one Qt object only: the relay, which lives in the GUI thread and is
  never deleted (a module global without a parent). It emits a call's number and nothing
  else, so no object a page owns, nor the page, is reached from a pool thread.
- Every Python object of a call (the function and its closure, the result, the exception and
  its traceback, the callback and the page it is bound to) is held in `_calls`, which only the
  GUI thread empties: a pool thread never drops the last reference to anything, so no page's
  wrapper (and with it a QWidget) is destroyed off the GUI thread.
- A call whose owner is deleted, or that is abandoned because its page or window closed,
  reports to nobody; a question asked by an abandoned call is declined at once, so a pool
  thread never waits for a dialog that cannot come (nor does the application's exit).
- Calls run in parallel in the pool and end in any order. A call made with `latest` (what it
  reads: a page's device list, a host's connection test) is superseded by a later call of
  the same owner and name and reports to nobody, so an older answer that ends last never
  replaces a newer one (a device list from before a Refresh).
- Python's cycle collector runs in whichever thread happens to allocate, and collecting a
  closed window's widgets destroys them in that thread. It is switched off and run by a timer
  in the GUI thread (keep_gc_in_gui_thread).
"""

from __future__ import annotations

import gc
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import shiboken6
from PySide6.QtCore import (
    QCoreApplication,
    QObject,
    QRunnable,
    Qt,
    QThread,
    QThreadPool,
    QTimer,
    Signal,
)

GC_MS = 1000  # how often the GUI thread runs the cycle collector's due generations


@dataclass
class _Pending:
    """One background call or one question, from its start until the GUI thread took its
    answer."""

    fn: Callable[[], Any]
    on_done: Callable[[Any, Exception | None], None] | None
    owner: QObject | None
    result: Any = None
    error: Exception | None = None
    abandoned: bool = False
    latest: tuple[int, str] | None = None  # (owner's id, name): see run_in_background
    answered: threading.Event = field(default_factory=threading.Event)


_calls: dict[int, _Pending] = {}
_newest: dict[tuple[int, str], int] = {}  # (owner's id, name) -> its newest call's number
_numbers = itertools.count(1)


class _Relay(QObject):
    """The one object pool threads emit on; lives in the GUI thread as long as the application."""

    done = Signal(int)  # a background call's number: its result waits in _calls
    asked = Signal(int)  # a question's number: ask it in the GUI thread

    def __init__(self) -> None:
        super().__init__()
        app = QCoreApplication.instance()
        if app is not None and self.thread() is not app.thread():
            self.moveToThread(app.thread())  # first used by a run's thread: still the GUI's
        self.done.connect(self._finish, Qt.ConnectionType.QueuedConnection)
        self.asked.connect(self._ask, Qt.ConnectionType.QueuedConnection)

    def in_its_thread(self) -> bool:
        """Whether the caller runs in the GUI thread (this object's, which never changes)."""
        return QThread.currentThread() is self.thread()

    def _finish(self, number: int) -> None:
        call = _calls.pop(number, None)
        if call is None:
            return
        if call.latest is not None:
            if _newest.get(call.latest) != number:  # a later call of the same name is under way
                return
            del _newest[call.latest]
        if call.on_done is None or not _owner_alive(call):
            return
        call.on_done(call.result, call.error)

    def _ask(self, number: int) -> None:
        call = _calls.get(number)
        if call is None:
            return
        try:
            if _owner_alive(call):
                call.result = call.fn()
        finally:
            call.answered.set()


_relay: _Relay | None = None
_making = threading.Lock()


def _the_relay() -> _Relay:
    """Made by the first call (from any thread; it lives in the GUI thread) and kept, without a
    parent, for as long as the interpreter: it is never deleted under an emitting thread."""
    global _relay
    with _making:
        if _relay is None:
            _relay = _Relay()
        return _relay


def _owner_alive(call: _Pending) -> bool:
    return not call.abandoned and (call.owner is None or shiboken6.isValid(call.owner))


class _Task(QRunnable):
    """Holds only the call's number: the pool deletes this object in its own thread."""

    def __init__(self, number: int, relay: _Relay):
        super().__init__()
        self.number = number
        self.relay = relay  # outlives every task (see the module's docstring)
        self.setAutoDelete(True)

    def run(self) -> None:
        _execute(self.number)
        self.relay.done.emit(self.number)


def _execute(number: int) -> None:
    """Run the call; its result or exception is left in its entry (the traceback keeps this
    frame, whose only object is the entry, which the GUI thread owns)."""
    call = _calls[number]
    try:
        call.result = call.fn()
    except Exception as e:  # handed to the GUI thread, shown there
        call.error = e


def run_in_background(fn: Callable[[], Any], on_done: Callable[[Any, Exception | None], None],
                      owner: QObject | None = None, latest: str | None = None) -> None:
    """Run fn() in the pool; on_done(result, error) runs later in the GUI thread, unless
    `owner` (the page that asked) was deleted or abandon_calls() was called for it meanwhile,
    or, with `latest` (a name for what the call reads), a later call of the same owner and
    name was made meanwhile: only the newest answer of a name is shown, whichever ends first.
    fn must not touch Qt objects: it runs in another thread."""
    relay = _the_relay()
    number = next(_numbers)
    key = (id(owner), latest) if latest is not None else None
    _calls[number] = _Pending(fn, on_done, owner, latest=key)
    if key is not None:
        _newest[key] = number
    QThreadPool.globalInstance().start(_Task(number, relay))


def ask_in_gui_thread(fn: Callable[[], Any], owner: QObject | None = None,
                      declined: threading.Event | None = None) -> Any:
    """fn() run in the GUI thread (a dialog), from any thread, and its answer; None when
    `owner` is gone, its calls were abandoned, or `declined` is set meanwhile (the question is
    declined, never left waiting: the GUI thread may itself be waiting for this thread)."""
    relay = _the_relay()
    if relay.in_its_thread():
        return fn()
    number = next(_numbers)
    call = _calls[number] = _Pending(fn, None, owner)
    del fn  # from here the entry holds it, and the GUI thread drops it (_finish)
    answered = call.answered
    relay.asked.emit(number)
    while not answered.wait(0.25):
        if declined is not None and declined.is_set():
            call.abandoned = True
            break
    answer = None if call.abandoned else call.result
    del call
    relay.done.emit(number)  # _finish forgets the question, in the GUI thread
    return answer


def _owned_by(owner: QObject, obj: QObject | None) -> bool:
    while obj is not None and shiboken6.isValid(obj):
        if obj is owner:
            return True
        obj = obj.parent()
    return False


def abandon_calls(owner: QObject) -> int:
    """A page or window closes: its background calls (and its children's) report to nobody,
    and their questions are declined. In the GUI thread. The number of calls abandoned."""
    count = 0
    for call in list(_calls.values()):
        if call.owner is not None and _owned_by(owner, call.owner):
            call.abandoned = True
            call.answered.set()
            count += 1
    return count


def pending_calls() -> int:
    """Background calls and questions not yet taken by the GUI thread (for tests)."""
    return len(_calls)


def _collect_due() -> None:
    """What the automatic collector would have done: the oldest generation whose count is over
    its threshold, here in the GUI thread."""
    counts, limits = gc.get_count(), gc.get_threshold()
    for generation in (2, 1, 0):
        if counts[generation] > limits[generation]:
            gc.collect(generation)
            return


_collector: QTimer | None = None


def keep_gc_in_gui_thread() -> None:
    """Switch off Python's automatic cycle collection and run it from a timer of the GUI thread.
    Once per application (called when the application is made)."""
    global _collector
    if _collector is not None and shiboken6.isValid(_collector):
        return
    gc.disable()
    _collector = QTimer(QCoreApplication.instance())
    _collector.setInterval(GC_MS)
    _collector.timeout.connect(_collect_due)
    _collector.start()


def restore_gc() -> None:
    """Python's own collection again (for a test session that goes on without a window)."""
    global _collector
    if _collector is not None and shiboken6.isValid(_collector):
        _collector.stop()
        _collector.deleteLater()
    _collector = None
    gc.collect()
    gc.enable()
