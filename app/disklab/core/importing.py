"""`disklab import` and a drop on the window: bundles and other libraries merged (by session
UUID, core.library.bundle), and tool outputs someone already had: which files, which tool, the
parameters each output states, fio's per-interval logs beside a JSON output, stored as
sessions (core.library.imports). import_paths does it all and says what happened; the CLI and
the window show it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import stat
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from disklab.core import tools
from disklab.core.library import Library
from disklab.core.library.bundle import is_sqlite_file, merge
from disklab.core.library.imports import (
    ImportedRun,
    ImportSession,
    holding_session,
    imported_session,
    text_key,
)
from disklab.core.results.limits import IMPORTED_SERIES
from disklab.core.vocab.errors import DisklabError, LibraryError, Problem
from disklab.core.vocab.model import Metric
from disklab.core.vocab.units import human_bytes

# fio's per-interval logs: PREFIX_bw.1.log, PREFIX_clat.2.log, PREFIX_iops.log ...
FIO_LOG = re.compile(r"^(?P<prefix>.+)_(?P<kind>bw|iops|lat|clat|slat)(?:\.(?P<job>\d+))?\.log$")
FIO_LOG_SERIES = {"bw": ("bw_bps", 1024.0), "iops": ("iops", 1.0), "lat": ("lat_ns", 1.0),
                  "clat": ("clat_ns", 1.0), "slat": ("slat_ns", 1.0)}
FIO_DIRECTIONS = {"0": "read", "1": "write", "2": "trim"}
MAX_LOG_POINTS = 2_000_000  # per output, all its logs: a 1 ms log of a week is 6e8 lines
MAX_LOG_LINE = 256  # bytes: a fio log line is ~40; a longer one is no log line (read no further)
# The largest tool output read: a week of fio --status-interval is ~100 MiB; the read holds
# about 3x the file (bytes, text, the parse), so 128 MiB stays inside a 512 MiB machine.
MAX_OUTPUT_BYTES = 128 << 20
KERNEL_FILESYSTEMS = ("/proc", "/sys")  # files there are the kernel's, never a tool output


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
    for name in tools.importable_tools():
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


def each_output(paths: Sequence[str], tool: str | None = None,
                progress: Callable[[int, int, str], None] | None = None,
                read: ReadOutputs | None = None) -> Iterator[ImportedRun]:
    """Every file of `paths` (folders recursively) read as a tool output, one at a time (the
    caller stores each before the next is read: an import holds one output, whatever the
    number of files). A file named itself that is no output is a problem in `read`; one found
    in a folder is skipped there."""
    files = list(expand(paths))
    out = read if read is not None else ReadOutputs()
    for done, (path, named) in enumerate(files, 1):
        if progress is not None:
            progress(done, len(files), str(path))
        run, problem = read_output(path, tool)
        if run is not None:
            yield run
        elif named or problem is None:
            out.problems.append(problem or Problem(str(path), "no output"))
        elif problem.message.startswith("not recognised"):
            out.skipped.append(str(path))
        else:
            out.problems.append(problem)


def read_outputs(paths: Sequence[str], tool: str | None = None,
                 progress: Callable[[int, int, str], None] | None = None) -> ReadOutputs:
    """each_output's runs all held at once, with the problems and skipped files (for a few
    outputs: an import stores them one at a time instead)."""
    out = ReadOutputs()
    out.runs = list(each_output(paths, tool, progress, out))
    return out


def unreadable(path: Path, limit: int | None = MAX_OUTPUT_BYTES) -> str | None:
    """Why `path` is no file to read as an output, or None: a device, a FIFO or a socket
    (endless or blocking: /dev/zero never ends), a kernel file (/proc, /sys: their size says
    0 and some never end), or a file larger than `limit` (named with its size; None: any size,
    for a bundle, which SQLite reads a page at a time). Only the inode is looked at: nothing
    is opened."""
    try:
        st = path.stat()
    except OSError as e:
        return f"cannot read: {e.strerror or e}"
    if not stat.S_ISREG(st.st_mode):
        return f"not a regular file (a {_file_kind(st.st_mode)}): a tool output is a file"
    for kernel in KERNEL_FILESYSTEMS:
        with contextlib.suppress(OSError):
            if os.stat(kernel).st_dev == st.st_dev:
                return f"a kernel file under {kernel}, not a tool output"
    if limit is not None and st.st_size > limit:
        return (f"{human_bytes(st.st_size)} is larger than a tool output can be "
                f"({human_bytes(MAX_OUTPUT_BYTES)} at most): not read")
    return None


def _file_kind(mode: int) -> str:
    """What a file that is not regular is, in words."""
    for test, word in ((stat.S_ISDIR, "directory"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISFIFO, "FIFO"),
                       (stat.S_ISSOCK, "socket")):
        if test(mode):
            return word
    return "special file"


def read_text(path: Path) -> tuple[str, str]:
    """The text of a file unreadable() let through, read up to one byte past the cap (a file
    that grew since it was looked at is refused all the same), and the SHA-256 of its bytes.
    DisklabError says why not."""
    why = unreadable(path)
    if why is not None:
        raise DisklabError(why)
    try:
        with path.open("rb") as fp:
            data = fp.read(MAX_OUTPUT_BYTES + 1)
    except OSError as e:
        raise DisklabError(f"cannot read: {e.strerror or e}") from None
    if len(data) > MAX_OUTPUT_BYTES:
        raise DisklabError(f"grew past {human_bytes(MAX_OUTPUT_BYTES)} while it was read: "
                           "larger than a tool output can be, not read")
    return data.decode("utf-8", errors="replace"), hashlib.sha256(data).hexdigest()


def read_output(path: Path, tool: str | None = None
                ) -> tuple[ImportedRun | None, Problem | None]:
    """One file as an ImportedRun, or the problem that stops it (file, what is wrong)."""
    try:
        text, digest = read_text(path)
    except DisklabError as e:
        return None, Problem(str(path), str(e))
    name = tool or detect(text)
    if name is None:
        return None, Problem(str(path), f"not recognised as {_importable()} output "
                                        "(use --tool to say which)" + _own_export(text))
    adapter = tools.get_adapter(name)
    try:
        metrics = adapter.parse_result(adapter.saved_output(text), {})
    except DisklabError as e:
        return None, Problem(str(path), str(e))
    logs = hashlib.sha256()
    series = fio_log_series(path, text, logs) if name == "fio" else {}
    logs_digest = logs.hexdigest() if series else ""  # the logs are part of the output
    # what the output says of its device, for the verdict of what limited it (one point)
    series.update({IMPORTED_SERIES[k]: [(0.0, v)]
                   for k, v in adapter.device_evidence(text).items() if k in IMPORTED_SERIES})
    return ImportedRun(name, case_params(metrics), str(path.resolve()), text, metrics,
                       series, key=text_key(name, digest, logs_digest)), None


def _importable() -> str:
    """The tools `disklab import` recognises, as their executables are known: 'dd, iozone,
    fio or bonnie++'."""
    names = [tools.get_adapter(n).executable or n for n in tools.importable_tools()]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


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


def fio_log_series(path: Path, text: str, digest: Any = None
                   ) -> dict[str, Sequence[tuple[float, float]]]:
    """The time series of fio's per-interval logs next to the JSON output `path`: series
    fio_<direction>_<kind> (bw in B/s, iops, lat/clat/slat in ns; ':N' after a job's logs
    when there are several jobs' logs), points (seconds from the start, value). `digest` (a
    hashlib object) is fed each log's name and every line read, for the output's key."""
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
    series: dict[str, Sequence[tuple[float, float]]] = {}
    budget = MAX_LOG_POINTS
    for kind, job, log in sorted(logs, key=lambda x: (int(x[1]), x[0])):
        name, scale = FIO_LOG_SERIES[kind]
        if digest is not None:
            digest.update(f"\0{kind}.{job}\0".encode())
        for direction, points in _read_fio_log(log, scale, budget, digest).items():
            series[f"fio_{direction}_{name}" + (f":{job}" if several else "")] = points
            budget -= len(points)
    return series


class Points(Sequence[tuple[float, float]]):
    """A series' (seconds, value) points as two arrays of doubles: 16 bytes a point, not the
    ~110 of a list of tuples (a 2,000,000-line log is 32 MB, not 220)."""

    def __init__(self) -> None:
        self.t, self.v = array("d"), array("d")

    def append(self, point: tuple[float, float]) -> None:
        self.t.append(point[0])
        self.v.append(point[1])

    def __len__(self) -> int:
        return len(self.t)

    @overload
    def __getitem__(self, index: int) -> tuple[float, float]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[float, float]]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return list(zip(self.t[index], self.v[index], strict=True))
        return self.t[index], self.v[index]

    def __iter__(self) -> Iterator[tuple[float, float]]:
        return zip(self.t, self.v, strict=True)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def _read_fio_log(path: Path, scale: float, budget: int = MAX_LOG_POINTS, digest: Any = None
                  ) -> Mapping[str, Points]:
    """One fio log: lines 'msec, value, direction, bs[, offset]' -> points per direction, at
    most `budget` lines read. Lines that are not such a line are left out (a log cut short by
    a kill); a line longer than MAX_LOG_LINE ends the reading (no log has one: a file of no
    newlines is not held whole)."""
    by_direction: dict[str, Points] = {}
    try:
        with path.open("rb") as fp:
            for _count in range(max(budget, 0)):
                raw = fp.readline(MAX_LOG_LINE)
                if not raw or (len(raw) == MAX_LOG_LINE and not raw.endswith(b"\n")):
                    break
                if digest is not None:
                    digest.update(raw)
                parts = raw.decode("ascii", errors="replace").split(",")
                if len(parts) < 3:
                    continue
                try:
                    t, value = float(parts[0]) / 1000.0, float(parts[1]) * scale
                except ValueError:
                    continue
                direction = FIO_DIRECTIONS.get(parts[2].strip())
                if direction is not None and t >= 0 and math.isfinite(value):
                    by_direction.setdefault(direction, Points()).append((t, value))
    except OSError:
        return {}
    return by_direction


@dataclass
class ImportReport:
    """What import_paths did: one line per thing done (for the user), the problems (each an
    input that could not be imported), and the JSON rows of `disklab import --json`."""

    lines: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    imported: list[dict[str, Any]] = field(default_factory=list)
    merged: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    present: list[dict[str, Any]] = field(default_factory=list)  # outputs already imported


def import_paths(library: Library | Callable[[], Library], paths: Sequence[str], *,
                 tool: str | None = None, session: str | None = None,
                 config: str = "imported",
                 progress: Callable[[int, int, str], None] | None = None) -> ImportReport:
    """Bundles and libraries (SQLite files) merge; the other paths are tool outputs: with
    `session` (or one folder) all of them one session, else one session per file (named
    after it). `library` may be a function that opens it, called only when there is
    something to store (the command line then makes no library for input it refuses)."""
    if isinstance(library, Library):
        return _import_paths(lambda: library, paths, tool, session, config, progress)
    return _import_paths(library, paths, tool, session, config, progress)


def _import_paths(library: Callable[[], Library], paths: Sequence[str], tool: str | None,
                  session: str | None, config: str,
                  progress: Callable[[int, int, str], None] | None) -> ImportReport:
    report = ImportReport()
    outputs = []
    for p in paths:
        why = refusal(Path(p))
        if why is not None:
            report.problems.append(Problem(p, why))
        elif Path(p).is_dir() or not is_sqlite_file(Path(p)):
            outputs.append(p)
        else:
            _merge_one(library, Path(p), report)
    if outputs:
        _import_outputs(library, outputs, tool, session, config, progress, report)
    return report


def refusal(path: Path) -> str | None:
    """Why a path given to import is refused before anything of it is read, or None: a
    folder is walked; a file must be regular (a FIFO would block, /dev/zero never end) and,
    unless it is a bundle or library (SQLite reads those a page at a time), at most
    MAX_OUTPUT_BYTES."""
    if path.is_dir():
        return None
    why = unreadable(path, limit=None)
    if why is None and not is_sqlite_file(path):
        why = unreadable(path)
    return why


def _merge_one(library: Callable[[], Library], path: Path, report: ImportReport) -> None:
    """One bundle or library merged (a problem for one that cannot be: newer, not ours)."""
    try:
        done = merge(library(), path)
    except LibraryError as e:
        report.problems.append(Problem(str(path), str(e).removeprefix(f"{path} ")))
        report.merged.append({"file": str(path), "added": [], "present": [], "running": []})
        return
    say = report.lines.append
    for sid, name in done.added:
        say(f"{path}: session {name!r} -> session {sid}")
    for name, sid in done.present:
        say(f"{path}: session {name!r} is already in the library (session {sid})")
    for name in done.running:
        say(f"{path}: session {name!r} is still being recorded there: not imported")
    if not (done.added or done.present or done.running):
        say(f"{path}: no sessions in it")
    report.merged.append({"file": str(path), "added": [sid for sid, _n in done.added],
                          "present": [sid for _n, sid in done.present],
                          "running": done.running})


@dataclass(frozen=True)
class Stored:
    """What the report says of one output once its run is stored (its text and series are
    not kept): file, tool, its case's parameters (as JSON), figures and series."""

    source_path: str
    tool: str
    case: str
    figures: int
    series: int

    @classmethod
    def of(cls, run: ImportedRun) -> Stored:
        return cls(run.source_path, run.tool,
                   json.dumps(dict(run.params), sort_keys=True, default=str),
                   len(run.metrics), len(run.series))


@dataclass
class _Group:
    """The outputs of one session being imported: stored ones and those already held."""

    name: str
    writer: ImportSession | None = None
    stored: list[Stored] = field(default_factory=list)
    held: list[tuple[str, int, str, int]] = field(default_factory=list)  # file, id, name, runs
    keys: list[str] = field(default_factory=list)


def _import_outputs(library: Callable[[], Library], paths: list[str], tool: str | None,
                    session: str | None, config: str,
                    progress: Callable[[int, int, str], None] | None,
                    report: ImportReport) -> None:
    """Tool outputs into sessions, each output stored as soon as it is read (one output is
    held at a time); an output the library already holds is named with its session."""
    read = ReadOutputs()
    one = session or (len(paths) == 1 and Path(paths[0]).is_dir())
    groups: list[_Group] = []
    try:
        for run in each_output(paths, tool, progress, read):
            if not groups or not one:
                if groups:  # one session per file: each committed before the next is read
                    _finish(library(), groups[-1], report)
                groups.append(_Group(session or Path(paths[0]).resolve().name if one
                                     else Path(run.source_path).name))
            _add(library, groups[-1], run, config)
        if groups:
            _finish(library(), groups[-1], report)
    except BaseException:
        if groups and groups[-1].writer is not None:
            groups[-1].writer.abort()
        raise
    report.problems += read.problems
    report.skipped += read.skipped
    report.lines += [f"{name}: skipped (no {_importable()} output)" for name in read.skipped]
    if not groups and not read.problems:  # folders with nothing to import: said
        report.problems += [Problem(p, f"no {_importable()} output in it")
                            for p in paths if Path(p).is_dir()]


def _add(library: Callable[[], Library], group: _Group, run: ImportedRun, config: str) -> None:
    """One output read: named if the library holds it already, else stored in its group's
    session (begun at its first output)."""
    lib = library()
    group.keys.append(run.key)
    held = holding_session(lib, run.key)
    if held is not None:
        group.held.append((run.source_path, *held))
        return
    if group.writer is None:
        group.writer = ImportSession(lib, name=group.name, config=config,
                                     host={"imported_from": run.source_path},
                                     plan_path=run.source_path)
    group.writer.add(run)
    group.stored.append(Stored.of(run))


def _finish(library: Library, group: _Group, report: ImportReport) -> None:
    """Commit a group's session and say what was done: every output held already in one
    session that holds just them is one line; else one line per output held, and one for
    the new session of the others. A folder imported before each output had its own key is
    found by its whole content and not stored again."""
    files = [f for f, *_rest in group.held] + [r.source_path for r in group.stored]
    sessions = {(sid, name, runs) for _f, sid, name, runs in group.held}
    whole = imported_session(library, group.keys) if group.stored else None
    if whole is not None and group.writer is not None:
        group.writer.abort()
        sessions, group.held, group.stored = {(*whole, len(files))}, [
            (f, *whole, len(files)) for f in files], []
    if not group.stored and len(sessions) == 1 and next(iter(sessions))[2] == len(files):
        sid, name, _runs = next(iter(sessions))
        what = files[0] if len(files) == 1 else f"{len(files)} outputs ({_where(files)})"
        report.lines.append(f"{what}: already in the library as session {sid} {name!r} "
                            "(the same outputs): not imported again")
        report.present.append({"files": files, "session": sid})
        return
    for file, sid, name, _runs in group.held:
        report.lines.append(f"{file}: already held in session {sid} {name!r}: not imported "
                            "again")
        report.present.append({"files": [file], "session": sid})
    if group.writer is None or not group.stored:
        return
    group.writer.host["imported_from"] = group.writer.plan_path = _where(files)
    sid = int(group.writer.finish() or 0)
    report.lines.append(_summary(group.name, sid, group.stored))
    report.imported += [{"file": r.source_path, "tool": r.tool, "session": sid,
                         "metrics": r.figures, "series": r.series} for r in group.stored]


def _where(files: list[str]) -> str:
    """Where outputs were read: the file itself, or the folder holding them all."""
    return files[0] if len(files) == 1 else os.path.commonpath(
        [str(Path(p).parent) for p in files])


def _summary(name: str, sid: int, runs: list[Stored]) -> str:
    cases = len({(r.tool, r.case) for r in runs})
    series = sum(r.series for r in runs)
    if len(runs) == 1:
        r = runs[0]
        extra = f", {series} series from its logs" if series else ""
        return f"{r.source_path}: {r.tool}, {r.figures} figures{extra} -> session {sid}"
    names = ", ".join(sorted({r.tool for r in runs}))
    extra = f"; {series} series from fio logs" if series else ""
    return (f"{len(runs)} outputs ({names}) -> session {sid} {name!r}: {cases} case(s), "
            f"{len(runs) - cases} repeat(s) of the same parameters{extra}")
