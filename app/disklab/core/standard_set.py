"""KDiskMark's standard set, one click from a chosen target, and its eight figures as tiles.

The set is a shipped preset (resources/presets/standard.toml, by fio; standard-engine.toml by
the built-in engine where fio is not installed): SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1 and
RND4K Q1T1, each read and write, with KDiskMark's block sizes, queue depths, thread counts,
1 GiB file and 5 loops averaged. `standard_plan` puts a chosen target into it;
`standard_tiles` turns the session's rows (the library's, or the Run page's live ones, which
have the same shape) into the eight tiles: the rate in the units choice every surface writes
(core.vocab.units: MB/s, KDiskMark's label, by default; MiB/s in IEC), so a tile and the Run
table's row of the same case say the same figure, and IOPS.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from disklab.core import proc
from disklab.core.resources import resource
from disklab.core.results.format import number
from disklab.core.results.rows import row_params, row_stats
from disklab.core.vocab.units import parse_size, rate_unit, unit_system

NAME = "standard set"  # the preset's plan name: the Run page shows tiles for it
# (label, sequential, block size, queue depth, threads), in KDiskMark's order
TESTS = (("SEQ1M Q8T1", True, "1m", 8, 1), ("SEQ1M Q1T1", True, "1m", 1, 1),
         ("RND4K Q32T1", False, "4k", 32, 1), ("RND4K Q1T1", False, "4k", 1, 1))
DIRECTIONS = ("read", "write")


def preset_name(fio_installed: bool | None = None) -> str:
    """standard (fio) where fio is installed, else standard-engine."""
    if fio_installed is None:
        fio_installed = proc.which("fio") is not None
    return "standard" if fio_installed else "standard-engine"


def standard_plan(target: Mapping[str, Any], fio_installed: bool | None = None,
                  **overrides: Any) -> dict[str, Any]:
    """The preset as a plan document with `target` as its [target] table (a directory, image
    or device table as the Target page holds it). `overrides` replace top-level or per-test
    keys (repeats, size, runtime): a test of the set runs it smaller."""
    path = resource("presets") / f"{preset_name(fio_installed)}.toml"
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    doc["target"] = dict(target)
    for key, value in overrides.items():
        if key in doc:
            doc[key] = value
        for test in doc.get("test", []):
            if key in test:
                test[key] = value
    return doc


def unit_note() -> str:
    """What a tile's rate is, for its tooltip: the unit and that it is the mean of the repeats
    (KDiskMark labels fio's KiB/s ÷ 1000 'MB/s', 2.4 % under the SI figure shown here)."""
    unit, _div = rate_unit()
    base = "10^6" if unit_system() == "si" else "2^20"
    return (f"{unit}: {base} bytes a second, as every table and chart writes it; mean of "
            "the repeats")


@dataclass(frozen=True)
class Tile:
    """One of the eight figures: 'SEQ1M Q8T1' read, its rate (B/s) and IOPS (None until
    run), written in the units choice when shown."""

    test: str
    direction: str
    bps: float | None = None
    iops: float | None = None
    n: int = 0

    @property
    def text(self) -> str:
        return "–" if self.bps is None else number(self.bps / rate_unit()[1])

    @property
    def detail(self) -> str:
        unit = rate_unit()[0]
        if self.bps is None:
            return unit
        iops = f" · {number(self.iops)} IOPS" if self.iops is not None else ""
        return f"{unit}{iops} · n={self.n}"


def test_of(params: Mapping[str, Any]) -> tuple[str, str] | None:
    """(test label, direction) of a case of the set, from its parameters; None for others."""
    rw = str(params.get("rw") or params.get("mode") or "")
    direction = "read" if rw.endswith("read") else "write" if rw.endswith("write") else ""
    block = params.get("bs", params.get("block_size"))
    depth = params.get("iodepth", params.get("queue_depth", 1))
    threads = params.get("numjobs", params.get("streams", 1))
    if not direction or block is None:
        return None
    try:
        size = parse_size(block) if isinstance(block, str) else int(block)
    except (ValueError, TypeError):
        return None
    for label, sequential, bs, qd, th in TESTS:
        if (sequential == (not rw.startswith("rand")) and size == parse_size(bs)
                and int(depth) == qd and int(threads) == th):
            return label, direction
    return None


def standard_tiles(rows: Iterable[Mapping[str, Any]]) -> list[Tile]:
    """The eight tiles, in KDiskMark's order (each test: read, then write), from result rows;
    a tile without a row yet is empty."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        key = test_of(row_params(r))
        if key is None:
            continue
        metric = str(r.get("metric", ""))
        mean, _std, n = row_stats(r)
        if metric == key[1] and mean is not None:
            found.setdefault(key, {})["bps"] = mean
            found[key]["n"] = n
        elif metric == f"{key[1]}:iops" and mean is not None:
            found.setdefault(key, {})["iops"] = mean
    return [Tile(label, d, **found.get((label, d), {}))
            for label, *_rest in TESTS for d in DIRECTIONS]
