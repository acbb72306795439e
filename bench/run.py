"""DiskLab's benchmarks: ratios measured side by side in one run (A B A B ..., >= 5 pairs), and
the observer effect measured by its mechanisms (bytes, CPU, memory, wake-ups).

Run by hand as root (`make bench`), never in CI; about 25-35 minutes. Prints one table and writes
bench/results.json. Machines here are shared and noisy: a noisy figure is judged on the confidence
interval of its median (figures/common.judge) and says "unresolved" with that interval when the
noise is wider than its distance to the target (bench/README.md).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from figures import (  # noqa: E402
    app_overhead,
    engine_vs_dd,
    engine_vs_fio,
    gui_figures,
    history_figure,
    host_scaling,
    library_figures,
    long_run,
    observer_cost,
    observer_effect,
    parser_rates,
    pivot_figure,
    target_skew,
)
from machine import LoadWatch, calibration, calibration_row, facts, keep_runs, side_by_side  # noqa: E402
from scratch import scratch_ext4  # noqa: E402


@dataclass
class Row:
    figure: str
    value: str
    target: str
    verdict: str  # "ok", "short", "unresolved: <interval>", "info..." or "not measured: <why>"
    details: dict
    load: dict | None = None  # the 1-minute load average while the figure ran (machine.py)


FIGURE_LIMIT_S = 3600  # one figure's whole time, children included (--figure-timeout)
XDG_VARS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")


class FigureTimeout(Exception):
    """A figure that did not end within its limit; says what it was waiting for."""


@contextlib.contextmanager
def own_directories() -> Iterator[None]:
    """The figure and every process it starts get their own settings, data and state
    directories (temporary XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME; no
    DISKLAB_LIBRARY): a window a figure opens starts as on a fresh account, whatever the
    user's own ~/.config/DiskLab says (a `page=target` there kept figure 6 waiting for ever),
    and no figure writes the user's settings, library or log."""
    saved = {var: os.environ.get(var) for var in (*XDG_VARS, "DISKLAB_LIBRARY")}
    with tempfile.TemporaryDirectory(prefix="disklab-bench-xdg-") as base:
        for var in XDG_VARS:
            os.environ[var] = str(Path(base) / var.lower())
        os.environ.pop("DISKLAB_LIBRARY", None)
        try:
            yield
        finally:
            for var, value in saved.items():
                if value is None:
                    os.environ.pop(var, None)
                else:
                    os.environ[var] = value


def _waited_for() -> str:
    """What a figure was waiting for when its time ran out: the processes it had started."""
    try:
        children = psutil.Process().children(recursive=True)
        running = [" ".join(" ".join(c.cmdline()).split())[:160] for c in children
                   if c.is_running()]
    except psutil.Error:
        running = []
    return ("its child processes " + "; ".join(f"[{c}]" for c in running) if running
            else "its own work in the bench's process (no child process was running)")


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """FigureTimeout in the bench's main thread after `seconds`: a subprocess.run waited on
    kills its child as the exception passes, and the scratch areas' finally blocks tear down."""
    def expire(_signum: int, _frame: object) -> None:
        raise FigureTimeout(f"timed out after {seconds} s while waiting for {_waited_for()}")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _collect(name: str, func: Callable[..., list[dict]], *args: object,
             limit: int = FIGURE_LIMIT_S) -> list[Row]:
    """Run one figure in its own directories and time limit, the load average watched while it
    runs (each of its rows carries it); a figure that breaks or times out is reported, not fatal
    to the others."""
    watch = LoadWatch()
    try:
        with watch.running(), own_directories(), time_limit(limit):
            rows = [Row(**r) for r in func(*args)]
    except FigureTimeout as e:
        rows = [Row(name, "-", "-", f"not measured: {e}", {})]
    except Exception as e:  # report and go on: one broken figure must not hide the rest
        rows = [Row(name, "-", "-", f"not measured: {type(e).__name__}: {e}", {})]
    for row in rows:
        row.load = watch.summary()
    return rows


def _commit() -> str:
    """The commit the bench ran at (with "+changes" when the work tree differs), or "?"."""
    try:
        head = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(HERE), "status", "--porcelain", "--", "."],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"
    return (head + ("+changes" if dirty else "")) if head else "?"


def save(rows: list[Row], started: float, args: argparse.Namespace, machine: dict) -> None:
    """results.json: this run (its rows, machine, command, commit) at the top level and last in
    "runs", the earlier runs kept beside it (machine.keep_runs)."""
    path = HERE / "results.json"
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        old = {}
    run = {"when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "host": platform.node(),
           "kernel": platform.release(), "cpus": os.cpu_count(),
           "seconds": round(time.time() - started, 1), "commit": _commit(),
           "command": ["bench/run.py", *sys.argv[1:]], "full": not args.only and not args.cases,
           "machine": machine | {"loadavg_at_end": [float(x) for x in os.getloadavg()]},
           "rows": [asdict(r) for r in rows]}
    path.write_text(json.dumps(keep_runs(old, run), indent=2))
    print(f"\nwrote {path}")


def chosen_figures(only: list[str] | None, cases: list[str] | None) -> set[str]:
    """The figures a run makes: those of --only; with --cases alone, figure 4 only (its noisy
    rows again, not the whole bench: a --cases run without --only ran every figure for 15
    minutes before reaching them); else all of them."""
    if only:
        return set(only)
    return {"4"} if cases else {str(i) for i in range(1, 12)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=5, help="A/B pairs per ratio (>= 5)")
    parser.add_argument("--size", default="1g", help="file size for the I/O figures")
    parser.add_argument("--only", nargs="*", help="figure numbers to run (1..11; 12, the long "
                        "run, only when named)")
    parser.add_argument("--long-scale", type=float, default=1.0,
                        help="figure 12: its 256 GiB over a 16 GiB file times this (0.01 for a "
                             "smoke test of a few minutes)")
    parser.add_argument("--long-dir", default="/var/tmp",
                        help="figure 12: the directory of its file (needs the file's size free)")
    parser.add_argument("--cases", nargs="+", choices=engine_vs_fio.CASE_NAMES, metavar="CASE",
                        help="figure 4: only these engine/fio cases, and not engine/dd (to "
                             "measure a noisy row again with more pairs): "
                             + ", ".join(engine_vs_fio.CASE_NAMES))
    parser.add_argument("--observer-backing", choices=("disk", "ram"), default="disk",
                        help="figure 1's scratch image on the disk like the others (default), or "
                             "in RAM (tmpfs): no disk noise, but 1 GiB runs then last 0.2 s and "
                             "scatter as much (bench/README.md, figure 1)")
    parser.add_argument("--observer-size", default="256m",
                        help="file size of figure 1e, the end-to-end throughput ratio (report "
                             "only: it cannot resolve 1 %% on a shared disk at any size)")
    parser.add_argument("--no-end-to-end", action="store_true",
                        help="skip figure 1e (report only) to save its ~5 minutes")
    parser.add_argument("--figure-timeout", type=int, default=FIGURE_LIMIT_S,
                        help="seconds one figure may take, children included; a figure past "
                             "it is reported as not measured, with what it was waiting for, "
                             "and the bench goes on (default %(default)s)")
    parser.add_argument("--table", action="store_true",
                        help="print the last two full runs in results.json side by side (a "
                             "markdown table, as bench/README.md shows them) and exit")
    args = parser.parse_args()
    if args.table:
        results = json.loads((HERE / "results.json").read_text())
        print(side_by_side(results, full_only=True), end="")
        return 0
    if args.cases and args.only and "4" not in args.only:
        parser.error("--cases names figure 4's cases, and --only leaves figure 4 out")
    machine = facts() | {"calibration": calibration()}
    collect = functools.partial(_collect, limit=args.figure_timeout)
    # a kill of the bench is a normal exit: the scratch areas' finally blocks unmount and detach
    signal.signal(signal.SIGTERM, lambda *_a: sys.exit(143))
    pairs = max(args.pairs, 5)
    only = chosen_figures(args.only, args.cases)
    started = time.time()
    rows: list[Row] = []
    if "1" in only:
        with scratch_ext4(options="noatime") as mnt:
            rows += collect("1 observer cost", observer_cost.run, mnt, pairs)
        if not args.no_end_to_end:
            base = "/dev/shm" if args.observer_backing == "ram" else "/var/tmp"
            with scratch_ext4(base=base) as mnt:
                rows += collect("1e observer effect", observer_effect.run, mnt, pairs,
                                 args.observer_size)
    with scratch_ext4() if {"2", "4"} & only else contextlib.nullcontext(None) as mnt:
        if "2" in only:
            rows += collect("2 app overhead", app_overhead.run, mnt)
        if "4" in only:
            if not args.cases:
                rows += collect("4 engine / dd", engine_vs_dd.run, mnt, pairs, args.size)
            rows += collect("4 engine / fio", engine_vs_fio.run, mnt, pairs, args.size,
                            args.cases)
    if "3" in only or "6" in only:
        rows += collect("3/6 GUI", gui_figures.run, only)
    if "5" in only:
        rows += collect("5 library", library_figures.run)
    if "7" in only:
        rows += collect("7 parsers", parser_rates.run)
    if "8" in only:  # a scratch filesystem (and loop device) per fio server
        with contextlib.ExitStack() as stack:
            mounts = [stack.enter_context(scratch_ext4(size="1G"))
                      for _ in host_scaling.ADDRESSES]
            rows += collect("8 several hosts", host_scaling.run, mounts)
    if "9" in only:
        with scratch_ext4(size="2G") as mnt_a, scratch_ext4(size="2G") as mnt_b:
            rows += collect("9 several targets", target_skew.run, mnt_a, mnt_b)
    if "10" in only:
        rows += collect("10 pivot", pivot_figure.run)
    if "11" in only:
        rows += collect("11 history", history_figure.run)
    if "12" in only:  # hours at full scale: give --figure-timeout room (two arms)
        rows += collect("12 long run", long_run.run, Path(args.long_dir), args.long_scale)

    rows.insert(0, Row(**calibration_row(machine["calibration"], calibration())))
    width = max(len(r.figure) for r in rows)
    print(f"\n{'figure'.ljust(width)}  {'value':>22}  {'target':>12}  verdict")
    for r in rows:
        print(f"{r.figure.ljust(width)}  {r.value:>22}  {r.target:>12}  {r.verdict}")
    save(rows, started, args, machine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
