"""What the terminal shows: a live status line while a case runs, tables, JSON events."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import textwrap
import time
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from disklab.core.results.limits import Limit
from disklab.core.results.partial import SessionResults
from disklab.core.results.tables import results_table
from disklab.core.results.text_table import table_text
from disklab.core.run.event_text import EventText
from disklab.core.vocab.events import (
    CaseStarted,
    Event,
    Progress,
    Sample,
    SessionFinished,
    SessionResumed,
    SessionStarted,
)
from disklab.core.vocab.jsonformat import versioned
from disklab.core.vocab.model import Report
from disklab.core.vocab.units import human_rate, use_units

_QUIET = [False]  # --quiet: the informational lines are not printed


def set_quiet(quiet: bool) -> None:
    _QUIET[0] = quiet


def is_quiet() -> bool:
    return _QUIET[0]


def info(text: str) -> None:
    """An informational line on stdout ('wrote x.csv', 'session 3: notes saved'), not with
    --quiet. Results and errors are printed whatever the verbosity."""
    if not _QUIET[0]:
        print(text)


def report_units(given: str | None, report: Report | None) -> Report | None:
    """The units a session is written in: --units when given (main set them), else its
    plan's [report] units, else the default (main set it). Returns `report`."""
    if given is None and report is not None and report.units:
        use_units(report.units)
    return report


def event_json(event: Event) -> dict[str, Any]:
    """An event as one JSON object: {"format": "disklab.event", "version": 1,
    "event": "CaseStarted", "t": ..., ...fields}."""
    data = dataclasses.asdict(event)
    return versioned("disklab.event", {"event": type(event).__name__, **data})


def print_table(rows: Sequence[Sequence[str]], out: TextIO | None = None,
                width: int = 0) -> None:
    """Left-aligned text columns; the first row is the header. With `width`, no line is
    longer: the last column wraps under itself, or, when the others leave it under 20
    characters, goes on the lines below its row, indented."""
    out = out or sys.stdout
    if not rows:
        return
    widths = [max(len(str(r[i])) for r in rows if i < len(r)) for i in range(len(rows[0]))]
    indent = sum(widths[:-1]) + 2 * (len(widths) - 1)
    below = False
    if width and indent + widths[-1] > width:
        below = width - indent < 20
        widths[-1] = width - 4 if below else width - indent
    for n, row in enumerate(rows):
        cells = [str(c) for c in row]
        last = textwrap.wrap(cells[-1], widths[-1]) or [""]
        if below:  # the header's last word is left out: its lines say what they are
            head, rest, pad = cells[:-1], [] if n == 0 else last, 4
        else:
            head, rest, pad = [*cells[:-1], last[0]], last[1:], indent
        print("  ".join(c.ljust(w) for c, w in zip(head, widths, strict=False)).rstrip(),
              file=out)
        for more in rest:
            print(" " * pad + more, file=out)
        if n == 0:
            shown = widths[:-1] if below else widths
            print("  ".join("-" * w for w in shown), file=out)


def terminal_width() -> int:
    """The width text tables fit: the terminal's, $COLUMNS when set, 0 (no limit) when the
    output goes to a file or a pipe without it."""
    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return shutil.get_terminal_size().columns
    return 0


def print_results(results: Sequence[Mapping[str, Any]] | SessionResults,
                  out: TextIO | None = None, width: int | None = None,
                  limits: Mapping[str, Sequence[Limit]] | None = None) -> None:
    """A session's headline figures as `disklab show` and the end of `disklab run` print them:
    the table's notes (the parameters every case shares, the runs left out of the means, the
    hint for noisy figures), then the results table (core.results), fitted to `width` (the
    terminal's by default): the parameter and note columns wrap, the figures never."""
    table = results_table(results, all_metrics=False, limits=limits)
    text = table_text(table, terminal_width() if width is None else width)
    (out or sys.stdout).write(text)


def resume_lines(resumes: Sequence[Mapping[str, Any]]) -> list[str]:
    """When a session was resumed and how many runs each resume ran (Library.resumes)."""
    return [f"resumed {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(r['t']))}: "
            f"{r['runs']} run(s) without a complete result ran again (it was "
            f"{r['previous_status']}; {r['complete']} complete run(s) kept)" for r in resumes]


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = int(seconds)
    h, rem = divmod(seconds, 3600)
    return f"{h}:{rem // 60:02d}:{rem % 60:02d}" if h else f"{rem // 60:02d}:{rem % 60:02d}"


class TerminalView:
    """Shows a run on a terminal: one line per case, and a bar with throughput and ETA that is
    redrawn in place at most 4 times a second (only when the stream is a terminal)."""

    def __init__(self, out: TextIO):
        self.out = out
        self.live = out.isatty()
        self.rate: dict[str, float] = {}
        self.progress: Progress | None = None
        self.last_draw = 0.0
        self.total_runs = 0
        self.text = EventText()  # the events' words, and the cases' titles

    def show(self, event: Event) -> None:
        """The event's line (core.run.event_text, the words the Run page's log and the
        Library use), and the live status line from samples and progress."""
        if isinstance(event, Sample):
            if event.series in ("app_rchar_bps", "app_wchar_bps", "device_read_bps",
                                "device_write_bps"):
                self.rate[event.series] = event.value
            self._draw()
            return
        if isinstance(event, Progress):
            if event.target is None:  # one target's share: the line shows the case's
                self.progress = event
                self._draw()
            return
        if isinstance(event, SessionFinished):
            return  # the command prints the session's results and status itself
        line = self.text.line(event)
        if isinstance(event, SessionStarted | SessionResumed):
            self.total_runs = (len(event.cases) * event.repeats
                               if isinstance(event, SessionStarted) else len(event.runs))
            print(line, file=self.out)
            if self.text.common:
                print(self.text.common, file=self.out)
            return
        if isinstance(event, CaseStarted):
            self.rate.clear()
            self.progress = None
        if line is not None:
            for part in line.splitlines():
                self._line(part)

    def _line(self, text: str) -> None:
        if self.live:
            self.out.write("\r\x1b[K")
        print(text, file=self.out, flush=True)

    def _draw(self) -> None:
        now = time.monotonic()
        if not self.live or now - self.last_draw < 0.25:
            return
        self.last_draw = now
        p = self.progress
        # what the tool does (its read()/write() bytes), beside what reached the device
        app = self.rate.get("app_rchar_bps", 0.0) + self.rate.get("app_wchar_bps", 0.0)
        dev = self.rate.get("device_read_bps", 0.0) + self.rate.get("device_write_bps", 0.0)
        parts = []
        frac = p.fraction if p is not None else None
        if frac is None and p is not None and p.total_bytes and p.done_bytes is not None:
            frac = min(1.0, p.done_bytes / p.total_bytes)
        if frac is not None:
            bar = "#" * int(frac * 20)
            parts.append(f"[{bar:<20}] {frac * 100:5.1f}%")
        if p is not None and p.phase:
            parts.append(p.phase)
        parts.append(f"app {human_rate(app)}  dev {human_rate(dev)}")
        if p is not None:
            parts.append(f"eta {_clock(p.eta)}")
            if p.overall is not None:
                parts.append(f"all {p.overall * 100:.0f}%")
            if p.overall_eta is not None:
                parts.append(f"all eta {_clock(p.overall_eta)}")
        self.out.write("\r\x1b[K    " + "  ".join(parts))
        self.out.flush()

    def close(self) -> None:
        if self.live:
            self.out.write("\r\x1b[K")
            self.out.flush()


# The machine facts a comparison of sessions from several hosts names when they differ
HOST_FACTS = ("hostname", "distribution", "kernel", "machine", "cpu_model", "cpu_count",
              "memory_bytes", "filesystem")


def host_differences(sessions: Sequence[Mapping[str, Any]]) -> str:
    """Lines for above a comparison of sessions recorded on different machines: each host
    fact whose value is not the same in all of them, with each session's value; '' when the
    sessions agree (one machine, or imported outputs without facts)."""
    lines = []
    for key in HOST_FACTS:
        values = [(s.get("host") or {}).get(key) for s in sessions]
        if len({json.dumps(v, sort_keys=True) for v in values}) > 1:
            shown = "; ".join(f"{s['id']} {s['name']}: {'?' if v is None else v}"
                              for s, v in zip(sessions, values, strict=True))
            lines.append(f"- {key}: {shown}")
    if not lines:
        return ""
    return "Host facts that differ between these sessions:\n" + "\n".join(lines) + "\n\n"
