"""`disklab export`: a session as a document, its charts, its samples, or sessions as a bundle.

`-o` means a file: no directory is made silently, parents never. Several charts go to a
directory only when `-o` names an existing one or ends with '/' (then that one directory is
made, its parent must exist). `-o -` writes a text format to standard output. A wrong path is
the user's (exit 2), a failing write the machine's (exit 1).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from disklab.cli import gui_cmd
from disklab.cli.arguments import ExportArgs, typed
from disklab.cli.output import info, report_units
from disklab.core.library import Library
from disklab.core.library.bundle import export_bundle
from disklab.core.plan.report import session_report
from disklab.core.results.charts import ChartSpec, session_charts, thinned_samples
from disklab.core.results.documents import (
    SESSION_FORMATS,
    param_cell,
    varying_params,
    write_session,
)
from disklab.core.results.partial import session_results
from disklab.core.results.svg import HEIGHT, WIDTH, to_svg
from disklab.core.vocab.errors import DisklabError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
FORMATS = (*SESSION_FORMATS, "samples", "svg", "png", "bundle")
TEXT_FORMATS = frozenset({*SESSION_FORMATS, "samples"})  # these may go to stdout (-o -)
FORMAT_HELP = ("csv, json, html, md: the session's figures; samples: its runs' time series as "
               "CSV; svg, png: its charts; bundle: whole sessions (plan, host facts, runs, "
               "events, samples, transcripts) for `disklab import` on another machine")


class OutputError(DisklabError):
    """-o names a place that cannot be written as asked (exit 2)."""


def export(args: argparse.Namespace, library: Library) -> int:
    fmt, out = args.format, str(args.output)
    if out == "-" and fmt not in TEXT_FORMATS:
        raise OutputError(f"-o -: {fmt} is not a text format; name a file")
    ids = list(dict.fromkeys(int(library.find_session(s)["id"]) for s in args.sessions))
    if fmt == "bundle":
        path = export_bundle(library, ids, _file(out))
        info(f"wrote {path} ({len(ids)} session{'s' if len(ids) > 1 else ''})")
        return EXIT_OK
    if len(ids) > 1:
        raise OutputError(f"--format {fmt} writes one session; give one (or --format bundle)")
    a = typed(ExportArgs, args)
    sid, include = ids[0], a.include_partial
    report_units(a.units,
                 session_report(library.session(sid).get("plan_text")))
    if fmt == "samples":
        return emit(out, samples_csv(library, sid))
    if fmt in SESSION_FORMATS:
        if out == "-":
            return emit(out, _session_text(library, sid, fmt, include))
        write_session(library, sid, _file(out), fmt, include_partial=include)
        info(f"wrote {out}")
        return EXIT_OK
    specs = session_charts(session_results(library, sid, include).rows,
                           thinned_samples(library, sid))
    if not specs:
        print(f"disklab: session {sid} has no results to chart", file=sys.stderr)
        return EXIT_FAILED
    return write_charts(specs, chart_paths(specs, out, fmt), fmt, a.size)


def _file(out: str) -> Path:
    """-o as one file: its directory must exist (never made here)."""
    path = Path(out).expanduser()
    if out.endswith("/") or path.is_dir():
        raise OutputError(f"-o {out}: a directory; name the file to write")
    if not path.parent.is_dir():
        raise OutputError(f"-o {out}: the directory {path.parent} does not exist")
    return path


def chart_paths(specs: Sequence[ChartSpec], out: str, fmt: str) -> list[Path]:
    """Where each chart goes: one chart to the file named (or into the directory named);
    several into a directory, which `out` must name (existing, or ending with '/')."""
    path = Path(out).expanduser()
    is_dir = path.is_dir() or out.endswith("/")
    if len(specs) == 1 and not is_dir:
        return [_file(out)]
    if not is_dir:
        raise OutputError(
            f"-o {out}: this session has {len(specs)} charts; give a directory for them (an "
            f"existing one, or a path ending with /), or --format html for one file")
    if not path.is_dir():
        if not path.parent.is_dir():
            raise OutputError(f"-o {out}: the directory {path.parent} does not exist")
        path.mkdir()
    return [path / f"{i:02d}-{spec.slug()}.{fmt}" for i, spec in enumerate(specs, start=1)]


def write_charts(specs: Sequence[ChartSpec], paths: Sequence[Path], fmt: str,
                 size: tuple[int, int] | None) -> int:
    width, height = size or (WIDTH, HEIGHT)
    if fmt == "png":
        return gui_cmd.write_png_charts(specs, paths, width, height)
    for spec, path in zip(specs, paths, strict=True):
        path.write_text(to_svg(spec, width, height), encoding="utf-8")
        info(f"wrote {path}")
    return EXIT_OK


def emit(out: str, text: str) -> int:
    """A text to standard output (-o -) or to the file -o names."""
    if out == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return EXIT_OK
    _file(out).write_text(text, encoding="utf-8")
    info(f"wrote {out}")
    return EXIT_OK


def _session_text(library: Library, sid: int, fmt: str, include: bool) -> str:
    """write_session's document as text (it writes files: one in a private directory)."""
    with tempfile.TemporaryDirectory(prefix="disklab-export-") as tmp:
        path = write_session(library, sid, Path(tmp, f"out.{fmt}"), fmt,
                             include_partial=include)
        return path.read_bytes().decode("utf-8")  # as written: CSV's CRLF kept


def samples_csv(library: Library, sid: int) -> str:
    """The session's time series, one line per point: the case, its configuration (which
    filesystem or mount a curve belongs to), its parameters (JSON, then one column per
    parameter whose value differs between cases, as the results CSV has them, so a
    spreadsheet filters on block size), the repeat, the series, seconds from that run's start
    and the value (series units: *_bps in B/s, *_ns in ns, iops in op/s)."""
    listed = library.cases(sid)
    cases = {c["case_id"]: c["params"] or {} for c in listed}
    configs = {c["case_id"]: c["config"] or "" for c in listed}
    varying = varying_params([{"params": p} for p in cases.values()])
    header = ["case_id", "config", "params", "repeat", "series", "t_s", "value"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")  # RFC 4180, as every CSV DiskLab writes
    w.writerow(header[:3] + [k if k not in header else f"param_{k}" for k in varying]
               + header[3:])
    starts = {(r["case_id"], r["repeat"]): r["started"] for r in library.runs(sid)
              if r["started"] is not None}
    cells = {case: [json.dumps(params, sort_keys=True),
                    *(param_cell(params.get(k)) for k in varying)]
             for case, params in cases.items()}
    for s in library.samples(sid):
        start = starts.setdefault((s["case_id"], s["repeat"]), s["t"])
        case = s["case_id"]
        w.writerow([case, configs.get(case, ""),
                    *cells.get(case, ["{}", *([""] * len(varying))]),
                    s["repeat"], s["series"], f"{s['t'] - start:.3f}", repr(s["value"])])
    return buf.getvalue()


def os_error_exit(e: OSError) -> int:
    """An OSError's exit code: the user's path (missing, not a directory, not allowed) 2,
    anything else (an I/O error, a full disk) 1."""
    user = (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError,
            FileExistsError)
    return EXIT_BAD_INPUT if isinstance(e, user) else EXIT_FAILED

