"""Helpers shared by the figures: bare tool runs, runs through DiskLab, ratios and verdicts."""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from disklab.core import tools
from disklab.core.plan.parse import parse_plan
from disklab.core.run.runner import run_plan
from disklab.core.tools.base import REQUIRED, RunTarget, ToolOutput
from disklab.core.vocab.events import CaseFailed, CaseFinished


def summary(ratios: list[float]) -> str:
    """'0.998 (0.991-1.004)': the median and the range of A/B ratios."""
    return f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"


def verdict(value: float, target: float, higher_is_better: bool = True) -> str:
    """For one deterministic value (a count, a size, one timing of a stable thing)."""
    good = value >= target if higher_is_better else value <= target
    return "ok" if good else "short"


def median_interval(values: list[float]) -> tuple[float, float, float]:
    """(low, high, confidence) of a distribution-free confidence interval of the median: the
    k-th smallest and k-th largest of n values, k the largest with P(Binomial(n, 1/2) < k) <=
    5 %, so the interval holds the true median with >= 90 % confidence whatever the noise's
    shape (n = 5: min-max at 94 %; n = 9: 2nd-8th at 96 %). Fewer than 5 values: min-max, with
    the confidence that gives (n = 2: 50 %)."""
    xs = sorted(values)
    n = len(xs)
    k, tail = 1, 0.5 ** n
    cumulative = tail
    for j in range(1, n // 2):
        cumulative += math.comb(n, j) * 0.5 ** n
        if cumulative > 0.05:
            break
        k, tail = j + 1, cumulative
    return xs[k - 1], xs[n - k], 1 - 2 * tail


def judge(values: list[float], target: float, higher_is_better: bool = True,
          digits: int = 3) -> tuple[str, str, list[float]]:
    """(value text, verdict, [low, high, confidence]) of a noisy figure measured n times.

    ok: the whole confidence interval of the median meets the target; short: the whole interval
    misses it; otherwise the measurement cannot decide at this noise, and the verdict says so
    with the interval instead of guessing from the median."""
    lo, hi, conf = median_interval(values)
    med = statistics.median(values)
    text = f"{med:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"
    meets = (lambda v: v >= target) if higher_is_better else (lambda v: v <= target)
    if meets(lo) and meets(hi):
        v = "ok"
    elif not meets(lo) and not meets(hi):
        v = "short"
    else:
        v = (f"unresolved: the median's {conf:.0%} interval {lo:.{digits}f}-{hi:.{digits}f} "
             f"holds the target {target}; more pairs or a quieter machine")
    return text, v, [round(lo, 4), round(hi, 4), round(conf, 3)]


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
