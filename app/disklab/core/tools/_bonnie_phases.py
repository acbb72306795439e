"""When each of bonnie++'s figures was measured, from a run's transcript: what a verdict of what
limited a figure judges (core.results.limits), not the whole run.

bonnie++ (without -q) writes a phase's label on stderr when the phase starts and 'done' on the
same line when it ends ('Writing intelligently...done'); the runner reads whole lines, so a
phase's line is stamped when the phase ended. The phases run one after another, so each starts
where the one before it ended; the first starts at 'Using uid:...' (printed when bonnie++ runs
as -u USER, as DiskLab runs it as root). A phase without its 'done' (a killed run), or the
first phase of a run without that line, has no interval: its figure says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from disklab.core.tools.base import Measured

Lines = Sequence[tuple[float, str, str]]
_STARTED = "Using uid:"


def phase_intervals(lines: Lines, phases: Sequence[tuple[str, str]]) -> list[Measured]:
    """Each finished phase's interval: from the end of the one before (or bonnie++'s 'Using
    uid' line) to its own 'done'. `phases`: (label bonnie++ prints, figure name), in order.
    The seek test's interval holds the pause bonnie++ takes to start its seeker processes."""
    out: list[Measured] = []
    last: float | None = None
    for t, stream, text in lines:
        if stream != "stderr":
            continue
        line = text.strip()
        if line.startswith(_STARTED):
            last = t
            continue
        found = [(line.find(label), name) for label, name in phases if label in line]
        if not found:
            continue
        _pos, name = max(found)
        if "...done" not in line:
            last = None  # a phase that did not end: the next one's start is not known
            continue
        if last is not None:
            out.append(Measured(name, last, t))
        last = t
    return out
