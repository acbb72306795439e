"""One DiskLab test session at a time on a machine (tests/helpers.py, hold_the_machine).

Two sessions at once, `make test` in two terminals or beside `make test-gui-hog`, failed on
each other: their workers bind the same loopback addresses and ports (helpers.loopback numbers
them by worker), and a test marked `alone` is alone only within its own session. A second
session now says whose session holds the machine and waits for it to end. A session that a test
starts (tests/test_isolation.py starts two) is part of its session and goes on at once: that
test would time out otherwise.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import inner_session

INNER_TEST = """
import os, time

def test_runs():
    with open(os.environ["RAN_AT"], "w") as f:
        f.write(repr(time.time()))
"""

# a process that is not the second session's ancestor, holding the lock as a session does
HOLDER = ("import sys, time\n"
          "from pathlib import Path\n"
          "from tests.helpers import hold_the_machine\n"
          "hold_the_machine(Path(sys.argv[1]))\n"
          "print('held', flush=True)\n"
          "sys.stdin.read()\n"
          "print(repr(time.time()), flush=True)\n")


def _wait_for(path: Path, text: str, process: subprocess.Popen, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        said = path.read_text() if path.exists() else ""
        if text in said:
            return said
        assert process.poll() is None, f"ended ({process.returncode}) before saying {text!r}"
        time.sleep(0.1)
    raise AssertionError(f"not said in {seconds} s: {text!r}")


def test_a_second_session_says_whose_session_holds_the_machine_and_runs_after_it(
        tmp_path: Path) -> None:
    lock = tmp_path / "session.lock"
    inner, env = inner_session(tmp_path, "test_inner.py", INNER_TEST)
    env |= {"DISKLAB_TESTS_SESSION_LOCK": str(lock), "RAN_AT": str(tmp_path / "ran_at")}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    said = tmp_path / "second.err"
    second = None
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "held"
        with said.open("w") as err:
            second = subprocess.Popen(
                [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider",
                 "-p", "no:xdist", "test_inner.py"], cwd=inner, env=env, text=True,
                stdout=subprocess.PIPE, stderr=err)
        line = _wait_for(said, "waiting for it to end", second, 120)
        assert f"another DiskLab test session holds this machine (pid {holder.pid} " in line
        holder.stdin.close()  # the first session ends
        released = float(holder.stdout.readline())
        out, _ = second.communicate(timeout=300)
        assert second.returncode == 0, out[-3000:] + said.read_text()[-3000:]
        assert "1 passed" in out
        assert float((tmp_path / "ran_at").read_text()) >= released  # its test ran after
    finally:
        for process in (holder, second):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
