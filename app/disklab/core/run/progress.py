"""Overall progress and ETA of a whole session (every case x repeat), for every front end.

Why not bytes alone: a time-based case (a `runtime` parameter) moves as many bytes as the device
allows in its time, so its planned bytes (the file size) say nothing of how long it lasts; a
byte share reached 100 % during the first of eight 75 s runs. Here each run is measured in the
unit it is planned in and everything is turned into seconds:

- a time-based run lasts its runtime (the tool's measuring time);
- a size-based run lasts its bytes at the rate the size-based runs had so far (the current
  run's own rate while it has none finished; an assumed rate before the first figure); the
  current run's bytes still to move take its own transfer rate, from its first moved bytes on
  (TRANSFER_MIN_SECONDS of them at least): its start (fio laying out a 16 GiB file, seconds in
  which no byte of the run moves) is already spent, and counted in the rate of the other runs,
  whose start is still to come;
- a run with neither lasts as long as such runs took so far;
- every run also costs the setup seen so far (start, layout, cleanup: wall time beyond the
  measuring time), learnt from the runs that ended;
- the time between runs is learnt too, in two kinds: before the first run of a configuration
  (the filesystem made and mounted, the session's own set-up before the first) and between
  two runs of one configuration (files removed, caches dropped). Each configuration still to
  come costs the first, each other run the second: a comparison of three filesystems spends
  half its time in mkfs, which an ETA of the runs alone left out.

The fraction is time spent / (time spent + time left), so it and the ETA tell the same story, and
it reaches 1.0 only when the last run has ended. What a person sees must not jitter: the fraction
never goes back, and the ETA counts down in real time; it goes up only when the estimate grew by
more than ETA_SLACK (a real slowdown, not a new guess of a few seconds of setup).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from disklab.core.vocab.units import human_bytes, human_rate

ASSUMED_RATE = 200 * 1024 * 1024  # B/s for size-based runs before any figure was seen
ETA_SLACK_SECONDS = 30.0  # an ETA grows again only past this, or past ETA_SLACK_SHARE of itself
ETA_SLACK_SHARE = 0.2
NEARLY_DONE = 0.999  # the most the fraction shows while a run is still to end
TRANSFER_MIN_SECONDS = 2.0  # a run's own transfer rate is taken once its bytes span this
STALE_SECONDS = 2.0  # no new bytes for longer than this: the time without them counts too


@dataclass(frozen=True)
class Work:
    """What a session plans, counted by kind (never the list of runs: a plan may have 100000)."""

    runs: int = 0
    timed_runs: int = 0
    seconds: float = 0.0  # sum of the time-based runs' runtimes
    sized_runs: int = 0
    bytes: int = 0  # planned bytes of the size-based runs only
    total_bytes: int = 0  # planned bytes of every run (the file sizes of time-based runs too)
    configs: int = 1  # the configurations the runs go through, each set up once

    @staticmethod
    def of(runs: Iterable[tuple[float | None, int | None]
                          | tuple[float | None, int | None, str]]) -> Work:
        """From (runtime seconds or None/0, planned bytes or None[, configuration]) per run,
        in the order they run."""
        n = timed = sized = 0
        seconds = 0.0
        sized_bytes = total = 0
        configs, last = 0, None
        for run in runs:
            runtime, planned = run[0], run[1]
            config = run[2] if len(run) > 2 else ""  # type: ignore[misc]
            if n == 0 or config != last:
                configs += 1
            last = config
            n += 1
            total += planned or 0
            if runtime and runtime > 0:
                timed += 1
                seconds += runtime
            elif planned:
                sized += 1
                sized_bytes += planned
        return Work(n, timed, seconds, sized, sized_bytes, total, max(1, configs))

    def describe(self) -> str:
        """What the plan moves or lasts, as a person reads it (not "2 GiB moved" for a plan
        whose runs last a given time)."""
        parts = []
        if self.timed_runs:
            parts.append(f"{self.timed_runs} time-based run(s) of {format_duration(self.seconds)} "
                         "in all")
        if self.sized_runs:
            parts.append(f"about {human_bytes(self.bytes)} moved by {self.sized_runs} "
                         "size-based run(s)")
        other = self.runs - self.timed_runs - self.sized_runs
        if other:
            parts.append(f"{other} run(s) of unknown length")
        return "; ".join(parts) or "nothing to run"


@dataclass(frozen=True)
class Estimate:
    fraction: float  # 0..1 of the whole session, never going back
    eta: float | None  # seconds left, None before anything can be said
    runs_done: int
    runs: int


def format_duration(seconds: float) -> str:
    """12 s, 3 min 05 s, 2 h 07 min: a run's length at the precision a person plans by."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


class OverallProgress:
    """Fed by the runner (start_run, update, end_run, skip_run) with monotonic times;
    estimate() at any time. Pure arithmetic, no clock of its own, so tests drive it with
    made-up times."""

    def __init__(self, work: Work, start: float, assumed_rate: float = ASSUMED_RATE):
        self.work = work
        self.start = start
        self.assumed_rate = assumed_rate
        self.runs_done = 0
        # still to start, by kind: count and runtime or bytes
        self._timed_left = [work.timed_runs, work.seconds]
        self._sized_left = [work.sized_runs, work.bytes]
        self._other_left = work.runs - work.timed_runs - work.sized_runs
        # ended, for the rates: size-based bytes and wall time; others' count and wall time;
        # time-based runs' setup (wall time beyond the measuring time)
        self._sized = [0, 0.0]
        self._other = [0, 0.0]
        self._setup = [0, 0.0]
        self._walls = [0, 0.0]
        self._cur: tuple[float, float, int] | None = None  # start, runtime, planned bytes
        # the time between runs: before a configuration's first run, and between two runs of
        # one configuration (count, seconds); idle since the session's start or the last end
        self._config_gaps = [0, 0.0]
        self._run_gaps = [0, 0.0]
        self._idle_since: float | None = start
        self._config: str | None = None
        self._configs_started = 0
        self._measured = 0.0  # the current run's measuring time so far (tool's elapsed)
        self._done = 0  # the current run's bytes so far
        self._reset_transfer()
        self._fraction = 0.0
        self._eta: tuple[float, float] | None = None  # (shown eta, at time)

    # --- feeding
    def _take(self, runtime: float, planned: int) -> None:
        if runtime > 0:
            self._timed_left[0] -= 1
            self._timed_left[1] -= runtime
        elif planned > 0:
            self._sized_left[0] -= 1
            self._sized_left[1] -= planned
        else:
            self._other_left -= 1

    def start_run(self, now: float, runtime: float | None, planned_bytes: int | None,
                  config: str = "") -> None:
        """A run starts (`config`: its configuration's label; a new one was set up before)."""
        if self._cur is not None:
            self.end_run(now)
        first_of_config = self._configs_started == 0 or config != self._config
        if first_of_config:
            self._configs_started += 1
            self._config = config
        if self._idle_since is not None:
            gaps = self._config_gaps if first_of_config else self._run_gaps
            gaps[0] += 1
            gaps[1] += max(0.0, now - self._idle_since)
            self._idle_since = None
        self._cur = (now, float(runtime or 0.0), int(planned_bytes or 0))
        self._take(self._cur[1], self._cur[2])
        self._measured = 0.0
        self._done = 0
        self._reset_transfer()

    def _reset_transfer(self) -> None:
        # the current run's transfer: the measuring time when it had moved nothing yet (its
        # last report of zero bytes), its first (time, bytes) with bytes, and the time its
        # bytes last grew
        self._still: float | None = None
        self._first_moved: tuple[float, int] | None = None
        self._moved_at = 0.0

    def skip_run(self, runtime: float | None, planned_bytes: int | None) -> None:
        """A run that will not run (its configuration could not be made): done, in no time."""
        self._take(float(runtime or 0.0), int(planned_bytes or 0))
        self.runs_done += 1

    def update(self, measured: float | None = None, done_bytes: int | None = None) -> None:
        """The current run's measuring time (the tool's elapsed) and bytes done so far."""
        if measured is not None:
            self._measured = max(self._measured, measured)
        if done_bytes is None:
            return
        if done_bytes <= 0 and not self._done:
            self._still = self._measured
        elif self._first_moved is None:
            self._first_moved = (self._measured, done_bytes)
        if done_bytes > self._done:
            self._done = done_bytes
            self._moved_at = self._measured

    def end_run(self, now: float) -> bool:
        """The current run ended (measured, failed or cancelled); False if none was going."""
        if self._cur is None:
            return False
        began, runtime, planned = self._cur
        wall = max(0.0, now - began)
        self._walls[0] += 1
        self._walls[1] += wall
        if runtime > 0:
            self._setup[0] += 1
            self._setup[1] += max(0.0, wall - min(runtime, self._measured or runtime))
        elif planned > 0:
            self._sized[0] += planned
            self._sized[1] += wall
        else:
            self._other[0] += 1
            self._other[1] += wall
        self.runs_done += 1
        self._cur = None
        self._idle_since = now
        return True

    # --- reading
    def _seconds_per_byte(self) -> float:
        if self._sized[0] > 0 and self._sized[1] > 0:
            return self._sized[1] / self._sized[0]
        cur = self._cur
        if cur is not None and cur[1] <= 0 and self._done > 0 and self._measured > 0:
            return self._measured / self._done
        return 1.0 / self.assumed_rate

    def _transfer_seconds_per_byte(self) -> float | None:
        """The current run's own transfer rate (seconds a byte): from its last report of no
        bytes, or else its first report of some, to its latest bytes; None before its bytes
        span TRANSFER_MIN_SECONDS."""
        first = self._first_moved
        if first is None:
            return None
        start, base = (self._still, 0) if self._still is not None else first
        end = max(self._moved_at, self._measured - STALE_SECONDS)
        moved = self._done - base
        if end - start < TRANSFER_MIN_SECONDS or moved <= 0:
            return None
        return (end - start) / moved

    def _other_seconds(self) -> float:
        if self._other[0]:
            return self._other[1] / self._other[0]
        return self._walls[1] / self._walls[0] if self._walls[0] else 0.0

    def left(self, now: float) -> float:
        """Seconds left by the current estimate (not smoothed)."""
        setup = self._setup[1] / self._setup[0] if self._setup[0] else 0.0
        spb = self._seconds_per_byte()
        other = self._other_seconds()
        current = 0.0
        if self._cur is not None:
            began, runtime, planned = self._cur
            if runtime > 0:
                current = max(0.0, runtime - self._measured)
                if self._measured <= 0:  # not measuring yet: its setup is still to come
                    current += max(0.0, setup - (now - began))
            elif planned > 0:
                current = max(0, planned - self._done) * (self._transfer_seconds_per_byte()
                                                          or spb)
            else:
                current = max(0.0, other - (now - began))
        timed, seconds = self._timed_left
        size = self._sized_left[1]
        future = (max(0.0, seconds) + max(0, timed) * setup + max(0, size) * spb
                  + max(0, self._other_left) * other)
        return current + future + self._between(now)

    def _between(self, now: float) -> float:
        """The time still to pass between runs: each configuration to come set up, each other
        run's gap, less what the gap going on now has taken already."""
        to_start = max(0, self.work.runs - self.runs_done - (self._cur is not None))
        configs = max(0, min(to_start, self.work.configs - self._configs_started))
        per_config = self._config_gaps[1] / self._config_gaps[0] if self._config_gaps[0] else 0.0
        per_run = self._run_gaps[1] / self._run_gaps[0] if self._run_gaps[0] else 0.0
        total = configs * per_config + (to_start - configs) * per_run
        if self._idle_since is not None and to_start:
            total = max(0.0, total - (now - self._idle_since))
        return total

    def _runs_share(self) -> float:
        """The runs ended plus the current run's own share (its measuring time of its runtime,
        its bytes of its planned bytes), of all runs: what the session has done, in runs."""
        if not self.work.runs:
            return NEARLY_DONE
        current = 0.0
        if self._cur is not None:
            _began, runtime, planned = self._cur
            if runtime > 0:
                current = min(1.0, self._measured / runtime)
            elif planned > 0:
                current = min(1.0, self._done / planned)
        return min(NEARLY_DONE, (self.runs_done + current) / self.work.runs)

    def estimate(self, now: float) -> Estimate:
        if self.work.runs and self.runs_done >= self.work.runs:
            self._fraction, self._eta = 1.0, (0.0, now)
            return Estimate(1.0, 0.0, self.runs_done, self.work.runs)
        honest = self.left(now)
        spent = max(0.0, now - self.start)
        if spent + honest > 0:
            share = min(NEARLY_DONE, spent / (spent + honest))
            # never ahead of the runs themselves: a first guess of the rate (a size-based
            # run's first seconds) said 24 % of 18 runs 8 s in, and the fraction, which never
            # goes back, kept it. The runs' share only grows, so the fraction still never
            # goes back.
            self._fraction = min(max(self._fraction, share), self._runs_share())
        eta = honest
        if self._eta is not None:
            shown, at = self._eta
            counted = max(0.0, shown - max(0.0, now - at))
            slack = max(ETA_SLACK_SECONDS, ETA_SLACK_SHARE * counted)
            if counted <= honest <= counted + slack:
                eta = counted  # within the noise of a new guess: keep counting down
        self._eta = (eta, now)
        return Estimate(self._fraction, eta, self.runs_done, self.work.runs)


# --- the log pane: what a person watching reads ------------------------------------------------

LONG_JSON = 160  # a JSON line longer than this is summarised, not shown


def readable_line(text: str) -> str:
    """A tool's output line as the log pane shows it: the engine's JSON interval and summary
    lines as sentences, any other long JSON as its size (the library keeps every line as it
    came, for `disklab show` and re-parsing; the pane is for reading)."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return text
    try:
        doc = json.loads(stripped)
    except (ValueError, RecursionError):
        return text
    if not isinstance(doc, dict):
        return text
    try:
        kind = doc.get("type")
        if kind == "interval":
            done, elapsed = float(doc["bytes"]), float(doc["elapsed"])
            rate = f", {human_rate(done / elapsed)} on average" if elapsed > 0 else ""
            return f"{elapsed:.1f} s: {human_bytes(int(done))} done{rate}"
        if kind == "summary":
            parts = [f"{doc.get('mode', 'result')}: {human_bytes(int(doc['bytes']))} in "
                     f"{float(doc['seconds']):.1f} s = {human_rate(float(doc['bw']))}"]
            if doc.get("iops") is not None:
                parts.append(f"{float(doc['iops']):.0f} IOPS")
            mean = (doc.get("lat_ns") or {}).get("mean")
            if mean is not None:
                parts.append(f"mean latency {float(mean) / 1000:.0f} µs")
            return "result " + ", ".join(parts)
        if kind == "prepared":
            files = doc.get("files") or []
            return f"laid out {len(files)} file(s), {human_bytes(int(doc['bytes']))}"
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        pass
    if len(stripped) <= LONG_JSON:
        return text
    return f"(a JSON document of {len(stripped):,} characters; kept in the library)"
