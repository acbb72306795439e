"""Figure 4b: the built-in engine over fio with the psync engine (same block size, one stream,
same queue depth: fio runs `numjobs = depth` psync threads on one file, as the engine runs `depth`
threads issuing pread on one file). 1 MiB sequential direct write and read, 4 KiB random direct
read at depth 1 and 8. Target >= 0.95.

For the random reads the details also hold, per run, the device's own mean read latency from
/sys/dev/block/M:m/stat (read ticks / reads completed, for the loop device under the scratch
filesystem) and the time each call spends outside the device: depth / IOPS - device latency.
That splits a shortfall into "the device served the engine slower" and "the engine's threads
took longer between calls" (bench/README.md, figure 4)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
from pathlib import Path

from disklab.core import proc
from disklab.core.units import parse_size

from .common import bare, drop_caches, summary, verdict

CASES = [("write", 1 << 20, 1), ("read", 1 << 20, 1), ("randread", 4096, 1), ("randread", 4096, 8)]


def _fio(mnt: Path, rw: str, bs: int, depth: int, size: int, name: str) -> float:
    path = mnt / f"{name}.fio"
    if rw != "write":
        subprocess.run(["fio", "--name=lay", f"--filename={path}", "--rw=write", "--bs=1m",
                        f"--size={size}", "--direct=1", "--end_fsync=1", "--thread",
                        "--output-format=json"], check=True, capture_output=True)
        drop_caches()
    argv = ["fio", "--name=b", f"--filename={path}", f"--rw={rw}", f"--bs={bs}",
            f"--size={size}", "--direct=1", "--ioengine=psync", f"--numjobs={depth}",
            "--group_reporting", "--thread", "--output-format=json"]
    if rw == "write":
        argv.append("--end_fsync=1")
    if depth > 1:
        argv.append(f"--io_size={size // depth}")
    try:
        done = subprocess.run(argv, check=True, capture_output=True, text=True)
    finally:
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
    nbytes = parse_size(size)
    rows = []
    for rw, bs, depth in CASES:
        ratios: list[float] = []
        split: dict[str, list] = {"engine_iops": [], "fio_iops": [], "engine_device_us": [],
                                  "fio_device_us": [], "engine_outside_us": [],
                                  "fio_outside_us": []}
        for i in range(pairs):
            a = _reads(mnt)
            e = bare("engine", {"mode": rw, "block_size": bs, "size": nbytes, "direct": True,
                                "queue_depth": depth}, mnt, f"f-e{i}")
            b = _reads(mnt)
            f = _fio(mnt, rw, bs, depth, nbytes, f"f-f{i}")
            c = _reads(mnt)
            ratios.append(e / f)
            if rw == "randread":
                for tool, bw, x, y in (("engine", e, a, b), ("fio", f, b, c)):
                    device, outside = _split(bw, bs, depth, x, y)
                    split[f"{tool}_iops"].append(round(bw / bs))
                    split[f"{tool}_device_us"].append(device)
                    split[f"{tool}_outside_us"].append(outside)
        med = statistics.median(ratios)
        details: dict = {"ratios": [round(r, 4) for r in ratios]}
        if rw == "randread":
            details |= split
            details["outside_us_median"] = {
                t: statistics.median(split[f"{t}_outside_us"]) for t in ("engine", "fio")}
        rows.append({"figure": f"4 engine/fio psync {rw} {bs // 1024}k qd{depth}",
                     "value": summary(ratios), "target": ">= 0.95",
                     "verdict": verdict(med, 0.95), "details": details})
    return rows
