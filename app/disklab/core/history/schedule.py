"""A series that grows by itself: a systemd user timer and service that run
`disklab rerun SESSION` every hour, day, week or month.

The units are the user's own (`~/.config/systemd/user`, $XDG_CONFIG_HOME honoured): no root,
and `systemctl --user list-timers` shows them beside the user's others. The service runs the
rerun with this very interpreter (`python -m disklab`), the session named by its UUID (a name
or an id can change, the UUID does not) and the library by its absolute path. Every value in
ExecStart is quoted as systemd reads it (systemd.service(5), "Command lines"); one that
cannot be (a newline) is refused.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from disklab.core.vocab.errors import DisklabError

EVERY = {"hour": "hourly", "day": "daily", "week": "weekly", "month": "monthly"}
PREFIX = "disklab-history-"


@dataclass(frozen=True)
class Units:
    """The two units of one schedule: their file names and texts."""

    name: str  # without the suffix: disklab-history-<slug>
    service: str
    timer: str


def unit_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return Path(base) / "systemd" / "user"


def quoted(arg: str) -> str:
    """One ExecStart argument as systemd reads it: in double quotes, backslash and quote
    escaped, '%' (a specifier) doubled and '$' (a variable) doubled."""
    if any(c in arg for c in "\n\r\0"):
        raise DisklabError(f"cannot schedule with {arg!r}: systemd reads no line break in "
                           "a command line")
    text = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{text}"'


def _plain(text: str) -> str:
    """A description's text on one line, '%' doubled (a specifier otherwise)."""
    return " ".join(text.split()).replace("%", "%%")


def units(slug: str, session_uuid: str, library: Path, every: str, what: str) -> Units:
    """The service and timer that rerun the session `session_uuid` of `library` `every`
    hour/day/week/month; `what` says the plan and target in their descriptions."""
    if every not in EVERY:
        raise DisklabError(f"--every {every!r}: give one of {', '.join(EVERY)}")
    name = f"{PREFIX}{slug}"
    argv = [sys.executable, "-m", "disklab", "rerun", session_uuid, "--library",
            str(library.resolve()), "--quiet"]
    service = (
        "[Unit]\n"
        f"Description=DiskLab: {_plain(what)}, run again (a new session of its history)\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"ExecStart={' '.join(quoted(a) for a in argv)}\n")
    timer = (
        "[Unit]\n"
        f"Description=DiskLab: {_plain(what)}, {EVERY[every]}\n\n"
        "[Timer]\n"
        f"OnCalendar={EVERY[every]}\n"
        "Persistent=true\n"
        f"Unit={name}.service\n\n"
        "[Install]\n"
        "WantedBy=timers.target\n")
    return Units(name, service, timer)


def write(u: Units, directory: Path | None = None) -> list[Path]:
    """Write the two unit files (replacing an earlier schedule of the same series)."""
    where = directory or unit_dir()
    where.mkdir(parents=True, exist_ok=True)
    paths = []
    for suffix, text in ((".service", u.service), (".timer", u.timer)):
        path = where / f"{u.name}{suffix}"
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        paths.append(path)
    return paths


def remove(name: str, directory: Path | None = None) -> list[Path]:
    """Remove the schedule's unit files; the ones removed (none: there was no schedule)."""
    where = directory or unit_dir()
    removed = []
    for suffix in (".service", ".timer"):
        path = where / f"{name}{suffix}"
        if path.exists():
            path.unlink()
            removed.append(path)
    return removed
