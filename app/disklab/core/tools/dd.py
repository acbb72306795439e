"""Adapter of GNU dd: sequential write from /dev/zero, read back to /dev/null.

dd prints on stderr only. With status=progress it redraws one '\\r'-terminated line a second
("425721856 bytes (426 MB, 406 MiB) copied, 1 s, 425 MB/s"; none for runs under a second), the
rate being the average since the start; the summary is the three standard lines. The throughput
stored is bytes / seconds from the summary (dd rounds its printed rate to 2-3 digits), in B/s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from disklab.core.errors import ParseError, ToolError
from disklab.core.model import UNIT_THROUGHPUT, Metric, ProgressUpdate
from disklab.core.tools.base import (
    REQUIRED,
    Capabilities,
    Command,
    ParamSpec,
    ProgressParser,
    RunTarget,
    ToolAdapter,
    ToolOutput,
)
from disklab.core.units import parse_quantity

# "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.77481 s, 387 MB/s" and older or rounder forms:
# "1 byte copied, ...", "512 bytes copied, 0.0001 s, 5.1 MB/s", "... copied, 1 s, 425 MB/s",
# rate may be "inf B/s" or "1.2e+03 kB/s" on very short runs.
_COPIED = re.compile(
    r"^(?P<bytes>\d+) bytes?(?: \([^)]*\))? copied, (?P<secs>[0-9.e+-]+) s, "
    r"(?P<rate>[0-9.e+-]+|inf) (?P<unit>[kKMGTPE]?i?B)/s\s*$"
)
_RECORDS = re.compile(r"^(?P<full>\d+)\+(?P<part>\d+) records (?P<dir>in|out)\s*$")
_ERROR = re.compile(r"^dd: (?P<msg>.+)$")


def sniff(text: str) -> bool:
    """Whole-file detection for `disklab import`: dd's records lines and a 'copied' line."""
    return bool(re.search(r"^\d+\+\d+ records in\s*$", text, re.M)) and " copied, " in text


def _lines(text: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", text)


class _DdProgress(ProgressParser):
    def feed(self, stream: str, line: str) -> ProgressUpdate | None:
        m = _COPIED.match(line.strip())
        if not m:
            return None
        try:
            rate = parse_quantity(m["rate"], m["unit"]) if m["rate"] != "inf" else None
        except KeyError:
            rate = None
        return ProgressUpdate(done_bytes=int(m["bytes"]), rate=rate)


class DdAdapter(ToolAdapter):
    name = "dd"
    title = "dd (GNU coreutils)"
    executable = "dd"
    package = "coreutils"
    capabilities = Capabilities(live_progress=True, direct_io=True, tests=("write", "read"))
    params: Mapping[str, ParamSpec] = {
        "mode": ParamSpec("choice", REQUIRED, choices=("write", "read")),
        "block_size": ParamSpec("size", 1 << 20, minimum=512, help="bs="),
        "size": ParamSpec("size", REQUIRED, minimum=512, help="bytes moved (count = size/bs)"),
        "direct": ParamSpec("bool", False,
                            help="oflag=direct / iflag=direct; false: conv=fdatasync on write"),
        "sync": ParamSpec("bool", False, help="oflag=dsync: every write synchronous"),
    }

    def version_argv(self) -> tuple[str, ...]:
        return ("dd", "--version")

    def check(self, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        bs, size = params.get("block_size"), params.get("size")
        if isinstance(bs, int) and isinstance(size, int) and size % bs:
            return [("size", f"{size} is not a multiple of block_size {bs} (dd moves whole "
                             "blocks: count = size / block_size)")]
        return []

    def build_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        bs, size = int(params["block_size"]), int(params["size"])
        count = size // bs
        path = f"{target.directory}/disklab-{target.tag}.dd"
        direct = bool(params.get("direct"))
        if params["mode"] == "write":
            oflags = [f for f, on in (("direct", direct), ("dsync", params.get("sync"))) if on]
            argv = ["dd", "if=/dev/zero", f"of={path}", f"bs={bs}", f"count={count}"]
            if oflags:
                argv.append("oflag=" + ",".join(oflags))
            if not direct:
                argv.append("conv=fdatasync")
            argv.append("status=progress")
            return Command(tuple(argv), cwd=target.directory, files=(path,), planned_bytes=size)
        layout = ["dd", "if=/dev/zero", f"of={path}", f"bs={bs}", f"count={count}"]
        layout += ["oflag=direct", "conv=fsync"] if direct else ["conv=fsync"]
        argv = ["dd", f"if={path}", "of=/dev/null", f"bs={bs}", f"count={count}"]
        if direct:
            argv.append("iflag=direct")
        argv.append("status=progress")
        return Command(tuple(argv), cwd=target.directory, files=(path,), planned_bytes=size,
                       prepare=(tuple(layout),), reads_after_prepare=True)

    def _scan(self, text: str) -> tuple[list[tuple[int, re.Match[str]]], dict[str, tuple[int, int]],
                                        list[str]]:
        copied, records, errors = [], {}, []
        for number, line in enumerate(_lines(text), start=1):
            s = line.strip()
            if not s:
                continue
            if m := _COPIED.match(s):
                copied.append((number, m))
            elif m := _RECORDS.match(s):
                records[m["dir"]] = (int(m["full"]), int(m["part"]))
            elif m := _ERROR.match(s):
                errors.append(m["msg"])
        return copied, records, errors

    def _metric(self, number: int, m: re.Match[str], params: Mapping[str, Any],
                note: str | None) -> Metric:
        nbytes, secs = int(m["bytes"]), float(m["secs"])
        if secs > 0:
            value = nbytes / secs
        else:
            try:
                value = parse_quantity(m["rate"], m["unit"])
            except (KeyError, ValueError) as e:
                raise ParseError("dd", number, "a rate in B/s, kB/s, MB/s, GB/s ...",
                                 m.group(0)) from e
        mode = str(params.get("mode") or "")
        if mode in ("write", "read"):
            return Metric(mode, value, UNIT_THROUGHPUT, note)
        # an imported output: dd prints no command line, so the direction is unknown
        note = "; ".join(filter(None, [note, "direction unknown: dd prints no command line"]))
        return Metric("copy", value, UNIT_THROUGHPUT, note, {"size": nbytes})

    def parse_result(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        text = output.stderr or output.stdout
        copied, records, errors = self._scan(text)
        if errors and (output.exit_status or not copied):
            raise ToolError(f"dd: {errors[0]}")
        if "out" not in records:
            raise ParseError("dd", None, "the summary lines 'N+M records in/out'")
        if not copied:
            raise ParseError("dd", None, "a line 'N bytes (...) copied, S s, R unit/s'")
        number, last = copied[-1]
        note = None
        _full, part = records["out"]
        if part:
            note = f"{part} partial block(s) written"
        return [self._metric(number, last, params, note)]

    def parse_partial(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        try:
            copied, _records, _errors = self._scan(output.stderr or output.stdout)
            if not copied:
                return []
            number, last = copied[-1]
            return [self._metric(number, last, params, "partial")]
        except Exception:
            return []

    def progress_parser(self, params: Mapping[str, Any]) -> ProgressParser:
        return _DdProgress()
