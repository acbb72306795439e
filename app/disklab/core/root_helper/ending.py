"""How the helper ends when its client goes: the end of its input, or the death signal
(SIGTERM, from PR_SET_PDEATHSIG) that the kernel sends a moment after the client's files were
closed; both come, in either order.

The signal used to raise SystemExit wherever the helper was. When the end of the input woke the
helper first, the signal landed microseconds later, while the helper was leaving its loop for
the teardown: the exception left before the teardown began, and the helper exited (143) with
its mounts, loop devices and images in place. On a quiet machine that was most whole `make
test` runs (tests/integration/test_helper_end.py makes the race happen: 29 of 40 ends went
wrong before).

Now the signal interrupts only a request being handled (a command the request runs is killed
with it, by proc); anywhere else it only ends the input, so that the loop ends as at the end of
the input. It never interrupts the teardown, which therefore always runs whole.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

EXIT_STATUS = 128 + signal.SIGTERM


class Ending:
    """The helper's one record of its end: `stop` once the death signal came; `busy` while a
    request is handled (the only time the signal raises). `fd`: the input (the helper's is its
    standard input)."""

    def __init__(self, fd: int = 0) -> None:
        self.fd = fd
        self.busy = False
        self.stop = False

    def on_signal(self, *_args: object) -> None:
        """The SIGTERM handler: leave a request at once; otherwise end the input (a read of it
        that the signal interrupted is retried after this handler, and finds /dev/null)."""
        self.stop = True
        if self.busy:
            self.busy = False
            raise SystemExit(EXIT_STATUS)
        with contextlib.suppress(OSError):
            fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.dup2(fd, self.fd)
            finally:
                os.close(fd)

    @contextlib.contextmanager
    def request(self) -> Iterator[None]:
        """Around the handling of one request: the signal may interrupt it."""
        self.busy = True
        try:
            yield
        finally:
            self.busy = False

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self.on_signal)


ENDING = Ending()
