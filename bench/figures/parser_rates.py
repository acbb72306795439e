"""Figure 7: lines per second through the iozone, fio and bonnie++ parsers on the largest recorded
fixtures (target >= 50,000 lines/s). A slow parser would stall the run's live view. And files
per second of a folder import (`disklab import DIR --session NAME`: read, parse, store as one
session with the fio logs as series) on the real fio-plot sweep (target >= 50 files/s)."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from disklab.core import tools
from disklab.core.importing import read_outputs
from disklab.core.library import Library
from disklab.core.library.imports import import_runs
from disklab.core.tools.base import ToolOutput

from .common import verdict

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"
SWEEP = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "fio-plot-sweep"


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
    rows.append(folder_import())
    return rows


def folder_import(folder: Path = SWEEP, rounds: int = 5) -> dict:
    """The median of `rounds` imports of the folder into a fresh library, in files/s."""
    rates = []
    files = 0
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="disklab-bench-") as tmp, \
                Library.open(Path(tmp) / "l.sqlite3") as lib:
            t0 = time.perf_counter()
            read = read_outputs([str(folder)])
            import_runs(lib, name="sweep", config="imported", runs=read.runs,
                        host={"imported_from": str(folder)})
            rates.append(len(read.runs) / (time.perf_counter() - t0))
            files = len(read.runs)
    rate = statistics.median(rates)
    return {"figure": "7 folder import", "value": f"{rate:,.0f} files/s",
            "target": ">= 50", "verdict": verdict(rate, 50),
            "details": {"folder": folder.name, "files": files, "rates": rates}}
