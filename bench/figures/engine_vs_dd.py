"""Figure 4a: the built-in engine over dd, 1 MiB sequential direct write and read, same size,
same filesystem, alternated, which tool goes first changing every pair (engine, dd; dd, engine
...: a pair's second run no longer always meets the first one's write-back). Target >= 0.95."""

from __future__ import annotations

from pathlib import Path

from disklab.core.vocab.units import parse_size

from .common import bare, judge


def run(mnt: Path, pairs: int, size: str) -> list[dict]:
    rows = []
    nbytes = parse_size(size)
    for mode in ("write", "read"):
        ratios, engine_bw, dd_bw = [], [], []
        for i in range(pairs):
            common = {"mode": mode, "block_size": 1 << 20, "size": nbytes, "direct": True}
            if i % 2:
                d = bare("dd", common, mnt, f"b-d{i}")
                e = bare("engine", common, mnt, f"b-e{i}")
            else:
                e = bare("engine", common, mnt, f"b-e{i}")
                d = bare("dd", common, mnt, f"b-d{i}")
            ratios.append(e / d)
            engine_bw.append(e)
            dd_bw.append(d)
        value, verdict, ci = judge(ratios, 0.95)
        rows.append({
            "figure": f"4 engine/dd 1m direct {mode}",
            "value": value,
            "target": ">= 0.95",
            "verdict": verdict,
            "details": {"ratios": [round(r, 4) for r in ratios], "ci": ci,
                        "engine_MiBps": [round(b / 2**20, 1) for b in engine_bw],
                        "dd_MiBps": [round(b / 2**20, 1) for b in dd_bw]},
        })
    return rows
