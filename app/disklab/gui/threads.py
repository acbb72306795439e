"""Short blocking calls (lsblk, plan checks that probe the target) off the GUI thread.

A call runs on the global QThreadPool; its result (or exception) comes back as a queued signal
to a receiver that lives in the GUI thread, so slots never run in the pool.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal


class _Relay(QObject):
    done = Signal(object, object)  # result, exception


class _Call(QRunnable):
    def __init__(self, fn: Callable[[], Any], relay: _Relay):
        super().__init__()
        self.fn = fn
        self.relay = relay
        self.setAutoDelete(True)

    def run(self) -> None:
        try:
            result, error = self.fn(), None
        except Exception as e:  # handed to the GUI thread, shown there
            result, error = None, e
        # RuntimeError: the page that asked was closed meanwhile (its relay went with it):
        # nobody is left to show the answer, and raising would only land in a later event
        # loop's lap
        with contextlib.suppress(RuntimeError):
            self.relay.done.emit(result, error)


_live: set[_Relay] = set()  # keep relays alive until they report


def run_in_background(fn: Callable[[], Any], on_done: Callable[[Any, Exception | None], None],
                      parent: QObject | None = None) -> None:
    """Run fn() in the pool; on_done(result, error) runs later in the GUI thread."""
    relay = _Relay(parent)
    _live.add(relay)

    def finish(result: Any, error: Exception | None) -> None:
        _live.discard(relay)
        on_done(result, error)
        relay.deleteLater()

    relay.done.connect(finish)
    QThreadPool.globalInstance().start(_Call(fn, relay))
