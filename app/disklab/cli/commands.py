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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from disklab.cli import exporting, gui_cmd, importing
from disklab.cli.arguments import (
    Args,
    CompareArgs,
    CompletionArgs,
    LibraryArgs,
    PlanArgs,
    ResumeArgs,
    RunArgs,
    SessionsArgs,
    ShowArgs,
    ToolsArgs,
    typed,
)
from disklab.cli.docs import completion, manpage
from disklab.cli.output import (
    TerminalView,
    event_json,
    host_differences,
    info,
    is_quiet,
    print_results,
    print_table,
    report_units,
    resume_lines,
    terminal_width,
)
from disklab.cli.plan_cmds import load_plan_args as _load
from disklab.core import tools
from disklab.core.installed import tool_rows
from disklab.core.library import Library
from disklab.core.plan.checks import destroyed_devices
from disklab.core.plan.parse import CheckedPlan, parse_plan
from disklab.core.plan.report import lays_out, session_report
from disklab.core.plan.schema import plan_schema_text
from disklab.core.resources import find_plan
from disklab.core.results.documents import (
    comparison_text,
    pivot_text,
    session_json,
)
from disklab.core.results.limit_words import with_limits
from disklab.core.results.limits import session_limits
from disklab.core.results.partial import session_results
from disklab.core.results.pivot import (
    NO_BASELINE,
    BaselineError,
    Layout,
    Pivot,
    PivotKeyError,
    parse_where,
    report_pivot,
)
from disklab.core.results.sessions_compared import (
    SessionsCompared,
    compare_sessions,
    find_sessions,
)
from disklab.core.results.stats import ALPHA
from disklab.core.results.tables import pivot_table
from disklab.core.results.text_table import table_text
from disklab.core.run.recorded import RecordedRun
from disklab.core.run.resume import prepare_resume
from disklab.core.run.runner import tool_versions
from disklab.core.system.directories import library_path
from disklab.core.vocab.errors import LibraryError, PlanError, PrivilegeError, Problem
from disklab.core.vocab.events import Notice
from disklab.core.vocab.jsonformat import versioned
from disklab.core.vocab.model import Plan

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_CANCELLED = 0, 1, 2, 130


def _library_path(args: argparse.Namespace | Args) -> Path:
    """--library, else $DISKLAB_LIBRARY, else the XDG default
    (core.system.directories.library_path)."""
    return library_path(typed(LibraryArgs, args).library)


# The commands that may make a library where there is none: they record something new into
# it, and say they made it. Every other command needs one that exists: a mistyped --library
# would otherwise become an empty library (or an empty file given as --library get a schema).
CREATORS = frozenset({"run", "import", "start"})


def open_library(args: argparse.Namespace | Args) -> Library:
    """The library. Only `run`, `import` and `start` create it when missing (saying so on
    stderr); for the others a missing or empty file is the user's mistake (LibraryError,
    exit 2) and is left as it is."""
    path = _library_path(args)
    exists = path.exists()
    if typed(LibraryArgs, args).command not in CREATORS:
        if not exists:
            raise LibraryError(f"no library at {path}: nothing has been recorded there (check "
                               "--library and $DISKLAB_LIBRARY)")
        if path.is_file() and path.stat().st_size == 0:
            raise LibraryError(f"{path} is an empty file, not a DiskLab library (check "
                               "--library and $DISKLAB_LIBRARY)")
    library = Library.open(path)
    if not exists and not is_quiet():
        print(f"disklab: created a new library at {path}", file=sys.stderr)
    return library


_open_library = open_library  # the name the commands below use


class _CancelOnSignal:
    """SIGINT/SIGTERM set a flag the runner checks; a second SIGINT interrupts at once.

    Whether a signal came is a plain attribute, stored before the Event is set: a second
    SIGINT can arrive while the first handler is inside Event.set(), holding its lock, and a
    handler that set the Event again there would wait for that lock for ever (two Ctrl-C
    presses back to back hung `disklab run`)."""

    def __init__(self) -> None:
        self.flag = threading.Event()
        self._signalled = False
        self._old: dict[int, Any] = {}

    def __enter__(self) -> threading.Event:
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old[sig] = signal.signal(sig, self._handle)
        return self.flag

    def _handle(self, signum: int, frame: object) -> None:
        already, self._signalled = self._signalled, True
        if already and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.flag.set()

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)


def _execute(checked: CheckedPlan, library: Library, as_json: bool) -> int:
    """Run a checked plan as a new session, recording every event (core.run.recorded.RecordedRun);
    returns the exit code."""
    warnings = tuple(str(w) for w in checked.warnings)
    return _record(lambda cancel: RecordedRun(checked.plan, library, warnings=warnings,
                                              cancel=cancel, password=_ask_password,
                                              ask=_ask_ssh),
                   library, checked.plan.name, as_json)


def _record(start: Callable[[threading.Event], RecordedRun], library: Library, name: str,
            as_json: bool) -> int:
    """Iterate the run `start` makes (a new session or a resumed one) with Ctrl-C and SIGTERM
    as its cancel, showing its events; the exit code of its end: 0 finished, 1 failed,
    130 cancelled. A library that cannot be written once the run has started (its disk full,
    an I/O error) stops the run as a failure (exit 1): the plan was good, the machine failed
    it."""
    try:
        return _show_run(start, library, name, as_json)
    except LibraryError as e:
        print(f"disklab: {e}; the run was stopped", file=sys.stderr)
        return EXIT_FAILED


def _show_run(start: Callable[[threading.Event], RecordedRun], library: Library, name: str,
              as_json: bool) -> int:
    """The run's events as --json lines, or on a terminal view (none with --quiet), then its
    results. Standard output closed under the run (`| head -1`) cancels it: exit 130."""
    view = None if as_json or is_quiet() else TerminalView(sys.stderr)
    closed = False
    with _CancelOnSignal() as cancel, start(cancel) as run:
        for event in run:
            if closed:
                continue  # cancelled: the run tears down; nobody reads its events
            try:
                _show_event(event, view, as_json, run.session_id is None)
            except BrokenPipeError:
                closed = True
                _silence_stdout()
                cancel.set()
    status = run.status or "failed"
    if closed:
        print(f"disklab: standard output was closed (a broken pipe): session "
              f"{run.session_id} {status}", file=sys.stderr)
        return EXIT_CANCELLED if status == "cancelled" else EXIT_FAILED
    if not as_json and run.session_id is not None:
        if view is not None:
            view.close()
        print(f"\nsession {run.session_id}: {name} ({status})")
        print_results(session_results(library, run.session_id),
                      limits=session_limits(library, run.session_id))
    if status == "cancelled":
        return EXIT_CANCELLED
    return EXIT_OK if status == "finished" else EXIT_FAILED


def _show_event(event: Any, view: TerminalView | None, as_json: bool, before: bool) -> None:
    """One event: a JSON line with --json, else on the view; none with --quiet. A cleanup
    notice before the session exists is no event of it: said on stderr."""
    if view is not None:
        view.show(event)
    elif isinstance(event, Notice) and before:
        print(f"disklab: {event.message}", file=sys.stderr)
    elif as_json:
        print(json.dumps(event_json(event)), flush=True)


def _silence_stdout() -> None:
    """Standard output whose reader is gone points at /dev/null, so nothing written later
    (the interpreter's last flush included) raises again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


def _confirm_destroy(plan: Plan, yes: list[str] | None) -> None:
    """Every device the run destroys (a format or raw device target, an external journal or
    log device): the user types its path, or a --yes-destroy names it. Nothing is changed
    unless every one is confirmed."""
    named = set(yes or ())
    pending = [d for d in destroyed_devices(plan) if d.path not in named]
    if not pending:
        return
    if yes is not None or not sys.stdin.isatty():
        raise PlanError([Problem(d.key, f"{d.path} is {d.role}, destroying its data: confirm "
                                 f"with --yes-destroy {d.path}", d.line) for d in pending])
    for d in pending:
        print(f"DiskLab will destroy everything on {d.path}: it is {d.role}.\n"
              f"  identity: {d.confirm}", file=sys.stderr)
        typed = input(f"Type {d.path} to go on: ").strip()
        if typed != d.path:
            raise PlanError([Problem(d.key, "not confirmed: nothing was changed", d.line)])


def _ask_password() -> str:
    """The sudo password for the privileged helper, asked once per session on the terminal."""
    if not sys.stdin.isatty():
        raise PrivilegeError("sudo needs a password and there is no terminal to ask it on: "
                             "run DiskLab as root, or allow it without a password (NOPASSWD)")
    return getpass.getpass("[disklab] sudo password for the privileged helper: ")


def _ask_ssh(host: str, question: str, secret: bool) -> str | None:
    """One of ssh's questions for a host started over SSH (an unknown host key with its
    fingerprint, a password, a passphrase), asked on the terminal; None without one. A secret
    is read without echo and never kept."""
    if not sys.stdin.isatty():
        return None
    prompt = f"[disklab] host {host}, ssh asks:\n{question} "
    return getpass.getpass(prompt) if secret else input(prompt)


def run(args: argparse.Namespace) -> int:
    a = typed(RunArgs, args)
    checked = _load(a)
    _confirm_destroy(checked.plan, a.yes_destroy)
    with _open_library(a) as library:
        return _execute(checked, library, a.json)


def resume(args: argparse.Namespace) -> int:
    """`disklab resume SESSION`: run the session's case x repeat pairs that have no complete
    result, in the same session, with its plan (core.run.resume says why it cannot: exit 2). A
    format or device target is confirmed again, as for `run`. Exit codes as for `run`."""
    a = typed(ResumeArgs, args)
    with _open_library(a) as library:
        resumption = prepare_resume(library, a.session, library_path=str(library.path))
        _confirm_destroy(resumption.plan, a.yes_destroy)
        if not (a.json or is_quiet()):
            print(f"resuming session {resumption.session_id} ({resumption.name}, "
                  f"{resumption.previous_status}): {len(resumption.runs)} run(s) without a "
                  f"complete result; {resumption.complete} complete run(s) kept",
                  file=sys.stderr)
        return _record(lambda cancel: RecordedRun.resuming(resumption, library, cancel=cancel,
                                                           password=_ask_password,
                                                           ask=_ask_ssh),
                       library, resumption.name, a.json)


def plan_schema_cmd(args: argparse.Namespace) -> int:
    """The JSON Schema of the plan format, for editors (the package ships the same text as
    resources/plan.schema.json)."""
    sys.stdout.write(plan_schema_text())
    return EXIT_OK


def completion_cmd(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    sys.stdout.write(completion(parser, typed(CompletionArgs, args).shell))
    return EXIT_OK


def manpage_cmd(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    sys.stdout.write(manpage(parser))
    return EXIT_OK


def sessions(args: argparse.Namespace) -> int:
    """The sessions, newest first. Where nothing was ever recorded (the default library not
    made yet) that is said, exit 0; a --library or $DISKLAB_LIBRARY that names no file is a
    mistake (exit 2): neither creates a library."""
    a = typed(SessionsArgs, args)
    path = _library_path(a)
    if not path.exists() and not a.library and not os.environ.get("DISKLAB_LIBRARY"):
        if a.json:
            print(json.dumps(versioned("disklab.sessions", {"sessions": []}), indent=2))
        else:
            print(f"no sessions yet: nothing has been recorded ({path} does not exist)")
        return EXIT_OK
    library = _open_library(a)
    try:
        rows = library.list_sessions()
        uuids = dict(library.db.execute("SELECT id, uuid FROM session"))
    finally:
        library.close()
    for r in rows:
        r["uuid"] = uuids.get(r["id"])
    if a.json:
        print(json.dumps(versioned("disklab.sessions", {"sessions": rows}), indent=2,
                         default=str))
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
    """A session's headline figures (core.results.tables), after the pivot its plan's [report]
    table asks for, or its facts and results as JSON;
    runs that did not complete are left out of the means (and said so) unless
    --include-partial."""
    a = typed(ShowArgs, args)
    include = a.include_partial
    library = _open_library(a)
    try:
        session = library.find_session(a.session)
        report = report_units(a.units, session_report(session.get("plan_text")))
        if a.json:
            doc = session_json(library, session["id"], samples=False, include_partial=include)
            shown = {"session": doc["session"], "results": doc["results"],
                     "excluded": doc["excluded"], "resumed": library.resumes(session["id"])}
            print(json.dumps(versioned("disklab.results", shown), indent=2, default=str))
            return EXIT_OK
        print(f"session {session['id']}: {session['name']} ({session['status']})")
        for line in resume_lines(library.resumes(session["id"])):
            print(line)
        results = session_results(library, session["id"], include)
        limits = session_limits(library, session["id"])
        if lays_out(report):  # the table the plan asks for first, then every figure
            print(table_text(pivot_table(report_pivot(with_limits(results.rows, limits),
                                                      report)), terminal_width()))
        print_results(results, limits=limits)
    finally:
        library.close()
    return EXIT_OK


def export(args: argparse.Namespace) -> int:
    """`disklab export SESSION... --format FORMAT -o FILE` (cli.exporting)."""
    with _open_library(args) as library:
        return exporting.export(args, library)


def compare(args: argparse.Namespace) -> int:
    """`disklab compare S1 S2 ... [--baseline S1] [--format md|csv|json|html] [-o FILE]
    [--alpha P] [--include-partial]`.

    Reads CompareArgs: the sessions (ids or names: at least two, or one session with several
    configurations, whose first configuration is then the baseline), the baseline (a session
    id or name, a configuration's row, or None: the first; a KEY=VALUE baseline, --where,
    --rows, --columns or --metric make it a pivot), the format (default md), the output (None:
    stdout), alpha (the significance level, default 0.05), include_partial, the library.
    Needs no Qt.
    """
    a = typed(CompareArgs, args)
    refs = list(a.sessions)
    if _pivot_asked(a):
        return compare_pivot(a)
    fmt = a.format or "md"
    library = _open_library(a)
    try:
        ids = list(dict.fromkeys(int(library.find_session(r)["id"]) for r in refs))
        if lays_out(report_units(a.units, session_report(library.session(ids[0])
                                                         .get("plan_text")))):
            library.close()
            return compare_pivot(a)
        if len(ids) < 2 and len({c["config"] for c in library.cases(ids[0])}) < 2:
            print("disklab compare: give at least two sessions, or one with several "
                  "configurations", file=sys.stderr)
            return EXIT_BAD_INPUT
        baseline = _classic_baseline(library, a.baseline, ids)
        if isinstance(baseline, int) and baseline not in ids:
            ids.insert(0, baseline)
        try:
            text = comparison_text(library, ids, baseline, fmt, alpha=a.alpha or ALPHA,
                                   include_partial=a.include_partial)
        except ValueError as e:  # a baseline that names no row
            print(f"disklab compare: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT
        if fmt == "md":  # sessions of several machines: what differs, above the table
            text = host_differences([library.session(i) for i in ids]) + text
    finally:
        library.close()
    return exporting.emit(a.output or "-", text)


def _classic_baseline(library: Library, ref: str | None, ids: list[int]) -> int | str:
    """--baseline of a comparison of sessions: a session (id or name), else a row of the
    comparison as it names it ('3 raid / ext2'); the first session without one."""
    if not ref:
        return ids[0]
    try:
        return int(library.find_session(ref)["id"])
    except LibraryError:
        return str(ref)


def _keys(values: list[str] | None) -> list[str]:
    """--rows/--columns/--metric values: repeated or comma separated."""
    return [k.strip() for v in values or [] for k in v.split(",") if k.strip()]


def _pivot_asked(a: CompareArgs) -> bool:
    return bool(a.rows or a.columns or a.metric or a.where or "=" in (a.baseline or "")
                or (a.baseline or "").lower() == NO_BASELINE or a.format == "text")


def compare_pivot(args: argparse.Namespace | CompareArgs) -> int:
    """`disklab compare S... --rows KEYS --columns KEYS [--metric NAME...] [--where K=V...]
    [--baseline K=V] [--format text|csv|md|html|json]`: the sessions' results as a pivot
    table (core.results.sessions_compared, as the Compare page reads them). Keys not given
    come from the first session's [report] table, else rows = config and columns = test; a
    session whose plan has a [report] table is always compared this way. An unknown key, a
    --where without '=', a baseline no row or column has exit 2 with one line naming it."""
    a = typed(CompareArgs, args)
    library = _open_library(a)
    try:
        asked = compare_sessions(library, find_sessions(library, a.sessions),
                                 a.include_partial, documents=True)
    finally:
        library.close()
    report_units(a.units, asked.report)  # what it says is written from here on
    try:
        lay = asked.layout(_keys(a.rows), _keys(a.columns), _keys(a.metric),
                           [parse_where(w) for w in a.where or []], a.baseline)
        baseline = asked.baseline(lay)
        pivot = asked.pivot(lay, a.alpha or ALPHA)
    except (PivotKeyError, BaselineError, ValueError) as e:
        print(f"disklab compare: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return _emit_pivot(a, asked, lay, baseline, pivot)


def _emit_pivot(a: CompareArgs, asked: SessionsCompared, lay: Layout, baseline: str | None,
                pivot: Pivot) -> int:
    """The pivot written as `fmt` (what differs between the machines above a text or
    Markdown table, and the study's table it is first), or why there is none: exit 2 for a
    metric or a --where that matches nothing, 1 for sessions without results."""
    fmt = a.format or "text"
    if baseline and not pivot.baseline:
        print(f"disklab compare: the [report]'s baseline {baseline} has no rows here "
              "(--where): cells are values", file=sys.stderr)
    if not pivot.cells and lay.metrics:
        print(f"disklab compare: --metric {', '.join(lay.metrics)}: no such metric in these "
              f"sessions (they have: {', '.join(asked.metric_names())})", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not pivot.cells:
        print("disklab compare: no results " + ("match --where" if lay.where else
                                                "in these sessions"), file=sys.stderr)
        return EXIT_BAD_INPUT if lay.where else EXIT_FAILED
    text = pivot_text(pivot, fmt, asked.title(lay), asked.facts(), asked.evidence,
                      width=terminal_width())
    if fmt in ("text", "md"):  # sessions of several machines: what differs, above the table
        text = host_differences(asked.sessions) + text
        if asked.study_title(lay):  # the study's table this is, first
            text = ("## " if fmt == "md" else "") + asked.study_title(lay) + "\n\n" + text
    return exporting.emit(a.output or "-", text)


def tools_cmd(args: argparse.Namespace) -> int:
    found = tool_rows()
    versions = tool_versions({r.name for r in found})
    rows: list[dict[str, Any]] = [
        {"tool": r.name, "title": r.title, "installed": r.installed, "path": r.path,
         "version": versions.get(r.name) if r.installed else None, "package": r.package,
         "capabilities": dataclasses.asdict(tools.get_adapter(r.name).capabilities)}
        for r in found]
    if typed(ToolsArgs, args).json:
        print(json.dumps(versioned("disklab.tools", {"tools": rows}), indent=2))
        return EXIT_OK
    table = [["tool", "installed", "version", "path / how to install"]]
    for r in rows:
        where = r["path"] or f"apt install {r['package']}"
        table.append([r["tool"], "yes" if r["installed"] else "no", r["version"] or "", where])
    print_table(table)
    return EXIT_OK


def import_cmd(args: argparse.Namespace) -> int:
    """`disklab import PATH...` (cli.importing): bundles, libraries, tool outputs."""
    opened: list[Library] = []

    def library() -> Library:  # opened (made) only when something is stored
        if not opened:
            opened.append(_open_library(args))
        return opened[0]

    try:
        return importing.import_cmd(args, library)
    finally:
        for lib in opened:
            lib.close()


def start(args: argparse.Namespace) -> int:
    """What the README's run command starts: the desktop window when there is a display;
    without one, the quick preset with the built-in engine in a temporary directory, then the
    results table (and how to open the window)."""
    if gui_cmd.has_display():
        return gui_cmd.gui(args)
    info("No display (DISPLAY and WAYLAND_DISPLAY are unset): running the quick preset "
         "headless. On a desktop, `make run` (or `disklab gui`) opens the window.")
    preset = find_plan("quick")
    base = "/var/tmp" if os.path.isdir("/var/tmp") else None
    work = tempfile.mkdtemp(prefix="disklab-quick-", dir=base)
    try:
        a = PlanArgs(plan=str(preset), library=typed(LibraryArgs, args).library,
                     command=typed(LibraryArgs, args).command)
        try:
            checked = _load(a, target=work)
        except PlanError as e:
            if not any(p.key.endswith(".direct") for p in e.problems):
                raise
            print(f"note: {work} refuses O_DIRECT; running buffered", file=sys.stderr)
            text = preset.read_text().replace("direct = true", "direct = false")
            checked = parse_plan(text, path=str(preset), target_dir=work,
                                 library=str(_library_path(a)))
        info(f"DiskLab quick look: built-in engine in {work} (library {_library_path(a)})")
        with _open_library(a) as library:
            return _execute(checked, library, as_json=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)

