"""scripts/gui_hog.py (make test-gui-hog) stops cleanly: a first SIGTERM or Ctrl-C lets the
round under way finish and starts no other, a second ends it at once, and the hog is stopped
either way. The script runs for real with its real hog (one CPU, for a few seconds) on a round of
one small test of its own instead of tests/gui: the test writes its pytest's pid and sleeps, so
that the signals land while the round runs."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gui_hog.py"
ROUND = """
import os
import signal
import subprocess
import time
from pathlib import Path


def test_a_round_that_takes_a_while():
    if os.environ["HOG_TEST_DEAF"]:  # a round that does not hear Ctrl-C (a hung one)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    child = subprocess.Popen(["sleep", "300"])  # what the round started, in its group
    Path(os.environ["HOG_TEST_MARK"]).write_text(f"{os.getpid()} {child.pid}")
    try:
        time.sleep(float(os.environ["HOG_TEST_SLEEP"]))
    finally:
        child.kill()
        child.wait()
"""


class Hog:
    """The script started on a round of ROUND, its output in a file read as it grows."""

    def __init__(self, tmp_path: Path, sleep: float, deaf: bool = False) -> None:
        test = tmp_path / "test_round.py"
        test.write_text(ROUND)
        self.mark, self.out, self.logs = tmp_path / "mark", tmp_path / "out.txt", tmp_path / "logs"
        env = {**os.environ, "HOG_TEST_MARK": str(self.mark), "HOG_TEST_SLEEP": str(sleep),
               "HOG_TEST_DEAF": "1" if deaf else ""}
        with self.out.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, str(SCRIPT), "--runs", "3", "--cpus", "1", "--logs",
                 str(self.logs), "--", str(test)],
                stdout=out, stderr=subprocess.STDOUT, text=True, env=env)
        self.pids: list[int] = []  # what to kill if the test fails with the script running

    def started(self) -> Hog:
        """Once round 1 runs its test: the pids of the hog, the round's pytest and its child."""
        until(lambda: self.mark.exists() and self.mark.read_text())
        found = re.search(r"hog: 1 CPUs busy \(pids (\d+)\)", self.output())
        self.pids = [int(found[1])] if found else []
        self.pids += map(int, self.mark.read_text().split())
        assert found, self.output()
        self.hog_pid, self.round_pid, self.child_pid = self.pids
        return self

    def output(self) -> str:
        return self.out.read_text()

    def signal(self, signum: int, says: str) -> None:
        """Send `signum` to the script (by its pid) and wait until it says it heard it."""
        self.proc.send_signal(signum)
        until(lambda: says in self.output())

    def end(self, timeout: float) -> int:
        return self.proc.wait(timeout)

    def cleanup(self) -> None:
        """A test that failed with the script still running leaves nothing running: the
        script is asked to stop at once (its own teardown stops the hog), else killed with
        what is known of its processes."""
        if self.proc.poll() is None:
            for _ in range(3):
                self.proc.send_signal(signal.SIGTERM)
                time.sleep(0.2)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                for pid in (*self.pids, self.proc.pid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                self.proc.wait()


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., Hog]]:
    """Start the script (Hog's arguments) and wait for its round; at the end of the test,
    whatever it did, nothing of it left running."""
    made: list[Hog] = []

    def started(sleep: float, deaf: bool = False) -> Hog:
        made.append(Hog(tmp_path, sleep, deaf))
        return made[-1].started()

    yield started
    for hog in made:
        hog.cleanup()


def until(condition: Callable[[], object], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "waited in vain"
        time.sleep(0.05)


def gone(pid: int) -> bool:
    """The process has ended (a zombie not reaped yet counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return True


def test_a_sigterm_lets_the_round_finish_then_stops_with_the_tally(start) -> None:
    hog = start(sleep=4)
    hog.signal(signal.SIGTERM, "SIGTERM: will stop after this round")
    assert not gone(hog.round_pid) and not gone(hog.hog_pid)  # both go on for now
    assert hog.end(60) == 0  # the round that ran passed: the verdict is that round's
    out = hog.output()
    assert re.search(r"^round  1: ok .* 1 passed$", out, re.MULTILINE), out
    assert "stopped as asked: no round 2" in out and "round  2" not in out
    assert "\n1 rounds of " in out and "0 crashed, 0 failed" in out
    assert gone(hog.round_pid) and gone(hog.child_pid) and gone(hog.hog_pid)
    assert not hog.logs.exists()  # nothing failed: no output kept


def test_a_second_ctrl_c_ends_the_round_at_once_and_pytest_tears_down(start) -> None:
    hog = start(sleep=300)
    hog.signal(signal.SIGINT, "SIGINT: will stop after this round")
    hog.signal(signal.SIGINT, "SIGINT: stopping at once")
    started = time.monotonic()
    assert hog.end(60) == 130
    assert time.monotonic() - started < 10  # pytest heard its Ctrl-C: no SIGKILL was needed
    out = hog.output()
    assert "round  1: stopped" in out and "no round finished" in out, out
    assert "round 1 was stopped at once" in out and "round  2" not in out
    kept = (hog.logs / "round-01.txt").read_text()
    assert "KeyboardInterrupt" in kept  # pytest's own interruption, its teardown run
    assert gone(hog.round_pid) and gone(hog.child_pid) and gone(hog.hog_pid)


def test_a_round_deaf_to_ctrl_c_is_killed_with_its_group_at_a_third_sigterm(start) -> None:
    hog = start(sleep=300, deaf=True)
    hog.signal(signal.SIGTERM, "will stop after this round")
    hog.signal(signal.SIGTERM, "stopping at once")
    assert not gone(hog.round_pid)  # it does not hear the SIGINT sent to its group
    hog.signal(signal.SIGTERM, "killing the round's pytest")
    assert hog.end(30) == 143
    out = hog.output()
    assert "round  1: stopped" in out and "round 1 was stopped at once" in out, out
    # the round's pytest and the process its test started, killed with their group
    assert gone(hog.round_pid) and gone(hog.child_pid) and gone(hog.hog_pid)
