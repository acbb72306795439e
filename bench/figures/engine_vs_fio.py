"""Figure 4b: the built-in engine over fio, like with like. 1 MiB sequential direct write and
read (--size), 4 KiB random direct reads at queue depth 1, 8 and 32 and 4 streams x depth 8
(256 MiB per stream). Target >= 0.95, judged on the median's confidence interval
(common.judge).

The engine chooses its I/O path itself (`io = auto`: Linux native AIO for O_DIRECT at depth > 1,
pread/pwrite workers otherwise) and says which in its summary. The verdict row compares it with
fio on the same path: fio's libaio engine at iodepth = depth (one job per stream) when the
engine ran AIO, fio's psync engine (per stream `depth` jobs sharing the file, each doing
size / depth) when it ran pread/pwrite. The other comparison, at depth > 1, is a report row.

Per run the details also hold the CPU time of the tool's process tree per call (getrusage of
the children around the measured run only, the layout excluded), which on this shared 2-vCPU
machine says more than a wall-clock ratio; and, for the random reads, the device's own mean read
latency (/sys/dev/block/M:m/stat) and the time each call spends outside it (calls in flight /
IOPS - device latency)."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from disklab.core import proc, tools
from disklab.core.tools.base import RunTarget, ToolOutput
from disklab.core.units import parse_size

from .common import drop_caches, judge, main_figure, with_defaults

# (rw, block size, queue depth, streams)
CASES = [("write", 1 << 20, 1, 1), ("read", 1 << 20, 1, 1), ("randread", 4096, 1, 1),
         ("randread", 4096, 8, 1), ("randread", 4096, 32, 1), ("randread", 4096, 8, 4)]
RANDOM_SIZE = 256 << 20  # per stream for the 4 KiB cases: 65,536 calls, seconds not minutes
TARGET = 0.95


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _engine(mnt: Path, params: Mapping[str, Any], tag: str) -> tuple[float, float, str]:
    """(throughput, CPU seconds of the measured run, the I/O path the engine took): the
    adapter's own argv run as a shell would, its layout step outside the CPU account."""
    adapter = tools.get_adapter("engine")
    full = with_defaults("engine", params)
    target = RunTarget(directory=str(mnt), tag=tag, ram_bytes=0, is_root=True,
                       python=sys.executable)
    cmd = adapter.build_command(full, target)
    try:
        for step in cmd.prepare:
            subprocess.run(step, cwd=cmd.cwd, check=True, capture_output=True)
        if cmd.reads_after_prepare:
            drop_caches()
        cpu = _children_cpu()
        done = subprocess.run(cmd.argv, cwd=cmd.cwd, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)
        cpu = _children_cpu() - cpu
        metrics = adapter.parse_result(ToolOutput(done.stdout, done.stderr, None,
                                                  done.returncode), full)
    finally:
        for f in cmd.files:
            Path(f).unlink(missing_ok=True)
    path = "?"
    for line in done.stdout.splitlines():
        if '"summary"' in line:
            path = str(json.loads(line).get("io", "?"))
    return main_figure(metrics, full), cpu, path


def _fio(mnt: Path, rw: str, bs: int, depth: int, size: int, name: str, streams: int = 1,
         engine: str = "psync") -> tuple[float, float]:
    """(throughput, CPU seconds of the measured run). psync: per stream a file of its own and
    `depth` jobs sharing it, each job doing its share (io_size = size / depth), all summed
    (group_reporting). libaio: per stream one job at iodepth = depth."""
    paths = [mnt / f"{name}.{k}.fio" for k in range(streams)]
    if rw != "write":
        for path in paths:
            subprocess.run(["fio", "--name=lay", f"--filename={path}", "--rw=write", "--bs=1m",
                            f"--size={size}", "--direct=1", "--end_fsync=1", "--thread",
                            "--output-format=json"], check=True, capture_output=True)
        drop_caches()
    argv = ["fio", f"--rw={rw}", f"--bs={bs}", f"--size={size}", "--direct=1",
            f"--ioengine={engine}", "--group_reporting", "--thread", "--output-format=json"]
    if rw == "write":
        argv.append("--end_fsync=1")
    if engine == "libaio":
        argv.append(f"--iodepth={depth}")
    else:
        argv.append(f"--numjobs={depth}")
        if depth > 1:
            argv.append(f"--io_size={size // depth}")
    for k, path in enumerate(paths):  # options before the first --name are global
        argv += [f"--name=b{k}", f"--filename={path}"]
    try:
        cpu = _children_cpu()
        done = subprocess.run(argv, check=True, capture_output=True, text=True)
        cpu = _children_cpu() - cpu
    finally:
        for path in paths:
            path.unlink(missing_ok=True)
    job = json.loads(done.stdout[done.stdout.index("{"):])["jobs"][0]
    return float(job["write" if rw == "write" else "read"]["bw_bytes"]), cpu


def _reads(mnt: Path) -> tuple[int, int]:
    """(reads completed, milliseconds spent reading) of the device holding mnt."""
    dev = os.stat(mnt).st_dev
    fields = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/stat").read_text().split()
    return int(fields[0]), int(fields[3])


def _split(bw: float, bs: int, depth: int, before: tuple[int, int], after: tuple[int, int]
           ) -> tuple[float, float]:
    """(device latency, time outside the device) per call in microseconds."""
    reads, ms = after[0] - before[0], after[1] - before[1]
    device = ms * 1000 / reads if reads else float("nan")
    return round(device, 1), round(depth / (bw / bs) * 1e6 - device, 1)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def run(mnt: Path, pairs: int, size: str) -> list[dict]:
    if proc.which("fio") is None:
        return [{"figure": "4 engine/fio", "value": "-", "target": ">= 0.95",
                 "verdict": "not measured: fio is not installed", "details": {}}]
    rows = []
    for rw, bs, depth, streams in CASES:
        nbytes = parse_size(size) if bs >= 1 << 20 else min(parse_size(size), RANDOM_SIZE)
        calls = nbytes // bs * streams
        engines = ("psync", "libaio") if depth > 1 else ("psync",)
        ratios: dict[str, list[float]] = {e: [] for e in engines}
        paths: list[str] = []
        cpu: dict[str, list[float]] = {t: [] for t in ("engine", *engines)}
        split: dict[str, list] = {}
        for i in range(pairs):
            a = _reads(mnt)
            e, e_cpu, path = _engine(mnt, {"mode": rw, "block_size": bs, "size": nbytes,
                                           "direct": True, "queue_depth": depth,
                                           "streams": streams}, f"f-e{i}")
            b = _reads(mnt)
            paths.append(path)
            cpu["engine"].append(e_cpu / calls * 1e6)
            runs = [("engine", e, a, b)]
            for engine in engines[::1 if i % 2 else -1]:  # alternate which fio goes first
                x = _reads(mnt)
                f, f_cpu = _fio(mnt, rw, bs, depth, nbytes, f"f-f{i}", streams, engine)
                y = _reads(mnt)
                ratios[engine].append(e / f)
                cpu[engine].append(f_cpu / calls * 1e6)
                runs.append((f"fio_{engine}", f, x, y))
            if rw == "randread":
                for tool, bw, x, y in runs:
                    device, outside = _split(bw, bs, depth * streams, x, y)
                    split.setdefault(f"{tool}_iops", []).append(round(bw / bs))
                    split.setdefault(f"{tool}_device_us", []).append(device)
                    split.setdefault(f"{tool}_outside_us", []).append(outside)
        ran = max(set(paths), key=paths.count)
        like = "libaio" if ran == "aio" and "libaio" in engines else "psync"
        label = f"{streams}x qd{depth}" if streams > 1 else f"qd{depth}"
        details: dict = {"bytes": nbytes, "engine_io": paths,
                         "cpu_us_per_call": {t: [round(v, 2) for v in vs]
                                             for t, vs in cpu.items()},
                         "cpu_us_per_call_median": {t: _median(vs) for t, vs in cpu.items()}}
        if split:
            details |= split
            details["outside_us_median"] = {
                k[:-len("_outside_us")]: _median(v) for k, v in split.items()
                if k.endswith("_outside_us")}
        for engine in (like, *[x for x in engines if x != like]):
            value, verdict, ci = judge(ratios[engine], TARGET)
            if engine != like:
                verdict = f"info: the engine ran {ran}; median's interval {ci[0]}-{ci[1]}"
            rows.append({"figure": f"4 engine ({ran})/fio {engine} {rw} {bs // 1024}k {label}",
                         "value": value, "target": f">= {TARGET}" if engine == like else "report",
                         "verdict": verdict,
                         "details": details | {"ratios": [round(r, 4) for r in ratios[engine]],
                                               "ci": ci}})
    return rows
