"""The GUI tests N times in a row with both CPUs kept busy: the check for issue 26's crash.

The crash that issue 26 found (a pool thread emitting on an object its page had freed) showed
only on a busy machine, when threads are preempted at the wrong moment. This script makes that
machine: it starts its own CPU hog (stress-ng when installed, else one Python busy loop per
CPU), runs `python -X faulthandler -m pytest tests/gui` N times, and prints per round whether it
crashed (a signal, or "Fatal Python error" from faulthandler, which names the test) and how many
tests failed; then the tally. The hog is killed at the end by its own pid, whatever happened.

    python scripts/gui_hog.py --runs 20            # or: make test-gui-hog RUNS=20

Exit 0 when every round passed without a crash, 1 otherwise. The output of a round that did not
pass is kept under --logs (default: a directory in /var/tmp, named at the end).
"""

from __future__ import annotations

import argparse
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


@dataclass
class Round:
    """What one run of tests/gui ended with."""

    number: int
    seconds: float
    returncode: int
    counts: dict[str, int]
    crashed: bool
    failing: list[str]

    @property
    def ok(self) -> bool:
        return not self.crashed and self.returncode == 0


def start_hog(cpus: int) -> list[subprocess.Popen]:
    """Keep `cpus` CPUs busy: stress-ng if installed, else one Python busy loop per CPU."""
    if shutil.which("stress-ng"):
        return [subprocess.Popen(["stress-ng", "--cpu", str(cpus), "--quiet"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(cpus)]


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


def run_round(number: int, pytest_args: list[str], logs: Path) -> Round:
    """One run of the GUI tests under faulthandler; its output kept when it did not pass."""
    argv = [sys.executable, "-X", "faulthandler", "-m", "pytest", "-q", "-p", "no:cacheprovider",
            *pytest_args]
    t0 = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - t0
    output = proc.stdout + proc.stderr
    crashed = proc.returncode < 0 or "Fatal Python error" in output
    failing = re.findall(r"^(?:FAILED|ERROR) (\S+)", output, re.MULTILINE)
    result = Round(number, seconds, proc.returncode, counts_of(output), crashed, failing)
    if not result.ok:
        (logs / f"round-{number:02d}.txt").write_text(output)
    return result


def describe(r: Round) -> str:
    counts = ", ".join(f"{n} {word}" for word, n in r.counts.items()) or "no summary"
    verdict = "CRASH" if r.crashed else ("ok" if r.ok else f"exit {r.returncode}")
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
    # a SIGTERM ends the rounds through the finally below, which kills the hog
    signal.signal(signal.SIGTERM, lambda _sig, _frame: sys.exit(143))
    hog = start_hog(args.cpus)
    print(f"hog: {args.cpus} CPUs busy (pids {', '.join(str(p.pid) for p in hog)})", flush=True)
    try:
        started = time.monotonic()
        for number in range(1, args.runs + 1):
            if args.minutes is not None and time.monotonic() - started > args.minutes * 60:
                print(f"time is up ({args.minutes:g} minutes): no round {number}", flush=True)
                break
            rounds.append(run_round(number, args.pytest_args, logs))
            print(describe(rounds[-1]), flush=True)
    finally:
        stop_hog(hog)
    crashes = sum(r.crashed for r in rounds)
    failed = sum(not r.ok and not r.crashed for r in rounds)
    tests_failed = sum(r.counts.get("failed", 0) + r.counts.get("error", 0) for r in rounds)
    mean = sum(r.seconds for r in rounds) / len(rounds)
    if not rounds:
        return 1
    print(f"\n{len(rounds)} rounds of {' '.join(args.pytest_args)} under a {args.cpus}-CPU hog, "
          f"{mean:.0f} s each: {crashes} crashed, {failed} failed without a crash "
          f"({tests_failed} failed tests in all)")
    if crashes or failed:
        print(f"output of those rounds: {logs}")
    else:
        shutil.rmtree(logs, ignore_errors=True)
    return 0 if not crashes and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
