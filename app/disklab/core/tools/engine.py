"""Adapter of the built-in engine (disklab.engine): parameters in, argv out; JSON lines in,
metrics and progress out. Pure, like every adapter: the engine itself is the process.

Metrics (names as iozone's throughput mode, so that the headline rule, comparisons and charts
treat a multi-stream engine run and an iozone -t run alike): NAME is the aggregate (total bytes
over the wall time from the first stream's start to the last stream's end), NAME:iops and the
latencies; with more than one stream NAME:min_proc, NAME:max_proc, NAME:avg_proc are the
slowest, fastest and mean stream, each over its own active time, and NAME:stream holds every
stream's rate, one row per stream ({"stream": i}).

Placed on several targets (`on = "a+b"`): one stream per name, its file on that target; the
metrics then carry `target` ("a", "b", ..., and "all" for the aggregate), per target its
streams' bytes over their span (base.placement_metrics), and the streams' start skew from the
engine's own per-stream start times.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from disklab import __version__
from disklab.core.tools.base import (
    MAX_BLOCK,
    MAX_FILE,
    MAX_SECONDS,
    REQUIRED,
    Capabilities,
    Command,
    ParamSpec,
    ProgressParser,
    RunTarget,
    StreamFigures,
    ToolAdapter,
    ToolOutput,
    json_lines,
    placement,
    placement_metrics,
    stream_directories,
)
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import UNIT_NS, UNIT_OPS, UNIT_THROUGHPUT, Metric, ProgressUpdate
from disklab.core.vocab.units import parse_size

TOOL = "engine"
MAX_THREADS = 1024  # issuing threads of one case (streams x queue_depth): each has a buffer
# engine mode -> canonical metric name (DESIGN.md)
METRIC = {"write": "write", "rewrite": "rewrite", "read": "read", "randread": "random_read",
          "randwrite": "random_write"}
NEEDS_LAYOUT = ("rewrite", "read", "randread", "randwrite")
READS = ("read", "randread")
LATENCY_KEYS = (("mean", "lat_mean"), ("p50", "lat_p50"), ("p99", "lat_p99"),
                ("p99.9", "lat_p99.9"))
IO_PATHS = ("auto", "psync", "aio", "uring")
ASYNC_PATHS = ("aio", "uring")  # the engine's asynchronous paths, direct I/O only (iopath.py)
DIRECT_ALIGN = 512  # the smallest logical block size; 4 KiB-sector devices need 4096 (the
# engine says so when the device refuses a transfer)


def _number(value: Any) -> float:
    """A finite JSON number (not a bool); ValueError for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{value!r} is not a number")
    f = float(value)
    if not math.isfinite(f):
        raise ValueError(f"{value!r} is not finite")
    return f


def _interval(line: str) -> dict[str, Any] | None:
    """An interval line's object, or None for anything else (never raises)."""
    if not line.startswith("{") or '"interval"' not in line:
        return None
    try:
        doc = json.loads(line)
        if not isinstance(doc, dict) or doc.get("type") != "interval":
            return None
        _number(doc["bytes"]), _number(doc["elapsed"])
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    return doc


def _stream_block_sizes(params: Mapping[str, Any]) -> list[int]:
    """The per-stream block sizes of `stream_block_sizes`, [] when not given; ValueError naming
    the item that is not a size. Spaces or commas separate them: in the GUI's fields a comma
    makes a matrix axis, so '4k 1m' is the spelling that works everywhere."""
    text = params.get("stream_block_sizes") or ""
    if not isinstance(text, str) or not text.strip():
        return []
    sizes = []
    for item in re.split(r"[\s,]+", text.strip()):
        bs = parse_size(item)
        if bs < DIRECT_ALIGN:
            raise ValueError(f"{item!r} is below the minimum {DIRECT_ALIGN} bytes")
        sizes.append(bs)
    return sizes


class _EngineProgress(ProgressParser):
    """Interval lines -> bytes done and the rate over the last interval. A time-based run
    (runtime > 0) projects its total from the rate so far, so the ETA is the time left."""

    def __init__(self, mode: str, runtime: float, planned: int | None):
        self.mode = mode
        self.runtime = runtime
        self.planned = planned
        self.last: tuple[float, int] | None = None

    def feed(self, stream: str, line: str) -> ProgressUpdate | None:
        if stream != "stdout":
            return None
        doc = _interval(line)
        if doc is None:
            return None
        try:
            return self._update(doc)
        except (ArithmeticError, ValueError, TypeError):  # absurd figures: no progress
            return None

    def _update(self, doc: dict[str, Any]) -> ProgressUpdate | None:
        done, elapsed = int(doc["bytes"]), float(doc["elapsed"])
        if done < 0 or elapsed < 0:
            return None
        rate = None
        if self.last is not None and elapsed > self.last[0]:
            rate = (done - self.last[1]) / (elapsed - self.last[0])
        elif elapsed > 0:
            rate = done / elapsed
        self.last = (elapsed, done)
        total, message = self.planned, None
        if self.runtime > 0:
            total = int(done * self.runtime / elapsed) if done and elapsed > 0 else None
            message = f"{min(elapsed, self.runtime):.0f} of {self.runtime:g} s"
        return ProgressUpdate(done_bytes=done, total_bytes=total, phase=self.mode,
                              message=message, rate=rate)


class _PlacedEngineProgress(_EngineProgress):
    """The case's progress, and each target's bytes (its streams' sum) from the same line."""

    def __init__(self, mode: str, runtime: float, planned: int | None, names: list[str],
                 size: int | None):
        super().__init__(mode, runtime, planned)
        self.names = names
        self.size = size
        self.targets_last: dict[str, tuple[float, int]] = {}  # (elapsed, bytes) per target

    def feed_many(self, stream: str, line: str) -> list[ProgressUpdate]:
        total = self.feed(stream, line)
        if total is None:
            return []
        doc = _interval(line)
        out = [total]
        try:
            per = [int(st["bytes"]) for st in (doc or {}).get("streams") or []]
        except (KeyError, TypeError, ValueError):
            return out
        if len(per) != len(self.names):
            return out
        elapsed = _number((doc or {}).get("elapsed", 0.0))
        for name in dict.fromkeys(self.names):
            done = sum(b for b, n in zip(per, self.names, strict=True) if n == name)
            count = self.names.count(name)
            before = self.targets_last.get(name)
            rate = ((done - before[1]) / (elapsed - before[0])
                    if before is not None and elapsed > before[0] else
                    done / elapsed if elapsed > 0 else None)
            self.targets_last[name] = (elapsed, done)
            out.append(ProgressUpdate(done_bytes=done, phase=self.mode, target=name, rate=rate,
                                      total_bytes=self.size * count if self.size else None))
        return out


class EngineAdapter(ToolAdapter):
    name = TOOL
    title = "Built-in engine"
    executable = ""
    package = ""
    capabilities = Capabilities(live_progress=True, direct_io=True, tests=tuple(METRIC.values()),
                                placeable=True, raw_device=True)
    rank = 0
    params: Mapping[str, ParamSpec] = {
        "mode": ParamSpec("choice", REQUIRED, choices=tuple(METRIC),
                          help="write, rewrite, read, randread or randwrite", label="I/O pattern"),
        "block_size": ParamSpec("size", 1 << 20, minimum=512, maximum=MAX_BLOCK,
                                help="bytes per call", label="block size"),
        "size": ParamSpec("size", REQUIRED, minimum=512, maximum=MAX_FILE,
                          help="bytes per stream", label="file size per stream"),
        "streams": ParamSpec("int", 1, minimum=1, maximum=256, help="files, one slot set each",
                             label="streams (files)"),
        "queue_depth": ParamSpec("int", 1, minimum=1, maximum=256,
                                 help="slots issuing calls on each stream", label="queue depth"),
        "direct": ParamSpec("bool", False, help="O_DIRECT with aligned buffers",
                            label="direct I/O"),
        "sync": ParamSpec("bool", False, help="O_SYNC on writes", label="synchronous writes"),
        "fsync": ParamSpec("bool", True, help="fsync at the end of writes, inside the timing",
                           label="fsync at the end"),
        "runtime": ParamSpec("duration", 0.0, minimum=0, maximum=MAX_SECONDS,
                             help="run this long, wrapping around the file (0: size-bound)",
                             label="run time"),
        # default None: tables and comparison columns leave None parameters out, so cases
        # without it read (and compare) as they did before the parameter existed
        # default None ("auto"), for the same reason; the path that ran is in the metrics' params
        "io": ParamSpec("choice", None, choices=IO_PATHS,
                        help="I/O path: auto (io_uring, or Linux native AIO where io_uring is "
                             "not allowed, for direct I/O at queue depth > 1, else "
                             "pread/pwrite), psync, aio or uring (both direct only)",
                        label="I/O path"),
        "stream_block_sizes": ParamSpec(
            "str", None, help="one block size per stream in one string ('4k 1m' or '4k,1m'), "
                              "instead of block_size: a slow and a fast stream side by side",
                                        label="block size per stream"),
    }

    def builtin_version(self) -> str:
        return f"disklab {__version__}"  # the engine is DiskLab's own

    def reads(self, params: Mapping[str, Any]) -> bool:
        return str(params.get("mode")) in READS

    def writes(self, params: Mapping[str, Any]) -> bool:
        return str(params.get("mode")) not in READS

    def space_bytes(self, params: Mapping[str, Any]) -> int | None:
        return _int(params.get("size")) * max(_int(params.get("streams")), 1)

    def ios(self, params: Mapping[str, Any], test: str) -> int | None:
        """Each stream's size over its block size, summed; None for a time-based case."""
        size = _int(params.get("size"))
        if float(params.get("runtime") or 0) > 0 or size <= 0:
            return None
        try:
            sizes = _stream_block_sizes(params)
        except ValueError:
            return None
        streams = max(_int(params.get("streams")), 1)
        blocks = sizes or [_int(params.get("block_size")) or 1 << 20] * streams
        return sum(size // bs for bs in blocks if bs > 0)

    def buffer_bytes(self, params: Mapping[str, Any]) -> int | None:
        """One aligned buffer per issuing thread: block size x queue depth x streams."""
        return (_int(params.get("block_size")) * max(_int(params.get("queue_depth")), 1)
                * max(_int(params.get("streams")), 1))

    def check(self, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems = []
        size = params.get("size")
        try:
            per_stream = _stream_block_sizes(params)
        except ValueError as e:
            return [("stream_block_sizes", str(e))]
        key = "stream_block_sizes" if per_stream else "block_size"
        streams = params.get("streams", 1)
        if per_stream and isinstance(streams, int) and len(per_stream) != streams:
            problems.append((key, f"{len(per_stream)} block sizes for {streams} streams: "
                                  "give one per stream, in one string ('4k 1m')"))
        for bs in per_stream or [params.get("block_size", 1 << 20)]:
            if isinstance(bs, int) and isinstance(size, int) and bs > 0 and size % bs:
                problems.append(("size", f"{size} is not a multiple of {key} {bs}"))
            if params.get("direct") and isinstance(bs, int) and bs % DIRECT_ALIGN:
                problems.append((key, f"direct I/O needs a multiple of {DIRECT_ALIGN} "
                                      "bytes (4096 on 4 KiB-sector devices)"))
        if params.get("io") in ASYNC_PATHS and not params.get("direct"):
            problems.append(("io", f"{params.get('io')} needs direct = true: the engine's "
                                   "asynchronous paths keep O_DIRECT requests in flight (Linux "
                                   "runs buffered AIO synchronously inside io_submit); use "
                                   "io = \"auto\" or \"psync\""))
        threads = max(_int(params.get("streams")), 1) * max(_int(params.get("queue_depth")), 1)
        if threads > MAX_THREADS:
            problems.append(("queue_depth", f"streams x queue_depth is {threads} threads, more "
                                            f"than the {MAX_THREADS} one case may start"))
        return problems

    def build_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        mode = str(params["mode"])
        size = int(params["size"])
        streams = int(params.get("streams", 1))
        raw = target.device is not None  # a raw device: one stream, read as it is
        files = ((target.device,) if raw else
                 tuple(target.file(f"-{i}") for i in range(streams)))
        placed = stream_directories(params, target)
        if placed and not raw:  # one stream per name of `on`, its file on that target
            files = tuple(target.file(f"-{i}", directory)
                          for i, (_name, directory) in enumerate(placed))
        base = [target.python, "-m", "disklab.engine", "--mode", mode]
        for f in files:
            base += ["--file", f]
        for bs in _stream_block_sizes(params) or [int(params.get("block_size", 1 << 20))]:
            base += ["--block-size", str(bs)]
        base += ["--size", str(size)]
        if params.get("direct"):
            base.append("--direct")
        argv = [*base, "--queue-depth", str(int(params.get("queue_depth", 1)))]
        if params.get("sync"):
            argv.append("--sync")
        if params.get("fsync", True):
            argv.append("--fsync")
        io = params.get("io")
        if io in IO_PATHS and io != "auto":
            argv += ["--io", str(io)]
        runtime = float(params.get("runtime") or 0)
        if runtime > 0:
            argv += ["--runtime", f"{runtime:g}"]
        prepare = (tuple([*base, "--prepare"]),) if mode in NEEDS_LAYOUT and not raw else ()
        return Command(
            argv=tuple(argv), cwd=target.directory, files=() if raw else files,
            planned_bytes=size * len(files), prepare=prepare,
            reads_after_prepare=mode in READS and not raw,
        )

    def parse_result(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        """Metrics of the summary line; ToolError with the engine's own words on an error line.
        A summary of a run stopped by a signal gives metrics flagged 'partial'."""
        docs = json_lines(TOOL, output.stdout)
        errors = [str(d.get("message")) for _, d in docs if d["type"] == "error"]
        if errors:
            raise ToolError("; ".join(errors))
        summaries = [(n, d) for n, d in docs if d["type"] == "summary"]
        if not summaries:
            raise ParseError(TOOL, None, 'a {"type": "summary"} line')
        number, s = summaries[-1]
        try:
            if placement(params):
                return _with_io(s, self._placed(s, params,
                                                note="partial" if s.get("partial") else None))
            return _with_io(s, self._metrics(s, note="partial" if s.get("partial") else None))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ParseError(TOOL, number, f"a summary with {e}", json.dumps(s)) from e

    def _metrics(self, s: Mapping[str, Any], note: str | None) -> list[Metric]:
        name = METRIC[s["mode"]]
        metrics = [Metric(name, _number(s["bw"]), UNIT_THROUGHPUT, note),
                   Metric(f"{name}:iops", _number(s["iops"]), UNIT_OPS, note)]
        lat = s.get("lat_ns") or {}
        for key, suffix in LATENCY_KEYS:
            if lat.get(key) is not None:
                metrics.append(Metric(f"{name}:{suffix}", _number(lat[key]), UNIT_NS, note))
        per_stream = s.get("streams") or []
        if not isinstance(per_stream, list):
            raise TypeError("streams is not a list")
        if len(per_stream) > 1:
            rates = [_number(st["bw"]) for st in per_stream]  # each over its own active time
            metrics += [Metric(f"{name}:min_proc", min(rates), UNIT_THROUGHPUT, note),
                        Metric(f"{name}:max_proc", max(rates), UNIT_THROUGHPUT, note),
                        Metric(f"{name}:avg_proc", sum(rates) / len(rates), UNIT_THROUGHPUT,
                               note)]
            # one row per stream in the library: {"stream": i}
            metrics += [Metric(f"{name}:stream", r, UNIT_THROUGHPUT, note, {"stream": i})
                        for i, r in enumerate(rates)]
        return metrics

    def _placed(self, s: Mapping[str, Any], params: Mapping[str, Any],
                note: str | None) -> list[Metric]:
        """A placed case: per-target and "all" figures from the streams' own bytes and start
        and end times; the rest of the summary's metrics as the aggregate's."""
        names = placement(params)
        per_stream = s.get("streams") or []
        if not isinstance(per_stream, list) or len(per_stream) != len(names):
            raise ValueError(f"{len(names)} streams placed, the summary has "
                             f"{len(per_stream) if isinstance(per_stream, list) else 0}")
        streams = [StreamFigures(name, _number(st["bytes"]), _number(st["start"]),
                                 _number(st["end"])) for name, st in zip(names, per_stream,
                                                                         strict=True)]
        name = METRIC[s["mode"]]
        out = placement_metrics(name, streams, UNIT_THROUGHPUT, note)
        tagged = {"target": "all"}
        for m in self._metrics(s, note):
            if m.name == name:
                continue  # the aggregate is placement_metrics' "all"
            if m.name == f"{name}:stream":
                i = int((m.params or {})["stream"])
                out.append(Metric(m.name, m.value, m.unit, m.note,
                                  {"stream": i, "target": names[i]}))
            else:
                out.append(Metric(m.name, m.value, m.unit, m.note, tagged))
        return out

    def parse_partial(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        """A stopped engine's summary if it printed one, else the last interval line's average
        (bytes / elapsed), flagged 'partial'. Never raises."""
        docs = []
        for line in output.stdout.splitlines():
            try:
                doc = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(doc, dict):
                docs.append(doc)
        for d in reversed(docs):
            if d.get("type") == "summary":
                try:
                    return _with_io(d, self._metrics(d, note="partial"))
                except (KeyError, TypeError, ValueError, AttributeError):
                    break
        name = METRIC.get(str(params.get("mode")))
        for d in reversed(docs):
            if d.get("type") != "interval":
                continue
            try:
                elapsed, done, ops = _number(d["elapsed"]), _number(d["bytes"]), _number(d["ops"])
            except (KeyError, TypeError, ValueError):
                continue
            if elapsed <= 0 or done < 0 or ops < 0 or name is None:
                return []
            bw, iops = done / elapsed, ops / elapsed
            if not (math.isfinite(bw) and math.isfinite(iops)):
                return []
            return [Metric(name, bw, UNIT_THROUGHPUT, "partial"),
                    Metric(f"{name}:iops", iops, UNIT_OPS, "partial")]
        return []

    def progress_parser(self, params: Mapping[str, Any]) -> ProgressParser:
        size, streams = params.get("size"), params.get("streams", 1)
        names = placement(params)
        if names:
            planned = size * len(names) if isinstance(size, int) else None
            return _PlacedEngineProgress(str(params.get("mode", "")),
                                         float(params.get("runtime") or 0), planned, names,
                                         size if isinstance(size, int) else None)
        planned = size * streams if isinstance(size, int) and isinstance(streams, int) else None
        return _EngineProgress(str(params.get("mode", "")), float(params.get("runtime") or 0),
                               planned)


def _with_io(summary: Mapping[str, Any], metrics: list[Metric]) -> list[Metric]:
    """io = "uring" or "aio" in every metric's params when the engine took an asynchronous path
    (its summary's "io"): they override the case's in the library, so a case asked with
    io = "auto" reads back as the path that ran, and runs on different paths compare as
    different (a session from before io_uring became auto's choice reads "aio"). The
    pread/pwrite path is not written in: it is the one every engine run took before the
    choice existed, so today's runs still line up with a library's older ones in Compare
    (a case that asked for io = "psync" says so in its own params)."""
    path = summary.get("io")
    if path not in ASYNC_PATHS:
        return metrics
    return [Metric(m.name, m.value, m.unit, m.note, {**(m.params or {}), "io": path})
            for m in metrics]


def _int(value: Any) -> int:
    """A checked plan's integer parameter (0 when absent or not an integer)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


ADAPTER = EngineAdapter  # what the registry loads as tool 'engine'
