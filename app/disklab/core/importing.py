"""Tool outputs someone already had, read for `disklab import`: which files, which tool, the
parameters each output states, and fio's per-interval logs beside a JSON output.

Storing them is core.library.imports' work; the CLI says what happened. Nothing here writes.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from disklab.core import tools
from disklab.core.errors import DisklabError, Problem
from disklab.core.library.imports import ImportedRun
from disklab.core.model import Metric
from disklab.core.tools.base import ToolOutput

TOOLS = ("fio", "bonnie", "iozone", "dd")  # the order sniffing tries them in
# fio's per-interval logs: PREFIX_bw.1.log, PREFIX_clat.2.log, PREFIX_iops.log ...
FIO_LOG = re.compile(r"^(?P<prefix>.+)_(?P<kind>bw|iops|lat|clat|slat)(?:\.(?P<job>\d+))?\.log$")
FIO_LOG_SERIES = {"bw": ("bw_bps", 1024.0), "iops": ("iops", 1.0), "lat": ("lat_ns", 1.0),
                  "clat": ("clat_ns", 1.0), "slat": ("slat_ns", 1.0)}
FIO_DIRECTIONS = {"0": "read", "1": "write", "2": "trim"}
MAX_LOG_POINTS = 2_000_000  # per file: a 1 ms log of a week-long run is 6e8 lines; keep the start


@dataclass
class ReadOutputs:
    """What reading the paths gave: the runs, the problems of files named one by one (each
    an error), the files of folders that are no tool output (skipped, named) and the
    folders' fio logs that belong to no JSON output."""

    runs: list[ImportedRun] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def expand(paths: Sequence[str]) -> Iterator[tuple[Path, bool]]:
    """Each file to read, with whether it was named itself (False: found in a folder, read
    recursively in name order; hidden files and fio's logs are not outputs of their own)."""
    for name in paths:
        path = Path(name)
        if not path.is_dir():
            yield path, True
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for f in sorted(files):
                if not f.startswith(".") and not FIO_LOG.match(f):
                    yield Path(root, f), False


def detect(text: str) -> str | None:
    """The tool whose output `text` is, or None."""
    for name in TOOLS:
        if tools.get_adapter(name).sniff(text):
            return name
    return None


def case_params(metrics: Sequence[Metric]) -> dict[str, Any]:
    """The parameters a whole output states: those every figure of it has with one value
    (fio's job options, iozone's file size, bonnie++'s size and files), never the job name."""
    common: dict[str, Any] | None = None
    for m in metrics:
        params = {k: v for k, v in (m.params or {}).items() if k != "job"}
        common = params if common is None else {
            k: v for k, v in common.items() if k in params and params[k] == v}
    return dict(sorted((common or {}).items()))


def read_outputs(paths: Sequence[str], tool: str | None = None,
                 progress: Callable[[int, int, str], None] | None = None) -> ReadOutputs:
    """Read every file of `paths` (folders recursively) as a tool output. A file named
    itself that is no output is a problem; one found in a folder is skipped."""
    files = list(expand(paths))
    out = ReadOutputs()
    for done, (path, named) in enumerate(files, 1):
        if progress is not None:
            progress(done, len(files), str(path))
        run, problem = read_output(path, tool)
        if run is not None:
            out.runs.append(run)
        elif named or problem is None:
            out.problems.append(problem or Problem(str(path), "no output"))
        elif problem.message.startswith("not recognised"):
            out.skipped.append(str(path))
        else:
            out.problems.append(problem)
    return out


def read_output(path: Path, tool: str | None = None
                ) -> tuple[ImportedRun | None, Problem | None]:
    """One file as an ImportedRun, or the problem that stops it (file, what is wrong)."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as e:
        return None, Problem(str(path), f"cannot read: {e.strerror or e}")
    name = tool or detect(text)
    if name is None:
        return None, Problem(str(path), "not recognised as iozone, fio, bonnie++ or dd output "
                                        "(use --tool to say which)" + _own_export(text))
    output = ToolOutput(stdout=text, stderr=text if name == "dd" else "")
    try:
        metrics = tools.get_adapter(name).parse_result(output, {})
    except DisklabError as e:
        return None, Problem(str(path), str(e))
    series = fio_log_series(path, text) if name == "fio" else {}
    return ImportedRun(name, case_params(metrics), str(path.resolve()), text, metrics,
                       series), None


def _own_export(text: str) -> str:
    """A hint when the file is DiskLab's own JSON export, which holds results, not outputs."""
    if '"format": "disklab.' in text[:200]:
        return ("; this is DiskLab's own JSON export: to move a session between machines "
                "export it with --format bundle and import the .disklab file")
    return ""


def fio_log_prefixes(text: str) -> set[str]:
    """The file name prefixes of the per-interval logs a fio JSON output's jobs wrote
    (write_bw_log, write_iops_log, write_lat_log: fio names them PREFIX_bw.N.log ...)."""
    return {os.path.basename(str(m.group(1)).strip()) for m in re.finditer(
        r'"write_(?:bw|iops|lat)_log"\s*:\s*"([^"]+)"', text)} - {"", "1", "0"}


def fio_log_series(path: Path, text: str) -> dict[str, list[tuple[float, float]]]:
    """The time series of fio's per-interval logs next to the JSON output `path`: series
    fio_<direction>_<kind> (bw in B/s, iops, lat/clat/slat in ns; ':N' after a job's logs
    when there are several jobs' logs), points (seconds from the start, value)."""
    prefixes = fio_log_prefixes(text)
    if not prefixes:
        return {}
    logs = []
    try:
        for entry in os.scandir(path.parent):
            m = FIO_LOG.match(entry.name)
            if m and m.group("prefix") in prefixes and entry.is_file():
                logs.append((m.group("kind"), m.group("job") or "1", Path(entry.path)))
    except OSError:
        return {}
    several = len({job for _k, job, _p in logs}) > 1
    series: dict[str, list[tuple[float, float]]] = {}
    for kind, job, log in sorted(logs, key=lambda x: (int(x[1]), x[0])):
        name, scale = FIO_LOG_SERIES[kind]
        for direction, points in _read_fio_log(log, scale).items():
            series[f"fio_{direction}_{name}" + (f":{job}" if several else "")] = points
    return series


def _read_fio_log(path: Path, scale: float) -> Mapping[str, list[tuple[float, float]]]:
    """One fio log: lines 'msec, value, direction, bs[, offset]' -> points per direction.
    Lines that are not such a line are left out (a log cut short by a kill)."""
    by_direction: dict[str, list[tuple[float, float]]] = {}
    try:
        with path.open(encoding="ascii", errors="replace") as fp:
            for count, line in enumerate(fp):
                if count >= MAX_LOG_POINTS:
                    break
                parts = line.split(",")
                if len(parts) < 3:
                    continue
                try:
                    t, value = float(parts[0]) / 1000.0, float(parts[1]) * scale
                except ValueError:
                    continue
                direction = FIO_DIRECTIONS.get(parts[2].strip())
                if direction is not None and t >= 0 and math.isfinite(value):
                    by_direction.setdefault(direction, []).append((t, value))
    except OSError:
        return {}
    return by_direction
