"""Helpers shared by the figures: bare tool runs, runs through DiskLab, ratios and verdicts."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from disklab.core import tools
from disklab.core.events import CaseFailed, CaseFinished
from disklab.core.plan import parse_plan
from disklab.core.runner import run_plan
from disklab.core.tools.base import REQUIRED, RunTarget, ToolOutput


def summary(ratios: list[float]) -> str:
    """'0.998 (0.991-1.004)': the median and the range of A/B ratios."""
    return f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"


def verdict(value: float, target: float, higher_is_better: bool = True) -> str:
    good = value >= target if higher_is_better else value <= target
    return "ok" if good else "short"


def drop_caches() -> None:
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def bare(tool: str, params: Mapping[str, Any], directory: Path, tag: str) -> float:
    """Run a tool's own argv from this script as a shell would (no DiskLab runner), return the
    throughput it printed (parsed with DiskLab's parser, which the parser tests pin to the text)."""
    adapter = tools.get_adapter(tool)
    params = with_defaults(tool, params)
    target = RunTarget(directory=str(directory), tag=tag, ram_bytes=0, is_root=True,
                       python=sys.executable)
    cmd = adapter.build_command(params, target)
    try:
        for step in cmd.prepare:
            subprocess.run(step, cwd=cmd.cwd, check=True, capture_output=True)
        if cmd.reads_after_prepare:
            drop_caches()
        done = subprocess.run(cmd.argv, cwd=cmd.cwd, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)
        result = None
        if cmd.result_file and os.path.exists(cmd.result_file):
            result = Path(cmd.result_file).read_text()
        metrics = adapter.parse_result(
            ToolOutput(done.stdout, done.stderr, result, done.returncode), params)
    finally:
        for f in cmd.files:
            Path(f).unlink(missing_ok=True)
    return main_figure(metrics, params)


def with_defaults(tool: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """A case's parameters as the plan loader completes them: defaults for what is not given."""
    adapter = tools.get_adapter(tool)
    full = {k: s.default for k, s in adapter.params.items() if s.default is not REQUIRED}
    return {**full, **params}


def main_figure(metrics: list, params: Mapping[str, Any]) -> float:
    """The headline throughput: the first B/s metric without a ':' suffix."""
    for m in metrics:
        if m.unit == "B/s" and ":" not in m.name and m.value:
            return float(m.value)
    raise RuntimeError(f"no throughput figure in {[m.name for m in metrics]}")


def through_disklab(tool: str, params_toml: str, directory: Path) -> float:
    """Run one case through the real runner (monitor, progress, events): what it stores."""
    text = f'name = "bench"\n[target]\ndirectory = "{directory}"\n[[test]]\ntool = "{tool}"\n'
    text += params_toml
    checked = parse_plan(text)
    metrics = None
    for event in run_plan(checked.plan):
        if isinstance(event, CaseFinished):
            metrics = list(event.metrics)
        elif isinstance(event, CaseFailed):
            raise RuntimeError(f"{tool} failed: {event.error}\n{event.transcript_tail}")
    if metrics is None:
        raise RuntimeError(f"{tool} gave no result")
    return main_figure(metrics, {})
