"""Figure 4b: the built-in engine over fio, like with like. 1 MiB sequential direct write and
read (--size), 4 KiB random direct reads at queue depth 1, 8 and 32 and 4 streams x depth 8
(256 MiB per stream). Target >= 0.95, judged on the median's confidence interval
(common.judge).

The engine chooses its I/O path itself (`io = auto`: io_uring for O_DIRECT at depth > 1, or
Linux native AIO where io_uring is not allowed; pread/pwrite workers otherwise) and says which in
its summary. The verdict row compares it with fio on the same path: fio's io_uring engine at
iodepth = depth (one job per stream) when the engine ran io_uring, fio's libaio engine likewise
when it ran AIO, fio's psync engine (per stream `depth` jobs sharing the file, each doing
size / depth) when it ran pread/pwrite. The other comparisons, at depth > 1, are report rows.

Like with like, because the device (a loop device on the VM's disk) is not the same disk for
every file and every order of offsets:
- the reads of a pair read the SAME files, laid out once per pair, by the engine's own layout
  step in even pairs and by fio in odd ones (before, each tool read a file it had laid out
  itself, at a different place in the backing image);
- the random order changes every pair and is the same pair number for both tools (engine
  --seed, fio --randseed); before, each tool repeated its one fixed sequence in every pair, so
  a sequence the host served slower was a bias no number of pairs could average out;
- within a pair each tool runs twice, ABBA (engine, fio, fio, engine; mirrored in odd pairs),
  so a drift of the shared disk during the pair cancels; a pair's ratio is the mean over mean.

Per run the details also hold the CPU time of the tool's process tree per call (getrusage of
the children around the measured run only, the layout excluded), and, for the reads, the
device's side of the run from its counters (/sys/dev/block/M:m/stat): its mean read
latency, the mean number of requests in it while busy (weighted time in queue / busy time),
and the requests the tool kept in it over the run (Little's law: IOPS x device latency; the
device's summed read time over the run's time). The
last is what a tool's submission path is responsible for; its engine/fio ratio is a report row
beside the throughput ratio, and resolves where the throughput ratio (the device's speed
varying between runs by +-20 %) cannot. It is not the throughput: the latency the device gives
the requests also depends on how they arrive (in batches, one by one)."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from disklab.core import proc, tools
from disklab.core.tools.base import Command, RunTarget, ToolOutput
from disklab.core.vocab.units import parse_size

from .common import drop_caches, judge, main_figure, median_interval, with_defaults

# (rw, block size, queue depth, streams)
CASES = [("write", 1 << 20, 1, 1), ("read", 1 << 20, 1, 1), ("randread", 4096, 1, 1),
         ("randread", 4096, 8, 1), ("randread", 4096, 32, 1), ("randread", 4096, 8, 4)]


def case_name(rw: str, bs: int, depth: int, streams: int) -> str:
    """A case's name for `bench/run.py --cases` (randread-4k-qd32, randread-4k-4xqd8, ...):
    a noisy row can be measured again with more pairs without the whole figure's time."""
    queue = f"{streams}xqd{depth}" if streams > 1 else f"qd{depth}"
    size = f"{bs >> 20}m" if bs >= 1 << 20 else f"{bs >> 10}k"
    return f"{rw}-{size}-{queue}"


CASE_NAMES = [case_name(*case) for case in CASES]
RANDOM_SIZE = 256 << 20  # per stream for the 4 KiB cases: 65,536 calls, seconds not minutes
TARGET = 0.95
QUEUED = ("libaio", "io_uring")  # fio's engines that keep iodepth requests in flight per job
LIKE = {"uring": "io_uring", "aio": "libaio"}  # the engine's path -> fio's engine on that path


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


@dataclass(frozen=True)
class Disk:
    """The device's read counters (/sys/dev/block/M:m/stat): reads completed, milliseconds
    spent reading, milliseconds busy (io_ticks), weighted milliseconds in queue."""

    reads: int
    read_ms: int
    busy_ms: int
    queue_ms: int

    @classmethod
    def of(cls, mnt: Path) -> Disk:
        dev = os.stat(mnt).st_dev
        f = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/stat").read_text().split()
        return cls(int(f[0]), int(f[3]), int(f[9]), int(f[10]))

    def __sub__(self, other: Disk) -> Disk:
        return Disk(self.reads - other.reads, self.read_ms - other.read_ms,
                    self.busy_ms - other.busy_ms, self.queue_ms - other.queue_ms)


def device_side(bw: float, nbytes: int, d: Disk) -> dict[str, float]:
    """A run of `nbytes` at `bw` B/s: the reads the device completed, their mean latency (us),
    the mean requests in the device while busy, the share of the run it was busy (io_ticks:
    jiffies, so gaps shorter than a tick count as busy), and the requests the tool kept in it
    over its
    run (the device's summed read time over the run's time, Little's law: IOPS x latency where
    every call is one request; right also where the block layer splits or merges calls)."""
    latency = d.read_ms * 1000 / d.reads if d.reads else float("nan")
    return {"reads": d.reads, "device_us": round(latency, 1),
            "busy_queue": round(d.queue_ms / d.busy_ms, 2) if d.busy_ms else float("nan"),
            "busy": round(d.busy_ms / 1000 * bw / nbytes, 3),
            "kept": round(d.read_ms / 1000 * bw / nbytes, 2)}


def _engine_command(mnt: Path, params: Mapping[str, Any], tag: str
                    ) -> tuple[Command, dict[str, Any]]:
    adapter = tools.get_adapter("engine")
    full = with_defaults("engine", params)
    target = RunTarget(directory=str(mnt), tag=tag, ram_bytes=0, is_root=True,
                       python=sys.executable)
    return adapter.build_command(full, target), full


def _engine(cmd: Command, full: dict[str, Any], seed: int) -> tuple[float, float, str]:
    """(throughput, CPU seconds of the measured run, the I/O path the engine took): the
    adapter's own argv run as a shell would, with the pair's random seed."""
    cpu = _children_cpu()
    done = subprocess.run([*cmd.argv, "--seed", str(seed)], cwd=cmd.cwd, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    cpu = _children_cpu() - cpu
    metrics = tools.get_adapter("engine").parse_result(
        ToolOutput(done.stdout, done.stderr, None, done.returncode), full)
    path = "?"
    for line in done.stdout.splitlines():
        if '"summary"' in line:
            path = str(json.loads(line).get("io", "?"))
    return main_figure(metrics, full), cpu, path


def fio_argv(rw: str, bs: int, depth: int, size: int, paths: list[str], engine: str,
             seed: int) -> list[str]:
    """fio on `paths` (one per stream). psync: per stream `depth` jobs sharing the file, each
    doing its share (io_size = size / depth), all summed (group_reporting). libaio and
    io_uring: per stream one job at iodepth = depth; io_uring with the buffer and the file
    registered once, as the engine's ring has them (--fixedbufs --registerfiles), no polling
    thread on either side. randseed: the pair's random order."""
    argv = ["fio", f"--rw={rw}", f"--bs={bs}", f"--size={size}", "--direct=1",
            f"--ioengine={engine}", "--group_reporting", "--thread", "--output-format=json",
            f"--randseed={seed}"]
    if rw == "write":
        argv.append("--end_fsync=1")
    if engine == "io_uring":
        argv += ["--fixedbufs", "--registerfiles"]
    if engine in QUEUED:
        argv.append(f"--iodepth={depth}")
    else:
        argv.append(f"--numjobs={depth}")
        if depth > 1:
            argv.append(f"--io_size={size // depth}")
    for k, path in enumerate(paths):  # options before the first --name are global
        argv += [f"--name=b{k}", f"--filename={path}"]
    return argv


def _fio(argv: list[str], rw: str) -> tuple[float, float]:
    """(throughput, CPU seconds of the measured run)."""
    cpu = _children_cpu()
    done = subprocess.run(argv, check=True, capture_output=True, text=True)
    cpu = _children_cpu() - cpu
    job = json.loads(done.stdout[done.stdout.index("{"):])["jobs"][0]
    return float(job["write" if rw == "write" else "read"]["bw_bytes"]), cpu


def _fio_layout(paths: list[str], size: int) -> None:
    for path in paths:
        subprocess.run(["fio", "--name=lay", f"--filename={path}", "--rw=write", "--bs=1m",
                        f"--size={size}", "--direct=1", "--end_fsync=1", "--thread",
                        "--output-format=json"], check=True, capture_output=True)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def run_pair(mnt: Path, i: int, rw: str, bs: int, depth: int, nbytes: int, streams: int,
             engines: tuple[str, ...]) -> list[dict[str, Any]]:
    """One pair of a case: per tool ("engine", "fio_psync", "fio_libaio") a dict of its runs'
    throughputs, CPU seconds, device figures (random reads) and the engine's I/O path.

    Reads: one layout of the pair's files (the engine's in even pairs, fio's in odd), read by
    every tool twice in ABBA order. Writes: each tool writes files of its own, once each."""
    cmd, full = _engine_command(mnt, {"mode": rw, "block_size": bs, "size": nbytes,
                                      "direct": True, "queue_depth": depth, "streams": streams},
                                f"f{i}")
    own_fio = [str(mnt / f"f{i}.{k}.fio") for k in range(streams)]
    paths = own_fio if rw == "write" else list(cmd.files)
    seed = i + 1
    names = ["engine", *(f"fio_{e}" for e in engines)]
    order = names if i % 2 == 0 else names[::-1]
    if rw != "write":
        order = order + order[::-1]  # ABBA: a drift during the pair cancels
    runs: list[dict[str, Any]] = []
    try:
        if rw != "write":
            if i % 2 == 0:
                for step in cmd.prepare:
                    subprocess.run(step, cwd=cmd.cwd, check=True, capture_output=True)
            else:
                _fio_layout(paths, nbytes)
        for name in order:
            drop_caches()
            before = Disk.of(mnt)
            if name == "engine":
                bw, cpu, path = _engine(cmd, full, seed)
            else:
                bw, cpu = _fio(fio_argv(rw, bs, depth, nbytes, paths, name[4:], seed), rw)
                path = name[4:]
            run = {"tool": name, "bw": bw, "cpu": cpu, "path": path}
            if rw != "write":
                run |= device_side(bw, nbytes * streams, Disk.of(mnt) - before)
            runs.append(run)
    finally:
        for f in [*cmd.files, *own_fio]:
            Path(f).unlink(missing_ok=True)
    return runs


def kept_reading(kept: list[float]) -> str:
    """What the requests kept in the device say where the throughput ratio is unresolved. A
    tool's IOPS is the requests it keeps in the device over their latency: kept >= 0.95 of
    fio's means the engine feeds the device as fio does, and what is left of a gap is the
    latency the device gives its requests (the device's speed changing between runs, or the way
    the requests arrive: in batches, one by one); kept < 0.95 means the engine's submission
    path leaves the device emptier than fio's. Not a verdict: a pointer to where the gap is."""
    lo, hi, conf = median_interval(kept)
    text = f"; requests kept in the device engine/fio {statistics.median(kept):.3f}, "
    text += f"{conf:.0%} interval {lo:.3f}-{hi:.3f}"
    if lo >= TARGET:
        return text + " (the engine feeds the device as fio does)"
    if hi < TARGET:
        return text + " (the engine leaves the device emptier than fio)"
    return text


def out_of_device(slots: int, device_us: float, kept: float) -> float:
    """Microseconds a request slot spends out of the device per request: between a request's
    completion in the device and its successor's arrival there (the tool's reaping, its
    bookkeeping, its resubmission, the wake-ups and the block layer's way in). Little's law
    over a run: each of the `slots` requests the tool keeps in flight cycles every
    slots x device_us / kept microseconds, device_us of them in the device.

    Why: where the engine keeps fewer requests in the device than fio, this is the gap in the
    unit a reader can set beside each tool's CPU time per request: a gap larger than the CPU
    difference is waiting (wake-ups, a CPU shared with the loop device's worker), not work."""
    if not kept or device_us != device_us:  # no reads counted, or NaN
        return float("nan")
    return slots * device_us / kept - device_us


def _mean_of(runs: list[dict[str, Any]], tool: str, key: str) -> float:
    return statistics.fmean(r[key] for r in runs if r["tool"] == tool)


def run(mnt: Path, pairs: int, size: str, cases: Sequence[str] | None = None) -> list[dict]:
    """Figure 4's engine/fio rows: every case in CASES, or those named in `cases`."""
    if proc.which("fio") is None:
        return [{"figure": "4 engine/fio", "value": "-", "target": ">= 0.95",
                 "verdict": "not measured: fio is not installed", "details": {}}]
    rows = []
    for rw, bs, depth, streams in CASES:
        if cases and case_name(rw, bs, depth, streams) not in cases:
            continue
        nbytes = parse_size(size) if bs >= 1 << 20 else min(parse_size(size), RANDOM_SIZE)
        calls = nbytes // bs * streams
        engines = ("psync", "libaio", "io_uring") if depth > 1 else ("psync",)
        ratios: dict[str, list[float]] = {e: [] for e in engines}
        kept: dict[str, list[float]] = {e: [] for e in engines}
        paths: list[str] = []
        cpu: dict[str, list[float]] = {t: [] for t in ("engine", *engines)}
        device: dict[str, list] = {}
        for i in range(pairs):
            runs = run_pair(mnt, i, rw, bs, depth, nbytes, streams, engines)
            paths += [r["path"] for r in runs if r["tool"] == "engine"]
            for r in runs:
                cpu[r["tool"].removeprefix("fio_")].append(r["cpu"] / calls * 1e6)
                for key in ("reads", "device_us", "busy_queue", "busy", "kept"):
                    if key in r:
                        device.setdefault(f"{r['tool']}_{key}", []).append(r[key])
            for e in engines:
                ratios[e].append(_mean_of(runs, "engine", "bw") / _mean_of(runs, f"fio_{e}",
                                                                          "bw"))
                if rw != "write":
                    kept[e].append(_mean_of(runs, "engine", "kept")
                                   / _mean_of(runs, f"fio_{e}", "kept"))
        ran = max(set(paths), key=paths.count)
        like = LIKE.get(ran, "psync") if LIKE.get(ran) in engines else "psync"
        label = f"{streams}x qd{depth}" if streams > 1 else f"qd{depth}"
        details: dict = {"bytes": nbytes, "engine_io": paths,
                         "cpu_us_per_call": {t: [round(v, 2) for v in vs]
                                             for t, vs in cpu.items()},
                         "cpu_us_per_call_median": {t: _median(vs) for t, vs in cpu.items()}}
        if device:
            details |= device
            details["device_median"] = {k: _median(v) for k, v in device.items()}
        for engine in (like, *[x for x in engines if x != like]):
            value, verdict, ci = judge(ratios[engine], TARGET)
            if engine != like:
                verdict = f"info: the engine ran {ran}; median's interval {ci[0]}-{ci[1]}"
            elif verdict.startswith("unresolved") and kept[engine]:
                verdict += kept_reading(kept[engine])
            name = f"4 engine ({ran})/fio {engine} {rw} {bs // 1024}k {label}"
            rows.append({"figure": name, "value": value,
                         "target": f">= {TARGET}" if engine == like else "report",
                         "verdict": verdict,
                         "details": details | {"ratios": [round(r, 4) for r in ratios[engine]],
                                               "ci": ci}})
            if engine == like and kept[engine] and one_request_a_call(device, calls, like):
                rows.append(out_of_device_row(name, depth * streams, device, cpu, like))
            if engine == like and kept[engine]:
                value, _v, ci = judge(kept[engine], 1.0)
                rows.append({"figure": f"{name}: kept in device", "value": value,
                             "target": "report",
                             "verdict": f"info: requests kept in the device (IOPS x device "
                                        f"latency), engine/fio; median's {ci[2]:.0%} interval "
                                        f"{ci[0]}-{ci[1]}",
                             "details": {"ratios": [round(r, 4) for r in kept[engine]],
                                         "ci": ci}})
    return rows


def one_request_a_call(device: dict[str, list], calls: int, like: str) -> bool:
    """Whether each tool's calls reached the device as one request each (within 5 %): the
    out-of-device arithmetic counts request slots, and a 1 MiB call the block layer splits
    into several requests in flight at once makes it meaningless (session 4's full run:
    fio's 1 MiB read, two requests a call, gave -277 us)."""
    return all(abs(statistics.median(device[f"{tool}_reads"]) - calls) <= 0.05 * calls
               for tool in ("engine", f"fio_{like}"))


def out_of_device_row(name: str, slots: int, device: dict[str, list], cpu: dict[str, list],
                       like: str) -> dict[str, Any]:
    """A report row: the microseconds a request spends out of the device (out_of_device), engine
    and fio, medians over the runs, beside each tool's CPU time per request."""
    def per_run(tool: str) -> list[float]:
        return [out_of_device(slots, d, k) for d, k in
                zip(device[f"{tool}_device_us"], device[f"{tool}_kept"], strict=True)]

    engine, fio = per_run("engine"), per_run(f"fio_{like}")
    # rounded before the differences, so that the row's figures add up as a reader reads them
    e, f = round(statistics.median(engine), 1), round(statistics.median(fio), 1)
    ce, cf = round(statistics.median(cpu["engine"]), 1), round(statistics.median(cpu[like]), 1)
    return {"figure": f"{name}: us out of the device per request",
            "value": f"{e:.1f} / {f:.1f}", "target": "report",
            "verdict": f"info: engine / fio {like}, medians; {e - f:+.1f} us a request, of which "
                       f"the tools' CPU {ce - cf:+.1f} us ({ce:.1f} / {cf:.1f} us a request)",
            "details": {"engine": [round(v, 1) for v in engine],
                        "fio": [round(v, 1) for v in fio], "slots": slots}}
