"""Adapter of bonnie++: argv builder, CSV and text-table parsers, phase progress.

Why the argv has no -q (measured on bonnie++ 2.00a, tests/fixtures/bonnie/README.md): with -q
bonnie++ prints nothing at all until it exits (the CSV on stdout, the table on stderr). Without
-q it writes its phase lines on stderr as each phase starts and ends ('Writing intelligently...
done') and, at the end, the text table and then the same CSV line on stdout. So the runner gets
live phases and the parser still reads the exact CSV; the table is only a fallback (import).

Units: bonnie++'s throughputs are KiB/s (its 'K' is 1024; the table's k/m/g suffixes are powers
of 1024 too), seeks and file operations are per second, latencies are printed as us/ms/s.
'+++++' / '+++' mean the test took under 0.5 s, too fast to measure: value None, never 0.
"""

from __future__ import annotations

import grp
import math
import os
import pwd
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from disklab.core.tools._bonnie_phases import phase_intervals
from disklab.core.tools.base import (
    MAX_FILE,
    REQUIRED,
    Capabilities,
    Command,
    Measured,
    ParamSpec,
    ProgressParser,
    RunTarget,
    ToolAdapter,
    ToolOutput,
)
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import (
    UNIT_NS,
    UNIT_OPS,
    UNIT_PERCENT,
    UNIT_THROUGHPUT,
    Metric,
    ProgressUpdate,
    Scalar,
)
from disklab.core.vocab.units import KiB, MiB, parse_size

TOOL = "bonnie"
IO_TESTS = ("char_write", "block_write", "rewrite", "char_read", "block_read", "random_seeks")
FILE_TESTS = ("seq_create", "seq_stat", "seq_delete", "random_create", "random_stat",
              "random_delete")
TOO_FAST = "too fast to measure"
BYTE_IO = 3 * MiB  # bonnie.h DefaultByteIO: the per-char tests move at most 3 MiB
DEFAULT_FILES = 16
MAX_FILES = 1024  # -n in units of 1024: a million files per case
MAX_CHUNK = 1 << 24  # -s size:chunk: bonnie++ refuses chunks it cannot buffer
MAX_DIRS = 1 << 20

PARAMS: Mapping[str, ParamSpec] = {
    "size": ParamSpec("size", REQUIRED, minimum=0, maximum=MAX_FILE,
                      help="-s: file size in whole MiB (0 skips the I/O tests)"),
    "ram": ParamSpec("size", 0, minimum=0, maximum=MAX_FILE,
                     help="-r: RAM bonnie++ assumes, whole MiB (0: size/2, the most "
                          "bonnie++ accepts: it refuses -s below 2 x -r)"),
    "files": ParamSpec("int", DEFAULT_FILES, minimum=0, maximum=MAX_FILES,
                       help="-n: files for the file tests, in units of 1024 (0 skips them)"),
    "fast": ParamSpec("bool", False, help="-f: skip the per-char tests"),
    "label": ParamSpec("str", "disklab", help="-m: machine name in bonnie++'s report"),
    "user": ParamSpec("str", "root", help="-u: user to run as (given only when root)"),
    # The RAID study's `-s 24G:128k -n 256:1000:1000/256`; default None leaves the argv (and
    # the tables of sessions without them) as they were.
    "chunk_size": ParamSpec("size", None, minimum=256, maximum=MAX_CHUNK,
                            help="-s size:chunk: bytes per write/read call of the I/O tests"),
    "max_file_size": ParamSpec("size", None, minimum=0, maximum=MAX_FILE,
                               help="-n files:max: largest file of the file tests (bytes)"),
    "min_file_size": ParamSpec("size", None, minimum=0, maximum=MAX_FILE,
                               help="-n files:max:min: smallest file of the file tests"),
    "dirs": ParamSpec("int", None, minimum=1, maximum=MAX_DIRS,
                      help="-n files:max:min:dirs: directories the files are spread over"),
    "direct": ParamSpec("bool", False, help="-D: direct I/O (O_DIRECT) for the bulk tests"),
    "no_buffer": ParamSpec("bool", False,
                           help="-b: no write buffering, fsync() after every write"),
}

# bonnie++ stderr phase lines -> canonical test name
PHASES = (
    ("Writing a byte at a time", "char_write"),
    ("Writing intelligently", "block_write"),
    ("Rewriting", "rewrite"),
    ("Reading a byte at a time", "char_read"),
    ("Reading intelligently", "block_read"),
    ("start 'em", "random_seeks"),
    ("Create files in sequential order", "seq_create"),
    ("Stat files in sequential order", "seq_stat"),
    ("Delete files in sequential order", "seq_delete"),
    ("Create files in random order", "random_create"),
    ("Stat files in random order", "random_stat"),
    ("Delete files in random order", "random_delete"),
)
_PHASE_OF = dict(PHASES)
_PHASE_LABEL = {v: k for k, v in PHASES}


@dataclass(frozen=True)
class _Layout:
    """Field positions of one CSV format (bon_csv2txt's own split of the line)."""

    fields: int
    name: int | None
    size: int
    io: int  # first of 12: putc, putc_cpu, ... seeks, seeks_cpu
    files: int  # num_files
    file_tests: int  # first of 12
    io_latency: int | None  # first of 6
    file_latency: int | None


LAYOUTS = {
    # bonnie++ 2.00: format_version,bonnie_version,name,concurrency,seed,file_size,
    # io_chunk_size,seeks,seek_proc_count,putc,... (bon_time.cpp PrintHeader)
    "1.98": _Layout(50, 2, 5, 9, 21, 26, 38, 44),
    # bonnie++ 1.97: no seeks and seek_proc_count
    "1.97": _Layout(48, 2, 5, 7, 19, 24, 36, 42),
    # bonnie++ 1.96: no concurrency and seed either
    "1.96": _Layout(46, 2, 3, 5, 17, 22, 34, 40),
    # bonnie++ 1.03: name,file_size,putc,... without any version field, no latencies
    "1.03": _Layout(27, 0, 1, 2, 14, 15, None, None),
}
_CSV_START = re.compile(r"^(?:1\.9\d|[2-9]\.\d+),")
_OLD_CSV = re.compile(r"^[^,]+,\d+[KMGT]?(?::\d+k?)?,")
_LATENCY = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>ns|us|ms|s)$")
_LATENCY_SCALE = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
_RATE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<sfx>[kmg]?)$")
_RATE_SCALE = {"": KiB, "k": KiB, "m": MiB, "g": 1024 * MiB}
_IO_HEADER = re.compile(r"^Version\s+(?P<version>\S+)\s+-+Sequential Output-+")
_FILE_HEADER = re.compile(r"^(?:Version\s+(?P<version>\S+))?\s*-+Sequential Create-+")
# bonnie++'s own error messages (bonnie++.cpp, bon_io.cpp, bon_file.cpp)
_ERROR_HINTS = ("You must use", "Can't", "can't", "Error", "error", "exceeded", "Exceeded",
                "File size should be", "Large File Support", "impossible")
_USAGE = "bonnie++ [-d scratch-dir]"  # the usage banner it prints after an option error
_CSV_LIKE = re.compile(r"^(?:1\.9\d|[2-9]\.\d+),\d+\.\d+[a-z]?,")  # format,version,...


def _user_problems(user: Any) -> list[tuple[str, str]]:
    """`user` (-u USER[:GROUP], a name or a number each) must exist on this machine, where
    bonnie++ runs: otherwise it fails at run time with 'Can't find user'."""
    if user is None or user == "root":
        return []
    text = str(user)
    name, _sep, group = text.partition(":")
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}\$?", name) or (
            group and not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}", group)):
        return [("user", f"{text!r} is not a user name or uid (USER or USER:GROUP)")]
    try:
        pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
    except (KeyError, OverflowError):
        return [("user", f"no user {name!r} on this machine (bonnie++ -u runs as it)")]
    if group:
        try:
            grp.getgrgid(int(group)) if group.isdigit() else grp.getgrnam(group)
        except (KeyError, OverflowError):
            return [("user", f"no group {group!r} on this machine")]
    return []


def user_place_problem(user: Any, directory: str | None) -> str | None:
    """Why bonnie++ -u USER cannot make its Bonnie.PID directory in `directory` (None: a
    filesystem DiskLab makes, whose top directory is root's, 0755), or None. bonnie++ drops to
    the user before it writes and then fails mid-run with "Can't make directory"."""
    name, _sep, group = str(user).partition(":") if user is not None else ("root", "", "")
    try:
        pw = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
        gid = (grp.getgrgid(int(group)) if group.isdigit() else grp.getgrnam(group)).gr_gid \
            if group else pw.pw_gid
    except (KeyError, OverflowError):
        return None  # no such user or group: _user_problems says so
    if pw.pw_uid == 0:
        return None
    if directory is None:
        return (f"bonnie++ -u {user} writes in the filesystem DiskLab makes, whose top "
                f"directory is root's: {name} cannot make its files there; leave user out "
                "(root)")
    path = os.path.abspath(directory)
    steps = [*reversed([str(p) for p in Path(path).parents]), path]
    for step in steps:
        try:
            st = os.stat(step)
        except OSError:
            return None  # the target's own check says what is wrong with it
        need = 0o3 if step == path else 0o1  # write and search in it, search on the way
        shift = 6 if st.st_uid == pw.pw_uid else 3 if st.st_gid == gid else 0
        if (st.st_mode >> shift) & need != need:
            return (f"bonnie++ -u {user} cannot make its files in {path}: {step} (uid "
                    f"{st.st_uid}, mode {stat.S_IMODE(st.st_mode):o}) does not let {name} "
                    f"{'write' if step == path else 'through'}; give a directory it can write, "
                    "or leave user out (root)")
    return None


def sniff(text: str) -> bool:
    """Whole-file detection for `disklab import`: a bonnie++ CSV line or its text table."""
    if "------Sequential Output------" in text or "------Sequential Create------" in text:
        return True
    return any(_is_csv_row(line.strip()) for line in text.splitlines())


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _mib_arg(nbytes: int) -> str:
    return str(nbytes // MiB)


def _planned_phases(size: int, files: int, fast: bool) -> list[tuple[str, int]]:
    """The phases bonnie++ will run, in order, with the bytes each moves (rewrite reads and
    writes every block)."""
    out: list[tuple[str, int]] = []
    if size > 0:
        char = min(size, BYTE_IO)
        if not fast:
            out.append(("char_write", char))
        out += [("block_write", size), ("rewrite", 2 * size)]
        if not fast:
            out.append(("char_read", char))
        out += [("block_read", size), ("random_seeks", 0)]
    if files > 0:
        out += [(name, 0) for name in FILE_TESTS]
    return out


class _BonnieProgress(ProgressParser):
    """Phase lines on stderr. The runner passes complete lines only, and bonnie++ ends a phase
    line with 'done' when the phase ends, so a finished phase announces the next one."""

    def __init__(self, phases: list[tuple[str, int]]):
        self.phases = phases
        self.order = [name for name, _n in phases]
        self.total = sum(n for _name, n in phases) or None

    def _done_before(self, name: str) -> int:
        done = 0
        for phase, nbytes in self.phases:
            if phase == name:
                break
            done += nbytes
        return done

    def _update(self, phase: str | None, done: int | None) -> ProgressUpdate:
        message = _PHASE_LABEL.get(phase or "", phase)
        return ProgressUpdate(done_bytes=done if self.total else None, total_bytes=self.total,
                              phase=phase, message=message)

    def feed(self, stream: str, line: str) -> ProgressUpdate | None:
        text = line.strip()
        if text.startswith("Using uid:"):
            first = self.order[0] if self.order else None
            return self._update(first, 0)
        found = [(text.find(label), name) for label, name in PHASES if label in text]
        if not found:
            return None
        _pos, name = max(found)
        finished = "...done" in text
        if not finished:
            return self._update(name, self._done_before(name))
        if name in self.order:
            index = self.order.index(name)
            done = self._done_before(name) + self.phases[index][1]
            following = self.order[index + 1] if index + 1 < len(self.order) else "finishing"
            return self._update(following, done)
        return self._update(name, None)


# --- parsing -------------------------------------------------------------------------------------


def _bad(line: int | None, what: str, got: str) -> ParseError:
    return ParseError(TOOL, line, what, got)


def _latency(text: str, line: int | None, what: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    m = _LATENCY.match(text)
    if not m:
        raise _bad(line, f"a latency like '2950us', '118ms' or '3s' for {what}", text)
    value = float(m["n"]) * _LATENCY_SCALE[m["unit"]]
    if not math.isfinite(value):
        raise _bad(line, f"a finite latency for {what}", text[:40])
    return value


def _number(text: str, line: int | None, what: str) -> float:
    try:
        value = float(text)
    except ValueError as e:
        raise _bad(line, f"a number for {what}", text) from e
    if not math.isfinite(value) or value < 0:
        raise _bad(line, f"a finite number for {what}", text)
    return value


def _triple(name: str, rate: Metric | None, cpu: Metric | None,
            latency: float | None, params: Mapping[str, Scalar] | None) -> list[Metric]:
    out = [m for m in (rate, cpu) if m is not None]
    if latency is not None:
        out.append(Metric(f"{name}:latency", latency, UNIT_NS, None, params))
    return out


def _csv_value(name: str, unit: str, scale: float, text: str, line: int,
               params: Mapping[str, Scalar] | None) -> Metric | None:
    text = text.strip()
    if not text:
        return None  # the test was skipped (-f, -n 0, -s 0)
    if set(text) == {"+"}:
        return Metric(name, None, unit, TOO_FAST, params)
    return Metric(name, _number(text, line, name) * scale, unit, None, params)


def _layout_of(fields: list[str]) -> _Layout | None:
    if fields[0] in LAYOUTS:
        layout = LAYOUTS[fields[0]]
    else:
        layout = next((v for v in LAYOUTS.values() if v.fields == len(fields)), None)
    return layout


def _is_csv_row(line: str) -> bool:
    """A CSV result line: format 1.9x/2.x (a version first, 45+ fields), or 1.03 (27 fields,
    the size second)."""
    if _CSV_START.match(line) and (line.count(",") >= 40 or _CSV_LIKE.match(line)):
        return True
    return line.count(",") == 26 and bool(_OLD_CSV.match(line))


def _csv_rows(text: str) -> list[tuple[int, list[str]]]:
    rows = []
    for number, line in enumerate(_lines(text), start=1):
        s = line.strip()
        if _is_csv_row(s):
            rows.append((number, s.split(",")))
    return rows


def _import_params(size: str, files: str, name: str | None, line: int) -> dict[str, Scalar]:
    """The size and file count a report names. A number bonnie++ cannot have printed (beyond
    what a 64-bit integer holds) is damage, reported with its line; other text is kept as is."""
    params: dict[str, Scalar] = {}
    size = size.split(":")[0].strip()
    if size:
        try:
            params["size"] = parse_size(size)
        except ValueError as e:
            if "too large" in str(e):
                raise _bad(line, "a file size bonnie++ prints in the size field",
                           size[:40]) from e
            params["size"] = size
    files = re.split(r"[:/]", files.strip(), maxsplit=1)[0]
    if files.isdigit():
        if len(files) > 18:
            raise _bad(line, "a file count bonnie++ prints in the files field", files[:40])
        params["files"] = int(files)
    if name:
        params["label"] = name
    return params


def _csv_metrics(number: int, fields: list[str], importing: bool,
                 run: int | None) -> list[Metric]:
    layout = _layout_of(fields)
    if layout is None:
        raise _bad(number, "a bonnie++ CSV line of format 1.96, 1.97 or 1.98 "
                   "(46, 48 or 50 fields)", f"{fields[0]} with {len(fields)} fields")
    if len(fields) < layout.fields:
        raise _bad(number, f"{layout.fields} fields in a bonnie++ {fields[0]} CSV line",
                   f"{len(fields)} fields")
    params: dict[str, Scalar] | None = None
    if importing or run is not None:
        params = {}
        if importing:
            name = fields[layout.name] if layout.name is not None else None
            params.update(_import_params(fields[layout.size], fields[layout.files], name,
                                         number))
        if run is not None:
            params["run"] = run
    params = params or None
    out: list[Metric] = []
    blocks = ((IO_TESTS, layout.io, layout.io_latency), (FILE_TESTS, layout.file_tests,
                                                        layout.file_latency))
    for tests, first, lat_first in blocks:
        for i, name in enumerate(tests):
            if name in FILE_TESTS or name == "random_seeks":
                unit, scale = UNIT_OPS, 1.0
            else:
                unit, scale = UNIT_THROUGHPUT, float(KiB)
            rate = _csv_value(name, unit, scale, fields[first + 2 * i], number, params)
            cpu = _csv_value(f"{name}:cpu", UNIT_PERCENT, 1.0, fields[first + 2 * i + 1],
                             number, params)
            latency = None
            if lat_first is not None:
                latency = _latency(fields[lat_first + i], number, f"{name}:latency")
            out += _triple(name, rate, cpu, latency, params)
    if not out:
        raise _bad(number, "at least one result in the CSV line", ",".join(fields)[:40])
    return out


def _text_rate(text: str, name: str, cpu: str, line: int, unreliable: bool) -> Metric | None:
    """One rate cell of the text table. bon_csv2txt shows a '+++++,+++' pair as '0k +++', so a
    '+++' CPU cell marks the rate too fast whatever it says."""
    text = text.strip()
    ops = name in FILE_TESTS or name == "random_seeks"
    unit = UNIT_OPS if ops else UNIT_THROUGHPUT
    if not text:
        return None
    if set(text) == {"+"} or set(cpu.strip()) == {"+"}:
        return Metric(name, None, unit, TOO_FAST)
    if unreliable:
        return Metric(name, None, unit, "bonnie++ 2.x prints file-test rates wrongly in its "
                      "text table (printf %d of a double); its CSV line has them")
    if ops:
        return Metric(name, _number(text, line, name), unit)
    m = _RATE.match(text)
    if not m:
        raise _bad(line, f"a rate like '3640k', '264m' or '1.1g' for {name}", text)
    value = float(m["n"]) * _RATE_SCALE[m["sfx"]]
    if not math.isfinite(value):
        raise _bad(line, f"a finite rate for {name}", text[:40])
    note = "rounded as printed in the text table" if m["sfx"] in ("m", "g") else None
    return Metric(name, value, unit, note)


def _cells(line: str, count: int, start: int, width: int, split: int) -> list[tuple[str, str]]:
    """Fixed-width (value, cpu) cells: bonnie++ prints ' %5s %3s' pairs, blanks as spaces."""
    return [(line[start + width * i:start + width * i + split],
             line[start + width * i + split:start + width * (i + 1)]) for i in range(count)]


def _text_metrics(text: str, importing: bool) -> list[Metric]:
    """The text table of bonnie++ (or bon_csv2txt). Columns are fixed-width (blank cells for
    skipped tests), after a 19-character name/size column."""
    out: list[Metric] = []
    tests: tuple[str, ...] | None = None
    unreliable = False
    header_left = 0
    found: dict[str, Scalar] = {}
    last: tuple[str, ...] = ()
    for number, line in enumerate(_lines(text), start=1):
        if _IO_HEADER.match(line):
            tests, unreliable, header_left = IO_TESTS, False, 2
            continue
        if m := _FILE_HEADER.match(line):
            version = m["version"] or ""
            unreliable = version[:1].isdigit() and int(version[0]) >= 2
            tests, header_left = FILE_TESTS, 2
            continue
        if tests is None:
            continue
        if header_left:
            header_left -= 1
            continue
        if line.startswith("Latency"):
            for i, name in enumerate(last):
                latency = _latency(line[17 + 10 * i:27 + 10 * i], number, f"{name}:latency")
                if latency is not None:
                    out.append(Metric(f"{name}:latency", latency, UNIT_NS))
            last = ()
            continue
        if not line.strip() or len(line) < 25:
            tests, last = None, ()
            continue
        shift = max(0, len(line) - 79)
        if (len(line.rstrip()) - 19 - shift) % 10 not in (0, 6):
            raise _bad(number, "a complete row of bonnie++'s table (cells ' %5s %3s')",
                       line.strip())
        desc = line[:19 + shift].split()
        if desc and tests is IO_TESTS:
            found.update(_import_params(desc[-1], "", desc[0] if len(desc) > 1 else None,
                                        number))
        elif desc:
            found.update(_import_params("", desc[-1], None, number))
        for name, (value, cpu) in zip(tests, _cells(line, 6, 19 + shift, 10, 6), strict=True):
            rate = _text_rate(value, name, cpu, number, unreliable and tests is FILE_TESTS)
            if rate is not None:
                out.append(rate)
            cpu_text = cpu.strip()
            if set(cpu_text) == {"+"}:
                out.append(Metric(f"{name}:cpu", None, UNIT_PERCENT, TOO_FAST))
            elif cpu_text:
                out.append(Metric(f"{name}:cpu", _number(cpu_text, number, f"{name}:cpu"),
                                  UNIT_PERCENT))
        last = tests
    if importing and found:
        out = [replace(m, params=dict(found)) for m in out]
    return out


def _error_lines(*texts: str) -> list[str]:
    found = []
    for text in texts:
        for line in _lines(text):
            s = line.strip()
            if s and any(h in s for h in _ERROR_HINTS) and s not in found:
                found.append(s)
    return found


def _check_finite(metrics: list[Metric]) -> list[Metric]:
    for m in metrics:
        if m.value is not None and not math.isfinite(m.value):
            raise _bad(None, f"a finite number for {m.name}", repr(m.value))
    return metrics


class BonnieAdapter(ToolAdapter):
    name = "bonnie"
    title = "bonnie++"
    executable = "bonnie++"
    package = "bonnie++"
    capabilities = Capabilities(live_progress=True, direct_io=True, tests=IO_TESTS + FILE_TESTS,
                                importable=True)
    rank = 4
    params: Mapping[str, ParamSpec] = PARAMS

    def version_argv(self) -> tuple[str, ...]:
        # bonnie++ has no version option: an unknown one prints the usage and 'Version: 2.00a'
        return ("bonnie++", "-h")

    def parse_version(self, text: str) -> str | None:
        m = re.search(r"Version:?\s+(\S+)", text)
        return m.group(1) if m else super().parse_version(text)

    def check(self, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems = _user_problems(params.get("user"))
        size, ram = params.get("size"), params.get("ram") or 0
        files = params.get("files", DEFAULT_FILES)
        if isinstance(size, int):
            if size % MiB:
                problems.append(("size", f"{size} is not a whole number of MiB (bonnie++ "
                                         "takes -s in MiB)"))
            if isinstance(ram, int) and ram and size and size < 2 * ram:
                problems.append(("ram", "bonnie++ refuses a size below twice ram "
                                        f"(size {size // MiB} MiB, ram {ram // MiB} MiB)"))
            if size == 0 and files == 0:
                problems.append(("size", "size 0 and files 0 leave bonnie++ nothing to test"))
        lo, hi = params.get("min_file_size"), params.get("max_file_size")
        if isinstance(lo, int) and isinstance(hi, int) and lo > hi:
            problems.append(("min_file_size", f"{lo} is above max_file_size {hi}"))
        if isinstance(lo, int) and hi is None:
            problems.append(("min_file_size", "needs max_file_size (-n files:max:min)"))
        if params.get("dirs") is not None and hi is None:
            problems.append(("dirs", "needs max_file_size (-n files:max:min:dirs)"))
        if files == 0 and any(params.get(k) is not None
                              for k in ("max_file_size", "min_file_size", "dirs")):
            problems.append(("files", "files = 0 skips the file tests that max_file_size, "
                                      "min_file_size and dirs shape"))
        if params.get("direct") and not params.get("fast") and size:
            problems.append(("direct", "bonnie++ -D cannot run its per-character tests (a "
                                       "1-byte O_DIRECT write fails): set fast = true (-f)"))
        chunk = params.get("chunk_size")
        if isinstance(chunk, int) and isinstance(size, int) and size and chunk > size:
            problems.append(("chunk_size", f"{chunk} is above size {size}"))
        if isinstance(ram, int) and ram % MiB:
            problems.append(("ram", f"{ram} is not a whole number of MiB (bonnie++ takes -r "
                                    "in MiB)"))
        return problems

    def _phases(self, params: Mapping[str, Any]) -> list[tuple[str, int]]:
        size = params.get("size")
        files = params.get("files")
        return _planned_phases(int(size) if isinstance(size, int) else 0,
                               int(files) if isinstance(files, int) else DEFAULT_FILES,
                               bool(params.get("fast")))

    def build_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        size = int(params["size"])
        ram = int(params.get("ram") or 0) or size // 2
        files = params.get("files")
        files = DEFAULT_FILES if files is None else int(files)
        size_arg = _mib_arg(size)
        if params.get("chunk_size") is not None and size:
            size_arg += f":{int(params['chunk_size'])}"
        files_arg = str(files)
        if params.get("max_file_size") is not None and files:
            files_arg += f":{int(params['max_file_size'])}"
            if params.get("min_file_size") is not None or params.get("dirs") is not None:
                files_arg += f":{int(params.get('min_file_size') or 0)}"
            if params.get("dirs") is not None:
                files_arg += f":{int(params['dirs'])}"
        argv = ["bonnie++", "-d", target.directory, "-s", size_arg, "-r", _mib_arg(ram),
                "-n", files_arg, "-m", str(params.get("label") or "disklab")]
        if target.is_root:
            argv += ["-u", str(params.get("user") or "root")]
        if params.get("fast"):
            argv.append("-f")
        if params.get("direct"):
            argv.append("-D")
        if params.get("no_buffer"):
            argv.append("-b")
        planned = sum(n for _name, n in self._phases(params)) or None
        # bonnie++ makes and removes its own Bonnie.<pid> file and directory in -d
        return Command(tuple(argv), cwd=target.directory, files=(), planned_bytes=planned)

    def _parse(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        importing = not params
        for text in (output.stdout, output.stderr):
            rows = _csv_rows(text or "")
            if rows:
                multi = len(rows) > 1
                out: list[Metric] = []
                for k, (number, fields) in enumerate(rows, start=1):
                    out += _csv_metrics(number, fields, importing, k if multi else None)
                return _check_finite(out)
        for text in (output.stdout, output.stderr):
            metrics = _text_metrics(text or "", importing)
            if metrics:
                return _check_finite(metrics)
        errors = _error_lines(output.stderr or "", output.stdout or "")
        usage = _USAGE in (output.stderr or "") or _USAGE in (output.stdout or "")
        if errors and (output.exit_status or usage):
            raise ToolError(f"bonnie++: {errors[0]}")
        if output.exit_status:
            raise ToolError(f"bonnie++ exited with status {output.exit_status} and no results")
        raise ParseError(TOOL, None, "bonnie++'s CSV line ('1.98,2.00a,NAME,...') or its "
                         "table ('Version ... ------Sequential Output------')")

    def parse_result(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        return self._parse(output, params)

    def progress_parser(self, params: Mapping[str, Any]) -> ProgressParser:
        return _BonnieProgress(self._phases(params))

    def measured(self, lines: Sequence[tuple[float, str, str]], params: Mapping[str, Any]
                 ) -> list[Measured] | None:
        """Each phase's interval from its stderr line (_bonnie_phases)."""
        return phase_intervals(lines, PHASES)

    def sniff(self, text: str) -> bool:
        return sniff(text)


ADAPTER = BonnieAdapter  # what the registry loads as tool 'bonnie'
