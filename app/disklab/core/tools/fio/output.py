"""fio's reports read: its JSON and normal reports (one job block each, the last report of a
run printed with --status-interval), and their metrics. Its live ETA lines are
fio/progress.py's."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from disklab.core.tools.fio.options import (
    DIRECTIONS,
    JOB_KEYS,
    PERCENTILES,
    SIZE_OPTIONS,
    TEXT_PERCENTILES,
    TOOL,
)
from disklab.core.vocab.errors import ParseError
from disklab.core.vocab.model import (
    UNIT_NS,
    UNIT_OPS,
    UNIT_PERCENT,
    UNIT_THROUGHPUT,
    Metric,
    Scalar,
)
from disklab.core.vocab.units import parse_size


def sniff(text: str) -> bool:
    """Whole-file detection for `disklab import`: fio JSON, or fio's normal report."""
    if '"fio version"' in text and "{" in text:
        return True
    return bool(_JOB_HEAD.search(text)) or bool(
        re.search(r"^fio-\d+\.\d+", text, re.M) and "Run status group" in text
    )


# ---------------------------------------------------------------------------------------------
# results: both the JSON and the normal report end up as a list of Job


@dataclass
class Direction:
    """One direction (read, write or trim) of one job, in canonical units."""

    bw: float  # B/s, over this job's own runtime
    iops: float | None = None
    ios: float | None = None  # number of I/Os, the weight of the latency means
    io_bytes: float | None = None
    runtime_ms: float | None = None  # the job's own time in this direction
    lat_mean: float | None = None  # ns
    clat_mean: float | None = None
    percentiles: dict[str, float] = field(default_factory=dict)  # metric suffix -> ns
    moved: float | None = None  # bytes fio says it moved (its JSON's io_bytes), not derived


@dataclass
class Job:
    name: str
    group: int
    line: int | None
    error: int = 0
    error_text: str | None = None
    dirs: dict[str, Direction] = field(default_factory=dict)
    usr: float | None = None
    sys: float | None = None
    options: dict[str, Scalar] = field(default_factory=dict)


def _lines(text: str) -> list[str]:
    """Physical lines (split on '\\n'), each reduced to what a terminal shows after its last
    '\\r': ETA lines overwrite each other, and line numbers match an editor's."""
    return [part.rsplit("\r", 1)[-1] for part in text.replace("\r\n", "\n").split("\n")]


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def finite(value: Any) -> float | None:
    """A JSON number (or numeric string) as a finite float; None when it is anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        f = float(value)
    elif isinstance(value, str):
        try:
            f = float(value)
        except ValueError:
            return None
    else:
        return None
    return f if math.isfinite(f) else None


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _option_value(key: str, value: Any) -> Scalar | None:
    """A fio option string ('512M', '1', '4k,8k') as the plan would spell it: sizes in bytes,
    direct as bool, counts as int; anything else as the string fio printed."""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return None
    text = str(value).strip()
    if key in SIZE_OPTIONS:
        first = re.split(r"[,:-]", text, maxsplit=1)[0]
        try:
            return parse_size(first)
        except ValueError:
            return text
    if key == "direct":
        return text not in ("0", "false", "")
    if key in ("numjobs", "iodepth") and text.isdigit() and len(text) <= 9:
        return int(text)
    return text


def _import_params(*option_sets: Any) -> dict[str, Scalar]:
    params: dict[str, Scalar] = {}
    for options in option_sets:
        if not isinstance(options, dict):
            continue
        for key in JOB_KEYS:
            if key in options:
                value = _option_value(key, options[key])
                if value is not None:
                    params[key] = value
    return params


# --- JSON --------------------------------------------------------------------------------------

# fio prints 64-bit counters at most (20 digits); a longer number, or one a float cannot hold
# (1e400), is damage, reported with its line and key instead of overflowing later
MAX_DIGITS = 20


class _HugeNumber(ValueError):
    def __init__(self, literal: str):
        super().__init__(literal)
        self.literal = literal


def _json_int(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_DIGITS:
        raise _HugeNumber(literal)
    return int(literal)


def _json_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _HugeNumber(literal)
    return value


_DECODER = json.JSONDecoder(parse_constant=lambda name: None,  # NaN/Infinity are not numbers
                            parse_int=_json_int, parse_float=_json_float)


def _huge_number(text: str, start: int, literal: str) -> ParseError:
    """The error of a number fio cannot have printed, at its line, naming its key."""
    pos = text.find(literal, start)
    key = re.search(r'"([^"\n]*)"\s*:\s*$', text[max(start, pos - 200):pos]) if pos >= 0 else None
    where = f"the value of {key.group(1)!r}" if key else "a JSON value"
    shown = literal if len(literal) <= 24 else f"{literal[:20]}... ({len(literal)} characters)"
    return ParseError(TOOL, _line_of(text, pos if pos >= 0 else start),
                      f"a number fio prints (at most {MAX_DIGITS} digits, finite) in {where}",
                      shown)


Doc = tuple[int, dict[str, Any]]


def json_documents(text: str) -> tuple[Doc | None, Doc | None, ParseError | None]:
    """Of the complete top-level JSON objects that start a line: the last one with a jobs list,
    the last one at all (with their line numbers), and the first decoding error (for the
    report when there is no document). Only the last ones are kept: with --status-interval a
    long run writes thousands of documents, and holding every one took ~5x the output's size."""
    last_jobs: Doc | None = None
    last: Doc | None = None
    first_error: ParseError | None = None
    pos = 0
    n = len(text)
    counted = [0, 1]  # (position, its line): lines are counted on from there, not from 0

    def line_at(p: int) -> int:
        if p < counted[0]:
            return _line_of(text, p)
        counted[1] += text.count("\n", counted[0], p)
        counted[0] = p
        return counted[1]

    while pos < n:
        start = text.find("{", pos)
        if start < 0:
            break
        if start > 0 and text[start - 1] not in "\n\r":
            pos = start + 1
            continue
        try:
            doc, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError as e:
            if first_error is None:
                first_error = ParseError(TOOL, _line_of(text, e.pos),
                                         f"a complete JSON document ({e.msg})",
                                         text[e.pos:e.pos + 40] or "end of output")
            pos = start + 1
            continue
        except RecursionError:
            pos = start + 1
            continue
        except _HugeNumber as e:
            raise _huge_number(text, start, e.literal) from e
        if isinstance(doc, dict):
            last = (line_at(start), doc)
            if "jobs" in doc or "client_stats" in doc:
                last_jobs = last
        pos = end
    return last_jobs, last, first_error


def _json_dir(doc_line: int, where: str, d: Any) -> Direction | None:
    """One direction of a job; None when it moved no data."""
    if not isinstance(d, dict):
        return None
    io_bytes = finite(d.get("io_bytes"))
    if io_bytes is None:
        kbytes = finite(d.get("io_kbytes"))
        io_bytes = kbytes * 1024 if kbytes is not None else None
    total_ios = finite(d.get("total_ios"))
    if not io_bytes and not total_ios:
        return None
    bw = finite(d.get("bw_bytes"))
    if bw is None:
        kib = finite(d.get("bw"))  # KiB/s in every fio 3.x and 2.x
        if kib is None:
            raise ParseError(TOOL, doc_line, f"a number in {where}.bw_bytes or {where}.bw",
                             repr(d.get("bw_bytes")))
        bw = kib * 1024
    out = Direction(bw=bw, iops=finite(d.get("iops")), ios=total_ios, io_bytes=io_bytes,
               runtime_ms=finite(d.get("runtime")), moved=io_bytes)
    # fio >= 3.0: *_ns in ns; fio 2.x: lat/clat in usec
    for key, attr in (("lat", "lat_mean"), ("clat", "clat_mean")):
        mean = finite(_get(d, f"{key}_ns", "mean"))
        if mean is None:
            usec = finite(_get(d, key, "mean"))
            mean = usec * 1000 if usec is not None else None
        setattr(out, attr, mean)
    scale = 1.0
    pct = _get(d, "clat_ns", "percentile")
    if not isinstance(pct, dict):
        pct = _get(d, "lat_ns", "percentile")
    if not isinstance(pct, dict):
        pct, scale = _get(d, "clat", "percentile"), 1000.0
    if isinstance(pct, dict):
        for suffix, key in PERCENTILES:
            value = finite(pct.get(key))
            if value is not None:
                out.percentiles[suffix] = value * scale
    return out


def json_jobs(doc_line: int, doc: dict[str, Any]) -> list[Job]:
    entries = doc.get("jobs")
    if entries is None:
        entries = doc.get("client_stats")  # fio --client
    if not isinstance(entries, list) or not entries:
        raise ParseError(TOOL, doc_line, "a non-empty 'jobs' list in fio's JSON document",
                         ", ".join(list(doc)[:6]))
    globals_ = doc.get("global options")
    jobs = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ParseError(TOOL, doc_line, f"an object in jobs[{i}]", repr(entry)[:40])
        name = entry.get("jobname")
        if name == "All clients" and len(entries) > 1:
            continue  # fio --client's sum over servers; the servers' own entries are kept
        group = entry.get("groupid")
        job = Job(name=str(name) if name is not None else f"job{i}",
                   group=int(group) if isinstance(group, int) else 0, line=doc_line)
        error = entry.get("error")
        job.error = int(error) if isinstance(error, int) and not isinstance(error, bool) else 0
        if not -(2**31) <= job.error < 2**31:
            raise ParseError(TOOL, doc_line, f"an error number in jobs[{i}].error", str(error))
        for d in DIRECTIONS:
            parsed = _json_dir(doc_line, f"jobs[{i}].{d}", entry.get(d))
            if parsed is not None:
                job.dirs[d] = parsed
        job.usr = finite(entry.get("usr_cpu"))
        job.sys = finite(entry.get("sys_cpu"))
        job.options = _import_params(globals_, entry.get("job options"))
        jobs.append(job)
    if not jobs:
        raise ParseError(TOOL, doc_line, "a job entry in fio's JSON document")
    return jobs


# --- normal (human) output ------------------------------------------------------------------------

_HOST = r"(?:<[^>]*>\s*)?"  # fio --client prefixes server lines with '<host> '
_JOB_HEAD = re.compile(
    rf"^{_HOST}(?P<name>[^\s:][^:]*?): \(groupid=(?P<group>\d+), jobs=(?P<jobs>\d+)\): "
    r"err=\s*(?P<err>-?\d+)(?: \((?P<emsg>.*)\))?: pid=", re.M)
_HEADER = re.compile(
    rf"^{_HOST}(?P<name>[^\s:][^:]*?): \(g=(?P<group>\d+)\): rw=(?P<rw>\w+), "
    r"bs=\(R\) (?P<bs>[^-,\s]+)-[^,]*,(?:[^,]*,)*? ioengine=(?P<engine>[^,\s]+), "
    r"iodepth=(?P<depth>\d+)")
_DIR_LINE = re.compile(
    r"^\s+(?P<dir>read|write|trim)\s*: IOPS=(?P<iops>[0-9.]+)(?P<isfx>[kMG]?), "
    r"BW=(?P<bw>[0-9.]+)(?P<unit>[kKMGTP]?i?B)/s")
_DIR_RUNTIME = re.compile(r"\([^()/]+/(?P<ms>\d+)msec\)")  # '(512MiB/85msec)': the job's time
_LAT_LINE = re.compile(
    r"^\s+(?P<kind>slat|clat|lat) \((?P<unit>nsec|usec|msec|sec)\): min=[^,]*, max=[^,]*, "
    r"avg=(?P<avg>[0-9.]+)(?P<sfx>[kMG]?),")
_PCT_HEAD = re.compile(r"^\s+c?lat percentiles \((?P<unit>nsec|usec|msec|sec)\):")
_PCT_ITEM = re.compile(r"(?P<p>[0-9.]+)th=\[\s*(?P<v>[0-9.]+)(?P<sfx>[kMG]?)\]")
_CPU_LINE = re.compile(r"^\s+cpu\s*: usr=(?P<usr>[0-9.]+)%, sys=(?P<sys>[0-9.]+)%")
# line starts that promise one of the lines above: a line that starts so but does not read
# as one is damaged, and is reported rather than skipped
_DIR_START = re.compile(r"^\s+(?:read|write|trim)\s*: IOPS=")
_LAT_START = re.compile(r"^\s+(?:slat|clat|lat) \([nmu]?sec\): min=")
_CPU_START = re.compile(r"^\s+cpu\s*: usr=")
_RUN_STATUS = re.compile(r"^Run status group (?P<group>\d+)")
_GROUP_BW = re.compile(
    r"^\s+(?P<dir>READ|WRITE|TRIM): bw=(?P<bw>[0-9.]+)(?P<unit>[kKMGTP]?i?B)/s")
_TIME_SCALE = {"nsec": 1.0, "usec": 1e3, "msec": 1e6, "sec": 1e9}
_SUFFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}
_BYTE_SCALE = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4,
               "PiB": 1024**5, "kB": 1000, "KB": 1000, "MB": 1000**2, "GB": 1000**3,
               "TB": 1000**4, "PB": 1000**5}


def _text_number(number: str, suffix: str, line: int, what: str, got: str) -> float:
    try:
        value = float(number) * _SUFFIX[suffix]
    except (ValueError, KeyError) as e:
        raise ParseError(TOOL, line, what, got) from e
    if not math.isfinite(value):
        raise ParseError(TOOL, line, what, got)
    return value


def text_jobs(text: str) -> tuple[list[Job], dict[str, tuple[int, float]]]:
    """Job blocks of the last report in a normal output (--status-interval repeats the whole
    report; a block after a 'Run status group' starts a new one), and the run-status bandwidth
    per direction as a fallback."""
    headers: dict[str, dict[str, Scalar]] = {}
    jobs: list[Job] = []
    group_bw: dict[str, tuple[int, float]] = {}
    job: Job | None = None
    current: Direction | None = None
    pct_scale: float | None = None
    seen_status = False
    skip = False
    for number, line in enumerate(_lines(text), start=1):
        if m := _HEADER.match(line):
            headers[m["name"]] = {"rw": m["rw"], "ioengine": m["engine"],
                                  "iodepth": int(m["depth"])}
            bs = _option_value("bs", m["bs"])
            if bs is not None:
                headers[m["name"]]["bs"] = bs
            continue
        if m := _JOB_HEAD.match(line):
            pct_scale = None
            current = None
            skip = m["name"] == "All clients"  # fio --client's sum over servers
            if skip:
                job = None
                continue
            if seen_status:
                jobs, group_bw, seen_status = [], {}, False
            emsg = m["emsg"]
            if emsg and (e := re.search(r"error=(.*)$", emsg)):
                emsg = e.group(1)
            if len(m["err"]) > 9 or len(m["group"]) > 9:
                raise ParseError(TOOL, number, "an error number and a group id fio prints "
                                 "(err= and groupid=, at most 9 digits)", line)
            job = Job(name=m["name"], group=int(m["group"]), line=number, error=int(m["err"]),
                       error_text=emsg, options=dict(headers.get(m["name"], {})))
            jobs.append(job)
            continue
        if _RUN_STATUS.match(line):
            seen_status, job, current, pct_scale = True, None, None, None
            continue
        if seen_status:
            if m := _GROUP_BW.match(line):
                scale = _BYTE_SCALE.get(m["unit"])
                if scale is not None:
                    bw = _text_number(m["bw"], "", number, "a bandwidth", line) * scale
                    group_bw[m["dir"].lower()] = (number, bw)
            continue
        if job is None or skip:
            continue
        current, pct_scale = _text_job_line(job, current, pct_scale, number, line)
    return jobs, group_bw


def _text_job_line(job: Job, current: Direction | None, pct_scale: float | None, number: int,
                   line: str) -> tuple[Direction | None, float | None]:
    """One line inside a job block of fio's normal report, into `job`: a direction's figures,
    its latencies, its percentiles, the job's CPU. Returns the direction being read and the
    scale of the percentile lines that follow, for the next line."""
    if _DIR_START.match(line) and not _DIR_LINE.match(line):
        raise ParseError(TOOL, number, "'read: IOPS=N, BW=N<unit>/s ...' (or write, trim)",
                         line.strip())
    if m := _DIR_LINE.match(line):
        scale = _BYTE_SCALE.get(m["unit"])
        if scale is None:
            raise ParseError(TOOL, number, "a bandwidth in B/s, KiB/s, MiB/s, kB/s, MB/s...",
                             line)
        bw = _text_number(m["bw"], "", number, "a number after BW=", line) * scale
        iops = _text_number(m["iops"], m["isfx"], number, "a number after IOPS=", line)
        current = Direction(bw=bw, iops=iops)
        if (t := _DIR_RUNTIME.search(line)) and int(t["ms"]) > 0:
            current.runtime_ms = float(t["ms"])
            seconds = current.runtime_ms / 1e3
            current.io_bytes, current.ios = bw * seconds, iops * seconds
        job.dirs[m["dir"]] = current
        return current, None
    if current is not None and _LAT_START.match(line) and not _LAT_LINE.match(line):
        raise ParseError(TOOL, number, "'lat (usec): min=N, max=N, avg=N, stdev=N'",
                         line.strip())
    if current is not None and (m := _LAT_LINE.match(line)):
        value = _text_number(m["avg"], m["sfx"], number, "a number after avg=", line)
        value *= _TIME_SCALE[m["unit"]]
        if m["kind"] == "lat":
            current.lat_mean = value
        elif m["kind"] == "clat":
            current.clat_mean = value
        return current, pct_scale
    if current is not None and (m := _PCT_HEAD.match(line)):
        return current, _TIME_SCALE[m["unit"]]
    if pct_scale is not None and line.lstrip().startswith("|"):
        if line.count("th=[") != len(_PCT_ITEM.findall(line)):
            raise ParseError(TOOL, number, "percentiles like '99.00th=[  233]'",
                             line.strip())
        for item in _PCT_ITEM.finditer(line):
            try:
                p = round(float(item["p"]), 2)
            except ValueError:
                continue
            if p in TEXT_PERCENTILES and current is not None:
                value = _text_number(item["v"], item["sfx"], number, "a percentile", line)
                current.percentiles[TEXT_PERCENTILES[p]] = value * pct_scale
        return current, pct_scale
    if _CPU_START.match(line) and not _CPU_LINE.match(line):
        raise ParseError(TOOL, number, "'cpu : usr=N%, sys=N%, ...'", line.strip())
    if m := _CPU_LINE.match(line):
        job.usr = _text_number(m["usr"], "", number, "a number after usr=", line)
        job.sys = _text_number(m["sys"], "", number, "a number after sys=", line)
    return current, None


# --- jobs -> metrics ------------------------------------------------------------------------------


def _job_keys(jobs: list[Job]) -> list[str]:
    """What Metric.params['job'] says: the name, or name.N (fio's $jobnum) when names repeat."""
    counts: dict[str, int] = {}
    for job in jobs:
        counts[job.name] = counts.get(job.name, 0) + 1
    seen: dict[str, int] = {}
    keys = []
    for job in jobs:
        if counts[job.name] > 1:
            keys.append(f"{job.name}.{seen.get(job.name, 0)}")
            seen[job.name] = seen.get(job.name, 0) + 1
        else:
            keys.append(job.name)
    return keys


def _dir_metrics(name: str, d: Direction, params: Mapping[str, Scalar] | None,
                 note: str | None) -> list[Metric]:
    out = [Metric(name, d.bw, UNIT_THROUGHPUT, note, params)]
    if d.moved is not None:  # what a time-based or io_size run moved, in fio's own count
        out.append(Metric(f"{name}:bytes", d.moved, "B", note, params))
    if d.iops is not None:
        out.append(Metric(f"{name}:iops", d.iops, UNIT_OPS, note, params))
    if d.lat_mean is not None:
        out.append(Metric(f"{name}:lat_mean", d.lat_mean, UNIT_NS, note, params))
    if d.clat_mean is not None:
        out.append(Metric(f"{name}:clat_mean", d.clat_mean, UNIT_NS, note, params))
    for suffix, _key in PERCENTILES:
        if suffix in d.percentiles:
            out.append(Metric(f"{name}:{suffix}", d.percentiles[suffix], UNIT_NS, note, params))
    return out


def job_metrics(job: Job, params: Mapping[str, Scalar] | None,
                 note: str | None) -> list[Metric]:
    out: list[Metric] = []
    for d in DIRECTIONS:
        if d in job.dirs:
            out += _dir_metrics(d, job.dirs[d], params, note)
    if job.usr is not None:
        out.append(Metric("cpu:usr", job.usr, UNIT_PERCENT, note, params))
    if job.sys is not None:
        out.append(Metric("cpu:sys", job.sys, UNIT_PERCENT, note, params))
    return out


def _aggregate(jobs: list[Job], group_bw: Mapping[str, float]) -> Job:
    """Jobs of one group run side by side, each figure over its own runtime. The group's
    throughput is the total over the longest job's runtime (fio's own group figure, which the
    normal report's 'Run status group' line gives as `group_bw`): not the sum of the jobs'
    rates, which overstates it when one job finishes long before another. IOPS alike; latency
    means weigh by I/O count. Percentiles and CPU shares do not combine: the aggregate has none.
    Without the jobs' runtimes (an old fio), the rates add up."""
    agg = Job(name="all", group=jobs[0].group, line=jobs[0].line)
    for d in DIRECTIONS:
        parts = [j.dirs[d] for j in jobs if d in j.dirs]
        if not parts:
            continue
        timed = all(p.runtime_ms and p.io_bytes is not None for p in parts)
        wall = max(p.runtime_ms or 0.0 for p in parts) / 1e3 if timed else 0.0
        if d in group_bw:
            out = Direction(bw=group_bw[d])
        elif wall:
            out = Direction(bw=sum(p.io_bytes or 0.0 for p in parts) / wall)
        else:
            out = Direction(bw=sum(p.bw for p in parts))
        if all(p.moved is not None for p in parts):
            out.moved = sum(p.moved or 0.0 for p in parts)
        if wall and all(p.ios is not None for p in parts):
            out.iops = sum(p.ios or 0.0 for p in parts) / wall
        elif all(p.iops is not None for p in parts):
            out.iops = sum(p.iops or 0.0 for p in parts)
        weights = [p.ios for p in parts]
        for attr in ("lat_mean", "clat_mean"):
            values = [getattr(p, attr) for p in parts]
            if all(v is not None for v in values) and all(w for w in weights):
                total = sum(w or 0.0 for w in weights)
                setattr(out, attr, sum((v or 0.0) * (w or 0.0)
                                       for v, w in zip(values, weights, strict=True)) / total)
        agg.dirs[d] = out
    return agg


def _common_options(jobs: list[Job]) -> dict[str, Scalar]:
    first = jobs[0].options
    return {k: v for k, v in first.items() if all(j.options.get(k) == v for j in jobs)}


def _spread(jobs: list[Job], params: Mapping[str, Scalar] | None,
            note: str | None) -> list[Metric]:
    """NAME:min_proc, max_proc, avg_proc: the slowest, fastest and mean job of a direction,
    each over its own runtime (iozone's names for its processes, and the engine's for its
    streams)."""
    out = []
    for d in DIRECTIONS:
        rates = [j.dirs[d].bw for j in jobs if d in j.dirs]
        if len(rates) > 1:
            out += [Metric(f"{d}:min_proc", min(rates), UNIT_THROUGHPUT, note, params),
                    Metric(f"{d}:max_proc", max(rates), UNIT_THROUGHPUT, note, params),
                    Metric(f"{d}:avg_proc", sum(rates) / len(rates), UNIT_THROUGHPUT, note,
                           params)]
    return out


def jobs_metrics(jobs: list[Job], importing: bool, note: str | None = None,
             group_bw: Mapping[str, float] | None = None) -> list[Metric]:
    if len(jobs) == 1:
        params = dict(jobs[0].options) if importing and jobs[0].options else None
        return job_metrics(jobs[0], params, note)
    out: list[Metric] = []
    for key, job in zip(_job_keys(jobs), jobs, strict=True):
        params: dict[str, Scalar] = dict(job.options) if importing else {}
        params["job"] = key
        out += job_metrics(job, params, note)
    if len({j.group for j in jobs}) == 1:  # stonewalled groups ran one after another: no sum
        common = (_common_options(jobs) if importing else {}) or None
        out += job_metrics(_aggregate(jobs, group_bw or {}), common, note)
        out += _spread(jobs, common, note)
    return out


def check_finite(metrics: list[Metric]) -> list[Metric]:
    for m in metrics:
        if m.value is not None and not math.isfinite(m.value):
            raise ParseError(TOOL, None, f"a finite number for {m.name}", repr(m.value))
    return metrics


def fio_messages(*texts: str | None) -> list[str]:
    """fio's own error lines ('fio: ...'), in order, without repeats."""
    seen: list[str] = []
    for text in texts:
        for line in _lines(text or ""):
            s = line.strip()
            if s.startswith("fio: ") and s not in seen and "terminating on signal" not in s:
                seen.append(s)
    return seen


def disk_util(text: str) -> dict[str, float]:
    """fio's disk_util of a JSON output as evidence of the device ({} without it): 'busy_pct'
    (util, the device's io_ticks over fio's time), and 'in_flight' (in_queue, the weighted
    time in queue in ms, over the longest job's runtime: Little's law, as the monitor counts
    it; fio measures the disk over its whole run, so it reads a little high for a job with a
    layout phase). The busiest device when several are listed."""
    try:
        found, _last, _error = json_documents(text)
    except ParseError:
        return {}
    if found is None:
        return {}
    doc = found[1]
    disks = [d for d in doc.get("disk_util") or [] if isinstance(d, dict)
             and finite(d.get("util")) is not None]
    if not disks:
        return {}
    disk = max(disks, key=lambda d: finite(d.get("util")) or 0.0)
    out = {"busy_pct": finite(disk["util"]) or 0.0}
    runtimes = [finite(_get(job, direction, "runtime")) or 0.0
                for job in doc.get("jobs") or [] if isinstance(job, dict)
                for direction in ("read", "write", "trim")]
    runtime = max([*runtimes, *(finite(job.get("job_runtime")) or 0.0 for job in
                                doc.get("jobs") or [] if isinstance(job, dict))], default=0.0)
    in_queue = finite(disk.get("in_queue"))
    if runtime > 0 and in_queue is not None:
        out["in_flight"] = in_queue / runtime
    return out
