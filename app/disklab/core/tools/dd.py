"""Adapter of GNU dd: sequential write from /dev/zero, read back to /dev/null.

dd prints on stderr only. With status=progress it redraws one '\\r'-terminated line a second
("425721856 bytes (426 MB, 406 MiB) copied, 1 s, 425 MB/s"; none for runs under a second), the
rate being the average since the start; the summary is the three standard lines
("N+M records in", "N+M records out", "... copied, S s, R MB/s"). The throughput stored is
bytes / seconds of the summary (dd rounds its printed rate to 2-3 digits), in B/s; the printed
rate is used only when dd printed 0 seconds.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from disklab.core.tools.base import (
    MAX_BLOCK,
    MAX_FILE,
    PLACEMENT_KEY,
    REQUIRED,
    Capabilities,
    Command,
    ParamSpec,
    ProgressParser,
    RunTarget,
    StreamFigures,
    ToolAdapter,
    ToolOutput,
    placement,
    placement_metrics,
    stream_directories,
)
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import UNIT_THROUGHPUT, Metric, ProgressUpdate
from disklab.core.vocab.units import unit_scale

TOOL = "dd"
# "%g" seconds; a decimal comma in some locales
_NUM = r"\d{1,30}(?:[.,]\d{1,30})?(?:[eE][+-]?\d{1,4})?"
# Every form of the line coreutils has printed:
#   9.x:  "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.77481 s, 387 MB/s"
#   8.2x: "1073741824 bytes (1.1 GB) copied, 2.77481 s, 387 MB/s"
#   tiny: "1 byte copied, 0.000113 s, 8.8 kB/s", "512 bytes copied, 1e-05 s, 51.2 MB/s"
#   zero time: "0 bytes copied, 0 s, Infinity B/s"
_COPIED = re.compile(
    rf"^(?P<bytes>\d{{1,30}}) bytes?(?: \([^)]*\))? copied, (?P<secs>{_NUM}) s, "
    rf"(?P<rate>{_NUM}|inf|Infinity) (?P<unit>[kKMGTPEZY]?i?B)/s$"
)
_RECORDS = re.compile(r"^(?P<full>\d{1,30})\+(?P<part>\d{1,30}) records (?P<dir>in|out)$")
_MESSAGE = re.compile(r"^dd: (?P<msg>.+)$")
# dd's SI/IEC rate units beyond what units.py knows (dd picks the unit by magnitude)
_EXTRA_SCALE = {"EB": 1000**6, "ZB": 1000**7, "YB": 1000**8, "EiB": 1024**6}
_EOL = re.compile(r"\r\n|\r|\n")
# dd 9.1 with conv=fdatasync prints its last status=progress line after the copy and before
# the sync with no '\r' in front, straight after the previous one: '... 999 MB/s1073741824
# bytes (...) copied, ...'. Such a line is two 'copied' lines, cut where a rate ends.
_JOINED = re.compile(r"(?<=B/s)(?=\d{1,30} bytes? )")


def sniff(text: str) -> bool:
    """Whole-file detection for `disklab import`: dd's records lines and a 'copied' line."""
    return bool(re.search(r"^\d+\+\d+ records (in|out)\r?$", text, re.M)) and bool(
        re.search(r"\d+ bytes?(?: \([^)\n]*\))? copied, ", text)
    )


def _rate(number: str, unit: str) -> float | None:
    """dd's printed rate in B/s; None for 'Infinity' or a unit dd never prints."""
    if number in ("inf", "Infinity"):
        return None
    try:
        scale = unit_scale(unit)
    except KeyError:
        scale = _EXTRA_SCALE.get(unit)
    if scale is None:
        return None
    value = float(number.replace(",", ".")) * scale
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class _Summary:
    """One statistics block: dd prints it at the end and on each SIGUSR1."""

    line: int
    nbytes: int
    seconds: float
    rate: float | None
    records_in: tuple[int, int]
    records_out: tuple[int, int]


@dataclass
class _Scan:
    summaries: list[_Summary]
    # (line, bytes, seconds) of the last status=progress line: only the last is kept, a long
    # run prints millions
    progress: list[tuple[int, int, float]]
    errors: list[str]  # "dd: ..." lines other than warnings
    warnings: list[str]
    bad: tuple[int, str, str | None] | None = None  # first (line, expected, got) not fitting


def _iter_lines(text: str) -> Iterator[str]:
    """_EOL.split(text), one line at a time: a 200 MB output is not copied into a list."""
    start = 0
    for eol in _EOL.finditer(text):
        yield text[start:eol.start()]
        start = eol.end()
    yield text[start:]


def _scan(text: str) -> _Scan:
    """Read every line once. A summary is 'records in', 'records out', 'copied' in a row; a
    'copied' line on its own is a status=progress line. Lines are counted as the runner logs
    them: split on '\\r' as well as '\\n' (each progress redraw is a line)."""
    scan = _Scan([], [], [], [])
    pending: dict[str, tuple[int, int]] = {}
    last = 0
    for number, line in enumerate(_iter_lines(text), start=1):
        for s in _JOINED.split(line.strip()):
            if s:
                last = number
                pending = _scan_line(scan, pending, number, s)
    if pending:
        scan.bad = scan.bad or (last, "the 'N bytes (...) copied, S s, R MB/s' line "
                                             "after the records lines", None)
    return scan


def _scan_line(scan: _Scan, pending: dict[str, tuple[int, int]], number: int, s: str
               ) -> dict[str, tuple[int, int]]:
    """One of dd's lines into `scan`; returns the records lines still waiting for their
    'copied' line."""
    if m := _RECORDS.match(s):
        key = m["dir"]
        if key == "in" and pending:
            scan.bad = scan.bad or (number, "'N+M records out' after 'records in'", s)
        if key == "out" and "in" not in pending:
            scan.bad = scan.bad or (number, "'N+M records in' before 'records out'", s)
        pending[key] = (int(m["full"]), int(m["part"]))
    elif m := _COPIED.match(s):
        seconds = float(m["secs"].replace(",", "."))
        rate = _rate(m["rate"], m["unit"])
        if "in" in pending and "out" in pending:
            scan.summaries.append(_Summary(number, int(m["bytes"]), seconds, rate,
                                           pending["in"], pending["out"]))
        elif pending:
            scan.bad = scan.bad or (number, "'N+M records out' before the 'copied' line", s)
        else:
            scan.progress[:] = [(number, int(m["bytes"]), seconds)]
        pending = {}
    elif m := _MESSAGE.match(s):
        msg = m["msg"]
        (scan.warnings if msg.startswith("warning:") else scan.errors).append(msg)
    elif " copied, " in s or " records " in s:
        scan.bad = scan.bad or (number, "dd's line 'N bytes (...) copied, S s, R MB/s' "
                                        "or 'N+M records in/out'", s)
    # anything else (a shell's noise, a pty's echo) is not dd's and is left alone
    return pending


class _DdProgress(ProgressParser):
    """status=progress lines (and SIGUSR1 summaries): bytes so far and dd's average rate."""

    def __init__(self, mode: str, total: int | None):
        self.mode = mode
        self.total = total

    def feed(self, stream: str, line: str) -> ProgressUpdate | None:
        m = _COPIED.match(_JOINED.split(line.strip())[-1])
        if not m:
            msg = _MESSAGE.match(line.strip())
            if msg and not msg["msg"].startswith("warning:"):
                return ProgressUpdate(phase="error", message=line.strip())
            return None
        return ProgressUpdate(done_bytes=int(m["bytes"]), total_bytes=self.total,
                              phase=self.mode or None, message=line.strip(),
                              rate=_rate(m["rate"], m["unit"]))


_MEMBER = re.compile(r"^\[(\d{1,3}):([a-z][a-z0-9_]{0,31})\] ?(.*)$")


def _members(text: str, count: int) -> list[str]:
    """A group's output (lines "[i:name] ...", proc.ToolGroup) -> each member's own text."""
    out: list[list[str]] = [[] for _ in range(count)]
    for line in _iter_lines(text):
        m = _MEMBER.match(line)
        if m and int(m[1]) < count:
            out[int(m[1])].append(m[3])
    return ["\n".join(lines) for lines in out]


class _PlacedDdProgress(_DdProgress):
    """Several dd's lines, each prefixed with its stream: each target's bytes (its streams'
    sum) and the case's total, as each line comes."""

    def __init__(self, mode: str, size: int | None, names: list[str]):
        super().__init__(mode, size * len(names) if size else None)
        self.size = size
        self.names = names
        self.done = [0] * len(names)

    def feed_many(self, stream: str, line: str) -> list[ProgressUpdate]:
        m = _MEMBER.match(line.strip())
        if not m or int(m[1]) >= len(self.names):
            return []
        i, name = int(m[1]), self.names[int(m[1])]
        update = _DdProgress(self.mode, self.size).feed(stream, m[3])
        if update is None or update.done_bytes is None:
            return [] if update is None else [replace(update, target=name)]
        self.done[i] = update.done_bytes
        mine = sum(d for d, n in zip(self.done, self.names, strict=True) if n == name)
        count = self.names.count(name)
        return [
            ProgressUpdate(done_bytes=sum(self.done), total_bytes=self.total, phase=self.mode),
            ProgressUpdate(done_bytes=mine, total_bytes=self.size * count if self.size else None,
                           phase=self.mode, message=m[3], rate=update.rate, target=name),
        ]


class DdAdapter(ToolAdapter):
    name = "dd"
    title = "dd (GNU coreutils)"
    executable = "dd"
    package = "coreutils"
    capabilities = Capabilities(live_progress=True, direct_io=True, tests=("write", "read"),
                                placeable=True, raw_device=True, importable=True)
    rank = 1
    params: Mapping[str, ParamSpec] = {
        "mode": ParamSpec("choice", REQUIRED, choices=("write", "read"),
                          help="write from /dev/zero, or read the file back to /dev/null"),
        "block_size": ParamSpec("size", 1 << 20, minimum=512, maximum=MAX_BLOCK,
                                help="bs= (bytes per call)"),
        "size": ParamSpec("size", REQUIRED, minimum=512, maximum=MAX_FILE,
                          help="bytes moved (count = size/bs)"),
        "direct": ParamSpec("bool", False,
                            help="oflag=direct / iflag=direct; false: conv=fdatasync on write"),
        "sync": ParamSpec("bool", False, help="oflag=dsync: every write synchronous"),
    }

    def version_argv(self) -> tuple[str, ...]:
        return ("dd", "--version")

    def reads(self, params: Mapping[str, Any]) -> bool:
        return params.get("mode") == "read"

    def writes(self, params: Mapping[str, Any]) -> bool:
        return params.get("mode") != "read"

    def buffer_bytes(self, params: Mapping[str, Any]) -> int | None:
        """dd holds one block of bs bytes."""
        bs = params.get("block_size")
        return bs if isinstance(bs, int) and not isinstance(bs, bool) else None

    def check(self, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        bs, size = params.get("block_size"), params.get("size")
        problems = []
        if isinstance(bs, int) and isinstance(size, int) and bs > 0:
            if size < bs:
                problems.append(("size", f"{size} is below block_size {bs}: dd would move "
                                         "nothing (count = size / block_size = 0)"))
            elif size % bs:
                problems.append(("size", f"{size} is not a multiple of block_size {bs} (dd "
                                         "moves whole blocks: count = size / block_size)"))
            if params.get("direct") and bs % 512:
                problems.append(("block_size", f"{bs} is not a multiple of 512: O_DIRECT "
                                               "needs sector-aligned blocks"))
        return problems

    def _placed_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        """One dd per name of `on`, its file on that target, started together (Command.group:
        the runner releases them at once and writes their end times to the result file)."""
        single = {k: v for k, v in params.items() if k != PLACEMENT_KEY}
        members = [self.build_command(single, replace(target, directory=directory,
                                                      tag=f"{target.tag}-{i}"))
                   for i, (_name, directory) in enumerate(stream_directories(params, target))]
        names = placement(params)
        timing = target.file(".group.json")
        return Command(members[0].argv, cwd=target.directory,
                       files=(*(f for c in members for f in c.files), timing),
                       result_file=timing,
                       planned_bytes=sum(c.planned_bytes or 0 for c in members),
                       prepare=tuple(step for c in members for step in c.prepare),
                       reads_after_prepare=members[0].reads_after_prepare,
                       group=tuple((n, c.argv) for n, c in zip(names, members, strict=True)))

    def build_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        if placement(params) and target.device is None:
            return self._placed_command(params, target)
        bs, size = int(params["block_size"]), int(params["size"])
        count = size // bs
        raw = target.device is not None  # a raw device: written and read in place
        path = target.device or target.file(".dd")
        files = () if raw else (path,)
        direct = bool(params.get("direct"))
        if params["mode"] == "write":
            oflags = [f for f, on in (("direct", direct), ("dsync", params.get("sync"))) if on]
            argv = ["dd", "if=/dev/zero", f"of={path}", f"bs={bs}", f"count={count}"]
            if oflags:
                argv.append("oflag=" + ",".join(oflags))
            if not direct:
                argv.append("conv=fdatasync")  # else the figure is the page cache's speed
            argv.append("status=progress")
            return Command(tuple(argv), cwd=target.directory, files=files,
                           planned_bytes=count * bs)
        layout = ["dd", "if=/dev/zero", f"of={path}", f"bs={bs}", f"count={count}"]
        layout += ["oflag=direct", "conv=fsync"] if direct else ["conv=fsync"]
        argv = ["dd", f"if={path}", "of=/dev/null", f"bs={bs}", f"count={count}"]
        if direct:
            argv.append("iflag=direct")
        argv.append("status=progress")
        return Command(tuple(argv), cwd=target.directory, files=files,
                       planned_bytes=count * bs, prepare=() if raw else (tuple(layout),),
                       reads_after_prepare=not raw)

    @staticmethod
    def _text(output: ToolOutput) -> str:
        # dd writes on stderr; an import (or a pty capture) hands the same text as stdout
        return output.stderr if output.stderr.strip() else output.stdout

    def _metric(self, s: _Summary, params: Mapping[str, Any], notes: list[str]) -> Metric:
        if s.seconds > 0:
            value = s.nbytes / s.seconds
        elif s.nbytes == 0:
            value = 0.0
        elif s.rate is not None:
            value = s.rate
        else:
            raise ParseError(TOOL, s.line, "a time above 0 s or a finite rate in B/s, kB/s, "
                                           "MB/s, GB/s ...", "0 s, Infinity")
        if not math.isfinite(value):
            raise ParseError(TOOL, s.line, "a finite byte count and time")
        for direction, (_full, part) in (("read", s.records_in), ("written", s.records_out)):
            if part:
                notes.append(f"{part} partial block(s) {direction}")
        note = "; ".join(notes) or None
        mode = str(params.get("mode") or "")
        if mode in ("write", "read"):
            return Metric(mode, value, UNIT_THROUGHPUT, note)
        # an imported output: dd prints no command line, so the direction is unknown
        note = "; ".join(filter(None, [note, "direction unknown: dd prints no command line"]))
        return Metric("copy", value, UNIT_THROUGHPUT, note, {"size": s.nbytes})

    def _check_counts(self, s: _Summary, params: Mapping[str, Any]) -> None:
        """The byte count must fit the records written and bs (a damaged file does not)."""
        bs = params.get("block_size")
        if not isinstance(bs, int) or isinstance(bs, bool) or bs <= 0:
            return
        full, part = s.records_out
        if not full * bs <= s.nbytes <= (full + part) * bs:
            raise ParseError(TOOL, s.line, f"a byte count between {full}x{bs} and "
                                           f"{full + part}x{bs} (records out x bs)",
                             str(s.nbytes))

    def _placed(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        """Several dd's: each one's summary, and when each ended (the group's timing file):
        its start is its end less its own seconds, so the start skew is dd's own figures'."""
        names = placement(params)
        texts = _members(self._text(output), len(names))
        timing: dict[str, Any] = {}
        if output.result_file:
            try:
                timing = json.loads(output.result_file)
            except ValueError as e:
                raise ParseError(TOOL, None, "the group's timing (JSON)", str(e)) from e
        released = timing.get("released")
        ends = [st.get("ended") for st in timing.get("streams") or []]
        streams: list[StreamFigures] = []
        notes: list[str] = []
        for i, (name, text) in enumerate(zip(names, texts, strict=True)):
            one = self.parse_result(ToolOutput(stdout="", stderr=text, exit_status=0),
                                    {k: v for k, v in params.items() if k != PLACEMENT_KEY})
            metric = one[0]
            if metric.note:
                notes.append(f"{name}: {metric.note}")
            scan = _scan(text)
            last = scan.summaries[-1]
            end = (float(ends[i]) - float(released) if released is not None and i < len(ends)
                   and ends[i] is not None else last.seconds)
            start = end - last.seconds if released is not None else None
            streams.append(StreamFigures(name, float(last.nbytes), start, end))
        return placement_metrics(str(params.get("mode")), streams, UNIT_THROUGHPUT,
                                 "; ".join(notes) or None)

    def parse_result(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        if placement(params):
            if output.exit_status not in (0, None):
                raise ToolError(f"a dd of the group exited with status {output.exit_status}")
            return self._placed(output, params)
        scan = _scan(self._text(output))
        if scan.errors:
            raise ToolError(f"dd: {scan.errors[0]}")
        if output.exit_status not in (0, None):
            raise ToolError(f"dd exited with status {output.exit_status}")
        if scan.bad is not None:
            raise ParseError(TOOL, *scan.bad)
        if not scan.summaries:
            if scan.progress:
                raise ParseError(TOOL, None, "the summary lines 'N+M records in/out' and "
                                             "'... copied' (only progress lines were found)")
            raise ParseError(TOOL, None, "the summary lines 'N+M records in', 'N+M records "
                                         "out', 'N bytes (...) copied, S s, R MB/s'")
        last = scan.summaries[-1]
        self._check_counts(last, params)
        return [self._metric(last, params, [f"dd: {w}" for w in scan.warnings])]

    def parse_partial(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        """What was copied before dd stopped: its last summary (dd prints one even when a
        write fails), else its last progress line."""
        try:
            scan = _scan(self._text(output))
            candidates: list[_Summary] = list(scan.summaries)
            if not candidates and scan.progress:
                number, nbytes, seconds = scan.progress[-1]
                candidates.append(_Summary(number, nbytes, seconds, None, (0, 0), (0, 0)))
            if not candidates:
                return []
            return [self._metric(candidates[-1], params, ["partial"])]
        except Exception:
            return []

    def progress_parser(self, params: Mapping[str, Any]) -> ProgressParser:
        size = params.get("size")
        total = int(size) if isinstance(size, int) and not isinstance(size, bool) else None
        if placement(params):
            return _PlacedDdProgress(str(params.get("mode") or ""), total, placement(params))
        return _DdProgress(str(params.get("mode") or ""), total)

    def saved_output(self, text: str) -> ToolOutput:
        return ToolOutput(stdout=text, stderr=text)  # dd reports on stderr

    def sniff(self, text: str) -> bool:
        return sniff(text)


ADAPTER = DdAdapter  # what the registry loads as tool 'dd'
