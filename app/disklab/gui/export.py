"""Exports from the window (and `disklab export/compare` through cli.gui_cmd).

Tables and HTML are Qt-free (core.charts, core.report); PNG and SVG charts are drawn by
pyqtgraph offscreen in a ChartView so that the file looks like the window.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from disklab.core import charts
from disklab.core.charts import ChartSpec, Comparison


def write_chart(spec: ChartSpec, path: str | Path, width: int = 1000, height: int = 560) -> Path:
    """One chart to PNG or SVG (by extension) through an offscreen pyqtgraph widget."""
    from disklab.gui.plots import ChartView

    view = ChartView()
    view.resize(width, height)
    view.show_spec(spec)
    try:
        return view.export(path)
    finally:
        view.deleteLater()


def write_charts(specs: Sequence[ChartSpec], out: str | Path, fmt: str) -> list[Path]:
    """Several charts: `out` is a file (one chart) or a directory (one file per chart)."""
    out = Path(out)
    if len(specs) == 1 and out.suffix:
        return [write_chart(specs[0], out)]
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, spec in enumerate(specs, start=1):
        paths.append(write_chart(spec, out / f"{i:02d}-{spec.slug()}.{fmt}"))
    return paths


def thinned_samples(lib: Any, session_id: int, max_points: int = 4000
                    ) -> list[dict[str, Any]]:
    """The throughput samples, at most `max_points` per series (every n-th)."""
    samples: list[dict[str, Any]] = []
    for name in charts.THROUGHPUT_SERIES:
        rows = lib.samples(session_id, series=name)
        samples += rows[::max(1, len(rows) // max_points)]
    return samples


def write_session_html(lib: Any, session_id: int, path: str | Path) -> Path:
    session, results = lib.session(session_id), lib.results(session_id)
    samples = thinned_samples(lib, session_id)
    path = Path(path)
    path.write_text(charts.session_html(session, results, samples), encoding="utf-8")
    return path


def write_session_csv(lib: Any, session_id: int, path: str | Path) -> Path:
    from disklab.core import report

    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as fp:
        report.write_csv(lib, session_id, fp)
    return path


def write_session_markdown(lib: Any, session_id: int, path: str | Path) -> Path:
    path = Path(path)
    session = lib.session(session_id)
    table = charts.results_html_table(lib.results(session_id))
    path.write_text(f"# Session {session['id']}: {session['name']} ({session['status']})\n\n"
                    + charts.table_markdown(table), encoding="utf-8")
    return path


def session_charts(lib: Any, session_id: int, max_points: int = 4000) -> list[ChartSpec]:
    """Results charts and the throughput over time, the time series thinned to `max_points`
    per series (a run of hours has ~10^5 samples a series; a chart shows a few thousand)."""
    return charts.session_charts(lib.results(session_id),
                                 thinned_samples(lib, session_id, max_points))


def comparison_for(lib: Any, session_ids: Sequence[int], baseline: int | str | None,
                   all_metrics: bool = True) -> tuple[Comparison, list[dict[str, Any]]]:
    """The comparison of sessions (rows named 'id name' or 'id name / config'). `baseline` is a
    session id (its first row) or a row's label; None: the first row."""
    sessions = [lib.session(sid) for sid in session_ids]
    labelled = []
    base_label = baseline if isinstance(baseline, str) else None
    for s in sessions:
        label = f"{s['id']} {s['name']}"
        if s["id"] == baseline:
            base_label = label
        labelled.append((label, lib.results(s["id"])))
    return charts.compare_results(labelled, base_label, all_metrics), sessions


def config_facts(lib: Any, sessions: Sequence[dict[str, Any]], c: Comparison
                 ) -> dict[str, dict[str, Any]]:
    """Per comparison row: the filesystem facts (as read back) and the plan's settings."""
    out: dict[str, dict[str, Any]] = {}
    for s in sessions:
        label = f"{s['id']} {s['name']}"
        host = s.get("host") or {}
        base = {}
        for key in ("filesystem", "device"):
            if isinstance(host.get(key), dict):
                base.update(charts.flatten(host[key], f"{key}."))
        applied = _applied_configs(lib, s["id"])
        for row in c.rows:
            if row == label or row.startswith(label + " / "):
                config = row.split(" / ", 1)[1] if " / " in row else None
                facts = dict(base)
                if config and config in applied:
                    facts.update(charts.flatten(applied[config], "readback."))
                elif len(applied) == 1:
                    facts.update(charts.flatten(next(iter(applied.values())), "readback."))
                out[row] = facts
    return out


def _applied_configs(lib: Any, session_id: int) -> dict[str, dict[str, Any]]:
    """ConfigApplied events' read-back per configuration label."""
    out = {}
    try:
        events = lib.events(session_id)
    except Exception:
        return out
    for e in events:
        if e.get("kind") in ("config_applied", "ConfigApplied") and e.get("config"):
            out[str(e["config"])] = dict(e.get("readback") or {})
    return out


def write_comparison(lib: Any, session_ids: Sequence[int], baseline: int | str | None,
                     path: str | Path, fmt: str, all_metrics: bool | None = None) -> Path:
    """A comparison to md, csv, json or html. Markdown and HTML are for people and hold the
    main figures only unless `all_metrics`; CSV and JSON hold everything unless told."""
    if all_metrics is None:
        all_metrics = fmt in ("csv", "json")
    c, sessions = comparison_for(lib, session_ids, baseline, all_metrics)
    path = Path(path)
    if fmt == "md":
        text = charts.comparison_markdown(c)
    elif fmt == "csv":
        text = charts.comparison_csv(c)
    elif fmt == "json":
        text = json.dumps(charts.comparison_json(c), indent=1)
    elif fmt == "html":
        diff = charts.config_diff(config_facts(lib, sessions, c))
        text = charts.comparison_html(c, sessions, diff)
    else:
        raise ValueError(f"unknown format {fmt!r} (md, csv, json, html)")
    path.write_text(text, encoding="utf-8")
    return path
