"""A history as people and scripts read it: the versioned JSON document (`disklab.history`),
its tables, CSV, the charts (ChartSpecs drawn by core.results.svg, the one SVG writer) and an
HTML page with them. The CLI and the window's History view both lay out these."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Sequence
from typing import Any

from disklab.core.history.build import Change, Figure, History, SeriesHistory
from disklab.core.history.changes import MIN_STEP, TAIL_IOS
from disklab.core.results.charts import ChartSpec, Series
from disklab.core.results.documents import html_report
from disklab.core.results.format import (
    display_unit,
    format_delta,
    format_direction,
    format_p,
    format_value,
)
from disklab.core.results.tables import Table
from disklab.core.results.text_table import table_text
from disklab.core.vocab.jsonformat import versioned

METHOD = ("Student's t-test (pooled) between the sessions before and after each candidate "
          "point (the largest |t| of each figure), Bonferroni-corrected for every candidate "
          "point of every figure of the series; a change also moves the mean by "
          f"{100 * MIN_STEP:g} % or more, and Welch's interval of its size excludes no change; "
          f"a latency percentile is judged where a run has {TAIL_IOS} I/Os or more beyond it")


def day(t: float | None, span: float = 0.0) -> str:
    """A session's date as a history shows it: '12 Nov 2026 14:05'; on an axis spanning
    `span` seconds, as much as tells its ticks apart: the date alone over weeks, the time to
    the second within two hours."""
    if not t:
        return ""
    if span > 14 * 86400:
        spelt = "%d %b %Y"
    elif 0 < span < 2 * 3600:
        spelt = "%H:%M:%S"
    else:
        spelt = "%d %b %Y %H:%M"
    return time.strftime(spelt, time.localtime(t))


def change_text(s: SeriesHistory, c: Change) -> str:
    """'fio read rw=read -80.1 % (95 % CI -82.0 … -78.1 %, p < 0.001) between 12 Nov 2026 14:05
    and 19 Nov 2026 14:05: read_ahead_kb 2560 to 4' — one line a person reads."""
    st = c.step
    ci = f"CI {st.pct_low:+.1f} … {st.pct_high:+.1f} %, "
    a, b = s.sessions[c.before], s.sessions[c.after]
    return (f"{c.label} {format_delta(st.pct)} ({ci}{format_p(st.p_adjusted)} corrected) "
            f"between {day(a['started'])} and {day(b['started'])} (sessions {a['id']} and "
            f"{b['id']}): {c.changed_line}")


def _session_json(s: dict[str, Any]) -> dict[str, Any]:
    return {"id": s["id"], "uuid": s["uuid"], "name": s["name"], "started": s["started"]}


def _figure_json(s: SeriesHistory, f: Figure) -> dict[str, Any]:
    return {"key": f.key, "label": f.label, "metric": f.metric, "unit": f.unit,
            "better": "higher" if f.higher_is_better else "lower", "headline": f.headline,
            "not_judged": f.not_judged,
            "points": [{"session": s.sessions[p.session]["id"], "mean": p.mean,
                        "ci_low": p.low, "ci_high": p.high, "n": p.n} for p in f.points]}


def _change_json(s: SeriesHistory, c: Change) -> dict[str, Any]:
    st = c.step
    return {"figure": c.figure, "label": c.label, "unit": c.unit, "pct": st.pct,
            "pct_ci_low": st.pct_low, "pct_ci_high": st.pct_high, "p": st.p,
            "p_corrected": st.p_adjusted, "mean_before": st.before, "mean_after": st.after,
            "n_before": st.n_before, "n_after": st.n_after,
            "worse": c.worse, "between": [_session_json(s.sessions[c.before]),
                                          _session_json(s.sessions[c.after])],
            "what_changed": [{k: d[k] for k in ("fact", "before", "after")}
                             for d in c.what_changed],
            "what_changed_text": c.changed_line, "text": change_text(s, c)}


def history_json(h: History) -> dict[str, Any]:
    """The `disklab.history` document: each series with its sessions, figures (points) and
    `changes` (empty when nothing changed)."""
    return versioned("disklab.history", {
        "ref": h.ref, "alpha": h.alpha, "method": METHOD,
        "series": [{
            "plan": s.key.plan, "plan_name": s.plan_name, "target": s.target,
            "target_identity": s.key.target, "host": s.host_name, "host_id": s.key.host,
            "this_host": s.this_host, "tests": s.tests,
            "sessions": [_session_json(x) for x in s.sessions],
            "figures": [_figure_json(s, f) for f in s.figures],
            "changes": [_change_json(s, c) for c in s.changes],
        } for s in h.series]})


def heading(s: SeriesHistory) -> str:
    """'plan' on target, on host: N sessions, first to last."""
    span = (f"{day(s.sessions[0]['started'])} to {day(s.sessions[-1]['started'])}"
            if s.sessions else "no complete session")
    return (f"{s.plan_name!r} on {s.target}, host {s.host_words}: {len(s.sessions)} "
            f"session(s), {span}")


def shown_figures(s: SeriesHistory, all_metrics: bool = False) -> list[Figure]:
    """The figures a table shows: the headline ones (all with `all_metrics`), and any that
    changed."""
    changed = {c.figure for c in s.changes}
    return [f for f in s.figures if all_metrics or f.headline or f.key in changed]


def figure_table(s: SeriesHistory, f: Figure) -> Table:
    """One figure session by session: the mean, its interval over the session's repeats and
    n, the first session after a change marked with the change's size."""
    marks = {c.after: c for c in s.changes if c.figure == f.key}
    rows, classes = [], []
    for p in f.points:
        sess = s.sessions[p.session]
        ci = ("" if p.low is None or p.high is None
              else f"{format_value(p.low, f.unit)} … {format_value(p.high, f.unit)}")
        c = marks.get(p.session)
        mark = "" if c is None else f"{'▼' if c.worse else '▲'} {format_delta(c.step.pct)}"
        rows.append((day(sess["started"]), str(sess["id"]), format_value(p.mean, f.unit), ci,
                     str(p.n), mark))
        classes.append(("", "", "", "", "", "" if c is None else
                        ("num worse" if c.worse else "num better")))
    judged = f"; {f.not_judged}" if f.not_judged else ""
    return Table(caption=f"{f.label} ({format_direction(f.higher_is_better)}{judged})",
                 header=TABLE_HEADER, rows=tuple(rows), classes=tuple(classes), wrap=())


TABLE_HEADER = ("date", "session", "mean", "95 % CI of the mean", "n", "change")


def changes_lines(s: SeriesHistory) -> list[str]:
    """The changes found, else that none was; and how many percentiles were not judged."""
    lines = ([change_text(s, c) for c in s.changes] if s.changes
             else [f"no change found ({s.tests} candidate points tested)"])
    unjudged = [f.label for f in s.figures if f.not_judged]
    if unjudged:
        more = f" and {len(unjudged) - 3} more" if len(unjudged) > 3 else ""
        lines.append(f"not judged ({len(unjudged)} latency percentile(s): a run has fewer than "
                     f"{TAIL_IOS} I/Os beyond them): {'; '.join(unjudged[:3])}{more}")
    return lines


def history_text(h: History, all_metrics: bool = False, width: int = 0) -> str:
    """The terminal's history: each series' heading and changes, then each figure shown."""
    out = []
    for s in h.series:
        out.append(heading(s))
        out += [f"  change: {line}" if i < len(s.changes) else f"  {line}"
                for i, line in enumerate(changes_lines(s))]
        for f in shown_figures(s, all_metrics):
            t = figure_table(s, f)
            out += ["", t.caption, table_text(t, width).rstrip("\n")]
        out.append("")
    out.append(f"changes found by {METHOD}; alpha {h.alpha:g} for each series")
    return "\n".join(out) + "\n"


def history_csv(h: History) -> str:
    """One row per series, figure and session: long form, for a spreadsheet's pivot."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["plan", "host", "target", "figure", "metric", "unit", "better", "session",
                "started", "mean", "ci_low", "ci_high", "n", "change_pct", "change_p",
                "what_changed"])
    for s in h.series:
        marks = {(c.figure, c.after): c for c in s.changes}
        for f in s.figures:
            for p in f.points:
                sess = s.sessions[p.session]
                c = marks.get((f.key, p.session))
                w.writerow([s.plan_name, s.host_name, s.target, f.label, f.metric, f.unit,
                            "higher" if f.higher_is_better else "lower", sess["id"],
                            day(sess["started"]), repr(p.mean), _num(p.low), _num(p.high),
                            p.n, "" if c is None else f"{c.step.pct:.2f}",
                            "" if c is None else f"{c.step.p_adjusted:.3g}",
                            "" if c is None else c.changed_line])
    return buf.getvalue()


def _num(v: float | None) -> str:
    return "" if v is None else repr(v)


def chart_spec(s: SeriesHistory, f: Figure) -> ChartSpec:
    """One figure over time: dates on x, the means with their intervals, each change a
    marker between its two sessions."""
    shown, div = display_unit(f.unit)
    first = day(s.sessions[f.points[0].session]["started"]) if f.points else ""
    xs = tuple(float(s.sessions[p.session]["started"] or 0.0) for p in f.points)
    ys = tuple(p.mean / div for p in f.points)
    err = tuple(0.0 if p.high is None else (p.high - p.mean) / div for p in f.points)
    markers = []
    for c in s.changes:
        if c.figure == f.key:
            a, b = (float(s.sessions[i]["started"] or 0.0) for i in (c.before, c.after))
            markers.append(((a + b) / 2, format_delta(c.step.pct)))
    span = (max(xs) - min(xs)) if xs else 0.0
    ticks = tuple((x, day(x, span)) for x in xs)
    return ChartSpec(
        title=f"{f.label} over time", kind="line", x_label=f"session start (from {first})",
        y_label=shown, series=(Series(f.label, xs, ys, err),), markers=tuple(markers),
        note=f"{s.plan_name} on {s.target}, host {s.host_words}; whiskers: the 95 % "
             "confidence interval of each session's mean; dashed: a change found",
        better=format_direction(f.higher_is_better), x_ticks=ticks)


def chart_specs(h: History, all_metrics: bool = False) -> list[ChartSpec]:
    return [chart_spec(s, f) for s in h.series for f in shown_figures(s, all_metrics)]


def history_html(h: History, all_metrics: bool = False) -> str:
    tables = [figure_table(s, f) for s in h.series for f in shown_figures(s, all_metrics)]
    changes = Table(caption="Changes found", header=("series", "change"),
                    rows=tuple((s.plan_name, line) for s in h.series
                               for line in changes_lines(s)),
                    note=f"found by {METHOD}; alpha {h.alpha:g} for each series")
    return html_report(f"DiskLab history: {h.ref}", facts=_facts(h.series),
                       tables=[changes, *tables], charts=chart_specs(h, all_metrics))


def _facts(series: Sequence[SeriesHistory]) -> list[tuple[str, str]]:
    return [(f"series {i + 1}", heading(s)) for i, s in enumerate(series)]
