"""The grammar of a plan key, in one place: what a problem names and a page goes to.

A plan key says where in a plan a value sits, as the checks (core.plan, core.run.summary) name it
and the window puts the focus on its field: `name`, `test[2].block_size`,
`config[1].mkfs.journal_size`, `targets.a.image`, `mount[3]` (inside one [[config]] table).
It is a section, an optional 1-based index (arrays of tables: [[test]], [[config]], a list),
and the rest. The pages ask a PlanKey instead of matching the text with their own regexes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_KEY = re.compile(r"(?P<section>[A-Za-z_][A-Za-z0-9_-]*)(?:\[(?P<index>\d+)\])?\.?(?P<rest>.*)",
                  re.DOTALL)


@dataclass(frozen=True)
class PlanKey:
    """A parsed plan key: `section`, `index` (1-based, None without one) and `rest`."""

    section: str
    index: int | None = None
    rest: str = ""

    @classmethod
    def parse(cls, key: str) -> PlanKey:
        """'test[2].block_size' -> PlanKey('test', 2, 'block_size'); a key that is not one
        (empty, punctuation) -> PlanKey('', None, key)."""
        m = _KEY.fullmatch(key.strip())
        if m is None:
            return cls("", None, key)
        index = m.group("index")
        return cls(m.group("section"), int(index) if index else None, m.group("rest"))

    @property
    def field(self) -> str:
        """The first name of the rest: 'block_size' of test[2].block_size, 'mkfs' of
        config[1].mkfs.journal_size; '' for none."""
        return re.split(r"[.\[]", self.rest, maxsplit=1)[0]

    def of(self, section: str) -> int | None:
        """The 0-based row this key names in the array `section` ([[test]], [[config]]), or
        None when it names something else."""
        return self.index - 1 if self.section == section and self.index else None

    def __str__(self) -> str:
        text = self.section + (f"[{self.index}]" if self.index is not None else "")
        return f"{text}.{self.rest}" if self.rest else text
