"""Figure 4b: the built-in engine over fio with the psync engine (same block size, one stream,
same queue depth: fio runs `numjobs = depth` psync threads on one file, as the engine runs `depth`
threads issuing pread on one file). 1 MiB sequential direct write and read, 4 KiB random direct
read at depth 1 and 8. Target >= 0.95."""

from __future__ import annotations

import json
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


def run(mnt: Path, pairs: int, size: str) -> list[dict]:
    if proc.which("fio") is None:
        return [{"figure": "4 engine/fio", "value": "-", "target": ">= 0.95",
                 "verdict": "not measured: fio is not installed", "details": {}}]
    nbytes = parse_size(size)
    rows = []
    for rw, bs, depth in CASES:
        ratios = []
        for i in range(pairs):
            e = bare("engine", {"mode": rw, "block_size": bs, "size": nbytes, "direct": True,
                                "queue_depth": depth}, mnt, f"f-e{i}")
            f = _fio(mnt, rw, bs, depth, nbytes, f"f-f{i}")
            ratios.append(e / f)
        med = statistics.median(ratios)
        rows.append({"figure": f"4 engine/fio psync {rw} {bs // 1024}k qd{depth}",
                     "value": summary(ratios), "target": ">= 0.95",
                     "verdict": verdict(med, 0.95), "details": {"ratios": ratios}})
    return rows
