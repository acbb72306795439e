"""What limited each run and each result row, said with the figures that show it.

Every benchmark prints a number; this module says what the number measured: the device (busy
all the time, its queue as deep as asked), the CPU (the tool's processes at a core per thread),
the page cache (the tool read or wrote far more than reached the device), write-back (Dirty
held at the kernel's threshold), or too little time. It reads only what a run records anyway
(its samples of /proc and the device's stat line, its duration, the session's host facts), so
judging costs no I/O on the target, and it says "nothing found" rather than guess.

A verdict is a `Limit`: a kind, short words for a table column, and its evidence (the numbers
the words come from), kept in the JSON (`limited_by`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from disklab.core.tools import get_adapter
from disklab.core.tools.base import Measured, ToolAdapter

# A device busy (io_ticks over the run's time) at or above this is the limit: above it the
# device had a request in flight nearly all the time; a little under 100 is usual because the
# tool needs time between two requests (and the kernel counts busy time in jiffies).
DEVICE_BUSY_PCT = 90.0
# The tool's processes at or above this share of one core per thread (or of every CPU of the
# machine) are the limit: a thread that computes 90 % of the time waits for nothing else.
CPU_SHARE = 0.9
# A machine whose CPUs are all busy is a tool's limit only when the tool ran at least this
# much of a core per thread: a tool that used less was asleep (on its I/O, on its own timers:
# iozone's throughput mode waits seconds per phase), not waiting for a CPU; a runnable thread
# on a saturated machine still gets its turn (2 CPUs shared by 15 runnable tasks: ~13 %).
RUNNABLE_PCT = 5.0
# Reads the device served under this share of what the tool read came from the page cache: a
# tenth leaves room for read-ahead of a file that was mostly cached.
CACHE_READ_SHARE = 0.10
# Writes under this share reaching the device within the run were absorbed by the page cache
# (written back after the tool's figure was taken).
CACHE_WRITE_SHARE = 0.5
# Dirty + Writeback at or above this share of the kernel's dirty threshold is write-back
# throttling: the kernel lets writers run free up to midway between the background threshold
# (half the dirty one unless set lower) and the dirty threshold, 3/4 of it, and from there
# makes them wait, holding them about 7/8 of it (balance_dirty_pages' freerun and setpoint);
# pages under write-back count with the dirty ones (a slow device holds many in its queue).
WRITEBACK_SHARE = 0.75
# Under a page_cache_limit, the group's own Dirty + Writeback at or above this share of its
# limit: its dirty threshold (cgroup v2: vm.dirty_ratio of the group's memory, 20 % by
# default) is far behind, and its reclaim (v1) finds mostly pages waiting for the device and
# waits for them (a writer at 8 MiB/s held its 64 MiB group at 73 %).
GROUP_WRITEBACK_SHARE = 0.4
# A tool that waits for each request (synchronous writes, O_DIRECT one request at a time per
# thread) and whose bytes reached the device at least at this share (counted within the run)
# measured the device's latency: its figure is its request size over the time each request
# took, the device idle between two of them.
LATENCY_DEVICE_SHARE = 0.9
# A run shorter than this, or with fewer samples than this, says more about its start than its
# steady state (and gives the monitor too little to judge from).
MIN_SECONDS = 1.0
MIN_SAMPLES = 2
# Bytes below which a read or write share says nothing (a run that barely read)
MIN_BYTES = 1 << 20

# The kinds, in the order a reader asks about them
KINDS = ("too_short", "page_cache_direct", "device", "latency", "cpu", "page_cache_read",
         "page_cache_write", "writeback", "none", "no_interval", "unknown")


@dataclass(frozen=True)
class Limit:
    """One verdict: its kind (KINDS), the words a table shows, and the numbers behind them."""

    kind: str
    words: str
    evidence: Mapping[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "words": self.words, "evidence": dict(self.evidence)}


@dataclass(frozen=True)
class RunFacts:
    """What a verdict needs of one run beside its samples."""

    tool: str
    duration: float | None
    threads: int = 1  # processes or threads issuing I/O (streams, numjobs, threads)
    queue_depth: int | None = None  # requests each keeps in flight, when the tool has one
    cpus: int = 1  # the machine's CPUs
    dirty_threshold: float | None = None  # bytes at which the kernel throttles writers
    page_cache_limit: int | None = None
    # whether the case reads its target at all (the adapter's `reads`): a write-only case's
    # rchar is the tool's own start-up (an interpreter reading its modules), which the device
    # never sees, so it must not read as "read from the page cache"
    reads: bool = True
    # direct I/O asked of a filesystem that journals its data (ext3/ext4 data=journal, as its
    # mount was read back when the configuration was applied): the kernel does not do O_DIRECT
    # there and buffers the I/O through the page cache, whatever the tool's counters say
    direct_buffered: bool = False
    # the tool waits for each request before it issues the next (O_SYNC/O_DSYNC writes, or
    # O_DIRECT at one request in flight per thread)
    waits: bool = False
    # whether the case (or the figure judged) writes its target: a read-only case's writes
    # (dd's to /dev/null), or a read figure's interval's, are not what it measured
    writes: bool = True


# A placed case's bytes on every target's device (monitor.TargetDisks: the distinct devices
# of its targets summed), which its verdicts read instead of the one device under its first
# target: a+b's streams write to two devices, and one device's bytes are half of them.
ALL_DEVICES = {"device_read_bps": "device_read_bps:all",
               "device_write_bps": "device_write_bps:all"}


def _series(samples: Iterable[Mapping[str, Any]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for s in samples:
        out.setdefault(str(s["series"]), []).append(float(s["value"]))
    for one, every in ALL_DEVICES.items():
        if every in out:
            out[one] = out.pop(every)
    return out


def run_limits(samples: Sequence[Mapping[str, Any]], facts: RunFacts,
               seconds: float | None = None, alone: bool = False) -> list[Limit]:
    """The verdicts of one run (or of one figure's interval) from its samples ({series,
    value}): every limit found, or too short, or nothing found. Rates are compared as sums
    over the same sample times. `seconds`: the time measured (the run's duration when `facts`
    are its case's, shared by its runs; a figure's own interval). `alone`: the samples hold
    this figure's bytes only, so that an interval too short for the device's or the CPU's
    levels still says where its bytes went (their counts are exact whatever the length)."""
    series = _series(samples)
    rated = len(series.get("cpu_pct", series.get("device_write_bps", [])))
    took = facts.duration if seconds is None else seconds
    if (took is not None and took < MIN_SECONDS) or rated < MIN_SAMPLES:
        found = [limit for limit in (
            _direct_buffered(series, facts),
            *((_cache_read(series, facts), _cache_write(series, facts)) if alone else ()))
            if limit is not None]
        return [*found, Limit("too_short", f"too short to judge: {took or 0:.2f} s, "
                              f"{rated} sample(s)", {"seconds": took or 0.0,
                                                     "samples": float(rated)})]
    found = [limit for limit in (_direct_buffered(series, facts),
                                 _device(series, facts) or _latency(series, facts),
                                 _cpu(series, facts),
                                 _cache_read(series, facts), _cache_write(series, facts),
                                 _writeback(series, facts)) if limit is not None]
    return found or [Limit("none", "nothing found", {})]


# A figure's verdicts are kept beside its case's under the case id, this and the figure's name
# (session_limits: "c0003/write"); row_verdicts finds a row's own
FIGURE_SEP = "/"


def figure_limits(samples: Sequence[Mapping[str, Any]], facts: RunFacts,
                  intervals: Sequence[Measured]) -> dict[str, list[Limit]]:
    """Each figure's verdicts from the samples of its own measured interval (a name measured
    more than once, iozone's auto-mode rows, over all of them), its time the interval's: not
    the run's sleeps, set-up or other tests. A sample whose time span another figure shares
    (tests that follow one another, bonnie++'s phases: a phase of a second beside one of GB/s)
    holds that figure's bytes too, so it is left out of a figure that has samples of its own;
    a figure with none (shorter than a sample) takes every sample it overlaps. Figures timed
    over the same interval (fio's read, write and cpu of one job) are one measurement."""
    times = sorted({float(s["t"]) for s in samples})
    spans = _spans(times)
    by_name: dict[str, list[Measured]] = {}
    for m in intervals:
        by_name.setdefault(m.name, []).append(m)
    covered = {name: {t for t in times for m in parts
                      if spans[t][1] > m.start and spans[t][0] < m.end}
               for name, parts in by_name.items()}
    when = {name: sorted((m.start, m.end) for m in parts) for name, parts in by_name.items()}
    out = {}
    for name, parts in by_name.items():
        others = set().union(*(covered[o] for o in by_name
                               if o != name and when[o] != when[name]))
        own = covered[name] - others
        chosen = own or covered[name]
        mine = [s for s in samples if float(s["t"]) in chosen]
        its_facts = _figure_facts(facts, name)
        found = run_limits(mine, its_facts, math.fsum(m.end - m.start for m in parts),
                           alone=bool(own))
        moved = [m.moved for m in parts]
        if not own and all(moved):
            found = [*_bounded_cache(mine, spans, its_facts, math.fsum(moved)), *found]
        out[name] = found
    return out


def _bounded_cache(samples: Sequence[Mapping[str, Any]],
                   spans: Mapping[float, tuple[float, float]], facts: RunFacts,
                   moved: float) -> list[Limit]:
    """Where the bytes of a figure shorter than a sample went, bounded: the samples it
    shares with its neighbours hold their bytes too, but the device cannot have moved more
    of this figure's bytes than it moved in all of those samples. A figure whose `moved`
    bytes are ten times what the device read there was read from the page cache, whatever
    its neighbours did."""
    if moved < MIN_BYTES:
        return []
    names = {str(s["series"]) for s in samples}
    device = {}
    for direction in ("read", "write"):
        one = f"device_{direction}_bps"
        series = ALL_DEVICES[one] if ALL_DEVICES[one] in names else one
        device[direction] = math.fsum(
            float(s["value"]) * (spans[float(s["t"])][1] - spans[float(s["t"])][0])
            for s in samples if s["series"] == series)
    out = []
    if facts.reads and not facts.writes and device["read"] < CACHE_READ_SHARE * moved:
        share = device["read"] / moved
        out.append(Limit("page_cache_read", "read from the page cache: the device read at "
                         f"most {100 * share:.0f} % of it", {"device_share": share}))
    if facts.writes and not facts.reads and device["write"] < CACHE_WRITE_SHARE * moved:
        share = device["write"] / moved
        out.append(Limit("page_cache_write", "writes absorbed by the page cache: at most "
                         f"{100 * share:.0f} % reached the device", {"device_share": share}))
    return out


def _figure_facts(facts: RunFacts, name: str) -> RunFacts:
    """A figure's facts: a write figure (iozone's write, fwrite, random_write...; bonnie++'s
    block_write) is not judged on what its interval read (an iozone write phase's reads of
    its own files' metadata, the tool's start), a read figure not on what it wrote. Figures
    of both (iozone's mixed, fio's cpu, bonnie++'s rewrite: it reads each block back before
    writing it) keep both. A read figure's reads wait for each request unless a queue deeper
    than one was asked (direct I/O with fio's or the engine's depth)."""
    reads, writes = "read" in name, "write" in name
    if facts.tool == "bonnie" and name == "rewrite":
        return facts
    if writes and not reads:
        return replace(facts, reads=False)
    if reads and not writes:  # one read at a time per thread: the tools' reads wait for each
        return replace(facts, writes=False, waits=facts.waits or facts.queue_depth is None
                       or facts.queue_depth <= 1)
    return facts


def _spans(times: Sequence[float]) -> dict[float, tuple[float, float]]:
    """Each sample time -> the time span its rates cover (from the sample before it; the
    first one as long as the second's)."""
    out = {}
    for i, t in enumerate(times):
        before = times[i - 1] if i else t - ((times[1] - t) if len(times) > 1 else 0.5)
        out[t] = (before, t)
    return out


def _mean(values: list[float] | None) -> float | None:
    return statistics.fmean(values) if values else None


def _steady(values: list[float] | None) -> float | None:
    """The mean of a level over the run's steady state: with 4 samples or more the first and
    the last are left out, because they cover partial intervals (the tool starting, its last
    I/O before the closing sample) that dilute a device busy all the time in between."""
    if values and len(values) >= 4:
        values = values[1:-1]
    return _mean(values)


def _direct_buffered(series: Mapping[str, list[float]], facts: RunFacts) -> Limit | None:
    """Direct I/O the kernel buffered (RunFacts.direct_buffered), with the Dirty it reached
    while the tool ran as the page cache's own evidence."""
    if not facts.direct_buffered:
        return None
    dirty = series.get("dirty_bytes") or []
    evidence = {"dirty_bytes": max(dirty)} if dirty else {}
    return Limit("page_cache_direct", "direct I/O through the page cache: ext4 data=journal "
                 "buffers O_DIRECT (the mount read back data=journal)"
                 + (f", Dirty up to {max(dirty) / (1 << 20):.0f} MiB" if dirty else ""),
                 evidence)


def _device(series: Mapping[str, list[float]], facts: RunFacts) -> Limit | None:
    busy = _steady(series.get("device_busy_pct"))
    if busy is None or busy < DEVICE_BUSY_PCT:
        return _backing(series)
    flight = _steady(series.get("device_in_flight")) or 0.0
    asked = facts.queue_depth * facts.threads if facts.queue_depth else None
    words = f"device busy {busy:.0f} %, {flight:.1f}"
    if asked and round(flight, 1) > asked:  # others' requests, or the tool's split in the kernel
        words += f" requests in flight at the device, more than the {asked} the tool keeps"
    else:
        words += f" of {asked} requests in flight" if asked else " requests in flight"
    evidence = {"busy_pct": busy, "in_flight": flight}
    if asked:
        evidence["asked"] = float(asked)
    return Limit("device", words, evidence)


def _backing(series: Mapping[str, list[float]]) -> Limit | None:
    """An image target's backing device busy all the time while the loop device (the first
    target's) was not: images on one disk share it, so a case placed on several of them
    (a+b+c+d) is held by that disk while each loop device has a part of its requests."""
    busy = _steady(series.get("backing_busy_pct"))
    if busy is None or busy < DEVICE_BUSY_PCT:
        return None
    flight = _steady(series.get("backing_in_flight")) or 0.0
    return Limit("device", f"the images' backing device busy {busy:.0f} %, {flight:.1f} "
                 "requests in flight there", {"busy_pct": busy, "in_flight": flight,
                                              "backing": 1.0})


def _latency(series: Mapping[str, list[float]], facts: RunFacts) -> Limit | None:
    """A tool that waits for each request (RunFacts.waits), its bytes on the device, the
    device not busy all the time and the tool not at a core per thread: the figure is the
    device's latency per request, what a synchronous writer or a reader at depth 1 gets."""
    if not facts.waits or facts.direct_buffered:
        return None
    busy = _steady(series.get("device_busy_pct"))
    cpu = _steady(series.get("cpu_pct"))
    if busy is None or busy >= DEVICE_BUSY_PCT or (
            cpu is not None and cpu / max(facts.threads, 1) >= CPU_SHARE * 100):
        return None
    moved = max((_share(series, "device_write_bps", "app_wchar_bps"),
                 _share(series, "device_read_bps", "app_rchar_bps") if facts.reads else None),
                key=lambda s: s[1] if s else -1.0)
    if moved is None or moved[1] < MIN_BYTES or moved[0] < LATENCY_DEVICE_SHARE:
        return None
    flight = _steady(series.get("device_in_flight")) or 0.0
    each = "each thread waits" if facts.threads > 1 else "the tool waits"
    return Limit("latency", f"the device's latency: {each} for every request ({flight:.1f} "
                 f"in flight, device busy {busy:.0f} %)",
                 {"busy_pct": busy, "in_flight": flight, "device_share": moved[0]})


def _cpu(series: Mapping[str, list[float]], facts: RunFacts) -> Limit | None:
    """The tool's processes at a core per thread, or the machine's CPUs all busy (a tool
    that gets less than a core on a loaded machine waits for the CPU, not the device)."""
    cpu = _steady(series.get("cpu_pct"))
    machine = _steady(series.get("machine_cpu_pct"))
    if cpu is None:
        return None
    per_thread = cpu / max(facts.threads, 1)
    evidence = {"cpu_pct": cpu, "per_thread_pct": per_thread, "threads": float(facts.threads)}
    if per_thread >= CPU_SHARE * 100:
        return Limit("cpu", f"CPU: {facts.tool} at {per_thread:.0f} % of a core"
                     + (f" per thread ({facts.threads})" if facts.threads > 1 else ""), evidence)
    if machine is not None and machine >= CPU_SHARE * 100 and per_thread >= RUNNABLE_PCT:
        evidence["machine_cpu_pct"] = machine
        return Limit("cpu", f"CPU: the machine's {facts.cpus} CPUs {machine:.0f} % busy "
                     f"({facts.tool} at {per_thread:.0f} % of a core)", evidence)
    return None


def _share(series: Mapping[str, list[float]], device: str, app: str
           ) -> tuple[float, float] | None:
    """(device bytes / app bytes, app bytes/s summed) over the samples both have."""
    dev, tool = series.get(device), series.get(app)
    if not dev or not tool:
        return None
    n = min(len(dev), len(tool))
    moved = math.fsum(tool[-n:])
    if moved <= 0:
        return None
    return math.fsum(dev[-n:]) / moved, moved


def _cache_read(series: Mapping[str, list[float]], facts: RunFacts) -> Limit | None:
    if not facts.reads:
        return None
    share = _share(series, "device_read_bps", "app_rchar_bps")
    if share is None or share[1] < MIN_BYTES or share[0] >= CACHE_READ_SHARE:
        return None
    words = f"read from the page cache: the device read {100 * share[0]:.0f} % of it"
    if facts.page_cache_limit:
        words += f" (page_cache_limit {facts.page_cache_limit >> 20} MiB)"
    return Limit("page_cache_read", words, {"device_share": share[0]})


def _cache_write(series: Mapping[str, list[float]], facts: RunFacts) -> Limit | None:
    if not facts.writes:
        return None
    share = _share(series, "device_write_bps", "app_wchar_bps")
    if share is None or share[1] < MIN_BYTES or share[0] >= CACHE_WRITE_SHARE:
        return None
    return Limit("page_cache_write", f"writes absorbed by the page cache: {100 * share[0]:.0f} "
                 "% reached the device", {"device_share": share[0]})


def _writeback(series: Mapping[str, list[float]], facts: RunFacts) -> Limit | None:
    """Dirty and Writeback pages (the kernel throttles writers on their sum) held at the
    dirty threshold while the tool wrote: the median over the samples from the first in
    which the tool's processes wrote to the last (all samples when none says), compared with
    WRITEBACK_SHARE of it. The samples between count: a writer held by write-back completes no
    write while it waits (wchar stays still), and leaving those out judged a writer held 4 s
    of 5 from its two free moments. Under
    a page_cache_limit, the group's own pages against its limit (or the machine's threshold
    when lower): a group full of pages waiting for the device holds its writer, whatever the
    machine's threshold (4.9 GB here) and other programs' Dirty say."""
    group = facts.page_cache_limit and series.get("group_dirty_bytes")
    dirty = series.get("group_dirty_bytes" if group else "dirty_bytes")
    threshold = (min(facts.page_cache_limit, facts.dirty_threshold or math.inf) if group
                 else facts.dirty_threshold)
    if not dirty or not threshold:
        return None
    back = series.get("group_writeback_bytes" if group else "writeback_bytes") or []
    n = min(len(dirty), len(back)) if back else len(dirty)
    held_at = [d + (back[-n:][i] if back else 0.0) for i, d in enumerate(dirty[-n:])]
    wrote = series.get("app_wchar_bps") or []
    if len(wrote) >= n:  # from the tool's first write to its last, its waits between included
        moved = [i for i, w in enumerate(wrote[-n:]) if w > 0]
        held_at = held_at[moved[0]:moved[-1] + 1] if moved else held_at
    held = statistics.median(held_at)
    if held < (GROUP_WRITEBACK_SHARE if group else WRITEBACK_SHARE) * threshold:
        return None
    share = held / threshold
    whose = ("the page_cache_limit group's Dirty + Writeback held at "
             f"{100 * share:.0f} % of its limit" if group else
             f"Dirty + Writeback held at {100 * share:.0f} % of the kernel's threshold")
    return Limit("writeback", f"write-back throttling: {whose} ({threshold / (1 << 20):.0f} MiB)",
                 {"dirty_bytes": held, "threshold": float(threshold)})


UNKNOWN = Limit("unknown", "not known (imported)", {})
# A figure of a run whose tool timed its figures apart (ToolAdapter.measured) but not this one:
# the run's verdict would be its other figures', so none is lent
NO_INTERVAL = Limit("no_interval", "no interval of its own: the tool did not time this figure "
                    "apart from its others", {})
# A case whose runs all ended early (cancelled, failed): nothing complete to judge
NOT_COMPLETED = Limit("unknown", "not known: no run of it completed", {})


def row_limits(per_run: Sequence[Sequence[Limit]]) -> list[Limit]:
    """A result row's verdicts from its runs': each kind found in at least half of them, its
    evidence the mean over those runs ("not known" too: an imported run whose device was not
    the limit keeps its busy share); "nothing found" when none is; "not known" without runs
    (an imported result that carries no evidence)."""
    if not per_run:
        return [UNKNOWN]
    kinds: dict[str, list[Limit]] = {}
    for limits in per_run:
        for limit in limits:
            kinds.setdefault(limit.kind, []).append(limit)
    out = []
    for kind in KINDS:
        found = kinds.get(kind, [])
        if kind == "none" or 2 * len(found) < len(per_run):
            continue
        keys = set().union(*(f.evidence for f in found))
        evidence = {k: statistics.fmean(f.evidence[k] for f in found if k in f.evidence)
                    for k in sorted(keys)}
        words = found[0].words if len(found) == len(per_run) else \
            f"{found[0].words} ({len(found)} of {len(per_run)} runs)"
        out.append(Limit(kind, words, evidence))
    return out or [Limit("none", "nothing found", {})]


class LimitsSource(Protocol):
    """What session_limits reads of a library (core.library.Library has it)."""

    def limits(self, session_id: int, rules: int, judge: Callable[[], Any]) -> Any: ...
    def store_limits(self, session_id: int, rules: int, judge: Callable[[], Any]) -> None: ...
    def run_ends(self, session_id: int) -> list[dict[str, Any]]: ...
    def cases(self, session_id: int) -> list[dict[str, Any]]: ...
    def samples(self, session_id: int, case_id: str | None = None,
                series: str | None = None) -> list[dict[str, Any]]: ...
    def session(self, session_id: int) -> dict[str, Any]: ...
    def events(self, session_id: int) -> list[dict[str, Any]]: ...
    def transcript(self, session_id: int, case_id: str, repeat: int
                   ) -> list[tuple[float, str, str]]: ...


# An imported output's evidence of its device (ToolAdapter.device_evidence: fio's disk_util),
# kept as one-point series of its run under these names: evidence key -> series
IMPORTED_SERIES = {"busy_pct": "imported_device_busy_pct",
                   "in_flight": "imported_device_in_flight"}
# the series the verdicts read (run_limits); a session's other series are never loaded for them
JUDGED_SERIES = ("cpu_pct", "machine_cpu_pct", "device_busy_pct", "device_in_flight",
                 "backing_busy_pct", "backing_in_flight",
                 "device_read_bps", "device_write_bps", *ALL_DEVICES.values(),
                 "app_rchar_bps", "app_wchar_bps",
                 "dirty_bytes", "writeback_bytes", "group_dirty_bytes",
                 "group_writeback_bytes", *IMPORTED_SERIES.values())
# the parameters that say how many processes or threads issue I/O, and how deep each queue is
THREAD_KEYS = ("streams", "numjobs", "threads")
DEPTH_KEYS = ("queue_depth", "iodepth")
BUFFERED = (False, 0, "0", "false")  # a `direct` parameter saying the I/O was buffered


# The version of the rules above (thresholds, kinds, words, evidence): the library keeps each
# session's verdicts with the version that judged them, and judges again under another one.
# Raise it with any change that changes a verdict.
RULES = 7


def session_limits(lib: LimitsSource, session_id: int) -> dict[str, list[Limit]]:
    """case id -> its verdicts over the runs that completed (row_limits of each run's). The
    library keeps them (Library.limits: stored when the session's run ends, or judged once on
    a first read and stored), so a comparison of a 10,000-run session does not judge 10,000
    runs again on every look."""
    return _decoded(lib.limits(session_id, RULES,
                               lambda: _encoded(judge_session(lib, session_id))))


def store_session_limits(lib: LimitsSource, session_id: int) -> None:
    """Judge a session whose run has ended and store its verdicts with it (Library.store_limits)."""
    lib.store_limits(session_id, RULES, lambda: _encoded(judge_session(lib, session_id)))


def _encoded(limits: Mapping[str, Sequence[Limit]]) -> dict[str, list[list[Any]]]:
    """Verdicts as the library stores them: case id -> [kind, words, evidence] each."""
    return {cid: [[x.kind, x.words, dict(x.evidence)] for x in found]
            for cid, found in limits.items()}


def _decoded(stored: Mapping[str, Sequence[Sequence[Any]]]) -> dict[str, list[Limit]]:
    """_encoded's verdicts back, equal to those judged (JSON keeps a float's every digit);
    a verdict said of many cases ("too short", "nothing found") made once."""
    made: dict[tuple[Any, ...], Limit] = {}
    out = {}
    for cid, found in stored.items():
        limits = []
        for kind, words, evidence in found:
            key = (kind, words, *evidence.items())
            limit = made.get(key)
            if limit is None:
                limit = made[key] = Limit(kind, words, evidence)
            limits.append(limit)
        out[cid] = limits
    return out


def judge_session(lib: LimitsSource, session_id: int) -> dict[str, list[Limit]]:
    """session_limits worked out from the session's samples, runs, cases and host record."""
    host = lib.session(session_id).get("host") or {}
    cases = {c["case_id"]: c for c in lib.cases(session_id)}
    journalled = journalled_configs(lib.events(session_id))
    by_run: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for name in JUDGED_SERIES:  # only what a verdict reads, not every series of a long run
        for s in lib.samples(session_id, series=name):
            by_run.setdefault((s["case_id"], int(s["repeat"])), []).append(s)
    per_case: dict[str, list[list[Limit]]] = {}
    of_case: dict[str, RunFacts] = {}  # a case's facts, worked out once for all its runs
    ended_early: set[str] = set()  # cases with a run that did not complete
    for run in lib.run_ends(session_id):
        case = cases.get(run["case_id"])
        if case is None or run.get("status") not in ("ok", "imported"):
            ended_early.add(run["case_id"])
            continue
        facts = of_case.get(run["case_id"])
        if facts is None:
            facts = of_case[run["case_id"]] = run_facts(
                case, None, host, journalled=str(case.get("config")) in journalled)
        samples = by_run.get((run["case_id"], int(run["repeat"])), [])
        if run.get("status") == "imported":
            found = imported_limits(samples, facts)
            if found is not None:
                per_case.setdefault(run["case_id"], []).append(found)
            continue
        if not samples and run.get("duration") is None:
            continue  # no evidence
        per_case.setdefault(run["case_id"], []).append(
            run_limits(samples, facts, run.get("duration")))
        intervals = _measured(lib, session_id, case, int(run["repeat"]))
        if intervals is not None:  # its figures are timed apart: one without a time says so
            per_case.setdefault(f"{run['case_id']}{FIGURE_SEP}", []).append([NO_INTERVAL])
        for name, found in figure_limits(samples, facts, intervals or ()).items():
            per_case.setdefault(f"{run['case_id']}{FIGURE_SEP}{name}", []).append(found)
    judged = {cid: row_limits(runs) for cid, runs in per_case.items()}
    return judged | {cid: [NOT_COMPLETED] for cid in ended_early if cid not in judged}


def _measured(lib: LimitsSource, session_id: int, case: Mapping[str, Any], repeat: int
              ) -> list[Measured] | None:
    """A run's figures' intervals as its tool timed them (ToolAdapter.measured, from its
    transcript); None for a tool that gives no boundary between its figures."""
    try:
        adapter = get_adapter(str(case.get("tool", "")))
    except (KeyError, ValueError):
        return None
    if type(adapter).measured is ToolAdapter.measured:  # no boundary: no transcript read
        return None
    return adapter.measured(lib.transcript(session_id, str(case["case_id"]), repeat),
                            case.get("params") or {})


def journalled_configs(events: Iterable[Mapping[str, Any]]) -> set[str]:
    """The configurations whose filesystem journals its data, from what was read back of it
    when it was applied (ConfigApplied's readback: an ext3/ext4 mount with data=journal among
    its options, the filesystem's own /proc list or the superblock's; a directory target's
    mount as found)."""
    out = set()
    for e in events:
        if e.get("kind") in ("config_applied", "ConfigApplied") and \
                _journals_data(e.get("readback") or {}):
            out.add(str(e.get("config")))
    return out


def _journals_data(readback: Mapping[str, Any]) -> bool:
    fs = readback.get("fs") or readback.get("fstype")
    if fs not in ("ext3", "ext4"):
        return False
    options: list[str] = []
    for key in ("mount_options", "fs_options", "options", "super_options"):
        value = readback.get(key)
        options += value.split(",") if isinstance(value, str) else \
            [str(o) for o in value] if isinstance(value, list | tuple) else []
    return "data=journal" in options


def run_facts(case: Mapping[str, Any], duration: float | None, host: Mapping[str, Any],
              journalled: bool = False) -> RunFacts:
    """A run's facts from its case (tool, params, test_index: a library case row or a
    model.Case's fields), its duration and the session's host record: what session_limits
    reads from the library and the Run page's live verdict (results.live) from the events."""
    params = case.get("params") or {}
    threads = next((int(params[k]) for k in THREAD_KEYS
                    if isinstance(params.get(k), int) and params[k] > 0), 1)
    depth = next((int(params[k]) for k in DEPTH_KEYS if isinstance(params.get(k), int)),
                 None)
    if params.get("direct") in BUFFERED:  # read-ahead and write-back make the device's queue
        depth = None  # whatever the kernel chooses: no depth was asked of it
    return RunFacts(tool=str(case.get("tool", "")), duration=duration,
                    threads=threads, queue_depth=depth,
                    cpus=int(host.get("cpu_count") or 1),
                    dirty_threshold=host.get("dirty_threshold_bytes"),
                    page_cache_limit=_limit_of(host.get("page_cache_limit") or {}, case),
                    reads=_reads(str(case.get("tool", "")), params),
                    direct_buffered=journalled and _direct(str(case.get("tool", "")), params),
                    waits=_waits(str(case.get("tool", "")), params, depth),
                    writes=_writes(str(case.get("tool", "")), params))


def _direct(tool: str, params: Mapping[str, Any]) -> bool:
    """Whether a case of `tool` asks for O_DIRECT."""
    try:
        return get_adapter(tool).uses_direct_io(params)
    except (KeyError, ValueError, TypeError):
        return params.get("direct") not in (None, *BUFFERED)


def _waits(tool: str, params: Mapping[str, Any], depth: int | None) -> bool:
    """Whether a case of `tool` waits for each request before the next: synchronous writes
    (`sync`: iozone -o, dd oflag=dsync, fio sync=1), direct I/O at one request in flight
    (a tool without a queue depth, such as dd or iozone, keeps one), or a read-only case's
    buffered reads (a read() that misses the page cache returns when the device has read)."""
    if params.get("sync") is True:
        return True
    direct = _direct(tool, params)
    if not direct and _reads(tool, params) and not _writes(tool, params):
        return True
    return direct and (depth is None or depth <= 1)


def _writes(tool: str, params: Mapping[str, Any]) -> bool:
    """Whether a case of `tool` writes its target (True for a tool this program does not
    know)."""
    try:
        return get_adapter(tool).writes(params)
    except (KeyError, ValueError, TypeError):
        return True


def _reads(tool: str, params: Mapping[str, Any]) -> bool:
    """Whether a case of `tool` reads its target (True for a tool this program does not
    know, such as an imported one's: it may)."""
    try:
        return get_adapter(tool).reads(params)
    except (KeyError, ValueError, TypeError):
        return True


def imported_limits(samples: Sequence[Mapping[str, Any]], facts: RunFacts
                    ) -> list[Limit] | None:
    """An imported run's verdict from the evidence its output carried (IMPORTED_SERIES): the
    device when it was busy at DEVICE_BUSY_PCT or more (its requests in flight against the
    queue asked for), else "not known" with the device's busy share kept (the device was not
    the limit; what was, the output does not say). None without evidence."""
    series = _series(samples)
    busy = _mean(series.get(IMPORTED_SERIES["busy_pct"]))
    if busy is None:
        return None
    flight = _mean(series.get(IMPORTED_SERIES["in_flight"]))
    if busy < DEVICE_BUSY_PCT:
        return [Limit("unknown", "not known (imported): not the device, busy "
                      f"{math.floor(busy)} %",
                      {"busy_pct": busy})]
    device = _device({"device_busy_pct": [busy],
                      "device_in_flight": [flight] if flight is not None else []}, facts)
    if device is None:  # never: busy is at the threshold
        return None
    return [Limit("device", f"{device.words} (fio's disk_util)", dict(device.evidence))]


def _limit_of(recorded: Mapping[str, Any], case: Mapping[str, Any]) -> int | None:
    """The page-cache limit a case ran under, as the session's host record keeps it."""
    if not isinstance(recorded, Mapping):
        return None
    tests = recorded.get("tests") or {}  # "test[N]" -> bytes (the runner's _limits_record)
    index = case.get("test_index")
    own = (tests.get(f"test[{int(index) + 1}]") if isinstance(tests, Mapping)
           and isinstance(index, int) else None)
    value = own if own is not None else recorded.get("plan")
    return int(value) if isinstance(value, int | float) else None
