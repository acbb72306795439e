"""Adapter of the built-in engine (disklab.core.engine): argv in, JSON lines out."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from disklab.core.errors import ParseError, ToolError
from disklab.core.model import UNIT_NS, UNIT_OPS, UNIT_THROUGHPUT, Metric, ProgressUpdate
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

# engine mode -> canonical metric name (DESIGN.md)
METRIC = {"write": "write", "rewrite": "rewrite", "read": "read", "randread": "random_read",
          "randwrite": "random_write"}
NEEDS_LAYOUT = ("rewrite", "read", "randread", "randwrite")
LATENCY_KEYS = (("mean", "lat_mean"), ("p50", "lat_p50"), ("p99", "lat_p99"),
                ("p99.9", "lat_p99.9"))


class _EngineProgress(ProgressParser):
    def __init__(self, mode: str):
        self.mode = mode

    def feed(self, stream: str, line: str) -> ProgressUpdate | None:
        if stream != "stdout" or not line.startswith('{"type":"interval"'):
            return None
        try:
            doc = json.loads(line)
            done, elapsed = int(doc["bytes"]), float(doc["elapsed"])
        except (ValueError, KeyError, TypeError):
            return None
        return ProgressUpdate(done_bytes=done, phase=self.mode,
                              rate=done / elapsed if elapsed > 0 else None)


class EngineAdapter(ToolAdapter):
    name = "engine"
    title = "Built-in engine"
    executable = ""
    package = ""
    capabilities = Capabilities(live_progress=True, direct_io=True,
                                tests=tuple(METRIC.values()))
    params: Mapping[str, ParamSpec] = {
        "mode": ParamSpec("choice", REQUIRED, choices=tuple(METRIC),
                          help="write, rewrite, read, randread or randwrite"),
        "block_size": ParamSpec("size", 1 << 20, minimum=512, help="bytes per call"),
        "size": ParamSpec("size", REQUIRED, minimum=512, help="bytes per stream"),
        "streams": ParamSpec("int", 1, minimum=1, maximum=256, help="files, one thread set each"),
        "queue_depth": ParamSpec("int", 1, minimum=1, maximum=256,
                                 help="threads issuing calls on each stream"),
        "direct": ParamSpec("bool", False, help="O_DIRECT with aligned buffers"),
        "sync": ParamSpec("bool", False, help="O_SYNC on writes"),
        "fsync": ParamSpec("bool", True, help="fsync at the end of writes, inside the timing"),
        "runtime": ParamSpec("duration", 0.0, minimum=0, help="run this long (0: size-bound)"),
    }

    def check(self, params: Mapping[str, Any]) -> list[tuple[str, str]]:
        problems = []
        bs, size = params.get("block_size"), params.get("size")
        if isinstance(bs, int) and isinstance(size, int):
            if size % bs:
                problems.append(("size", f"{size} is not a multiple of block_size {bs}"))
            if params.get("direct") and bs % 512:
                problems.append(("block_size", "direct I/O needs a multiple of 512 bytes"))
        return problems

    def build_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        mode = str(params["mode"])
        streams = int(params.get("streams", 1))
        files = tuple(f"{target.directory}/disklab-{target.tag}-{i}" for i in range(streams))
        base = [target.python, "-m", "disklab.core.engine", "--mode", mode]
        for f in files:
            base += ["--file", f]
        base += ["--block-size", str(params["block_size"]), "--size", str(params["size"])]
        if params.get("direct"):
            base.append("--direct")
        argv = [*base, "--queue-depth", str(params.get("queue_depth", 1))]
        if params.get("sync"):
            argv.append("--sync")
        if params.get("fsync", True):
            argv.append("--fsync")
        if params.get("runtime"):
            argv += ["--runtime", str(params["runtime"])]
        prepare = (tuple([*base, "--prepare"]),) if mode in NEEDS_LAYOUT else ()
        return Command(
            argv=tuple(argv), cwd=target.directory, files=files,
            planned_bytes=int(params["size"]) * streams, prepare=prepare,
            reads_after_prepare=mode in ("read", "randread"),
        )

    def _documents(self, output: ToolOutput) -> list[tuple[int, dict[str, Any]]]:
        docs = []
        for number, line in enumerate(output.stdout.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except ValueError as e:
                raise ParseError("engine", number, "a JSON line", line) from e
            if not isinstance(doc, dict) or "type" not in doc:
                raise ParseError("engine", number, 'a JSON object with "type"', line)
            docs.append((number, doc))
        return docs

    def parse_result(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        docs = self._documents(output)
        errors = [d["message"] for _, d in docs if d["type"] == "error"]
        if errors:
            raise ToolError(f"engine: {'; '.join(map(str, errors))}")
        summaries = [(n, d) for n, d in docs if d["type"] == "summary"]
        if not summaries:
            raise ParseError("engine", None, 'a {"type": "summary"} line')
        number, s = summaries[-1]
        try:
            return self._metrics(s, note="partial" if s.get("partial") else None)
        except (KeyError, TypeError, ValueError) as e:
            raise ParseError("engine", number, f"summary field {e}", str(s)) from e

    def _metrics(self, s: Mapping[str, Any], note: str | None) -> list[Metric]:
        name = METRIC[s["mode"]]
        metrics = [Metric(name, float(s["bw"]), UNIT_THROUGHPUT, note),
                   Metric(f"{name}:iops", float(s["iops"]), UNIT_OPS, note)]
        lat = s.get("lat_ns") or {}
        for key, suffix in LATENCY_KEYS:
            if lat.get(key) is not None:
                metrics.append(Metric(f"{name}:{suffix}", float(lat[key]), UNIT_NS, note))
        if len(s.get("streams", ())) > 1:
            for i, st in enumerate(s["streams"]):
                metrics.append(Metric(f"{name}:stream", float(st["bw"]), UNIT_THROUGHPUT, note,
                                      {"stream": i}))
        return metrics

    def parse_partial(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        try:
            docs = self._documents(output)
        except ParseError:
            return []
        for _, d in reversed(docs):
            if d["type"] == "summary":
                try:
                    return self._metrics(d, note="partial")
                except (KeyError, TypeError, ValueError):
                    return []
        intervals = [d for _, d in docs if d["type"] == "interval" and d.get("elapsed")]
        if not intervals:
            return []
        last = intervals[-1]
        name = METRIC.get(str(params.get("mode")), "write")
        return [Metric(name, last["bytes"] / last["elapsed"], UNIT_THROUGHPUT, "partial")]

    def progress_parser(self, params: Mapping[str, Any]) -> ProgressParser:
        return _EngineProgress(str(params.get("mode", "")))
