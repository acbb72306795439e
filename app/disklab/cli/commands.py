"""The subcommands of `disklab`, each a function of the parsed arguments returning an exit code."""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from disklab.cli import gui_cmd
from disklab.cli.output import TerminalView, event_json, print_results, print_table
from disklab.core import tools
from disklab.core.errors import DisklabError, LibraryError, PlanError, PrivilegeError, Problem
from disklab.core.events import Notice
from disklab.core.fs.commands import (
    command_line,
    preview_device,
    preview_mountpoint,
    setup_commands,
)
from disklab.core.library import Library
from disklab.core.model import Plan
from disklab.core.plan import CheckedPlan, load_plan, parse_plan
from disklab.core.results.charts import session_charts, thinned_samples
from disklab.core.results.documents import (
    SESSION_FORMATS,
    comparison_text,
    session_json,
    write_session,
)
from disklab.core.results.svg import write_svgs
from disklab.core.runner import plan_runs, tool_versions
from disklab.core.session import (
    PRESETS,
    RecordedRun,
    library_path,
    summarize,
    summary_text,
    tool_rows,
)
from disklab.core.tools.base import ToolOutput

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_CANCELLED = 0, 1, 2, 130


def _library_path(args: argparse.Namespace) -> Path:
    """--library, else $DISKLAB_LIBRARY, else the XDG default (core.session.library_path)."""
    return library_path(getattr(args, "library", None))


def _open_library(args: argparse.Namespace) -> Library:
    return Library.open(_library_path(args))


def _load(args: argparse.Namespace, target: str | None = None) -> CheckedPlan:
    return load_plan(args.plan, target_dir=target or getattr(args, "target", None),
                     library=str(_library_path(args)))


class _CancelOnSignal:
    """SIGINT/SIGTERM set a flag the runner checks; a second SIGINT interrupts at once."""

    def __init__(self) -> None:
        self.flag = threading.Event()
        self._old: dict[int, Any] = {}

    def __enter__(self) -> threading.Event:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old[sig] = signal.signal(sig, self._handle)
        return self.flag

    def _handle(self, signum: int, frame: object) -> None:
        if self.flag.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.flag.set()

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


def _execute(checked: CheckedPlan, library: Library, as_json: bool) -> int:
    """Run a checked plan, recording every event (core.session.RecordedRun); returns the exit
    code. A library that cannot be written once the run has started (its disk full, an I/O
    error) stops the run as a failure (exit 1): the plan was good, the machine failed it."""
    try:
        return _record(checked, library, as_json)
    except LibraryError as e:
        print(f"disklab: {e}; the run was stopped", file=sys.stderr)
        return EXIT_FAILED


def _record(checked: CheckedPlan, library: Library, as_json: bool) -> int:
    warnings = tuple(str(w) for w in checked.warnings)
    view = None if as_json else TerminalView(sys.stderr)
    with _CancelOnSignal() as cancel, RecordedRun(checked.plan, library, warnings=warnings,
                                                  cancel=cancel, password=_ask_password) as run:
        for event in run:
            if view is not None:
                view.show(event)
            elif isinstance(event, Notice) and run.session_id is None:
                # a cleanup before the session: said on stderr, not one of the session's events
                print(f"disklab: {event.message}", file=sys.stderr)
            else:
                print(json.dumps(event_json(event)), flush=True)
    status = run.status or "failed"
    if view is not None and run.session_id is not None:
        view.close()
        print(f"\nsession {run.session_id}: {checked.plan.name} ({status})")
        print_results(library.results(run.session_id))
    if status == "cancelled":
        return EXIT_CANCELLED
    return EXIT_OK if status == "finished" else EXIT_FAILED


def _confirm_destroy(checked: CheckedPlan, yes: str | None) -> None:
    """A format or raw device target destroys a device's data: the user types its path (or
    --yes-destroy names it)."""
    target = checked.plan.target
    if not target.destructive or yes == target.path:
        return
    key = f"target.{target.kind}"
    what = ("formatting" if target.kind == "format" else "raw writes to")
    if yes is not None or not sys.stdin.isatty():
        raise PlanError([Problem(key, f"{what} {target.path} destroys its data: confirm with "
                                 f"--yes-destroy {target.path}")])
    doing = ("format {} once per configuration" if target.kind == "format"
             else "write to {} directly").format(target.path)
    print(f"DiskLab will {doing}; everything on it is lost.\n  identity: {target.confirm}",
          file=sys.stderr)
    typed = input(f"Type {target.path} to go on: ").strip()
    if typed != target.path:
        raise PlanError([Problem(key, "not confirmed: nothing was changed")])


def _ask_password() -> str:
    """The sudo password for the privileged helper, asked once per session on the terminal."""
    if not sys.stdin.isatty():
        raise PrivilegeError("sudo needs a password and there is no terminal to ask it on: "
                             "run DiskLab as root, or allow it without a password (NOPASSWD)")
    return getpass.getpass("[disklab] sudo password for the privileged helper: ")


def run(args: argparse.Namespace) -> int:
    checked = _load(args)
    _confirm_destroy(checked, getattr(args, "yes_destroy", None))
    with _open_library(args) as library:
        return _execute(checked, library, args.json)


def plan_validate(args: argparse.Namespace) -> int:
    """The plan's verdict as the Test matrix page shows it: the summary line (core.session),
    then each tool the plan uses, as the page's tool list names it, then the warnings."""
    summary = summarize(_load(args))
    print(f"{args.plan}: valid")
    print(summary_text(summary))
    for row in summary.tools:
        print(f"tool: {row.label}" + ("" if row.installed else f" ({row.install_hint})"))
    for w in summary.warnings:
        print(f"warning: {w}")
    return EXIT_OK


def plan_show(args: argparse.Namespace) -> int:
    checked = _load(args)
    plan = checked.plan
    print(f"plan {plan.name!r}: target {plan.target.path}, repeats {plan.repeats}")
    for w in checked.warnings:
        print(f"warning: {w}")
    _show_setup(plan)
    for run in plan_runs(plan):
        if run.repeat != 1:
            continue
        print(f"\n[{run.case.index + 1}] {run.case.id}  {run.case.config} | {run.case.title()}")
        for step in run.command.prepare:
            print("  prepare: " + command_line(step))
        print("  run:     " + command_line(run.command.argv))
    return EXIT_OK


def _show_setup(plan: Plan) -> None:
    """What applying each configuration runs as root (image and format targets): the commands
    of setup_commands, as the Configurations page previews them."""
    if plan.target.kind not in ("image", "format"):
        return
    device = preview_device(plan.target.kind, plan.target.path)
    mountpoint = preview_mountpoint()
    for config in plan.configs:
        print(f"\nconfiguration {config.label!r} on {device}:")
        if config.fs is None:
            print("  (as is: nothing is formatted)")
            continue
        for command in setup_commands(config, device, mountpoint):
            print("  setup:   " + command_line(command.argv))


def sessions(args: argparse.Namespace) -> int:
    library = _open_library(args)
    try:
        rows = library.list_sessions()
    finally:
        library.close()
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return EXIT_OK
    table = [["id", "name", "status", "started", "finished", "host"]]
    for r in rows:
        host = r.get("host") or {}
        table.append([str(r["id"]), r["name"], r["status"], _time(r.get("started")),
                      _time(r.get("finished")), str(host.get("hostname", ""))])
    print_table(table)
    return EXIT_OK


def _time(t: float | None) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t else ""


def show(args: argparse.Namespace) -> int:
    """A session's headline figures (core.results.tables), or its facts and results as JSON."""
    library = _open_library(args)
    try:
        session = library.find_session(args.session)
        if args.json:
            doc = session_json(library, session["id"], samples=False)
            print(json.dumps({"session": doc["session"], "results": doc["results"]},
                             indent=2, default=str))
            return EXIT_OK
        print(f"session {session['id']}: {session['name']} ({session['status']})")
        print_results(library.results(session["id"]))
    finally:
        library.close()
    return EXIT_OK


def export(args: argparse.Namespace) -> int:
    """`disklab export SESSION --format html|md|csv|json|svg|png -o PATH`.

    html: one self-contained file (facts, results, inline SVG charts, plan, warnings); md: the
    results table; csv/json: every figure in canonical units; svg/png: the charts, `-o` a file
    for one chart or a directory for several. Only png imports the GUI (gui_cmd).
    """
    fmt = args.format
    out = Path(args.output)
    library = _open_library(args)
    try:
        sid = int(library.find_session(args.session)["id"])
        if fmt in SESSION_FORMATS:
            write_session(library, sid, out, fmt)
            print(f"wrote {out}")
            return EXIT_OK
        if fmt not in ("svg", "png"):
            print(f"disklab: unknown format {fmt!r}", file=sys.stderr)
            return EXIT_BAD_INPUT
        specs = session_charts(library.results(sid), thinned_samples(library, sid))
    finally:
        library.close()
    if not specs:
        print(f"disklab: session {sid} has no results to chart", file=sys.stderr)
        return EXIT_FAILED
    if fmt == "png":
        return gui_cmd.write_png_charts(specs, out)
    for p in write_svgs(specs, out):
        print(f"wrote {p}")
    return EXIT_OK


def compare(args: argparse.Namespace) -> int:
    """`disklab compare S1 S2 ... [--baseline S1] [--format md|csv|json|html] [-o FILE]`.

    Expects args.sessions (ids or names, at least two), args.baseline (id, name or None: the
    first), args.format (default md), args.output (None: stdout), args.library. Needs no Qt.
    """
    refs = list(args.sessions)
    if len(refs) < 2:
        print("disklab compare: give at least two sessions", file=sys.stderr)
        return EXIT_BAD_INPUT
    fmt = getattr(args, "format", None) or "md"
    library = _open_library(args)
    try:
        ids = [int(library.find_session(r)["id"]) for r in refs]
        baseline = (int(library.find_session(args.baseline)["id"])
                    if getattr(args, "baseline", None) else ids[0])
        if baseline not in ids:
            ids.insert(0, baseline)
        text = comparison_text(library, ids, baseline, fmt)
    finally:
        library.close()
    output = getattr(args, "output", None)
    if output:
        Path(output).write_text(text, encoding="utf-8")
        print(f"wrote {output}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def tools_cmd(args: argparse.Namespace) -> int:
    found = tool_rows()
    versions = tool_versions({r.name for r in found})
    rows = [{"tool": r.name, "title": r.title, "installed": r.installed, "path": r.path,
             "version": versions.get(r.name) if r.installed else None, "package": r.package,
             "capabilities": dataclasses.asdict(tools.get_adapter(r.name).capabilities)}
            for r in found]
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    table = [["tool", "installed", "version", "path / how to install"]]
    for r in rows:
        where = r["path"] or f"apt install {r['package']}"
        table.append([r["tool"], "yes" if r["installed"] else "no", r["version"] or "", where])
    print_table(table)
    return EXIT_OK


def _detect(text: str) -> str | None:
    for name in ("fio", "bonnie", "iozone", "dd"):
        if tools.get_adapter(name).sniff(text):
            return name
    return None


def import_cmd(args: argparse.Namespace) -> int:
    library = _open_library(args)
    problems: list[Problem] = []
    imported: list[dict[str, Any]] = []
    try:
        for name in args.files:
            path = Path(name)
            try:
                text = path.read_bytes().decode("utf-8", errors="replace")
            except OSError as e:
                problems.append(Problem(name, f"cannot read: {e.strerror}"))
                continue
            tool = args.tool or _detect(text)
            if tool is None:
                problems.append(Problem(name, "not recognised as iozone, fio, bonnie++ or dd "
                                              "output (use --tool to say which)"))
                continue
            adapter = tools.get_adapter(tool)
            output = ToolOutput(stdout=text, stderr=text if tool == "dd" else "")
            try:
                metrics = adapter.parse_result(output, {})
            except DisklabError as e:
                problems.append(Problem(name, str(e)))
                continue
            sid = library.import_session(
                name=args.session or path.name, tool=tool, config=args.config,
                source_path=str(path.resolve()), transcript=text, metrics=metrics, params={},
                host={"imported_from": str(path.resolve())},
            )
            imported.append({"file": name, "tool": tool, "session": sid,
                             "metrics": len(metrics)})
            if not args.json:
                print(f"{name}: {tool}, {len(metrics)} figures -> session {sid}")
    finally:
        library.close()
    if args.json:
        print(json.dumps({"imported": imported,
                          "problems": [str(p) for p in problems]}, indent=2))
    for p in problems:
        print(f"disklab import: {p}", file=sys.stderr)
    return EXIT_BAD_INPUT if problems else EXIT_OK


def start(args: argparse.Namespace) -> int:
    """What the README's run command starts: the desktop window when there is a display;
    without one, the quick preset with the built-in engine in a temporary directory, then the
    results table (and how to open the window)."""
    if gui_cmd.has_display():
        return gui_cmd.gui(args)
    print("No display (DISPLAY and WAYLAND_DISPLAY are unset): running the quick preset "
          "headless. On a desktop, `make run` (or `disklab gui`) opens the window.")
    preset = PRESETS / "quick.toml"
    base = "/var/tmp" if os.path.isdir("/var/tmp") else None
    work = tempfile.mkdtemp(prefix="disklab-quick-", dir=base)
    try:
        args.plan = str(preset)
        try:
            checked = _load(args, target=work)
        except PlanError as e:
            if not any(p.key.endswith(".direct") for p in e.problems):
                raise
            print(f"note: {work} refuses O_DIRECT; running buffered", file=sys.stderr)
            text = preset.read_text().replace("direct = true", "direct = false")
            checked = parse_plan(text, path=str(preset), target_dir=work,
                                 library=str(_library_path(args)))
        print(f"DiskLab quick look: built-in engine in {work} (library {_library_path(args)})")
        with _open_library(args) as library:
            return _execute(checked, library, as_json=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)

