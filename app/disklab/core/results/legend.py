"""The marks a compared table's cells carry, and the one line that explains them.

A table's prose (what limited each cell, the test behind a verdict, the runs left out) grows
with its cells and pushes the figures off a screen; a mark in the cell and one line of legend
say the same in the room of a word. The significance marks are tables.MARKS (in the cell's
text, as every export writes it); a verdict of what limited a cell (limits.KINDS) is a letter
the window draws in the cell's corner, its words and evidence in the cell's tooltip.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from disklab.core.results.compare import (
    BASELINE,
    BETTER,
    DIFFERENT,
    NO_DIFFERENCE,
    ONE_RUN,
    UNLIKE,
    WORSE,
    Comparison,
)
from disklab.core.results.limits import KINDS, Limit
from disklab.core.results.pivot import Pivot
from disklab.core.results.tables import MARKS

# a verdict of what limited a cell, as a letter (limits.KINDS); "nothing found" has none
LIMIT_MARKS = {"too_short": "S", "page_cache_direct": "J", "device": "D", "latency": "L",
               "cpu": "C",
               "page_cache_read": "R", "page_cache_write": "W", "writeback": "B",
               "none": "", "unknown": "?"}
# the legend's words for a letter (a cell's tooltip and the notes say limit_words.SHORT's in full)
LIMIT_WORDS = {"too_short": "too short", "page_cache_direct": "direct I/O in the cache",
               "device": "device", "latency": "device latency", "cpu": "CPU",
               "page_cache_read": "cache reads",
               "page_cache_write": "cache writes", "writeback": "write-back",
               "unknown": "not known"}
# what a significance mark says in the legend (tables.MARKS)
VERDICT_WORDS = {BETTER: "better", WORSE: "worse", DIFFERENT: "different",
                 NO_DIFFERENCE: "no difference",
                 BASELINE: "baseline", ONE_RUN: "one run", UNLIKE: "limited otherwise"}
HOVER = "hover a cell for its test and evidence"


def limit_marks(limits: Sequence[Limit] | None) -> str:
    """A cell's letters, in KINDS order: 'DC' for a cell limited by its device and the CPU;
    '' for a cell not judged or where nothing was found."""
    kinds = {limit.kind for limit in limits or ()}
    return "".join(LIMIT_MARKS[k] for k in KINDS if k in kinds and LIMIT_MARKS.get(k))


def legend(verdicts: Iterable[str], kinds: Iterable[str]) -> str:
    """The one line under a compared table saying each mark its cells carry: 'significance:
    ▲ better  ▼ worse  |  limited by D device  C CPU  |  hover a cell…'; only the marks
    shown, so that it fits one line of the window at 1280 px."""
    seen = set(verdicts)
    found = set(kinds)
    parts = []
    marks = [f"{MARKS[v]} {words}" for v, words in VERDICT_WORDS.items() if v in seen]
    if marks:
        parts.append("  ".join(marks))
    letters = [f"{LIMIT_MARKS[k]} {LIMIT_WORDS[k]}" for k in KINDS
               if k in found and LIMIT_MARKS.get(k)]
    if letters:
        parts.append("limited by " + "  ".join(letters))
    if parts:
        parts.append(HOVER)
    return "  |  ".join(parts)


def table_legend(p: Pivot | None, c: Comparison | None) -> str:
    """The legend of the marks a pivot's and a comparison's cells carry (shown side by side,
    one legend for both)."""
    verdicts = {cell.verdict for cell in p.cells.values()} if p else set()
    kinds = {x.kind for limits in (p.cell_limits.values() if p else ()) for x in limits}
    if c is not None:
        verdicts |= {cell.verdict for cell in c.cells.values()}
        kinds |= {x.kind for limits in c.limits.values() for x in limits or ()}
    return legend(verdicts, kinds)

