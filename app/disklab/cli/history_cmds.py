"""`disklab history`, `disklab rerun` and `disklab schedule`: one plan's figures on one target
over time (core.history), a new session of the series, and a systemd user timer that adds one
every week."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from disklab.cli import commands
from disklab.cli.arguments import LibraryArgs, RerunArgs, typed, units_option
from disklab.core.history import schedule
from disklab.core.history.build import History, build_history
from disklab.core.history.document import (
    chart_specs,
    history_csv,
    history_html,
    history_json,
    history_text,
)
from disklab.core.history.rerun import newest_session, rerun_plan
from disklab.core.history.series import key_of, target_words
from disklab.core.library import Library
from disklab.core.proc import spawn
from disklab.core.results.stats import ALPHA
from disklab.core.results.svg import to_svg
from disklab.core.run.resume import host_identity
from disklab.core.system.directories import library_path
from disklab.core.vocab.errors import DisklabError, ToolError

FORMATS = ("text", "json", "csv", "html", "svg")


def add_parsers(sub: argparse._SubParsersAction,  # type: ignore[type-arg]
                library_option: Callable[[argparse.ArgumentParser], None],
                alpha_value: Callable[[str], float]) -> None:
    p = sub.add_parser("history", help="one plan's figures on one target over time, with the "
                                       "changes found and what changed on the machine")
    p.add_argument("session", metavar="SESSION|NAME",
                   help="a session (id or UUID: its series) or a name (every series holding "
                        "a session of that name)")
    p.add_argument("--json", action="store_true",
                   help="print the disklab.history document (series, points, changes)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="text (default), json, csv, html (with the charts) or svg (the "
                        "charts; several go into a directory)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the file to write ('-' or none: standard output; svg of several "
                        "charts: a directory)")
    p.add_argument("--all-metrics", action="store_true",
                   help="every figure, not only the headline ones and those that changed")
    p.add_argument("--alpha", type=alpha_value, default=ALPHA, metavar="P",
                   help=f"the chance of any false change in a series (default {ALPHA:g})")
    units_option(p)
    library_option(p)
    p.set_defaults(func=history)

    p = sub.add_parser("rerun", help="run a session's plan again on the same target: a new "
                                     "session of its history")
    p.add_argument("session", metavar="SESSION", help="session id, UUID or name (the newest)")
    p.add_argument("--json", action="store_true", help="one JSON event per line on stdout")
    p.add_argument("--yes-destroy", metavar="DEVICE", action="append",
                   help="confirm destroying DEVICE without being asked; once per device")
    units_option(p)
    library_option(p)
    p.set_defaults(func=rerun)

    p = sub.add_parser("schedule", help="run a session's plan again every hour, day, week or "
                                        "month (a systemd user timer)")
    p.add_argument("session", metavar="SESSION", help="session id, UUID or name (the newest)")
    p.add_argument("--every", choices=tuple(schedule.EVERY), default="week",
                   help="how often the timer runs it (default: week)")
    p.add_argument("--remove", action="store_true", help="remove the series' timer and service")
    p.add_argument("--unit-dir", metavar="DIR", help=argparse.SUPPRESS)  # tests
    library_option(p)
    p.set_defaults(func=schedule_cmd)


def _read(args: argparse.Namespace) -> History:
    path = library_path(typed(LibraryArgs, args).library)
    if not path.exists():
        raise DisklabError(f"no library at {path}: nothing has been recorded there (check "
                           "--library and $DISKLAB_LIBRARY)")
    with Library.open(path) as lib:
        return build_history(lib, args.session, args.alpha, this_machine=host_identity())


def history(args: argparse.Namespace) -> int:
    fmt = "json" if args.json else (args.format or "text")
    out = args.output
    if fmt == "svg":
        return _write_svgs(_read(args), args.all_metrics, out)
    h = _read(args)
    if fmt == "json":
        text = json.dumps(history_json(h), indent=1) + "\n"
    elif fmt == "csv":
        text = history_csv(h)
    elif fmt == "html":
        text = history_html(h, args.all_metrics)
    else:
        width = shutil.get_terminal_size((120, 24)).columns if out in (None, "-") else 0
        text = history_text(h, args.all_metrics, width)
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(out).write_text(text, encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _write_svgs(h: History, all_metrics: bool, out: str | None) -> int:
    specs = chart_specs(h, all_metrics)
    if not specs:
        raise DisklabError(f"nothing to chart: no complete session in the history of "
                           f"{h.ref!r}")
    if out is None or out == "-":
        if len(specs) > 1:
            raise DisklabError(f"{len(specs)} charts: give -o DIRECTORY/")
        sys.stdout.write(to_svg(specs[0]))
        return 0
    target = Path(out)
    if len(specs) == 1 and not out.endswith("/") and not target.is_dir():
        target.write_text(to_svg(specs[0]), encoding="utf-8")
        print(f"wrote {target}", file=sys.stderr)
        return 0
    if not out.endswith("/") and not target.is_dir():
        raise DisklabError(f"-o {out}: {len(specs)} charts go into a directory: give an "
                           "existing directory or a path ending with /")
    target.mkdir(parents=True, exist_ok=True)
    for i, spec in enumerate(specs, 1):
        (target / f"{i:02d}-{spec.slug()}.svg").write_text(to_svg(spec), encoding="utf-8")
    print(f"wrote {len(specs)} charts in {target}", file=sys.stderr)
    return 0


def rerun(args: argparse.Namespace) -> int:
    """`disklab rerun SESSION`: the session's plan again, as `disklab run` runs a plan."""
    with commands.open_library(args) as lib:
        session, checked = rerun_plan(lib, args.session)
        commands._confirm_destroy(checked.plan, typed(RerunArgs, args).yes_destroy)
        if not args.json:
            print(f"running session {session['id']}'s plan ({session['name']}) again on "
                  f"{target_words(session.get('host') or {})}", file=sys.stderr)
        # the run exactly as `disklab run` makes and shows it
        return commands._execute(checked, lib, args.json)


def _systemctl(*argv: str) -> str | None:
    """Run `systemctl --user ARGV`; why not, when it did not work."""
    try:
        done = spawn.run(["systemctl", "--user", *argv], timeout=30)
    except ToolError as e:
        return str(e)
    return None if done.returncode == 0 else (done.stderr or done.stdout).strip()


def schedule_cmd(args: argparse.Namespace) -> int:
    """`disklab schedule SESSION --every week` writes the units and enables the timer (or
    says how, when the user's systemd cannot be reached); `--remove` takes them away."""
    with commands.open_library(args) as lib:
        session = newest_session(lib, args.session)
        slug = key_of(session).slug()
        what = f"plan {session['name']!r} on {target_words(session.get('host') or {})}"
        u = schedule.units(slug, str(session["uuid"]), Path(lib.path), args.every, what)
    where = Path(args.unit_dir) if args.unit_dir else None
    if args.remove:
        _systemctl("disable", "--now", f"{u.name}.timer")
        removed = schedule.remove(u.name, where)
        _systemctl("daemon-reload")
        print(f"removed {', '.join(map(str, removed))}" if removed
              else f"no schedule of {what}")
        return 0
    paths = schedule.write(u, where)
    print(f"wrote {paths[0]} and {paths[1]}")
    if where is not None:
        return 0
    why = _systemctl("daemon-reload") or _systemctl("enable", "--now", f"{u.name}.timer")
    if why:
        print(f"the timer is not enabled ({why}); enable it with: systemctl --user "
              f"daemon-reload && systemctl --user enable --now {u.name}.timer")
    else:
        print(f"enabled {u.name}.timer: {what} runs again {schedule.EVERY[args.every]}")
    return 0

