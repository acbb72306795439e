"""Files of a session or a comparison: HTML (one self-contained page with inline SVG charts),
Markdown, CSV and JSON.

The CLI and the GUI both write through here, and the tables in them come from tables.py, so a
file holds the very text the window and the terminal show. Nothing here needs Qt.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
import shlex
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from disklab.core.library import Library
from disklab.core.plan.report import session_report
from disklab.core.results.charts import (
    ChartSpec,
    comparison_charts,
    fio_log_charts,
    pivot_charts,
    session_charts,
    thinned_samples,
)
from disklab.core.results.compare import (
    BASELINE,
    SIGNIFICANT,
    Comparison,
    better_is_higher,
    comparison_for,
    config_diff,
    config_facts,
    flatten,
    is_neutral,
)
from disklab.core.results.format import (
    format_direction,
    format_excluded,
    format_fact,
    format_left_out,
    format_mean_std,
)
from disklab.core.results.limit_words import limits_text, row_verdicts, with_limits
from disklab.core.results.limits import Limit, session_limits
from disklab.core.results.partial import SessionResults, session_results
from disklab.core.results.pivot import Pivot, report_pivot
from disklab.core.results.rows import row_stats
from disklab.core.results.stats import ALPHA, cv, is_noisy, mean_interval
from disklab.core.results.svg import to_svg
from disklab.core.results.tables import (
    Table,
    cell_text,
    comparison_table,
    config_diff_table,
    pivot_cell_text,
    pivot_table,
    results_table,
)
from disklab.core.results.text_table import table_text
from disklab.core.vocab.jsonformat import versioned

SESSION_FORMATS = ("html", "md", "csv", "json")
COMPARISON_FORMATS = ("md", "csv", "json", "html")

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.better{background:#d8f0d8}td.worse{background:#f6d5d5}
pre{background:#f6f6f6;padding:.6em;overflow:auto;font-size:.85em}
.note{color:#666;font-size:.85em}figure{margin:1em 0}
details{margin:.4em 0}summary{cursor:pointer;font-weight:600}
"""


# ---- building blocks -------------------------------------------------------------------------

def when(t: float | None) -> str:
    """A time stamp as the reports write it."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t else ""


def table_html(table: Table) -> str:
    """A Table as an HTML heading, its note and the table itself."""
    e = html.escape
    out = [f"<h2>{e(table.caption)}</h2>"]
    out.extend(f'<p class="note">{e(line)}</p>' for line in table.note.splitlines())
    out.append("<table><tr>")
    out.extend(f"<th>{e(h)}</th>" for h in table.header)
    out.append("</tr>")
    for i, row in enumerate(table.rows):
        out.append("<tr>")
        for j, cell in enumerate(row):
            cls = table.classes[i][j] if table.classes and i < len(table.classes) else ""
            tip = table.tips[i][j] if table.tips and i < len(table.tips) else ""
            attr = (f' class="{e(cls)}"' if cls else "") + (f' title="{e(tip)}"' if tip else "")
            out.append(f"<td{attr}>{e(cell)}</td>")
        out.append("</tr>")
    out.append("</table>")
    return "\n".join(out)


# What Markdown reads as markup (emphasis, code, links, headings, tables, escapes); '_' only at
# a word's edge, where it can open emphasis ('block_size' stays as it is)
_MD_SPECIAL = re.compile(r"([\\`*\[\]|#~!]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
# what an HTML renderer of Markdown would read as a tag or an entity: '<' followed by what can
# open a tag ('<script>', '</b>', '<!--'), '&' followed by what can name an entity ('&amp;');
# 'p < 0.05' and 'a & b' are neither, and read as they are, in the file as on the page
_MD_HTML = re.compile(r"<[A-Za-z/!?][^<>]*>?|&#?[A-Za-z0-9]+;")


def md_escape(text: str) -> str:
    """Text as Markdown shows it literally: markup characters backslash-escaped, and what an
    HTML renderer would read as a tag or an entity ('<script>', '&amp;') written as entities;
    one line (a table cell never splits)."""
    text = _MD_HTML.sub(lambda m: html.escape(m[0], quote=False), str(text).replace("\n", " "))
    return _MD_SPECIAL.sub(r"\\\1", text)


def table_markdown(table: Table) -> str:
    """A Table as Markdown (for an experiment's README, a mail, a ticket), every cell and note
    escaped (md_escape) so a name never becomes markup and a cell never splits; its note
    follows as a paragraph, so the document still starts with the table a script may look
    for."""
    lines = ["| " + " | ".join(map(md_escape, table.header)) + " |",
             "|" + "---|" * len(table.header)]
    lines += ["| " + " | ".join(map(md_escape, row)) + " |" for row in table.rows]
    for line in table.note.splitlines():
        lines += ["", md_escape(line)]
    return "\n".join(lines) + "\n"


def html_report(title: str, facts: Sequence[tuple[str, str]], tables: Sequence[Table],
                charts: Sequence[ChartSpec], sections: Sequence[tuple[str, str]] = (),
                generator: str = "DiskLab", evidence: Sequence[Table] = ()) -> str:
    """One self-contained HTML page, in the order a reader wants it: the summary tables, the
    charts (inline SVG), then the evidence, each part collapsible (<details>): the facts,
    `evidence` tables and the preformatted `sections` (argv, read-back, plan, transcripts)."""
    e = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{e(title)}</title><style>{_CSS}</style></head><body>",
           f"<h1>{e(title)}</h1>"]
    out.extend(table_html(t) for t in tables)
    if charts:
        out.append("<h2>Charts</h2>")
        for spec in charts:
            out.append(f"<figure>{to_svg(spec)}</figure>")
    if facts or evidence or sections:
        out.append("<h2>Evidence</h2>")
    if facts:
        out.append("<details><summary>Facts</summary><table>")
        for k, v in facts:
            out.append(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>")
        out.append("</table></details>")
    for t in evidence:
        out.append(f"<details><summary>{e(t.caption)}</summary>{table_html(t)}</details>")
    for heading, text in sections:
        out.append(f"<details><summary>{e(heading)}</summary><pre>{e(text)}</pre></details>")
    out.append(f'<p class="note">Written by {e(generator)} on {when(time.time())}.</p>'
               "</body></html>")
    return "\n".join(out)


# ---- a session -------------------------------------------------------------------------------

def session_facts(session: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A session's facts for the top of a report: id, status, times, host, tags, notes."""
    facts = [("session", f"{session.get('id')}: {session.get('name', '')}"),
             ("status", str(session.get("status", ""))),
             ("started", when(session.get("started"))),
             ("finished", when(session.get("finished"))),
             ("repeats", str(session.get("repeats", "")))]
    for key, value in flatten(session.get("host") or {}).items():
        facts.append((f"host.{key}", format_fact(value)))
    if session.get("tags"):
        facts.append(("tags", ", ".join(session["tags"])))
    if session.get("notes"):
        facts.append(("notes", str(session["notes"])))
    return facts


READBACK_SKIPPED = ("raw", "commands", "config", "errors", "mismatches")


def config_sections(events: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """One section per configuration a session applied, as the studies printed theirs: the
    mkfs/mount/setra lines as they ran, then what the kernel and the filesystem reported back
    (and what differed from what was asked)."""
    out = []
    for ev in events:
        if ev.get("kind") != "ConfigApplied":
            continue
        rb = ev.get("readback") or {}
        lines = [f"# {shlex.join(map(str, argv))}" for argv in rb.get("commands") or []
                 if isinstance(argv, list | tuple)]
        lines += [f"{k}: {format_fact(v)}" for k, v in flatten(
            {k: v for k, v in rb.items() if k not in READBACK_SKIPPED}).items()]
        lines += [f"MISMATCH: {m}" for m in ev.get("mismatches") or []]
        lines += [f"could not read: {m}" for m in rb.get("errors") or []]
        out.append((f"Configuration: {ev.get('config')}", "\n".join(lines)))
    return out


def session_html(session: Mapping[str, Any], results: SessionResults,
                 samples: Sequence[Mapping[str, Any]] = (),
                 evidence: Sequence[tuple[str, str]] = (),
                 limits: Mapping[str, Sequence[Limit]] | None = None,
                 more_charts: Sequence[ChartSpec] = ()) -> str:
    """A session as one self-contained HTML file: its pivot (the plan's [report] table, else
    configuration x test) and the pivot's charts first, then the full results table and the
    charts over time and over a swept parameter; the evidence after, collapsed: facts,
    warnings, the plan, and `evidence` (commands, read-back). The charts draw the means the
    tables show (incomplete runs left out unless included)."""
    sections = []
    if session.get("warnings"):
        sections.append(("Warnings", "\n".join(map(str, session["warnings"]))))
    if session.get("plan_text"):
        sections.append(("Plan", str(session["plan_text"])))
    sections += list(evidence)
    rows = with_limits(results.rows, limits) if limits is not None else results.rows
    report = session_report(session.get("plan_text"))
    pivot = report_pivot(rows, report)
    charts = pivot_charts(pivot)
    # then the lines over time and over a swept parameter the pivot does not draw already,
    # and the latency percentiles (the bars of every figure are the pivot's)
    charts += [c for c in session_charts(results.rows, samples)
               if (c.kind == "line" and not any(c.title.endswith(f" {d.title}") for d in charts))
               or c.title.startswith("latency percentiles")]
    charts += list(more_charts)  # an imported run's own logs over time (fio_log_charts)
    title = f"DiskLab session {session.get('id')}: {session.get('name', '')}"
    if report is not None and report.title:  # which table of the study the pivot is
        title += f" — {report.title}"
    return html_report(title, session_facts(session),
                       [pivot_table(pivot), results_table(results, limits=limits)],
                       charts, sections)


def session_evidence(lib: Library, session_id: int) -> list[tuple[str, str]]:
    """What a report keeps as evidence: each run's command line (argv as a shell would read
    it), and for each configuration its setup commands as they ran and its read-back (what the
    kernel applied, and what differed from what was asked)."""
    lines = []
    for r in lib.runs(session_id):
        argv = r.get("argv") or []
        lines.append(f"{r['case_id']} repeat {r['repeat']} ({r['status']}): "
                     f"{shlex.join(map(str, argv))}")
    out = [("Commands", "\n".join(lines))] if lines else []
    return out + config_sections(lib.events(session_id))


def session_markdown(session: Mapping[str, Any], results: SessionResults,
                     limits: Mapping[str, Sequence[Limit]] | None = None) -> str:
    """A session's results as a Markdown heading and table."""
    return (f"# Session {session['id']}: {md_escape(session['name'])} "
            f"({session['status']})\n\n"
            + table_markdown(results_table(results, limits=limits)))


def write_session_csv(lib: Library, session_id: int, fp: TextIO,
                      include_partial: bool = False) -> None:
    """One row per result, canonical units for spreadsheets: config, tool, test, parameters
    (JSON), metric, unit, which way is better, n, mean, stddev and CV (over the runs counted),
    every per-repeat value separated by ';', the repeats left out of the mean ('2 cancelled'),
    notes, and `shown`: the mean ± stddev as every table writes it. After `params`, one
    column per parameter whose value differs between rows (block_size, iodepth...), so a
    spreadsheet filters on it. Lines end with CRLF (RFC 4180), in a file and on stdout."""
    w = csv.writer(fp, lineterminator="\r\n")
    rows = session_results(lib, session_id, include_partial).rows
    varying = varying_params(rows)
    header = ["session", "config", "tool", "test", "params", "metric", "unit", "better", "n",
              "mean", "stddev", "cv", "values", "excluded", "notes", "shown", "limited_by"]
    w.writerow(header[:5] + [k if k not in header else f"param_{k}" for k in varying]
               + header[5:])
    limits = session_limits(lib, session_id)
    for r in rows:
        w.writerow([session_id, r["config"], r["tool"], r["test"],
                    json.dumps(r["params"], sort_keys=True),
                    *(param_cell((r["params"] or {}).get(k)) for k in varying),
                    r["metric"], r["unit"],
                    _better(r), r["n"], r["mean"], r["stddev"], _num(_cv(r)),
                    ";".join("" if v is None else repr(v) for v in r["values"]),
                    ";".join(f"{e['repeat']} {e['status']}" for e in r.get("excluded") or []),
                    "; ".join(r.get("notes") or []), shown(r),
                    limits_text(row_verdicts(limits, r))])


def varying_params(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The parameter keys whose value is not the same in every row (missing counts as a
    value), sorted: the columns a spreadsheet needs to filter on."""
    seen: dict[str, set[str]] = {}
    for r in rows:
        for k, v in (r.get("params") or {}).items():
            seen.setdefault(k, set()).add(json.dumps(v, sort_keys=True, default=str))
    return sorted(k for k, values in seen.items()
                  if len(values) > 1 or any(k not in (r.get("params") or {}) for r in rows))


def param_cell(value: Any) -> str:
    """One parameter in its own CSV cell: numbers and text as they are, lists comma joined."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def _better(row: Mapping[str, Any]) -> str:
    """'higher', 'lower' or 'neither' (bytes moved): which way the row's figure is better."""
    unit = str(row.get("unit", ""))
    return _way(better_is_higher(str(row.get("metric", "")), unit), unit)


def _way(higher: bool, unit: str) -> str:
    """'neither' for bytes moved (is_neutral), else which way `higher` says is better."""
    return "neither" if is_neutral(unit) else "higher" if higher else "lower"


def _cv(row: Mapping[str, Any]) -> float | None:
    mean, std, n = row_stats(row)
    return cv(mean, std) if n >= 2 else None


def excluded_summary(results: SessionResults) -> dict[str, Any]:
    """The runs that did not complete, for a JSON document: how many, per status, whether
    their figures are in the means, each run, and the sentence every surface shows."""
    reasons = results.reasons()
    return {"runs": sum(reasons.values()), "reasons": reasons, "included": results.included,
            "incomplete": [{"case_id": r.case_id, "repeat": r.repeat, "status": r.status,
                            "error": r.error} for r in results.incomplete],
            "text": format_excluded(reasons, results.included)}


def shown(row: Mapping[str, Any]) -> str:
    """A results row's mean ± stddev as the tables write it (CSV and JSON carry it next to the
    canonical numbers, so a file says what the window and the terminal said)."""
    mean, std, n = row_stats(row)
    return format_mean_std(mean, std, n, str(row.get("unit", "")))


def session_json(lib: Library, session_id: int, samples: bool = True,
                 include_partial: bool = False) -> dict[str, Any]:
    """A whole session as one document: facts, results (each with its `shown` text, CV, noise
    flag, direction and the values left out of its mean), the runs left out (`excluded`),
    runs, events, and the samples; stamped with its format name and version."""
    results = session_results(lib, session_id, include_partial)
    limits = session_limits(lib, session_id)
    rows = []
    for r in results.rows:
        mean, std, n = row_stats(r)
        rows.append({**r, "cv": _cv(r), "noisy": is_noisy(mean, std, n), "better": _better(r),
                     "shown": shown(r), "limited_by": [
                         x.to_json() for x in row_verdicts(limits, r)]})
    doc: dict[str, Any] = {
        "session": lib.session(session_id),
        "results": rows,
        "excluded": excluded_summary(results),
        "runs": lib.runs(session_id),
        "events": lib.events(session_id),
    }
    if samples:
        doc["samples"] = lib.samples(session_id)
    return versioned("disklab.session", doc)


def write_session(lib: Library, session_id: int, path: str | Path, fmt: str,
                  include_partial: bool = False) -> Path:
    """A session to html, md, csv or json (charts to SVG: svg.write_svgs); the figures of runs
    that did not complete count in the means only with `include_partial`."""
    path = Path(path)
    if fmt == "html":
        text = session_html(lib.session(session_id),
                            session_results(lib, session_id, include_partial),
                            thinned_samples(lib, session_id), session_evidence(lib, session_id),
                            session_limits(lib, session_id), fio_log_charts(lib, session_id))
    elif fmt == "md":
        text = session_markdown(lib.session(session_id),
                                session_results(lib, session_id, include_partial),
                                session_limits(lib, session_id))
    elif fmt == "csv":
        with path.open("w", newline="", encoding="utf-8") as fp:
            write_session_csv(lib, session_id, fp, include_partial)
        return path
    elif fmt == "json":
        text = json.dumps(session_json(lib, session_id, samples=True,
                                       include_partial=include_partial), indent=1, default=str)
    else:
        raise ValueError(f"unknown format {fmt!r} ({', '.join(SESSION_FORMATS)})")
    path.write_text(text, encoding="utf-8")
    return path


# ---- a comparison ----------------------------------------------------------------------------

def comparison_markdown(c: Comparison) -> str:
    """The comparison table in Markdown."""
    return table_markdown(comparison_table(c))


def comparison_csv(c: Comparison) -> str:
    """Long form, one line per row x column, in canonical units (for spreadsheets), and the
    cell as the comparison table writes it (`shown`)."""
    out = io.StringIO()
    w = csv.writer(out)
    keys = [k for k in CELL_KEYS if k not in ("configuration", "test", "shown")]
    w.writerow(["configuration", "test", *keys, "baseline", "shown"])
    for row in c.rows:
        for col in c.columns:
            if (row, col) not in c.cells:
                continue
            d = cell_json(c, row, col)
            d["limited_by"] = limits_text(c.limits.get((row, col), ()))
            d["notes"] = "; ".join(d["notes"])
            w.writerow([row, col, *(_csv(d[k]) for k in keys), c.baseline or "", d["shown"]])
    return out.getvalue()


def _csv(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return _num(v)
    return "" if v is None else str(v)


def _num(v: float | None) -> str:
    """A figure for a machine: the full float, canonical unit."""
    return "" if v is None else repr(float(v))


# a comparison cell's fields in JSON and CSV, in this order
CELL_KEYS = ("configuration", "test", "unit", "better", "n", "mean", "stddev", "cv", "noisy",
             "mean_ci_low", "mean_ci_high", "excluded", "excluded_why", "delta", "delta_pct",
             "delta_ci_low", "delta_ci_high", "ratio",
             "ratio_low", "ratio_high", "df", "t", "p_value", "significant", "verdict", "shown",
             "limited_by", "notes")


def cell_json(c: Comparison, row: str, col: str) -> dict[str, Any]:
    """One comparison cell as data, canonical units: the mean with n, stddev and CV; against
    the baseline the difference, its (1 - alpha) confidence interval and the ratio's, Welch's
    df, t and p, `significant` and the verdict; `better` says which way is better."""
    cell = c.cells[(row, col)]
    w = cell.test
    low, high = mean_interval(cell.mean, cell.stddev, cell.n, c.alpha)
    return {
        "configuration": row, "test": col, "unit": cell.unit,
        "better": _way(c.higher_is_better.get(col, True), cell.unit),
        "n": cell.n, "mean": cell.mean, "stddev": cell.stddev, "cv": cell.cv,
        "noisy": cell.noisy, "mean_ci_low": low, "mean_ci_high": high,
        "excluded": cell.excluded, "excluded_why": format_left_out(cell.excluded_why),
        "delta": cell.delta, "delta_pct": cell.delta_pct,
        "delta_ci_low": w.ci_low if w else None, "delta_ci_high": w.ci_high if w else None,
        "ratio": w.ratio if w else None, "ratio_low": w.ratio_low if w else None,
        "ratio_high": w.ratio_high if w else None, "df": w.df if w else None,
        "t": w.t if w else None, "p_value": w.p_value if w else None,
        "significant": cell.verdict in SIGNIFICANT, "verdict": cell.verdict,
        "shown": cell_text(c, row, col),
        "limited_by": _limits_json(c.limits.get((row, col))),
        "notes": list(cell.notes),
    }


def _limits_json(limits: Sequence[Limit] | None) -> list[dict[str, Any]] | None:
    """A cell's verdicts as data ({kind, words, evidence}), None where it was not judged."""
    return None if limits is None else [x.to_json() for x in limits]


def comparison_json(c: Comparison) -> dict[str, Any]:
    """The comparison as plain JSON data, canonical units, with its format name and version: the
    test behind the verdicts (alpha, confidence), the runs left out of the means, and every cell
    (cell_json)."""
    return versioned("disklab.comparison", {
        "baseline": c.baseline,
        "alpha": c.alpha,
        "confidence": 1.0 - c.alpha,
        "test": "Welch's t-test (unequal variances), two-sided",
        "excluded": excluded_summary(c.incomplete),
        "rows": list(c.rows),
        "columns": [{"test": col, "unit": c.units.get(col, ""),
                     "better": _way(c.higher_is_better.get(col, True), c.units.get(col, "")),
                     "direction": "neither is better" if is_neutral(c.units.get(col, ""))
                     else format_direction(c.higher_is_better.get(col, True))}
                    for col in c.columns],
        "cells": [cell_json(c, row, col) for (row, col) in c.cells],
    })


def comparison_html(c: Comparison, sessions: Sequence[Mapping[str, Any]] = (),
                    diff: Sequence[tuple[str, Mapping[str, str]]] = ()) -> str:
    """A comparison as one HTML file: the table with coloured deltas and the charts first,
    then, collapsed, the sessions' facts and the configuration values that differ."""
    facts = [(f"session {s.get('id')}", f"{s.get('name', '')} ({s.get('status', '')}, "
              f"{when(s.get('started'))})") for s in sessions]
    facts.append(("baseline", str(c.baseline)))
    if c.incomplete.incomplete:
        facts.append(("runs excluded", format_excluded(c.incomplete.reasons(),
                                                       c.incomplete.included)))
    evidence = [config_diff_table(c, diff)] if diff else []
    return html_report("DiskLab comparison", facts, [comparison_table(c)], comparison_charts(c),
                       evidence=evidence)


def compare_page_html(p: Pivot, c: Comparison, sessions: Sequence[Mapping[str, Any]] = (),
                      diff: Sequence[tuple[str, Mapping[str, str]]] = ()) -> str:
    """What the Compare page exports as its report: the pivot shown and its charts first,
    then the comparison against the baseline with its charts; the configuration values that
    differ and the sessions' facts after, collapsed."""
    facts = [(f"session {s.get('id')}", f"{s.get('name', '')} ({s.get('status', '')}, "
              f"{when(s.get('started'))})") for s in sessions]
    facts.append(("baseline", str(c.baseline)))
    evidence = [config_diff_table(c, diff)] if diff else []
    return html_report("DiskLab comparison", facts, [pivot_table(p), comparison_table(c)],
                       pivot_charts(p) + comparison_charts(c), evidence=evidence)


def write_comparison(lib: Library, session_ids: Sequence[int], baseline: int | str | None,
                     path: str | Path, fmt: str, all_metrics: bool | None = None,
                     alpha: float = ALPHA, include_partial: bool = False) -> Path:
    """A comparison to md, csv, json or html. Markdown and HTML are for people and hold the
    headline figures unless `all_metrics`; CSV and JSON hold everything unless told."""
    Path(path).write_text(comparison_text(lib, session_ids, baseline, fmt, all_metrics, alpha,
                                          include_partial), encoding="utf-8")
    return Path(path)


def comparison_text(lib: Library, session_ids: Sequence[int], baseline: int | str | None,
                    fmt: str, all_metrics: bool | None = None, alpha: float = ALPHA,
                    include_partial: bool = False) -> str:
    """The comparison document in `fmt` as text (`disklab compare` prints it): cells tested
    at `alpha`, runs that did not complete left out unless `include_partial`."""
    if fmt not in COMPARISON_FORMATS:
        raise ValueError(f"unknown format {fmt!r} ({', '.join(COMPARISON_FORMATS)})")
    if all_metrics is None:
        all_metrics = fmt in ("csv", "json")
    c, sessions = comparison_for(lib, session_ids, baseline, all_metrics, alpha,
                                 include_partial)
    if fmt == "md":
        return comparison_markdown(c)
    if fmt == "csv":
        return comparison_csv(c)
    if fmt == "json":
        return json.dumps(comparison_json(c), indent=1)
    return comparison_html(c, sessions, config_diff(config_facts(lib, sessions, c)))


# ---- a pivot ---------------------------------------------------------------------------------

PIVOT_FORMATS = ("text", "csv", "md", "html", "json")


def compared_with(p: Pivot, i: int, j: int) -> str | None:
    """The cell a compared cell was compared with, by its row and column labels ('iodepth=1 /
    numjobs=4'); None for a cell that was not compared (no baseline, or none like it)."""
    cell = p.cell(i, j)
    if cell is None or not p.baseline or cell.verdict in ("", BASELINE):
        return None
    row, column = p.rows[i], p.columns[j]
    parts = (f"{row} / {column}").split(" / ")
    keys = [*p.row_keys, *p.column_keys]
    if len(parts) == len(keys):
        parts[keys.index(p.baseline_key)] = p.baseline_value
    return " / ".join(parts)


def pivot_cell_json(p: Pivot, i: int, j: int) -> dict[str, Any] | None:
    """One pivot cell as data, canonical units: mean, stddev, n, CV, the (1 - alpha)
    confidence interval of the mean (`mean_ci_*`); compared with a baseline (Pivot.baseline),
    the difference, its interval (`delta_ci_*`), Welch's df, t and p, the verdict and the cell
    it was compared with (`compared_with`, 'iodepth=1 / numjobs=4'); `shown` as the tables
    write it."""
    cell = p.cell(i, j)
    if cell is None:
        return None
    low, high = mean_interval(cell.mean, cell.stddev, cell.n, p.alpha)
    w = cell.test
    return {
        "mean": cell.mean, "stddev": cell.stddev, "n": cell.n, "unit": cell.unit,
        "better": _way(p.higher_is_better.get(j, True), cell.unit),
        "cv": cell.cv, "noisy": cell.noisy, "mean_ci_low": low, "mean_ci_high": high,
        "excluded": cell.excluded, "excluded_why": format_left_out(cell.excluded_why),
        "delta": cell.delta, "delta_pct": cell.delta_pct,
        "delta_ci_low": w.ci_low if w else None, "delta_ci_high": w.ci_high if w else None,
        "df": w.df if w else None, "t": w.t if w else None,
        "p_value": w.p_value if w else None,
        "significant": cell.verdict in SIGNIFICANT, "verdict": cell.verdict,
        "compared_with": compared_with(p, i, j),
        "shown": pivot_cell_text(p, i, j),
        "limited_by": _limits_json(p.cell_limits.get((i, j))),
        "notes": list(cell.notes),
    }


def pivot_json(p: Pivot) -> dict[str, Any]:
    """A pivot as JSON: the row and column labels, `cells[i][j]` (None where a row has no
    figure for a column), the keys, what every cell shares; stamped with its format."""
    return versioned("disklab.pivot", {
        "row_keys": list(p.row_keys), "column_keys": list(p.column_keys),
        "added_keys": list(p.added), "common": dict(p.common), "metrics": list(p.metrics),
        "alpha": p.alpha, "baseline": p.baseline, "compared_along": p.baseline_key or None,
        "rows": list(p.rows), "columns": list(p.columns),
        "cells": [[pivot_cell_json(p, i, j) for j in range(len(p.columns))]
                  for i in range(len(p.rows))],
        "note": pivot_table(p).note,
    })


def pivot_csv(p: Pivot) -> str:
    """The pivot as a spreadsheet lays it out: one line per row label, per column label its
    mean, stddev and n in canonical units (the unit in the heading), and what limited the
    cell when its rows were judged (limit_words.with_limits)."""
    out = io.StringIO()
    w = csv.writer(out)
    judged = bool(p.cell_limits)  # a column of what limited each cell, when judged
    head = [" / ".join(p.row_keys)]
    for j, col in enumerate(p.columns):
        unit = next((c.unit for (_i, jj), c in p.cells.items() if jj == j), "")
        head += [f"{col} mean ({unit})", f"{col} stddev ({unit})", f"{col} n"]
        head += [f"{col} limited by"] if judged else []
    w.writerow(head)
    for i, row in enumerate(p.rows):
        line = [row]
        for j in range(len(p.columns)):
            cell = p.cell(i, j)
            line += ["", "", ""] if cell is None else [_num(cell.mean), _num(cell.stddev),
                                                       str(cell.n)]
            line += [limits_text(p.cell_limits.get((i, j), ()))] if judged else []
        w.writerow(line)
    return out.getvalue()


def pivot_html(p: Pivot, title: str = "DiskLab pivot",
               facts: Sequence[tuple[str, str]] = (),
               sections: Sequence[tuple[str, str]] = ()) -> str:
    """The pivot as one HTML page: the table, its charts, the evidence collapsed after."""
    return html_report(title, facts, [pivot_table(p)], pivot_charts(p), sections)


def pivot_text(p: Pivot, fmt: str, title: str = "DiskLab pivot",
               facts: Sequence[tuple[str, str]] = (),
               sections: Sequence[tuple[str, str]] = (), width: int = 0) -> str:
    """The pivot in one of PIVOT_FORMATS (text fitted to `width` columns when given)."""
    if fmt == "text":
        return table_text(pivot_table(p), width)
    if fmt == "csv":
        return pivot_csv(p)
    if fmt == "md":
        return table_markdown(pivot_table(p))
    if fmt == "json":
        return json.dumps(pivot_json(p), indent=1, default=str)
    if fmt == "html":
        return pivot_html(p, title, facts, sections)
    raise ValueError(f"unknown format {fmt!r} ({', '.join(PIVOT_FORMATS)})")
