"""Figure 4b: the built-in engine over fio with the psync engine (same block size, same
queue depth: per stream one file and `depth` fio jobs, each doing size / depth, as the engine
runs `depth` slots on one file). 1 MiB sequential direct write and read (--size), 4 KiB random
direct reads at depth 1, 8 and 32 and 4 streams x depth 8 (256 MiB per stream). Target >= 0.95,
judged on the median's confidence interval (common.judge).

For the random reads the details also hold, per run, the device's own mean read latency from
/sys/dev/block/M:m/stat (read ticks / reads completed, for the loop device under the scratch
filesystem) and the time each call spends outside the device: calls in flight / IOPS - device
latency. That splits a shortfall into "the device served the engine slower" and "the engine
took longer between calls" (bench/README.md, figure 4)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from pathlib import Path

from disklab.core import proc
from disklab.core.units import parse_size

from .common import bare, drop_caches, judge

# (rw, block size, queue depth, streams)
CASES = [("write", 1 << 20, 1, 1), ("read", 1 << 20, 1, 1), ("randread", 4096, 1, 1),
         ("randread", 4096, 8, 1), ("randread", 4096, 32, 1), ("randread", 4096, 8, 4)]
RANDOM_SIZE = 256 << 20  # per stream for the 4 KiB cases: 65,536 calls, seconds not minutes


def _fio(mnt: Path, rw: str, bs: int, depth: int, size: int, name: str, streams: int = 1
         ) -> float:
    """fio's psync engine: per stream a file of its own and `depth` jobs sharing it, each job
    doing its share (io_size = size / depth), all summed (group_reporting)."""
    paths = [mnt / f"{name}.{k}.fio" for k in range(streams)]
    if rw != "write":
        for path in paths:
            subprocess.run(["fio", "--name=lay", f"--filename={path}", "--rw=write", "--bs=1m",
                            f"--size={size}", "--direct=1", "--end_fsync=1", "--thread",
                            "--output-format=json"], check=True, capture_output=True)
        drop_caches()
    argv = ["fio", f"--rw={rw}", f"--bs={bs}", f"--size={size}", "--direct=1",
            "--ioengine=psync", f"--numjobs={depth}", "--group_reporting", "--thread",
            "--output-format=json"]
    if rw == "write":
        argv.append("--end_fsync=1")
    if depth > 1:
        argv.append(f"--io_size={size // depth}")
    for k, path in enumerate(paths):  # options before the first --name are global
        argv += [f"--name=b{k}", f"--filename={path}"]
    try:
        done = subprocess.run(argv, check=True, capture_output=True, text=True)
    finally:
        for path in paths:
            path.unlink(missing_ok=True)
    job = json.loads(done.stdout[done.stdout.index("{"):])["jobs"][0]
    return float(job["write" if rw == "write" else "read"]["bw_bytes"])


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


def run(mnt: Path, pairs: int, size: str) -> list[dict]:
    if proc.which("fio") is None:
        return [{"figure": "4 engine/fio", "value": "-", "target": ">= 0.95",
                 "verdict": "not measured: fio is not installed", "details": {}}]
    rows = []
    for rw, bs, depth, streams in CASES:
        nbytes = parse_size(size) if bs >= 1 << 20 else min(parse_size(size), RANDOM_SIZE)
        ratios: list[float] = []
        split: dict[str, list] = {"engine_iops": [], "fio_iops": [], "engine_device_us": [],
                                  "fio_device_us": [], "engine_outside_us": [],
                                  "fio_outside_us": []}
        for i in range(pairs):
            a = _reads(mnt)
            e = bare("engine", {"mode": rw, "block_size": bs, "size": nbytes, "direct": True,
                                "queue_depth": depth, "streams": streams}, mnt, f"f-e{i}")
            b = _reads(mnt)
            f = _fio(mnt, rw, bs, depth, nbytes, f"f-f{i}", streams)
            c = _reads(mnt)
            ratios.append(e / f)
            if rw == "randread":
                for tool, bw, x, y in (("engine", e, a, b), ("fio", f, b, c)):
                    device, outside = _split(bw, bs, depth * streams, x, y)
                    split[f"{tool}_iops"].append(round(bw / bs))
                    split[f"{tool}_device_us"].append(device)
                    split[f"{tool}_outside_us"].append(outside)
        value, verdict, ci = judge(ratios, 0.95)
        details: dict = {"ratios": [round(r, 4) for r in ratios], "ci": ci, "bytes": nbytes}
        if rw == "randread":
            details |= split
            details["outside_us_median"] = {
                t: statistics.median(split[f"{t}_outside_us"]) for t in ("engine", "fio")}
        label = f"{streams}x qd{depth}" if streams > 1 else f"qd{depth}"
        rows.append({"figure": f"4 engine/fio psync {rw} {bs // 1024}k {label}",
                     "value": value, "target": ">= 0.95", "verdict": verdict,
                     "details": details})
    return rows
