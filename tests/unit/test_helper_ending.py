"""The helper's death signal (ending.Ending), with real signals on a real pipe: it interrupts a
request, and anywhere else it only ends the input, so that the teardown that follows the loop
is never cut short (the helper used to exit 143 with its mounts in place when the signal landed
just after the end of its input)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from disklab.core.root_helper.ending import EXIT_STATUS, Ending


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    r, w = os.pipe()
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield r, w
    finally:
        signal.signal(signal.SIGTERM, before)
        for fd in (r, w):
            with contextlib.suppress(OSError):
                os.close(fd)


def signal_soon(delay: float = 0.2) -> threading.Timer:
    timer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    return timer


def test_the_signal_ends_a_blocked_read_of_the_input_without_raising(pipe) -> None:
    r, _w = pipe
    ending = Ending(fd=r)
    ending.install()
    signal_soon()
    started = time.monotonic()
    data = os.read(r, 100)  # blocks: the writer is still open (the client's death, unseen)
    assert data == b"" and ending.stop  # the end of the input, as if the client had closed it
    assert time.monotonic() - started < 10


def test_the_signal_interrupts_a_request_and_nothing_after_it(pipe) -> None:
    r, _w = pipe
    ending = Ending(fd=r)
    ending.install()
    with pytest.raises(SystemExit) as left, ending.request():
        signal_soon(0.05).join()
        time.sleep(5)  # a long command the request runs
    assert left.value.code == EXIT_STATUS and not ending.busy
    os.kill(os.getpid(), signal.SIGTERM)  # a second one, during the teardown: no exception
    time.sleep(0.05)
    assert ending.stop and os.read(r, 10) == b""
