"""Where a bench run was measured (issue 34 point 4): the machine's facts (CPU model, CPUs,
kernel, memory; the device under the scratch filesystems and its I/O scheduler) and the load
average while each figure ran, so that a reader of results.json can tell a machine difference
from a regression; and the last two full runs side by side, as the README shows them.

Why the device of the scratch images' directory: every I/O figure runs on a loop device whose
image is a file there (scratch.py), so that disk (its model, rotational flag, scheduler) is what
the figures measure through; the loop devices themselves are made and removed per figure."""

from __future__ import annotations

import hashlib
import os
import platform
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

RUNS_KEPT = 6  # runs kept in results.json's "runs", newest last
FULL_KEPT = 2  # and the last full runs whatever their age: the README puts them side by side
ADDS = 10_000_000  # the calibration's Python loop: this many additions
HASHED = 256 << 20  # the calibration's C work: SHA-256 of this many bytes in memory


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def cpu_model() -> str:
    for line in _read(Path("/proc/cpuinfo")).splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def disk_of(directory: str) -> dict[str, Any]:
    """The block device holding `directory` (the whole disk when it is a partition): its name,
    model, rotational flag and the scheduler in use (the bracketed one in queue/scheduler)."""
    try:
        dev = os.stat(directory).st_dev
    except OSError as e:
        return {"directory": directory, "error": str(e)}
    sys_dev = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    if not sys_dev.exists():  # tmpfs, overlay, a network filesystem: no block device
        return {"directory": directory, "device": None}
    node = sys_dev.resolve()
    disk = node.parent if (node / "partition").exists() else node
    queue = disk / "queue"
    scheduler = _read(queue / "scheduler")
    chosen = scheduler[scheduler.find("[") + 1:scheduler.find("]")] if "[" in scheduler else (
        scheduler or None)
    return {"directory": directory, "device": node.name, "disk": disk.name,
            "model": _read(disk / "device" / "model") or None,
            "rotational": _read(queue / "rotational") == "1", "scheduler": chosen,
            "nr_requests": _read(queue / "nr_requests") or None}


def facts(scratch_base: str = "/var/tmp") -> dict[str, Any]:
    """The machine a run was measured on."""
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return {"host": platform.node(), "cpu_model": cpu_model(), "cpus": os.cpu_count(),
            "kernel": platform.release(), "memory_gib": round(pages / (1 << 30), 1),
            "python": platform.python_version(), "scratch_disk": disk_of(scratch_base),
            "loadavg_at_start": _loadavg()}


def calibration(adds: int = ADDS, hashed: int = HASHED, best_of: int = 3) -> dict[str, float]:
    """The CPU's speed as two fixed pieces of work, the best of `best_of` each: a bare Python
    loop of `adds` additions (the kind of work the engine's per-request bookkeeping, the
    parsers and the library's inserts do) and SHA-256 of `hashed` bytes in memory (C code).

    Why: two runs on machines with the same CPU model string and kernel differed 3x on every
    CPU-bound figure (bench/README, "The last two full runs"); with this row a reader tells a
    slower machine from a regression at a glance. Taken at the run's start and end, so that a
    machine whose speed changed during the run shows it too."""
    def loop() -> None:
        total = 0
        for i in range(adds):
            total += i

    block = bytes(1 << 20)

    def digest() -> None:
        h = hashlib.sha256()
        for _ in range(hashed >> 20):
            h.update(block)

    def best(work: Any) -> float:
        times = []
        for _ in range(best_of):
            t0 = time.perf_counter()
            work()
            times.append(time.perf_counter() - t0)
        return round(min(times), 3)

    return {"python_adds": adds, "python_s": best(loop), "sha256_bytes": hashed,
            "sha256_s": best(digest)}


def calibration_row(start: dict[str, float], end: dict[str, float]) -> dict[str, Any]:
    """The calibration as a figure row (info), so that the side-by-side table shows it."""
    mib = start["sha256_bytes"] >> 20
    return {"figure": f"0 CPU: {start['python_adds'] // 1_000_000} M Python additions; "
                      f"SHA-256 of {mib} MiB (best of 3)",
            "value": f"{start['python_s']:.2f} s; {start['sha256_s']:.2f} s",
            "target": "-",
            "verdict": f"info: at the run's end {end['python_s']:.2f} s; {end['sha256_s']:.2f} s",
            "details": {"start": start, "end": end}}


def _loadavg() -> list[float]:
    return [float(x) for x in _read(Path("/proc/loadavg")).split()[:3]] or [0.0, 0.0, 0.0]


class LoadWatch:
    """The 1-minute load average sampled every `every` seconds in a thread of its own while a
    figure runs: its first, last, lowest, highest and mean values."""

    def __init__(self, every: float = 5.0):
        self.every = every
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="loadwatch", daemon=True)

    def _watch(self) -> None:
        while True:
            self.samples.append(_loadavg()[0])
            if self._stop.wait(self.every):
                return

    def summary(self) -> dict[str, float]:
        s = self.samples or [_loadavg()[0]]
        return {"start": s[0], "end": s[-1], "min": min(s), "max": max(s),
                "mean": round(sum(s) / len(s), 2), "cpus": os.cpu_count() or 1}

    @contextmanager
    def running(self) -> Iterator[LoadWatch]:
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join()
            self.samples.append(_loadavg()[0])


def keep_runs(old: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """results.json's new content: the latest run at the top level (as before), every earlier
    run in "runs" (the last RUNS_KEPT, newest last, the latest too, and the last FULL_KEPT full
    runs however many partial ones came after them: three 15-pair reruns of one row pushed a
    full run out, and the side-by-side table lost it), and any other record an earlier pass
    left there (its own keys) kept as it was."""
    runs = [r for r in old.get("runs", []) if isinstance(r, dict)]
    if not runs and old.get("rows"):  # a results.json from before runs were kept
        runs = [{k: old[k] for k in ("when", "host", "kernel", "cpus", "seconds", "rows")
                 if k in old}]
    runs = [*runs, run]
    full = [i for i, r in enumerate(runs) if r.get("full")][-FULL_KEPT:]
    runs = [r for i, r in enumerate(runs) if i >= len(runs) - RUNS_KEPT or i in full]
    kept = {k: v for k, v in old.items() if k not in run and k != "runs"}
    return {**run, **kept, "runs": runs}


def _cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return "-"
    load = row.get("load") or {}
    where = f" (load {load['min']}-{load['max']})" if load else ""
    verdict = re.split("[;:]", str(row.get("verdict", "")))[0]  # ok, short, unresolved, info
    return f"{row.get('value', '-')} {verdict}{where}".replace("|", "/")


def _header(run: dict[str, Any]) -> str:
    m = run.get("machine") or {}
    disk = m.get("scratch_disk") or {}
    cpu = m.get("calibration") or {}
    speed = (f", {cpu['python_adds'] // 1_000_000} M Python additions in {cpu['python_s']:.2f} s"
             if cpu else "")
    return (f"{run.get('when', '?')}, {m.get('cpu_model', '?')} x {m.get('cpus', run.get('cpus'))}"
            f", kernel {m.get('kernel', run.get('kernel', '?'))}, disk {disk.get('disk', '?')} "
            f"({disk.get('scheduler', '?')}){speed}, commit {run.get('commit', '?')}"
            + ("" if run.get("full", True) else f", `{' '.join(run.get('command', []))}`"))


def side_by_side(results: dict[str, Any], full_only: bool = True) -> str:
    """A markdown table of the last two runs (full runs unless `full_only` is False): one line
    a figure row, each run's value, verdict and the load average (lowest-highest) while that
    figure ran; each run's machine above."""
    every = [r for r in results.get("runs", []) if isinstance(r, dict)]
    full = [r for r in every if r.get("full")]
    runs = (full if full_only and len(full) >= 2 else every)[-2:]
    if not runs:
        return "no run recorded in results.json yet\n"
    names: list[str] = []
    for run in runs:
        names += [r["figure"] for r in run.get("rows", []) if r["figure"] not in names]
    lines = [f"- run {chr(65 + i)}: {_header(run)}" for i, run in enumerate(runs)]
    lines += ["", "| figure | " + " | ".join(f"run {chr(65 + i)}" for i in range(len(runs))) + " |",
              "|---" * (len(runs) + 1) + "|"]
    for name in names:
        cells = [_cell(next((r for r in run.get("rows", []) if r["figure"] == name), None))
                 for run in runs]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
