"""What the window's Library page does to sessions, on the command line: `disklab delete`,
`rename`, `note`, `tag`; and `disklab presets`, the plans that come with DiskLab."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from disklab.cli.arguments import PresetsArgs, typed
from disklab.cli.output import info, print_table, terminal_width
from disklab.core.library import Library
from disklab.core.plan.parse import parse_plan
from disklab.core.resources import preset_paths
from disklab.core.run.progress import format_duration
from disklab.core.run.summary import estimate_seconds, summarize
from disklab.core.vocab.errors import DisklabError, PlanError
from disklab.core.vocab.jsonformat import versioned

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
OpenLibrary = Callable[[argparse.Namespace], Library]


def add_parsers(sub: argparse._SubParsersAction, library_option: Callable[..., None],
                open_library: OpenLibrary) -> None:
    """The subcommands for cli/main.py; `open_library` opens args' library."""
    def with_library(func: Callable[[argparse.Namespace, Library], int]
                     ) -> Callable[[argparse.Namespace], int]:
        def command(args: argparse.Namespace) -> int:
            with open_library(args) as library:
                return func(args, library)
        return command

    p = sub.add_parser("delete", help="remove sessions and everything recorded with them")
    p.add_argument("sessions", nargs="+", metavar="SESSION", help="session id, name or UUID")
    p.add_argument("--yes", action="store_true", help="do not ask (needed without a terminal)")
    library_option(p)
    p.set_defaults(func=with_library(delete))
    p = sub.add_parser("rename", help="give a session another name")
    p.add_argument("session", metavar="SESSION", help="session id, name or UUID")
    p.add_argument("name", metavar="NAME", help="its new name")
    library_option(p)
    p.set_defaults(func=with_library(rename))
    p = sub.add_parser("note", help="print a session's notes, or replace them with TEXT")
    p.add_argument("session", metavar="SESSION", help="session id, name or UUID")
    p.add_argument("text", nargs="?", metavar="TEXT", help="the new notes ('' clears them)")
    library_option(p)
    p.set_defaults(func=with_library(note))
    p = sub.add_parser("tag", help="add tags to a session (or --remove them); none: list them")
    p.add_argument("session", metavar="SESSION", help="session id, name or UUID")
    p.add_argument("tags", nargs="*", metavar="TAG", help="the tags to add (or remove)")
    p.add_argument("--remove", action="store_true", help="remove the tags instead")
    library_option(p)
    p.set_defaults(func=with_library(tag))
    p = sub.add_parser("presets", help="the plans that come with DiskLab: name, what each "
                                       "measures, how long it takes")
    p.add_argument("--json", action="store_true",
                   help="print JSON (its format name and version first) instead of a table")
    p.set_defaults(func=presets)


def _live(session: dict) -> None:
    if session["status"] == "running":
        raise DisklabError(f"session {session['id']} is being recorded now; stop it first")


def delete(args: argparse.Namespace, library: Library) -> int:
    found = {s["id"]: s for s in (library.find_session(r) for r in args.sessions)}
    for s in found.values():
        _live(s)
    names = ", ".join(f"{sid} {s['name']!r}" for sid, s in found.items())
    if not args.yes:
        if not sys.stdin.isatty():
            raise DisklabError(f"deleting {names} cannot be undone: confirm with --yes")
        answer = input(f"Delete {names} and everything recorded with them? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing deleted", file=sys.stderr)
            return EXIT_BAD_INPUT
    for sid in found:
        library.delete_session(sid)
        info(f"deleted session {sid}")
    return EXIT_OK


def rename(args: argparse.Namespace, library: Library) -> int:
    name = args.name.strip()
    if not name or len(name) > 200 or any(ord(c) < 32 for c in name):
        raise DisklabError("NAME: give 1 to 200 printable characters")
    s = library.find_session(args.session)
    library.rename_session(s["id"], name)
    info(f"session {s['id']}: {s['name']!r} -> {name!r}")
    return EXIT_OK


def note(args: argparse.Namespace, library: Library) -> int:
    s = library.find_session(args.session)
    if args.text is None:
        if s["notes"]:
            print(s["notes"])
        return EXIT_OK
    library.set_notes(s["id"], args.text)
    info(f"session {s['id']}: notes {'cleared' if not args.text else 'saved'}")
    return EXIT_OK


def tag(args: argparse.Namespace, library: Library) -> int:
    s = library.find_session(args.session)
    bad = [t for t in args.tags if not t.strip() or len(t) > 100 or any(ord(c) < 32 for c in t)]
    if bad:
        raise DisklabError(f"TAG {bad[0]!r}: give 1 to 100 printable characters")
    for t in args.tags:
        (library.remove_tag if args.remove else library.add_tag)(s["id"], t.strip())
    tags = library.session(s["id"])["tags"]
    info(f"session {s['id']}: tags {', '.join(tags) if tags else '(none)'}")
    return EXIT_OK


def preset_description(text: str) -> str:
    """A preset's first sentence, from the comment at its top, whole (the table shortens it)."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("# ").strip())
    words = " ".join(lines)
    end = words.find(". ")
    first = words if end < 0 else words[:end + 1]
    return first


def shortened(text: str, width: int = 110) -> str:
    """`text` cut to `width` characters with an ellipsis, for a table cell."""
    return text if len(text) <= width else text[:width - 1].rstrip() + "…"


def preset_rows() -> list[dict[str, Any]]:
    """name, estimated duration (the plan check's, as the Test matrix shows it; None when
    the preset needs its target set), first sentence."""
    rows: list[dict[str, Any]] = []
    for path in preset_paths():
        text = path.read_text(encoding="utf-8")
        try:
            seconds: float | None = estimate_seconds(summarize(parse_plan(text, path=str(path))))
        except (PlanError, DisklabError, OSError):
            seconds = None
        rows.append({"name": path.stem, "estimate_s": seconds,
                     "description": preset_description(text)})
    return rows


def presets(args: argparse.Namespace) -> int:
    """The presets as a table that fits the terminal (80 columns on a pipe: the description
    wraps under its column), or JSON."""
    rows = preset_rows()
    if typed(PresetsArgs, args).json:
        print(json.dumps(versioned("disklab.presets", {"presets": rows}), indent=2))
        return EXIT_OK
    table = [[r["name"], "(needs its target set)" if r["estimate_s"] is None else
              "about " + format_duration(r["estimate_s"]), shortened(r["description"])]
             for r in rows]
    print_table([["preset", "duration", "what it measures"], *table],
                width=terminal_width() or 80)
    return EXIT_OK


def unknown_plan(name: str) -> str:
    """The line for a plan argument that is neither a file nor a preset."""
    names = ", ".join(p.stem for p in preset_paths())
    return f"{name!r} is neither a plan file nor a preset; the presets are: {names}"
