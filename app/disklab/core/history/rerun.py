"""Adding a point to a series: the session's plan, checked again, on the same target.

A rerun is a new session of the same series, so it must be the same plan (the text the session
recorded, not the file it came from, which may have changed since) on the same target: a
directory target is the directory the session ran in (a `--target` given then is given again),
and a target whose identity now differs from the recorded one (another filesystem mounted
there, another disk at the device path) is refused with what differs: its session would start
another series without a word.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from disklab.core.library.store import Library
from disklab.core.plan.parse import CheckedPlan, parse_plan
from disklab.core.run.resume import target_identity
from disklab.core.vocab.errors import DisklabError, LibraryError


def newest_session(lib: Library, ref: str) -> dict[str, Any]:
    """The session `ref` names (id, UUID or name); of several sharing a name, the newest:
    a series' sessions usually share their plan's name."""
    try:
        return lib.find_session(ref)
    except LibraryError:
        ids = [i for (i,) in lib.db.execute(
            "SELECT id FROM session WHERE name = ? ORDER BY started DESC, id DESC LIMIT 1",
            (str(ref),))]
        if not ids:
            raise
        return lib.session(ids[0])


def _identity_changes(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    return [f"{key} was {recorded.get(key)!r}, is now {now.get(key)!r}"
            for key in sorted(set(recorded) | set(now))
            if key not in ("exists", "error") and recorded.get(key) != now.get(key)]


def rerun_plan(lib: Library, ref: str) -> tuple[dict[str, Any], CheckedPlan]:
    """The session and its plan checked now, to run as the next session of its series.
    DisklabError when it has no plan (an import) or its target is no longer the same;
    PlanError with the plan's problems now."""
    session = newest_session(lib, ref)
    text = str(session.get("plan_text") or "")
    if not text.strip():
        raise DisklabError(f"session {session['id']} ({session['name']}) has no plan to run "
                           "again: it was imported from a tool's output")
    target = (session.get("host") or {}).get("target") or {}
    directory = target.get("path") if target.get("kind") == "directory" else None
    checked = parse_plan(text, path=session.get("plan_path"), target_dir=directory,
                         library=str(lib.path))
    recorded = target.get("identity")
    if recorded:
        changes = _identity_changes(recorded, target_identity(checked.plan.target))
        if changes:
            raise DisklabError(
                f"session {session['id']}'s target is not the same now ("
                + "; ".join(changes) + "): a run there would start another series")
    return session, checked
