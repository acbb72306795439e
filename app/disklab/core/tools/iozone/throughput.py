"""Throughput mode's output (-t N): one block per phase ("Children see throughput for  4
initial writers = X kB/sec", Parent sees, Min/Max/Avg per process, Min xfer, and with -+u a
CPU line), and for a placed case (-C) each child's bytes and rate, the per-target figures.

Metric names follow DESIGN.md: NAME is the aggregate "Children see" figure, NAME:parent,
NAME:min_proc, NAME:max_proc, NAME:avg_proc (B/s), NAME:min_xfer (B), NAME:cpu (%).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from disklab.core.tools.base import StreamFigures, placement, placement_metrics
from disklab.core.tools.iozone.reader import Reader
from disklab.core.tools.iozone.tables import (
    CHILDREN,
    KBS,
    THROUGHPUT_LABELS,
    TOOL,
    UNIT_BYTES,
    F,
    N,
    split_lines,
)
from disklab.core.vocab.errors import ParseError
from disklab.core.vocab.model import UNIT_PERCENT, UNIT_THROUGHPUT, Metric
from disklab.core.vocab.units import KiB

_PARENT = re.compile(rf"^Parent sees throughput for\s+({N})\s+(.+?)\s*=\s*({F})\s+{KBS}$")
_PER_PROC = re.compile(rf"^(Min|Max|Avg) throughput per process\s*=\s*({F})\s+{KBS}$")
_XFER = re.compile(rf"^Min xfer\s*=\s*({F})\s+(?:[kK]B|ops)$")
_CPU = re.compile(rf"^CPU [Uu]tilization: Wall time\s+({F})\s+CPU time\s+({F})\s+"
                  rf"CPU utilization\s+({F})\s*%$")
# the words that begin a block's lines (the reader sends such a line here)
BLOCK_WORDS = re.compile(r"^(Children see|Parent sees|Min throughput|Max throughput|"
                         r"Avg throughput|Min xfer|CPU [Uu]tilization:)")


@dataclass
class Block:
    """One throughput-mode phase being read: values in kB/sec (min_xfer in kB)."""

    line: int
    label: str
    name: str
    threads: int
    values: dict[str, float] = field(default_factory=dict)
    done: bool = False  # its "Min xfer" line was read


DEGENERATE = ("iozone printed min = max > avg per process: the processes ran too briefly "
              "for it to time them apart (small files); not a spread")
DEGENERATE_ZERO = ("iozone printed a process at 0 and another at the children's total: the "
                   "processes ran too briefly for it to time them apart (small files); not a "
                   "spread")


def degenerate(values: dict[str, float]) -> str | None:
    """The note for a block whose per-process figures cannot be true: a minimum equal to the
    maximum above the average (iozone 3.x prints that for 4 MiB files), which no set of
    processes has; None for figures that can be."""
    low, high, mean = values["min_proc"], values["max_proc"], values["avg_proc"]
    if high > 0 and abs(high - low) <= 1e-9 * high and mean < high * (1 - 1e-6):
        return DEGENERATE
    total = values.get("", 0.0)
    if low == 0 and high > 0 and abs(high - total) <= 1e-9 * high:
        return DEGENERATE_ZERO  # one process did all the work in iozone's count
    return None


class ThroughputBlocks(Reader):
    """Throughput mode's blocks, one per phase: "Children see throughput for N <label>", then
    Parent sees, Min/Max/Avg per process and Min xfer (which ends it), and with -+u a CPU line."""

    def __init__(self, params: Mapping[str, Any], partial: bool = False):
        super().__init__(params, partial)
        self.block: Block | None = None

    def _close_block(self, number: int | None) -> None:
        """End the block being read; one without its Min xfer line is a cut or damaged file."""
        b = self.block
        if b is not None and not b.done and not self.partial:
            raise ParseError(TOOL, number, f"the 'Min xfer' line that ends the block of "
                                           f"{b.threads} {b.label} (line {b.line})")
        self.block = None

    def _block_line(self, number: int, s: str) -> None:
        """One line of a block: its first opens it, the others fill it in, each once."""
        if m := CHILDREN.match(s):
            self._close_block(number)
            label = " ".join(m[2].split())
            name = THROUGHPUT_LABELS.get(label)
            if name is None:
                raise ParseError(TOOL, number, "a test iozone names "
                                               f"({', '.join(THROUGHPUT_LABELS)})", label)
            threads = int(m[1])
            if threads < 1:
                raise ParseError(TOOL, number, "a number of processes above 0", s)
            self.block = Block(number, label, name, threads, {"": float(m[3])})
            if threads not in self.tp_threads:
                self.tp_threads.append(threads)
            return
        b = self.block
        if b is None:
            raise ParseError(TOOL, number, "a 'Children see throughput for N ...' line first", s)
        if m := _PARENT.match(s):
            if int(m[1]) != b.threads or " ".join(m[2].split()) != b.label:
                raise ParseError(TOOL, number, f"'Parent sees throughput for {b.threads} "
                                               f"{b.label}'", s)
            self._set(number, b, "parent", float(m[3]), s)
        elif m := _PER_PROC.match(s):
            self._set(number, b, f"{m[1].lower()}_proc", float(m[2]), s)
        elif m := _XFER.match(s):
            self._set(number, b, "min_xfer", float(m[1]), s)
            self._finish_block(number, b)
        elif m := _CPU.match(s):
            if not b.done:
                raise ParseError(TOOL, number, "the CPU line after 'Min xfer'", s)
            self._set(number, b, "cpu", float(m[3]), s)
            if self.partial and b.values[""] == 0:
                return
            self._add(number, Metric(f"{b.name}:cpu", float(m[3]), UNIT_PERCENT,
                                     params=self._tp_params(b)))
        else:
            raise ParseError(TOOL, number, "a line of iozone's throughput block "
                                           "('... = N kB/sec')", s)

    def _set(self, number: int, b: Block, key: str, value: float, s: str) -> None:
        if key in b.values or (b.done and key != "cpu"):
            raise ParseError(TOOL, number, f"one '{key}' line per block", s)
        b.values[key] = value

    def _tp_params(self, b: Block) -> dict[str, int]:
        """A block's parameters: its process count, and the file and record size."""
        return {"threads": b.threads, **self._sizes()}

    def _finish_block(self, number: int, b: Block) -> None:
        missing = [k for k in ("parent", "min_proc", "max_proc", "avg_proc") if k not in b.values]
        if missing:
            raise ParseError(TOOL, number, f"the block's {', '.join(missing)} line(s) before "
                                           "'Min xfer'")
        b.done = True
        if self.partial and b.values[""] == 0:
            return  # every child failed (e.g. ENOSPC): 0 is not a measurement
        params = self._tp_params(b)
        note = degenerate(b.values)
        for key, suffix in (("", ""), ("parent", ":parent"), ("min_proc", ":min_proc"),
                            ("max_proc", ":max_proc"), ("avg_proc", ":avg_proc")):
            self._add(number, Metric(b.name + suffix, b.values[key] * KiB, UNIT_THROUGHPUT,
                                     note=note if key.endswith("_proc") else None,
                                     params=params))
        self._add(number, Metric(f"{b.name}:min_xfer", b.values["min_xfer"] * KiB, UNIT_BYTES,
                                 params=params))


_CHILD = re.compile(rf"^Child\[({N})\] xfer count\s*=\s*({F})\s+[kK]B,\s*"
                    rf"Throughput\s*=\s*({F})\s+{KBS}")


def _children(stdout: str, names: list[str]) -> list[tuple[str, dict[str, Any], list[
        StreamFigures]]]:
    """(metric name, block parameters, each child's figures) of every throughput block with
    -C's Child[i] lines: child i ran on the target named i-th in `on` (its -F file)."""
    blocks: list[tuple[str, dict[str, Any], list[StreamFigures]]] = []
    for number, raw in enumerate(split_lines(stdout), start=1):
        s = raw.strip()
        if m := CHILDREN.match(s):
            name = THROUGHPUT_LABELS.get(" ".join(m[2].split()))
            if name is None:
                raise ParseError(TOOL, number, "a test iozone names", m[2])
            blocks.append((name, {"threads": int(m[1])}, []))
        elif (m := _CHILD.match(s)) and blocks:
            index = int(m[1])
            if index >= len(names):
                raise ParseError(TOOL, number, f"a child below {len(names)} (one per target "
                                               "placed)", s)
            xfer, rate = float(m[2]) * KiB, float(m[3]) * KiB
            blocks[-1][2].append(StreamFigures(names[index], xfer, 0.0,
                                               xfer / rate if rate > 0 else 0.0))
    return blocks


def placed_metrics(metrics: list[Metric], stdout: str, params: Mapping[str, Any]
                   ) -> list[Metric]:
    """A placed case (several targets): each phase's per-target rows and its "all" row (every
    byte over the slowest child's time: iozone's children start together behind its own
    barrier), and iozone's own figures as the aggregate's (its "Children see" sum as
    NAME:children). ParseError when a block lacks its Child lines."""
    names = placement(params)
    out: list[Metric] = []
    by_phase: dict[str, tuple[dict[str, Any], list[StreamFigures]]] = {}
    for name, block, streams in _children(stdout, names):
        if len(streams) != len(names):
            raise ParseError(TOOL, None, f"{len(names)} 'Child[i] xfer count' lines after the "
                                         f"{name} block (iozone -C)", str(len(streams)))
        by_phase[name] = (block, streams)
    for m in metrics:
        extra = dict(m.params or {})
        if m.name in by_phase:
            _block, streams = by_phase[m.name]
            out += placement_metrics(m.name, streams, UNIT_THROUGHPUT, m.note, extra)
            out.append(Metric(f"{m.name}:children", m.value, m.unit, m.note,
                              {**extra, "target": "all"}))
        else:
            out.append(Metric(m.name, m.value, m.unit, m.note, {**extra, "target": "all"}))
    return out


