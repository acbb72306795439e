"""Figure 1e (report only): the end-to-end observer effect. The throughput DiskLab stores for a
case, over what the same tool prints when run bare on the same filesystem, alternated
bare/DiskLab. On a disk whose runs differ by +-30 % this cannot resolve +-1 %, so it is printed
with the median's confidence interval and not judged: the observer effect is judged by its
mechanisms in observer_cost (figures 1a-1d)."""

from __future__ import annotations

from pathlib import Path

from disklab.core import proc, tools
from disklab.core.vocab.units import format_size, parse_size

from .common import bare, drop_caches, median_interval, summary, through_disklab

CASES = [
    ("dd", "dd 1m direct write", {"mode": "write", "block_size": 1 << 20, "direct": True}),
    ("dd", "dd 1m direct read", {"mode": "read", "block_size": 1 << 20, "direct": True}),
    ("fio", "fio 1m seq direct write", {"rw": "write", "bs": 1 << 20, "direct": True,
                                       "ioengine": "libaio", "iodepth": 1}),
    ("fio", "fio 4k randread qd32", {"rw": "randread", "bs": 4096, "direct": True,
                                     "ioengine": "libaio", "iodepth": 32}),
    ("iozone", "iozone -i0 -i1 -r4096k -I -t1", {"tests": ("write", "read"),
                                                   "record_size": 4 << 20, "direct": True,
                                                   "threads": 1}),
]


def _toml(params: dict, size: int) -> str:
    out = []
    for k, v in {**params, ("file_size" if "tests" in params else "size"): size}.items():
        if isinstance(v, bool):
            out.append(f"{k} = {'true' if v else 'false'}")
        elif isinstance(v, tuple):
            out.append(f"{k} = [{', '.join(repr(x).replace(chr(39), chr(34)) for x in v)}]")
        elif isinstance(v, int) and k in ("block_size", "bs", "record_size", "size", "file_size"):
            out.append(f'{k} = "{format_size(v)}"')
        elif isinstance(v, str):
            out.append(f'{k} = "{v}"')
        else:
            out.append(f"{k} = {v}")
    return "\n".join(out) + "\n"


def run(mnt: Path, pairs: int, size: str) -> list[dict]:
    rows = []
    nbytes = parse_size(size)
    for tool, title, params in CASES:
        missing = None
        if tool not in tools.tool_names():
            missing = f"no {tool} adapter in this build"
        elif tool != "dd" and proc.which(tools.get_adapter(tool).executable) is None:
            missing = f"{tool} is not installed"
        if missing:
            rows.append({"figure": f"1e {title}", "value": "-", "target": "report",
                         "verdict": f"not measured: {missing}", "details": {}})
            continue
        key = "file_size" if tool == "iozone" else "size"
        ratios = []
        try:
            for i in range(pairs):
                drop_caches()
                printed = bare(tool, {**params, key: nbytes}, mnt, f"obs{i}")
                drop_caches()
                stored = through_disklab(tool, _toml(params, nbytes), mnt)
                ratios.append(stored / printed)
        except Exception as e:  # one tool's failure must not hide the others' figures
            rows.append({"figure": f"1e {title}", "value": "-", "target": "report",
                         "verdict": f"not measured: {type(e).__name__}: {e}"[:200],
                         "details": {}})
            continue
        lo, hi, conf = median_interval(ratios)
        rows.append({"figure": f"1e {title}", "value": summary(ratios),
                     "target": "report",
                     "verdict": f"info: median's {conf:.0%} interval {lo:.3f}-{hi:.3f}",
                     "details": {"ratios": [round(r, 4) for r in ratios],
                                 "ci": [round(lo, 4), round(hi, 4), round(conf, 3)]}})
    return rows
