"""Figure 1 by mechanism: what DiskLab adds while a tool runs, measured where it happens instead
of through a throughput ratio that a shared disk scatters by +-30 %.

- 1a I/O to the target: bytes DiskLab's own process wrote (/proc/self/io write_bytes) and the
  writes and flushes the target's block device completed (/sys/dev/block/M:m/stat), from the
  2nd live sample of a read-only case (engine 4 KiB O_DIRECT random reads, time-based, on a
  scratch ext4 mounted noatime, so the tool itself writes nothing) to its end. With the library
  elsewhere the device must see 0 bytes; the same case with the library ON the target must show
  writes, or the instrument is blind and the figure says so.
- 1b CPU taken from the tool: a CPU-bound run (the engine rewriting a 256 MiB tmpfs file in
  4 KiB calls for 5 s: memory copies, no device) bare from this script versus through DiskLab's
  GUI (the real main window offscreen on the Run page, monitor, recorder, live plots) and
  headless, every process of every arm on one CPU, the order rotated; the ratio of the
  throughputs the tool reports, and DiskLab's own CPU share of that CPU while the tool ran
  (the ratio's bound, which other load does not move).
- 1c memory: DiskLab's RSS growth over the case (what it takes from the page cache).
- 1d wake-ups: voluntary context switches per second of all DiskLab's threads over the case.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from disklab.core import tools
from disklab.core.system.syncfs import syncfs
from disklab.core.tools.base import RunTarget, ToolOutput

from .common import judge, main_figure, with_defaults

READ_PLAN = ('name = "observer"\n[target]\ndirectory = "{dir}"\n[[test]]\ntool = "engine"\n'
             'mode = "randread"\nblock_size = "4k"\nsize = "64m"\ndirect = true\n'
             'runtime = {seconds}\n')
CPU_PLAN = ('name = "observer-cpu"\n[target]\ndirectory = "{dir}"\n[[test]]\ntool = "engine"\n'
            'mode = "write"\nblock_size = "4k"\nsize = "{size}"\nruntime = {seconds}\n')
CPU_SIZE = 256 << 20  # the file the CPU-bound run rewrites in place (tmpfs: memory copies)
CPU_SECONDS = 5  # per run: ~8 live samples, a steady-state window past the case's start
CPU_PAIRS = 9  # 1b: short pairs (a few seconds each), more of them in the same wall time

# Both arms: a snapshot of this process and of the target's device, and the case's window.
SNAP = textwrap.dedent("""
    import os, resource, sys, time
    DEV = sys.argv[3]
    # CPU time: getrusage (the kernel's runtime in ns; os.times() counts 10 ms ticks, +-0.25 %
    # of a 4 s window, the size of what 1b judges). This instrument's own work (reading every
    # thread's /proc files, ~0.5 ms a sample) is not DiskLab's: its thread CPU is summed and
    # taken off, each snapshot reading the CPU clock before doing its own work.
    SNAP_COST = [0.0]
    def _fields(path):
        with open(path) as f:
            return f.read().split()
    TOOL = [None]  # the pid of the child DiskLab runs now (a layout step, then the tool)
    def _running(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        return fields[1] if fields[0] != "Z" else None  # its parent, while not a zombie
    def tool_running():
        # The window must end while the tool runs: the GUI gets its events once a refresh,
        # so the last sample can arrive with the case's end, after the worker parsed and
        # stored the result (~15 ms of CPU that took nothing from the tool, which had ended).
        me = str(os.getpid())
        if TOOL[0] is not None and _running(TOOL[0]) == me:
            return True
        TOOL[0] = next((e for e in os.listdir("/proc") if e.isdigit() and _running(e) == me),
                       None)
        return TOOL[0] is not None
    def snap():
        ru = resource.getrusage(resource.RUSAGE_SELF)
        cpu = ru.ru_utime + ru.ru_stime - SNAP_COST[0]
        begun = time.thread_time()
        ctx, threads = 0, {}
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/comm") as f:
                    name = f.read().strip()
                with open(f"/proc/self/task/{tid}/status") as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches"):
                            ctx += int(line.split()[1])
                            threads[f"{name}:{tid}"] = int(line.split()[1])
            except OSError:
                continue
        with open("/proc/self/status") as f:
            rss = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS"))
        with open("/proc/self/io") as f:
            io = dict((k.strip(), int(v)) for k, v in (l.split(":") for l in f))
        d = [int(x) for x in _fields(f"/sys/dev/block/{DEV}/stat")] if DEV != "-" else [0] * 17
        tool = tool_running()
        SNAP_COST[0] += time.thread_time() - begun
        return {"t": time.monotonic(), "cpu": cpu, "ctx": ctx, "rss": rss,
                "threads": threads, "tool": tool,
                "write_bytes": io["write_bytes"], "syscw": io["syscw"],
                "dev_writes": d[4], "dev_write_bytes": d[6] * 512,
                "dev_flushes": d[15] if len(d) > 15 else 0}
    def between(a, b):
        secs = b["t"] - a["t"]
        per_thread = {}
        for key, v in b["threads"].items():
            name = key.split(":")[0]
            per_thread[name] = per_thread.get(name, 0) + (v - a["threads"].get(key, 0)) / secs
        return {"ctx_per_s_by_thread": {k: round(v, 1) for k, v in per_thread.items() if v},
                "seconds": secs, "cpu_per_min": (b["cpu"] - a["cpu"]) * 60 / secs,
                "ctx_per_s": (b["ctx"] - a["ctx"]) / secs, "rss_growth": b["rss"] - a["rss"],
                "rss_end": b["rss"],
                **{k: b[k] - a[k] for k in ("write_bytes", "syscw", "dev_writes",
                                            "dev_write_bytes", "dev_flushes")}}
    def stored(metrics):
        for m in metrics:
            if m.unit == "B/s" and ":" not in m.name and m.value:
                return float(m.value)
        return None
    class Marks:
        # The window: from the 2nd sample of the first series (the measured step is running)
        # to the last one before the case's end (the tool still running: the case's files are
        # removed after it, and that is the tool's data leaving, not DiskLab's writes).
        def __init__(self):
            self.samples, self.start, self.last, self.status, self.bw = 0, None, None, None, None
            self.case_start, self.case_cpu, self.case_seconds = None, None, None
            self.series = None
            self.trace = []  # (seconds since the start, device bytes written since) per sample
        def on(self, event):
            name = type(event).__name__
            if name == "CaseStarted":
                self.case_start = snap()  # DiskLab's CPU from here to the end: 1b's bound
            if name == "Sample" and self.status is None:
                if self.series is None:
                    self.series = event.series
                if event.series != self.series:
                    return
                self.samples += 1
                now = snap()
                if not now["tool"]:
                    return  # the tool has ended (or not yet started): outside the window
                if self.samples >= 2 and self.start is None:
                    self.start = now
                if self.start is not None:
                    self.last = now
                    self.trace.append((round(now["t"] - self.start["t"], 2),
                                       now["dev_write_bytes"] - self.start["dev_write_bytes"]))
            elif name in ("CaseFinished", "CaseFailed"):
                end = self.end = snap()
                self.case_cpu = end["cpu"] - self.case_start["cpu"]
                self.case_seconds = end["t"] - self.case_start["t"]
                self.status = name
                self.bw = stored(getattr(event, "metrics", ()))
                if self.start is not None:
                    self.trace.append(("end",
                                       end["dev_write_bytes"] - self.start["dev_write_bytes"]))
        def result(self):
            if self.start is None:  # a case shorter than two samples (1b's CPU-bound run)
                self.start, self.last = self.case_start, self.end
            return {**between(self.start, self.last), "status": self.status,
                    "case_cpu": self.case_cpu, "case_seconds": self.case_seconds,
                    "stored_bw": self.bw, "samples": self.samples, "trace": self.trace,
                    # CLOCK_MONOTONIC of the window, to match a block trace (perf -k mono)
                    "t0": self.start["t"], "t1": self.last["t"]}
""")

HEADLESS = SNAP + textwrap.dedent("""
    import json
    from pathlib import Path
    from disklab.core.library import Library
    from disklab.core.plan.parse import parse_plan
    from disklab.core.run.runner import run_plan
    plan = parse_plan(Path(sys.argv[1]).read_text()).plan
    lib = Library.open(sys.argv[2])
    rec = lib.recorder()
    marks = Marks()
    for event in run_plan(plan):
        rec.handle(event)
        marks.on(event)
    rec.close()
    lib.close()
    print(json.dumps(marks.result()))
""")

GUI = SNAP + textwrap.dedent("""
    import json
    from pathlib import Path
    from PySide6.QtCore import QTimer
    from disklab.gui.app import make_app
    from disklab.core.plan.draft import PlanDraft
    from disklab.gui.main_window import MainWindow
    from disklab.gui.state import Workbench
    app = make_app()
    window = MainWindow(Workbench(sys.argv[2]))
    window.resize(1280, 860)
    window.show()
    window.wb.set_draft(PlanDraft.from_text(Path(sys.argv[1]).read_text()))
    marks = Marks()
    window.wb.runs.event.connect(marks.on)
    window.run.finished.connect(lambda *args: app.quit())
    QTimer.singleShot(0, window.run.start)
    app.exec()
    print(json.dumps({**marks.result(), "page": window.current_page()}), flush=True)
    os._exit(0)  # no teardown of a window never closed (see gui_figures.COLD)
""")


def _device_of(path: Path) -> str:
    dev = os.stat(path).st_dev
    return f"{os.major(dev)}:{os.minor(dev)}"


def _arm(code: str, plan_text: str, library: Path, device: str) -> dict:
    # the previous arm's case removed its files (and the instrument check its library) just
    # before: write that out now, or ext4's next journal commit lands in this arm's window
    os.sync()
    with tempfile.NamedTemporaryFile("w", suffix=".toml", dir="/var/tmp") as plan, \
            tempfile.TemporaryDirectory(prefix="disklab-obs-config-") as config:
        plan.write(plan_text)
        plan.flush()
        # a settings file of its own: the user's (QSettings, ~/.config/DiskLab) holds the Run
        # page's refresh rate, which any other DiskLab on the machine may have set to 5 s, and
        # the runner's events reach the GUI (and these marks) once a refresh interval
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": config}
        done = subprocess.run([sys.executable, "-c", code, plan.name, str(library), device],
                              capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"exit status {done.returncode}: {done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["status"] != "CaseFinished":
        raise RuntimeError(f"the case did not finish: {result}")
    return result


def _bare_device(mnt: Path, seconds: int) -> dict:
    """The same read-only case run bare (its prepare step, a syncfs like the runner's after a
    layout, a second's pause like the window's start at the 2nd sample, then the measured
    step): what the device does without DiskLab.
    ext4 issues flushes of its own after a layout (journal commits), so flushes are judged
    against this, and bytes against 0."""
    adapter = tools.get_adapter("engine")
    params = with_defaults("engine", {"mode": "randread", "block_size": 4096, "size": 64 << 20,
                                      "direct": True, "runtime": float(seconds)})
    cmd = adapter.build_command(params, RunTarget(directory=str(mnt), tag="obsbare",
                                                  ram_bytes=0, is_root=True,
                                                  python=sys.executable))
    device = _device_of(mnt)
    try:
        os.sync()
        for step in cmd.prepare:
            subprocess.run(step, cwd=cmd.cwd, check=True, capture_output=True)
        syncfs(str(mnt))  # as DiskLab's runner does after a layout (runner._sync_layout)
        time.sleep(1)
        a = _device_stat(device)
        subprocess.run(cmd.argv, cwd=cmd.cwd, check=True, capture_output=True)
        b = _device_stat(device)
    finally:
        for f in cmd.files:
            Path(f).unlink(missing_ok=True)
    return {"dev_write_bytes": b[0] - a[0], "dev_flushes": b[1] - a[1]}


def _device_stat(device: str) -> tuple[int, int]:
    """(bytes written, flushes completed) of a block device since boot."""
    f = Path(f"/sys/dev/block/{device}/stat").read_text().split()
    return int(f[6]) * 512, int(f[15]) if len(f) > 15 else 0


def _row(figure: str, value: str, target: str, verdict: str, details: dict) -> dict:
    return {"figure": figure, "value": value, "target": target, "verdict": verdict,
            "details": details}


def io_rows(mnt: Path, seconds: int = 15, rounds: int = 2) -> list[dict]:
    """1a, 1c, 1d: the library elsewhere (GUI and headless) and on the target (GUI)."""
    device = _device_of(mnt)
    plan = READ_PLAN.format(dir=mnt, seconds=seconds)
    runs: dict[str, list[dict]] = {"gui": [], "headless": [], "gui_library_on_target": []}
    baseline = [_bare_device(mnt, seconds) for _ in range(rounds)]
    with tempfile.TemporaryDirectory(dir="/var/tmp") as elsewhere:
        for i in range(rounds):
            runs["gui"].append(_arm(GUI, plan, Path(elsewhere) / f"g{i}.sqlite3", device))
            runs["headless"].append(_arm(HEADLESS, plan, Path(elsewhere) / f"h{i}.sqlite3",
                                         device))
            on_target = mnt / f"library-{i}.sqlite3"
            try:
                runs["gui_library_on_target"].append(_arm(GUI, plan, on_target, device))
            finally:
                for p in mnt.glob(f"library-{i}.sqlite3*"):
                    p.unlink()
    rows = []
    away = runs["gui"] + runs["headless"]
    dev_bytes = [r["dev_write_bytes"] for r in away]
    flushes = [r["dev_flushes"] for r in away]
    seen = [r["dev_write_bytes"] for r in runs["gui_library_on_target"]]
    seen_flushes = [r["dev_flushes"] for r in runs["gui_library_on_target"]]
    bare_flushes = [b["dev_flushes"] for b in baseline]
    if min(seen) == 0:
        verdict = ("unresolved: with the library on the target the device counters showed "
                   "no writes either, so they cannot see DiskLab's writes here")
    else:
        verdict = "ok" if max(dev_bytes) == 0 else "short"
    rows.append(_row(
        "1a writes to the target's device (library elsewhere)",
        f"{max(dev_bytes)} B", "0 B", verdict,
        {"per_run_bytes": dev_bytes, "per_run_flushes": flushes,
         "bare_run_bytes": [b["dev_write_bytes"] for b in baseline],
         "bare_run_flushes": bare_flushes,
         "library_on_target_bytes": seen, "library_on_target_flushes": seen_flushes,
         "window_seconds": [round(r["seconds"], 1) for r in away],
         # when a run saw bytes: (seconds into the window, bytes so far) at each sample
         "traces_of_runs_with_bytes": [r["trace"] for r in away if r["dev_write_bytes"]]}))
    rows.append(_row(
        "1a flushes on the target's device (library elsewhere)",
        f"{min(flushes)}-{max(flushes)} (bare {min(bare_flushes)}-{max(bare_flushes)})",
        "report", "info: ext4 flushes of its own after a layout, also bare; bytes are 0",
        {}))
    on_rate = [r["dev_write_bytes"] / r["seconds"] for r in runs["gui_library_on_target"]]
    rows.append(_row(
        "1a same, library on the target (instrument check)",
        f"{min(on_rate) / 1024:.0f}-{max(on_rate) / 1024:.0f} KiB/s, "
        f"{min(seen_flushes)}-{max(seen_flushes)} flushes", "> 0 (seen)",
        "ok" if min(seen) > 0 else "short", {}))
    for arm in ("gui", "headless"):
        own = [r["write_bytes"] for r in runs[arm]]
        rows.append(_row(f"1a DiskLab's own writes, library elsewhere ({arm})",
                         f"{max(own) / max(r['seconds'] for r in runs[arm]) / 1024:.1f} KiB/s",
                         "report", "info",
                         {"write_bytes": own, "syscw": [r["syscw"] for r in runs[arm]]}))
        growth = [r["rss_growth"] / 2**20 for r in runs[arm]]
        rows.append(_row(f"1c RSS growth over a {seconds} s case ({arm})",
                         f"{max(growth):+.1f} MB", "<= 16 MB",
                         "ok" if max(growth) <= 16 else "short",
                         {"per_run_mb": [round(g, 2) for g in growth],
                          "rss_end_mb": [round(r["rss_end"] / 2**20, 1) for r in runs[arm]]}))
        wake = [r["ctx_per_s"] for r in runs[arm]]
        rows.append(_row(f"1d wake-ups per second ({arm})", f"{max(wake):.1f}/s",
                         "report", "info: their CPU is in 1b and figure 2",
                         {"per_run": [round(w, 1) for w in wake],
                          "by_thread": [r["ctx_per_s_by_thread"] for r in runs[arm]],
                          "cpu_s_per_min": [round(r["cpu_per_min"], 3) for r in runs[arm]]}))
    return rows


@contextlib.contextmanager
def _pinned(cpu: int) -> Iterator[None]:
    """This process and every child it starts (a bare tool; the GUI, its threads and the tool
    it starts) on one CPU, as `taskset -c CPU` would."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} CPUs"


def _bare_session(directory: Path, tag: str) -> float:
    """1b's bare run: the tool's own argv in a session of its own, as DiskLab's runner starts
    a tool (proc: start_new_session). With the kernel's autogroups (sched_autogroup_enabled)
    a session is a scheduling group, so a bare run in this script's session and a tool in its
    own got different shares of a contended CPU: with the bare tool in this script's session
    the ratio was 1.02-1.34 in all 9 rounds (load average 1.4-2.1), with both tools in
    sessions of their own 0.96-1.13. Returns the throughput the tool printed."""
    adapter = tools.get_adapter("engine")
    params = with_defaults("engine", {"mode": "write", "block_size": 4096, "size": CPU_SIZE,
                                      "runtime": float(CPU_SECONDS)})
    cmd = adapter.build_command(params, RunTarget(directory=str(directory), tag=tag,
                                                  ram_bytes=0, is_root=True,
                                                  python=sys.executable))
    try:
        done = subprocess.run(cmd.argv, cwd=cmd.cwd, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, start_new_session=True, timeout=600)
        metrics = adapter.parse_result(ToolOutput(done.stdout, done.stderr, None,
                                                  done.returncode), params)
    finally:
        for f in cmd.files:
            Path(f).unlink(missing_ok=True)
    return main_figure(metrics, params)


def cpu_row(pairs: int) -> list[dict]:
    """1b: the CPU-bound engine run bare, through the GUI and headless, every process of all
    arms on the same CPU (nothing DiskLab does can hide on another core: the worst case, and
    what makes the arms comparable), the order rotated from one round to the next so that a
    drift of the machine's load cancels; at least CPU_PAIRS rounds. Per DiskLab arm two
    figures: the ratio of the tool's throughputs (bytes over its own elapsed time, from its
    summary: at a fixed time the same ratio as run times at fixed work, and a steady state past
    the case's start), noisy under other load; and 1 - DiskLab's own CPU time while the tool
    ran (getrusage of DiskLab's process over the live samples' window: load-independent) over
    that window's time. On one CPU DiskLab can take from the tool at most the CPU it used, and
    on a quiet CPU it takes about that, so the second figure bounds the first from below and
    resolves where the first cannot."""
    cpu = max(os.sched_getaffinity(0))
    n = max(pairs, CPU_PAIRS)
    arms = {"gui": GUI, "headless": HEADLESS}
    ratios: dict[str, list[float]] = {a: [] for a in arms}
    shares: dict[str, list[float]] = {a: [] for a in arms}
    stored: dict[str, list[float]] = {"bare": [], **{a: [] for a in arms}}
    load_before = _load()
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="disklab-obs-") as shm, \
            tempfile.TemporaryDirectory(dir="/var/tmp") as elsewhere, _pinned(cpu):
        plan = CPU_PLAN.format(dir=shm, size=f"{CPU_SIZE >> 20}m", seconds=CPU_SECONDS)
        order = ["bare", *arms]
        for i in range(n):
            got: dict[str, Any] = {}
            for arm in order[i % 3:] + order[:i % 3]:
                if arm == "bare":
                    got[arm] = _bare_session(Path(shm), f"cpu{i}")
                else:
                    got[arm] = _arm(arms[arm], plan, Path(elsewhere) / f"{arm}{i}.sqlite3", "-")
            stored["bare"].append(got["bare"])
            for arm in arms:
                g = got[arm]
                stored[arm].append(g["stored_bw"])
                ratios[arm].append(g["stored_bw"] / got["bare"])
                # the window of live samples (the tool running; its start and DiskLab's
                # handling of its end are outside: they do not slow the tool), else the case
                shares[arm].append(g["cpu_per_min"] / 60 if g["samples"] >= 3
                                   else g["case_cpu"] / g["case_seconds"])
    load = f"{load_before} before, {_load()} after"
    rows = []
    for arm, label in (("gui", "GUI"), ("headless", "headless")):
        value, verdict, ci = judge(ratios[arm], 0.99)
        if verdict.startswith("unresolved"):
            verdict += f" ({load})"
        rows.append(_row(
            f"1b CPU-bound tool under DiskLab ({label}) / bare, one CPU", value, ">= 0.99",
            verdict,
            {"ratios": [round(r, 4) for r in ratios[arm]], "ci": ci, "cpu": cpu, "rounds": n,
             "seconds_per_run": CPU_SECONDS, "load": load,
             "bare_MBps": [round(x / 1e6) for x in stored["bare"]],
             f"{arm}_MBps": [round(x / 1e6) for x in stored[arm]]}))
        bounds = [1 - x for x in shares[arm]]
        value, verdict, ci = judge(bounds, 0.99)
        pct = sorted(100 * x for x in shares[arm])
        if verdict == "short":
            verdict = (f"short: DiskLab used {pct[0]:.1f}-{pct[-1]:.1f} % of the tool's CPU "
                       "while it ran (its own CPU time: figure 2)")
        rows.append(_row(
            f"1b bound: 1 - DiskLab's CPU share while the tool ran ({label}, same CPU)",
            value, ">= 0.99", verdict,
            {"share_percent": [round(100 * x, 2) for x in shares[arm]], "ci": ci,
             "why": "on one CPU DiskLab can take from the tool at most the CPU time it used "
                    "itself (its getrusage over the live samples' window, the tool running): "
                    "1 - that share bounds the ratio from below, whatever the other load"}))
    return rows


def run(mnt: Path, pairs: int) -> list[dict]:
    rows = []
    for func, args in ((io_rows, (mnt,)), (cpu_row, (pairs,))):
        try:
            rows += func(*args)
        except Exception as e:  # one part failing must not hide the other's figures
            rows.append(_row(f"1 {func.__name__}", "-", "-",
                             f"not measured: {type(e).__name__}: {e}"[:300], {}))
    return rows
