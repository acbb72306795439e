"""Two Ctrl-C presses back to back (test_cancel_truth sends them so): the second can arrive
while the first one's handler is inside threading.Event.set(), holding the Event's lock. A
handler that set the Event again there waited for that lock for ever, and `disklab run`
hung with its tool stopped (seen once in a whole suite: 21 minutes, until it was killed)."""

from __future__ import annotations

import subprocess
import sys

SECOND_PRESS_INSIDE_SET = r'''
import os, signal, sys, time
from disklab.cli.commands import _CancelOnSignal

cancel = _CancelOnSignal()
with cancel as flag:
    def set_when_the_second_press_comes() -> None:
        """Event.set() as it is, with the second SIGINT arriving while its lock is held."""
        with flag._cond:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10_000):  # bytecodes: the second press's handler runs here
                pass
            flag._flag = True
            flag._cond.notify_all()
    flag.set = set_when_the_second_press_comes
    try:
        os.kill(os.getpid(), signal.SIGINT)  # the first press
        time.sleep(5)
    except KeyboardInterrupt:
        print("interrupted at once")
        sys.exit(0)
print("not interrupted")
'''


def test_a_second_ctrl_c_inside_the_firsts_handler_interrupts_and_never_hangs() -> None:
    done = subprocess.run([sys.executable, "-c", SECOND_PRESS_INSIDE_SET],
                          capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "interrupted at once", done.stdout
