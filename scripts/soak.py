"""The soak: DiskLab attacked as a reliability engineer would, with the figures that must stay 0.

Run by hand (`make soak`), not in CI: it starts real runs of the built-in engine, fio and iozone
on directory targets and (as root) on image targets, and

- kills them with SIGKILL at random moments, then starts DiskLab again (the next start cleans
  up after a kill) and counts what is left: files, directories, mounts, loop devices, processes;
- cancels them at random moments (SIGINT to the process, SIGINT to its process group, SIGTERM)
  and checks that every cancel is stored as `cancelled` and exits 130;
- after each, checks the library (PRAGMA integrity_check) and that every result DiskLab
  acknowledged (a CaseFinished printed by `run --json`) is in the library;
- checks a corpus of hostile plans (`plan validate`, then `run` for the ones that pass) and of
  hostile imports (`import` of damaged tool outputs): exit 0 or 2, never a traceback, no shell
  injection, nothing that runs away.

    python scripts/soak.py --kills 100 --cancels 50 --plans 200 --imports 100

Everything happens under one work directory (TMPDIR of the runs too, so the mountpoints are
counted there), removed at the end unless --keep. `soak()` is what tests/integration/
test_soak.py runs at a small size.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
IS_ROOT = os.geteuid() == 0
TOOLS = ("engine", "fio", "iozone")
CANCELS = ("SIGINT to the process", "SIGINT to the group", "SIGTERM to the process")
MARKER = "PWNED"  # a hostile plan that gets a shell to run `touch PWNED` leaves this file
RUN_LIMIT = 25.0  # seconds a hostile plan may run before it is cancelled (and counted)
MEMORY_LIMIT = 2 << 30  # address space of a hostile plan's run: a runaway hits this, not the host

TESTS = {
    "engine": 'tool = "engine"\nmode = ["write", "read"]\nblock_size = "1m"\nsize = "32m"\n'
              'runtime = "1s"\ndirect = false\n',
    "fio": 'tool = "fio"\nrw = ["write", "read"]\nbs = "1m"\nsize = "32m"\nruntime = "1s"\n'
           'numjobs = 2\n',
    "iozone": 'tool = "iozone"\ntests = ["write", "read"]\nrecord_size = "64k"\n'
              'file_size = ["16m", "32m"]\n',
}


@dataclass
class Figures:
    """What the soak counts; every figure but the totals must be 0."""

    kills: Counter[str] = field(default_factory=Counter)  # "tool/target" -> count
    cancels: Counter[str] = field(default_factory=Counter)  # how -> count
    ended_before_signal: int = 0  # runs that were over before the signal came (not counted)
    cancels_stored_cancelled: int = 0  # status cancelled and exit 130
    cancel_outcomes: Counter[str] = field(default_factory=Counter)  # "status/exit"
    plans: int = 0
    plan_exits: Counter[str] = field(default_factory=Counter)  # "validate N" / "run N"
    plans_validated: int = 0
    imports: int = 0
    import_exits: Counter[str] = field(default_factory=Counter)
    cleanups_said: int = 0  # "cleaned up after an earlier run" lines at next starts
    integrity_failures: int = 0
    results_lost: int = 0
    orphans: int = 0
    leftover_files: int = 0
    leftover_dirs: int = 0
    mounts_left: int = 0
    loops_left: int = 0
    tracebacks: int = 0
    injections: int = 0
    # hostile plans that did not start their session within RUN_LIMIT, or ran out of memory
    runaways: int = 0
    plans_stopped: int = 0  # hostile plans still running cases at RUN_LIMIT, cancelled then
    bad_exits: int = 0  # exit codes outside 0/1/2/130 where one is expected
    next_start_failures: int = 0
    details: list[str] = field(default_factory=list)

    ZERO = ("integrity_failures", "results_lost", "orphans", "leftover_files", "leftover_dirs",
            "mounts_left", "loops_left", "tracebacks", "injections", "runaways", "bad_exits",
            "next_start_failures")

    def problem(self, figure: str, detail: str, n: int = 1) -> None:
        setattr(self, figure, getattr(self, figure) + n)
        self.details.append(f"{figure}: {detail}")

    @property
    def cancel_count(self) -> int:
        return sum(self.cancels.values())

    def text(self) -> str:
        lines = [
            f"kills (SIGKILL): {sum(self.kills.values())}  {dict(sorted(self.kills.items()))}",
            f"cancels: {self.cancel_count}  {dict(sorted(self.cancels.items()))}",
            f"  stored as cancelled with exit 130: {self.cancels_stored_cancelled} of "
            f"{self.cancel_count}  {dict(sorted(self.cancel_outcomes.items()))}",
            f"runs over before the signal (not counted): {self.ended_before_signal}",
            f"hostile plans: {self.plans} ({self.plans_validated} passed validation, "
            f"{self.plans_stopped} still running cases at {RUN_LIMIT:.0f} s and cancelled)  "
            f"exits {dict(sorted(self.plan_exits.items()))}",
            f"hostile imports: {self.imports}  exits {dict(sorted(self.import_exits.items()))}",
            f"cleanups said at the next start: {self.cleanups_said}",
        ]
        lines += [f"{name.replace('_', ' ')}: {getattr(self, name)}" for name in self.ZERO]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        d = {name: getattr(self, name) for name in self.ZERO}
        d.update(kills=dict(self.kills), cancels=dict(self.cancels),
                 cancels_stored_cancelled=self.cancels_stored_cancelled,
                 cancel_outcomes=dict(self.cancel_outcomes), plans=self.plans,
                 plan_exits=dict(self.plan_exits), imports=self.imports,
                 import_exits=dict(self.import_exits), details=self.details)
        return d


# --- running DiskLab ---------------------------------------------------------------------------

class Run:
    """One `disklab ...` process in its own process group, its output read as it comes."""

    def __init__(self, args: Sequence[str], env: dict[str, str],
                 limit_memory: bool = False):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "disklab.cli.main", *args], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env,
            start_new_session=True)
        if limit_memory:  # a runaway hits this, not the host (set before it can allocate much)
            with contextlib.suppress(OSError):
                resource.prlimit(self.proc.pid, resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(s, out), daemon=True)
                         for s, out in ((self.proc.stdout, self.stdout),
                                        (self.proc.stderr, self.stderr))]
        for r in self._readers:
            r.start()

    @staticmethod
    def _read(stream: Any, out: list[str]) -> None:
        for line in stream:
            out.append(line)

    def events(self) -> list[dict[str, Any]]:
        found = []
        for line in list(self.stdout):
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
        return found

    def descendants(self) -> list[tuple[int, float]]:
        """(pid, start time) of every process under it: an orphan is one still there later."""
        return _descendants(self.proc.pid)

    def wait(self, timeout: float | None = None) -> int | None:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        for r in self._readers:
            r.join(10)
        return code

    @property
    def err(self) -> str:
        return "".join(self.stderr)


def _descendants(pid: int) -> list[tuple[int, float]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        found.append((p, _start_time(p)))
        todo += children.get(p, [])
    return found


def _start_time(pid: int) -> float:
    try:
        return float((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return -1.0


def _alive(pids: Sequence[tuple[int, float]]) -> list[int]:
    return [p for p, started in pids if started >= 0 and _start_time(p) == started]


def _kill_all(pids: Sequence[int]) -> None:
    for p in pids:
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)


def _processes_naming(path: Path) -> list[int]:
    """Processes whose argv names something under `path` (a tool working there)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(path) in argv and "soak.py" not in argv:
            found.append(int(entry.name))
    return found


# --- the machine's state -----------------------------------------------------------------------

def mounts_under(path: Path) -> list[str]:
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        mountpoint = line.split()[4].encode().decode("unicode_escape")
        if mountpoint.startswith(str(path)):
            out.append(mountpoint)
    return out


def loops_under(path: Path) -> list[str]:
    out = []
    for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
        try:
            if backing.read_text().strip().startswith(str(path)):
                out.append(backing.parent.parent.name)
        except OSError:
            continue
    return out


def integrity(library: Path) -> str:
    if not library.exists():
        return "ok"
    db = sqlite3.connect(f"file:{library}?mode=ro", uri=True, timeout=30)
    try:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        db.close()


def lost_results(library: Path, name: str, events: Sequence[dict[str, Any]]) -> list[str]:
    """The CaseFinished events printed before the end whose run or metrics the library lacks."""
    acknowledged = [e for e in events if e.get("event") == "CaseFinished"]
    if not acknowledged:
        return []
    db = sqlite3.connect(f"file:{library}?mode=ro", uri=True, timeout=30)
    try:
        row = db.execute("SELECT id FROM session WHERE name = ? ORDER BY id DESC",
                         (name,)).fetchone()
        if row is None:
            return [f"session {name!r} missing"]
        lost = []
        for e in acknowledged:
            run = db.execute("SELECT status FROM run WHERE session_id = ? AND case_id = ? AND "
                             "repeat = ?", (row[0], e["case_id"], e["repeat"])).fetchone()
            metrics = db.execute("SELECT count(*) FROM metric WHERE session_id = ? AND "
                                 "case_id = ? AND repeat = ?",
                                 (row[0], e["case_id"], e["repeat"])).fetchone()[0]
            if run is None or metrics < len(e.get("metrics") or ()):
                lost.append(f"{name}: {e['case_id']} r{e['repeat']}")
        return lost
    finally:
        db.close()


def session_status(library: Path, name: str) -> str | None:
    db = sqlite3.connect(f"file:{library}?mode=ro", uri=True, timeout=30)
    try:
        row = db.execute("SELECT status FROM session WHERE name = ? ORDER BY id DESC",
                         (name,)).fetchone()
        return None if row is None else str(row[0])
    finally:
        db.close()


# --- the soak ----------------------------------------------------------------------------------

class Soak:
    def __init__(self, work: Path, seed: int, log: Callable[[str], None]):
        self.work = work
        self.rng = random.Random(seed)
        self.log = log
        self.fig = Figures()
        self.tmp = work / "tmp"  # TMPDIR of every run: the mountpoints land here
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.library = work / "lib" / "library.sqlite3"
        self.library.parent.mkdir(exist_ok=True)
        self.state = work / "state" / "disklab"  # crash records: $XDG_STATE_HOME/disklab
        self.env = {**os.environ, "TMPDIR": str(self.tmp), "XDG_STATE_HOME": str(work / "state"),
                    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "app"),
                                                                os.environ.get("PYTHONPATH")]))}
        self.n = 0
        self.tools = [t for t in TOOLS if t == "engine" or shutil.which(t)]

    def _plan(self, name: str, target: str, tool: str, repeats: int = 3,
              configs: str = "") -> Path:
        self.n += 1
        path = self.work / f"plan-{self.n}.toml"
        path.write_text(f'name = "{name}"\nrepeats = {repeats}\nstop_on_failure = false\n\n'
                        f"[target]\n{target}\n\n{configs}[[test]]\n{TESTS[tool]}")
        return path

    def _target(self, kind: str, n: int) -> tuple[str, Path, str]:
        """The plan's [target] line, the path to inspect afterwards, the configurations."""
        if kind == "directory":
            d = self.work / f"target-{n}"
            d.mkdir()
            return f'directory = "{d}"', d, ""
        image = self.work / f"image-{n}.img"
        return (f'image = {{ path = "{image}", size = "1g" }}', image,
                '[[config]]\nlabel = "ext4"\nfs = "ext4"\n\n'
                '[[config]]\nlabel = "ext4 noatime"\nfs = "ext4"\nmount = ["noatime"]\n\n')

    # one killed or cancelled run, and the next start
    def attack(self, number: int, how: str) -> None:
        tool = self.rng.choice(self.tools)
        kind = self.rng.choice(("directory", "image") if IS_ROOT else ("directory",))
        name = f"soak {how} {number}"
        target, inspect, configs = self._target(kind, self.n + 1)
        plan = self._plan(name, target, tool, configs=configs)
        run = Run(["run", str(plan), "--library", str(self.library), "--json"], self.env)
        started = time.monotonic()
        while not any(e.get("event") == "SessionStarted" for e in run.events()):
            if run.proc.poll() is not None or time.monotonic() - started > 120:
                break
            time.sleep(0.05)
        # from the session's start: before it, nothing of the run exists yet
        delay = self.rng.uniform(0.0, 9.0 if kind == "image" else 6.0)
        if run.wait(delay) is not None:
            self.fig.ended_before_signal += 1
            self.log(f"{name}: {tool} on {kind} ended before the signal")
            self._after(name, run, [], inspect, kind)
            return
        pids = run.descendants()
        if how == "kill":
            os.kill(run.proc.pid, signal.SIGKILL)
            self.fig.kills[f"{tool}/{kind}"] += 1
            code = run.wait(60)
        else:
            way = CANCELS[number % len(CANCELS)]
            if way == "SIGINT to the group":
                os.killpg(run.proc.pid, signal.SIGINT)
            else:
                os.kill(run.proc.pid,
                        signal.SIGINT if way.startswith("SIGINT") else signal.SIGTERM)
            self.fig.cancels[way] += 1
            code = run.wait(120)
            if code is None:
                self.fig.problem("bad_exits", f"{name}: no exit 120 s after {way}")
                os.killpg(run.proc.pid, signal.SIGKILL)
                code = run.wait(60)
            status = session_status(self.library, name)
            self.fig.cancel_outcomes[f"{status}/{code}"] += 1
            if status == "cancelled" and code == 130:
                self.fig.cancels_stored_cancelled += 1
        self.log(f"{name}: {tool} on {kind}, {how} after {delay:.1f} s: exit {code}, "
                 f"{sum(e.get('event') == 'CaseFinished' for e in run.events())} acknowledged")
        self._after(name, run, pids, inspect, kind)

    def _after(self, name: str, run: Run, pids: list[tuple[int, float]], inspect: Path,
               kind: str) -> None:
        """Orphans now; then the next start; then what is left, the library, the results."""
        deadline = time.monotonic() + 5

        def survivors() -> set[int]:
            return set(_alive(pids)) | set(_processes_naming(inspect)) | set(
                _processes_naming(self.tmp))

        while survivors() and time.monotonic() < deadline:
            time.sleep(0.1)
        orphans = sorted(survivors())
        if orphans:
            self.fig.problem("orphans", f"{name}: pids {orphans} still running", len(orphans))
            _kill_all(orphans)
        if "Traceback" in run.err:
            self.fig.problem("tracebacks", f"{name}: {run.err[-600:]}")
        self.next_start(name)
        if kind == "directory":
            left = [p.name for p in inspect.iterdir() if p.name.startswith("disklab-")]
            if left:
                self.fig.problem("leftover_files", f"{name}: {left}", len(left))
        elif inspect.exists():
            self.fig.problem("leftover_files", f"{name}: {inspect} (the image DiskLab made)")
        self.check_machine(name)
        lost = lost_results(self.library, name, run.events())
        if lost:
            self.fig.problem("results_lost", "; ".join(lost), len(lost))

    def next_start(self, after: str) -> None:
        """A short real run with the same library: the start that cleans up after a kill."""
        target = self.work / "next"
        target.mkdir(exist_ok=True)
        plan = self._plan(f"soak next start after {after}", f'directory = "{target}"', "engine",
                          repeats=1)
        plan.write_text(plan.read_text().replace('size = "32m"', 'size = "1m"')
                        .replace('runtime = "1s"', 'runtime = "0s"'))
        run = Run(["run", str(plan), "--library", str(self.library), "--json"], self.env)
        code = run.wait(300)
        said = [line for line in run.stderr if "cleaned up after an earlier run" in line]
        self.fig.cleanups_said += len(said)
        for line in said:
            self.log("  " + line.strip())
        if code != 0:
            self.fig.problem("next_start_failures", f"after {after}: exit {code}: "
                             f"{run.err[-400:]}")
        if "Traceback" in run.err:
            self.fig.problem("tracebacks", f"next start after {after}: {run.err[-600:]}")

    def check_machine(self, name: str) -> None:
        integrity_result = integrity(self.library)
        if integrity_result != "ok":
            self.fig.problem("integrity_failures", f"{name}: {integrity_result}")
        dirs = [p.name for p in self.tmp.iterdir()]
        if dirs:
            self.fig.problem("leftover_dirs", f"{name}: {dirs} in TMPDIR", len(dirs))
            for p in self.tmp.iterdir():  # one leak is counted once, not again for every run
                if not os.path.ismount(p):
                    shutil.rmtree(p, ignore_errors=True)
        states = list(self.state.glob("setup-state-*")) if self.state.is_dir() else []
        if states:
            self.fig.problem("leftover_files", f"{name}: {states}", len(states))
        mounts = mounts_under(self.work)
        if mounts:
            self.fig.problem("mounts_left", f"{name}: {mounts}", len(mounts))
            for m in mounts:
                subprocess.run(["umount", "-l", m], check=False)
        loops = loops_under(self.work)
        if loops:
            self.fig.problem("loops_left", f"{name}: {loops}", len(loops))
            for loop in loops:
                subprocess.run(["losetup", "-d", f"/dev/{loop}"], check=False)

    # hostile plans
    def hostile_plan(self, number: int, text: str) -> None:
        self.fig.plans += 1
        plan = self.work / f"hostile-{number}.toml"
        plan.write_bytes(text.encode("utf-8", errors="surrogateescape"))
        name = f"hostile {number}"
        check = Run(["plan", "validate", str(plan), "--library", str(self.library)], self.env,
                    limit_memory=True)
        code = check.wait(60)
        if code is None:
            self.fig.problem("runaways", f"{name}: `plan validate` ran 60 s: {text[:200]!r}")
            os.killpg(check.proc.pid, signal.SIGKILL)
            check.wait(30)
        self.fig.plan_exits[f"validate {code}"] += 1
        self._hostile_output(name, check, code, text)
        if code == 0:
            self.fig.plans_validated += 1
            run = Run(["run", str(plan), "--library", str(self.library), "--json"], self.env,
                      limit_memory=True)
            code = run.wait(RUN_LIMIT)
            if code is None:
                started = any(e.get("event") == "SessionStarted" for e in run.events())
                if started:  # a long plan going through its cases: cancelled, not a fault
                    self.fig.plans_stopped += 1
                else:
                    self.fig.problem("runaways", f"{name}: no session {RUN_LIMIT:.0f} s after "
                                     f"the start: {text[:300]!r}")
                os.killpg(run.proc.pid, signal.SIGINT)
                code = run.wait(30)
                if code is None:
                    self.fig.problem("bad_exits", f"{name}: no exit 30 s after SIGINT")
                    os.killpg(run.proc.pid, signal.SIGKILL)
                    code = run.wait(30)
            elif "MemoryError" in run.err:
                self.fig.problem("runaways", f"{name}: ran out of memory: {text[:300]!r}")
            self.fig.plan_exits[f"run {code}"] += 1
            self._hostile_output(name, run, code, text)
            self.next_start(name)
        self.check_machine(name)
        marker = self.work / MARKER
        if marker.exists() or Path.cwd().joinpath(MARKER).exists():
            self.fig.problem("injections", f"{name}: {text[:300]!r}")
            marker.unlink(missing_ok=True)

    def _hostile_output(self, name: str, run: Run, code: int | None, text: str) -> None:
        if "Traceback" in run.err:
            self.fig.problem("tracebacks", f"{name}: {text[:200]!r}: {run.err[-500:]}")
        if code not in (0, 1, 2, 130, None):
            self.fig.problem("bad_exits", f"{name}: exit {code}: {text[:200]!r}: "
                             f"{run.err[-300:]}")

    # hostile imports
    def hostile_import(self, number: int, tool: str, data: bytes) -> None:
        self.fig.imports += 1
        path = self.work / f"import-{number}.out"
        path.write_bytes(data)
        run = Run(["import", str(path), "--tool", tool, "--library", str(self.library)],
                  self.env, limit_memory=True)
        code = run.wait(120)
        if code is None:
            self.fig.problem("runaways", f"import {number} ({tool}) ran 120 s")
            os.killpg(run.proc.pid, signal.SIGKILL)
            code = run.wait(30)
        self.fig.import_exits[str(code)] += 1
        if "Traceback" in run.err:
            self.fig.problem("tracebacks", f"import {number} ({tool}): {run.err[-500:]}")
        if code not in (0, 2):
            self.fig.problem("bad_exits", f"import {number} ({tool}): exit {code}: "
                             f"{run.err[-300:]}")
        path.unlink()
        self.check_machine(f"import {number}")


# --- the hostile corpora -----------------------------------------------------------------------

BIG = ("0", "-1", "2147483648", "4294967296", "9223372036854775807", "18446744073709551616",
       "1" + "0" * 30, "9" * 400, "1e308", "inf", "nan", "-0", "1.5", "true", '""', "[]",
       "{}", '"99999999999999999999g"', '"' + "9" * 400 + 'm"', '"1e999k"', '"-5m"',
       '"0x10m"', '"1' + "0" * 4000 + '"', '"1 t"', '"١٢٣m"', '"NaNm"')
NUMERIC_KEYS = {
    "engine": ("size", "block_size", "streams", "queue_depth", "runtime"),
    "fio": ("size", "bs", "numjobs", "iodepth", "runtime", "ramp_time", "fsync", "rwmixread"),
    "iozone": ("file_size", "record_size", "threads", "min_file_size", "max_file_size",
               "min_record_size", "max_record_size"),
}
INJECTIONS = (f"; touch {MARKER}", f"$(touch {MARKER})", f"`touch {MARKER}`",
              f"x\ntouch {MARKER}", f"--exec_prerun=touch {MARKER}", f"| touch {MARKER}",
              f"&& touch {MARKER} #", f"-f /etc/passwd --exec_postrun=touch {MARKER}")
SYNTAX = ('name = "unterminated\n', "[target\n", "name = 'a'\nname = 'b'\n",
          "[[test]]\ntool = \n", "= 3\n", "repeats = 3 4\n", "\ufeff[target]\n",
          "name = \"\x00\"\n", "repeats = 0x\n", "[target]\ndirectory = \"\\q\"\n",
          "a = [" * 2000 + "]" * 2000 + "\n", "a = {" * 500 + "\n", "x" * 200000 + "\n",
          "[[test]]\n" * 3000, "name = '''\n", "repeats = 1979-05-27T07:32:00Z\n")


def hostile_plans(rng: random.Random, count: int, work: Path, tools: Sequence[str]) -> list[str]:
    """Plans that try to crash, exhaust, inject, escape or confuse DiskLab."""
    target = work / "hostile-target"
    target.mkdir(exist_ok=True)
    (work / "a-file").write_text("not a directory")
    base = 'name = "hostile"\nrepeats = {repeats}\n\n[target]\n{target}\n\n[[test]]\n{test}'
    directory = f'directory = "{target}"'

    def plan(test: str, repeats: str = "1", tgt: str = directory) -> str:
        return base.format(repeats=repeats, target=tgt, test=test)

    small = {"engine": 'tool = "engine"\nmode = "write"\nblock_size = "64k"\nsize = "1m"\n',
             "fio": 'tool = "fio"\nrw = "write"\nbs = "64k"\nsize = "1m"\n',
             "iozone": 'tool = "iozone"\ntests = ["write"]\nrecord_size = "64k"\n'
                       'file_size = "1m"\n'}
    makers: list[Callable[[], str]] = [
        lambda: plan(small["engine"], repeats=rng.choice(BIG)),
        lambda: _with(small, rng, tools, rng.choice(BIG)),
        lambda: plan(small["engine"].replace('block_size = "64k"\n', "")
                     + "block_size = [" + ", ".join(f'"{k}k"' for k in range(4, 4004, 4))
                     + "]\nstreams = [" + ", ".join(str(n) for n in range(1, 1001)) + "]\n"),
        lambda: plan(small["engine"].replace('block_size = "64k"\n', "") + "block_size = ["
                     + ", ".join(f'"{k}k"' for k in range(4, 40004, 4)) + "]\n",
                     repeats="1000000"),
        lambda: plan(small["engine"]).replace('name = "hostile"',
                                              f'name = "{_toml(rng.choice(INJECTIONS))}"'),
        lambda: _inject_param(small, rng, tools),
        lambda: plan(small["engine"], tgt=f'directory = "{_toml(rng.choice(INJECTIONS))}"'),
        lambda: plan(small["engine"], tgt=rng.choice((
            'directory = "/proc"', 'directory = "/"', 'directory = "relative/dir"',
            f'directory = "{work}/a-file"', f'directory = "{target}/../../.."',
            'directory = ""', 'device = "/dev/null"', 'device = "/dev/loop-nope"',
            f'image = {{ path = "{work}/a-file", size = "1g" }}',
            f'image = {{ path = "{work}/x.img", size = "{rng.choice(BIG).strip(chr(34))}" }}',
            f'image = {{ path = "{work}/x.img" }}', 'format = "/dev/sda"',
            f'directory = "{target}"\ndevice = "/dev/null"'))),
        lambda: plan(small["engine"].replace('"engine"', rng.choice(
            ('"nope"', '"../engine"', '""', "3", f'"engine; touch {MARKER}"', '"ENGINE"')))),
        lambda: plan(small["engine"] + rng.choice(("unknown = 1\n", "mode = \"read\"\n",
                                                   "direct = \"yes\"\n", "size = []\n",
                                                   "size = [[1]]\n", "[test.sub]\na = 1\n"))),
        lambda: rng.choice(SYNTAX),
        lambda: plan(small["engine"])[: rng.randrange(1, len(plan(small["engine"])))],
        lambda: plan(small["engine"]) + "\n[[config]]\nlabel = \"x\"\nfs = \""
        + rng.choice(("ext4", "zfs", "ext4; touch PWNED", "")) + "\"\nmount = [\""
        + rng.choice(("noatime", "data=journal", f"x,exec=touch {MARKER}", "../../etc")) + "\"]\n",
        lambda: plan(small["engine"]).encode().decode() + "\n" + "\udcff",
    ]
    return [rng.choice(makers)() for _ in range(count)]


def _toml(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _with(small: dict[str, str], rng: random.Random, tools: Sequence[str], value: str) -> str:
    tool = rng.choice(list(tools))
    key = rng.choice(NUMERIC_KEYS[tool])
    test = re.sub(rf"^{key} = .*\n", "", small[tool], flags=re.M) + f"{key} = {value}\n"
    return (f'name = "hostile"\nrepeats = 1\n\n[target]\ndirectory = "{{dir}}"\n\n[[test]]\n'
            f"{test}")


def _inject_param(small: dict[str, str], rng: random.Random, tools: Sequence[str]) -> str:
    tool = rng.choice(list(tools))
    key = rng.choice(("mode", "ioengine", "rw", "tests", "name", "block_size"))
    value = rng.choice(INJECTIONS)
    test = re.sub(rf"^{key} = .*\n", "", small[tool], flags=re.M) + f'{key} = "{_toml(value)}"\n'
    return (f'name = "hostile"\nrepeats = 1\n\n[target]\ndirectory = "{{dir}}"\n\n[[test]]\n'
            f"{test}")


IMPORTABLE = {"fio": ("*.json",), "iozone": ("*.txt",), "bonnie": ("*.csv", "*.txt"),
              "dd": ("*.stderr.txt",)}


def hostile_imports(rng: random.Random, count: int) -> list[tuple[str, bytes]]:
    """Real tool outputs damaged: huge numbers, cut short, bad bytes, deep nesting, junk."""
    sources = {tool: sorted(p for pattern in patterns for p in (FIXTURES / tool).glob(pattern))
               for tool, patterns in IMPORTABLE.items()}
    corpus = []
    for _ in range(count):
        tool = rng.choice([t for t in sources if sources[t]])
        data = rng.choice(sources[tool]).read_bytes()
        kind = rng.choice(("digits", "digits", "cut", "bytes", "nest", "junk", "lines", "empty",
                           "swap"))
        if kind == "digits":
            spots = [m.span() for m in re.finditer(rb"\d+(\.\d+)?", data)]
            for _n in range(rng.randint(1, 5)):
                if spots:
                    a, b = rng.choice(spots)
                    big = rng.choice((b"9" * 401, b"1e999", b"-" + b"9" * 30, b"nan", b"0"))
                    data = data[:a] + big + data[b:]
                    spots = [m.span() for m in re.finditer(rb"\d+(\.\d+)?", data)]
        elif kind == "cut":
            data = data[: rng.randrange(0, max(1, len(data)))]
        elif kind == "bytes":
            i = rng.randrange(0, max(1, len(data)))
            data = data[:i] + rng.choice((b"\xff\xfe", b"\x00" * 100, b"\xed\xa0\x80")) + data[i:]
        elif kind == "nest":
            data = b"[" * 100000 + data + b"]" * 100000
        elif kind == "junk":
            data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 20000)))
        elif kind == "lines":
            data = data + (b"x" * 2_000_000) + b"\n"
        elif kind == "empty":
            data = b""
        else:
            lines = data.split(b"\n")
            rng.shuffle(lines)
            data = b"\n".join(lines)
        corpus.append((tool, data))
    return corpus


def soak(kills: int, cancels: int, plans: int, imports: int, *, seed: int = 18,
         work: Path | None = None, keep: bool = False,
         log: Callable[[str], None] = lambda line: None) -> Figures:
    """Run the soak; its figures."""
    work = Path(tempfile.mkdtemp(prefix="disklab-soak-", dir=work))
    s = Soak(work, seed, log)
    try:
        attacks = ["kill"] * kills + ["cancel"] * cancels
        s.rng.shuffle(attacks)
        counters = Counter[str]()
        for how in attacks:
            counters[how] += 1
            s.attack(counters[how], how)
        for n, text in enumerate(hostile_plans(s.rng, plans, work, s.tools), 1):
            s.hostile_plan(n, text.replace("{dir}", str(work / "hostile-target")))
            log(f"hostile plan {n}: done")
        for n, (tool, data) in enumerate(hostile_imports(s.rng, imports), 1):
            s.hostile_import(n, tool, data)
        log(f"hostile imports: {imports} done")
    finally:
        for m in mounts_under(work):
            subprocess.run(["umount", "-l", m], check=False)
        for loop in loops_under(work):
            subprocess.run(["losetup", "-d", f"/dev/{loop}"], check=False)
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    return s.fig


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--cancels", type=int, default=50)
    parser.add_argument("--plans", type=int, default=200)
    parser.add_argument("--imports", type=int, default=100)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--work", type=Path, default=None, help="where to work (default: /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)
    started = time.monotonic()
    fig = soak(args.kills, args.cancels, args.plans, args.imports, seed=args.seed,
               work=args.work, keep=args.keep,
               log=(lambda line: None) if args.quiet else
               (lambda line: print(line, file=sys.stderr, flush=True)))
    if args.json:
        print(json.dumps(fig.as_dict(), indent=1))
    else:
        print(f"\nsoak: {time.monotonic() - started:.0f} s, seed {args.seed}")
        print(fig.text())
        for d in fig.details:
            print("  " + d[:1000])
    clean = all(getattr(fig, name) == 0 for name in Figures.ZERO)
    return 0 if clean and fig.cancels_stored_cancelled == fig.cancel_count else 1


if __name__ == "__main__":
    sys.exit(main())
