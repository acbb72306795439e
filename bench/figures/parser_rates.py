"""Figure 7: lines per second through the iozone, fio and bonnie++ parsers on the largest recorded
fixtures (target >= 50,000 lines/s). A slow parser would stall the run's live view."""

from __future__ import annotations

import time
from pathlib import Path

from disklab.core import tools
from disklab.core.tools.base import ToolOutput

from .common import verdict

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"


def _largest(tool: str) -> Path:
    files = [p for p in (FIXTURES / tool).iterdir()
             if p.suffix in (".txt", ".json", ".csv") and "error" not in p.name
             and not p.name.endswith(".stderr.txt")]
    return max(files, key=lambda p: p.stat().st_size)


def run() -> list[dict]:
    rows = []
    for tool in ("iozone", "fio", "bonnie"):
        path = _largest(tool)
        text = path.read_text(errors="replace")
        lines = text.count("\n") + 1
        adapter = tools.get_adapter(tool)
        output = ToolOutput(stdout=text)
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < 1.0:
            adapter.parse_result(output, {})
            n += 1
        rate = lines * n / (time.perf_counter() - t0)
        rows.append({"figure": f"7 {tool} parser", "value": f"{rate:,.0f} lines/s",
                     "target": ">= 50,000", "verdict": verdict(rate, 50_000),
                     "details": {"fixture": path.name, "lines": lines}})
    return rows
