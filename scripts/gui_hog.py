"""The GUI tests N times in a row with both CPUs kept busy: the check for issue 26's crash.

The crash that issue 26 found (a pool thread emitting on an object its page had freed) showed
only on a busy machine, when threads are preempted at the wrong moment. This script makes that
machine: it starts its own CPU hog (stress-ng when installed, else one Python busy loop per
CPU), runs `python -X faulthandler -m pytest tests/gui` N times, and prints per round whether it
crashed (a signal, or "Fatal Python error" from faulthandler, which names the test) and how many
tests failed; then the tally. The hog is killed at the end by its own pid, whatever happened.

    python scripts/gui_hog.py --runs 20            # or: make test-gui-hog RUNS=20
    python scripts/gui_hog.py --runs 3 -- tests/gui/test_pages.py   # what pytest runs

To stop: Ctrl-C (SIGINT) or SIGTERM while a round runs lets that round finish, starts no other,
stops the hog and prints the tally of the rounds run; a second Ctrl-C or SIGTERM ends the round
at once (its pytest is interrupted as pytest's own Ctrl-C does, so that its fixtures tear down
what they made, and killed if it has not ended within STOP_GRACE seconds; a third signal kills
it without waiting), stops the hog and prints the tally of the rounds that finished. The
round's pytest and the hog run in process groups of their own: a Ctrl-C at the terminal reaches
this script only, not the round it lets finish.

Exit 0 when every round passed without a crash, 1 otherwise (after a first Ctrl-C or SIGTERM
too: the rounds that ran are the verdict); 128 + the signal's number when a round was ended at
once (130 for Ctrl-C, 143 for SIGTERM). The output of a round that did not pass, or was ended
at once, is kept under --logs (default: a directory in /var/tmp, named at the end).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUSY_LOOP = "while True:\n    pass\n"
SUMMARY = re.compile(r"(\d+) (passed|failed|error|errors|skipped|deselected|xfailed|xpassed)")
STOP_GRACE = 10.0  # seconds an interrupted round's pytest has for its teardown before a SIGKILL
POLL = 0.5  # seconds between looks at the stop requests while a round runs


class Stop:
    """The stop requests (SIGINT, SIGTERM) counted by a signal handler that only counts and
    says so: the rounds' loop and the wait for a round look at the count, so that no exception
    lands in the middle of a teardown. 1: stop after this round; 2: end the round now; 3: kill
    it without its teardown."""

    def __init__(self) -> None:
        self.asked = 0
        self.signum = 0  # the last request's signal

    def install(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._request)

    def _request(self, signum: int, _frame: object) -> None:
        self.asked += 1
        self.signum = signum
        name = signal.Signals(signum).name
        if self.asked == 1:
            said = "will stop after this round (again to stop at once)"
        elif self.asked == 2:
            said = "stopping at once: the round's pytest is interrupted"
        else:
            said = "killing the round's pytest"
        # os.write, not print: a print interrupted by this handler would be re-entered
        with contextlib.suppress(OSError):
            os.write(sys.stdout.fileno(), f"\n{name}: {said}\n".encode())

    @property
    def now(self) -> bool:
        return self.asked >= 2


@dataclass
class Round:
    """What one run of tests/gui ended with."""

    number: int
    seconds: float
    returncode: int
    counts: dict[str, int]
    crashed: bool
    failing: list[str]
    cut_short: bool = False  # ended at once by a second stop request: not in the tally

    @property
    def ok(self) -> bool:
        return not self.crashed and self.returncode == 0 and not self.cut_short


def start_hog(cpus: int) -> list[subprocess.Popen]:
    """Keep `cpus` CPUs busy: stress-ng if installed, else one Python busy loop per CPU. In a
    process group of its own, so that a Ctrl-C at the terminal does not end it under the round
    that is let finish (stop_hog ends it)."""
    if shutil.which("stress-ng"):
        return [subprocess.Popen(["stress-ng", "--cpu", str(cpus), "--quiet"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 process_group=0)]
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP], process_group=0)
            for _ in range(cpus)]


def stop_hog(hog: list[subprocess.Popen]) -> None:
    """Kill the hog's own processes, by pid (stress-ng's workers end with their parent)."""
    for proc in hog:
        if proc.poll() is None:
            proc.terminate()
    for proc in hog:
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def counts_of(output: str) -> dict[str, int]:
    """pytest's last summary line as {"passed": n, "failed": n, ...}."""
    lines = [line for line in output.splitlines() if line.startswith("=") or " in " in line]
    last = next((line for line in reversed(lines) if SUMMARY.search(line)), "")
    counts: dict[str, int] = {}
    for n, word in SUMMARY.findall(last):
        counts["error" if word == "errors" else word] = int(n)
    return counts


def run_round(number: int, pytest_args: list[str], logs: Path, stop: Stop) -> Round:
    """One run of the GUI tests under faulthandler, in a process group of its own (a Ctrl-C at
    the terminal reaches this script, which lets the round finish); ended at once on a second
    stop request. Its output kept when it did not pass."""
    argv = [sys.executable, "-X", "faulthandler", "-m", "pytest", "-q", "-p", "no:cacheprovider",
            *pytest_args]
    # its output in files, not pipes: the round has ended when its pytest has, even if
    # something it started still holds its stdout
    with (tempfile.TemporaryFile("w+", errors="replace") as out,
          tempfile.TemporaryFile("w+", errors="replace") as err):
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=err, process_group=0)
        cut_short = wait_for_round(proc, stop)
        seconds = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        output = out.read() + err.read()
    crashed = not cut_short and (proc.returncode < 0 or "Fatal Python error" in output)
    failing = re.findall(r"^(?:FAILED|ERROR) (\S+)", output, re.MULTILINE)
    result = Round(number, seconds, proc.returncode, counts_of(output), crashed, failing,
                   cut_short)
    if not result.ok:
        (logs / f"round-{number:02d}.txt").write_text(output)
    return result


def wait_for_round(proc: subprocess.Popen, stop: Stop) -> bool:
    """Wait for the round's pytest to end: by itself, or at a second stop request interrupted
    (SIGINT to its group: pytest stops and runs its fixtures' teardowns), then killed with its
    group after STOP_GRACE seconds or at a third request. Whether it was ended so."""
    interrupted_at: float | None = None
    while True:
        try:
            proc.wait(POLL)
            return interrupted_at is not None
        except subprocess.TimeoutExpired:
            pass
        if stop.now and interrupted_at is None:
            interrupted_at = time.monotonic()
            _signal_group(proc, signal.SIGINT)
        elif interrupted_at is not None and (
                stop.asked >= 3 or time.monotonic() - interrupted_at > STOP_GRACE):
            _signal_group(proc, signal.SIGKILL)


def _signal_group(proc: subprocess.Popen, signum: int) -> None:
    """Signal the round's process group (pytest, its xdist workers, what they started that
    stayed in it); it may have ended already."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signum)


def describe(r: Round) -> str:
    counts = ", ".join(f"{n} {word}" for word, n in r.counts.items()) or "no summary"
    verdict = ("stopped" if r.cut_short else "CRASH" if r.crashed
               else ("ok" if r.ok else f"exit {r.returncode}"))
    line = f"round {r.number:2d}: {verdict:8s} {r.seconds:6.0f} s  {counts}"
    return line + "".join(f"\n    {name}" for name in r.failing)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="rounds of tests/gui (20)")
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 2,
                        help="CPUs the hog keeps busy (all of them)")
    parser.add_argument("--minutes", type=float,
                        help="start no new round after this many minutes (the tally so far)")
    parser.add_argument("--logs", type=Path, help="where the output of a failed round is kept")
    parser.add_argument("pytest_args", nargs="*", default=["tests/gui"],
                        help="what pytest runs (tests/gui)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.cpus < 1:
        parser.error("--runs and --cpus must be at least 1")
    logs = args.logs or Path(tempfile.mkdtemp(prefix="disklab-gui-hog-", dir="/var/tmp"))
    logs.mkdir(parents=True, exist_ok=True)
    rounds: list[Round] = []
    stop = Stop()
    stop.install()  # before the hog: a stop request from here on ends through stop_hog
    hog = start_hog(args.cpus)
    print(f"hog: {args.cpus} CPUs busy (pids {', '.join(str(p.pid) for p in hog)})", flush=True)
    try:
        started = time.monotonic()
        for number in range(1, args.runs + 1):
            if stop.asked:
                print(f"stopped as asked: no round {number}", flush=True)
                break
            if args.minutes is not None and time.monotonic() - started > args.minutes * 60:
                print(f"time is up ({args.minutes:g} minutes): no round {number}", flush=True)
                break
            rounds.append(run_round(number, args.pytest_args, logs, stop))
            print(describe(rounds[-1]), flush=True)
    finally:
        stop_hog(hog)
    return tally(rounds, args.pytest_args, args.cpus, logs, stop)


def tally(rounds: list[Round], pytest_args: list[str], cpus: int, logs: Path,
          stop: Stop) -> int:
    """Print the tally of the rounds that finished (a round ended at once is not counted) and
    return the exit status (see the module's docstring)."""
    finished = [r for r in rounds if not r.cut_short]
    cut = [r for r in rounds if r.cut_short]
    crashes = sum(r.crashed for r in finished)
    failed = sum(not r.ok and not r.crashed for r in finished)
    tests_failed = sum(r.counts.get("failed", 0) + r.counts.get("error", 0) for r in finished)
    if finished:
        mean = sum(r.seconds for r in finished) / len(finished)
        print(f"\n{len(finished)} rounds of {' '.join(pytest_args)} under a {cpus}-CPU hog, "
              f"{mean:.0f} s each: {crashes} crashed, {failed} failed without a crash "
              f"({tests_failed} failed tests in all)")
    else:
        print("\nno round finished")
    for r in cut:
        print(f"round {r.number} was stopped at once after {r.seconds:.0f} s: not counted")
    if crashes or failed or cut:
        print(f"output of those rounds: {logs}")
    else:
        shutil.rmtree(logs, ignore_errors=True)
    if cut:
        return 128 + stop.signum
    return 0 if finished and not crashes and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
