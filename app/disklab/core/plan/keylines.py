"""Where each key of a plan was written, and the problems found, by key: what every part of the
plan check reports through. tomllib gives no line numbers, so `KeyLines` scans the text for
where each key was written; `Checker` collects every problem with its key and line, so that a
plan's problems are reported all at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from disklab.core.vocab.errors import Problem


class KeyLines:
    """Where each key of a TOML text was written: 'test[2].mode' -> line 14 (1-based)."""

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?\s*(#.*)?$")
    _KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=")

    def __init__(self, text: str):
        self.lines: dict[str, int] = {}
        counts: dict[str, int] = {}
        prefix = ""
        depth = 0  # open brackets of a multi-line array: its lines hold no keys
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0] if '"' not in raw else raw
            if depth == 0:
                header = self._HEADER.match(raw)
                if header:
                    name = header.group(2).strip()
                    if header.group(1) == "[[":
                        counts[name] = counts.get(name, 0) + 1
                        prefix = f"{name}[{counts[name]}]."
                    else:
                        # [config.mkfs] after [[config]] is a table of that config
                        head, _, rest = name.partition(".")
                        prefix = (f"{head}[{counts[head]}].{rest}." if rest and head in counts
                                  else f"{name}.")
                    self.lines.setdefault(prefix.rstrip("."), number)
                    continue
                key = self._KEY.match(raw)
                if key:
                    self.lines.setdefault(prefix + key.group(1).strip('"'), number)
            depth += line.count("[") - line.count("]")
            depth = max(depth, 0)

    def get(self, key: str) -> int | None:
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key.rpartition(".")[0]
        return None


@dataclass
class Checker:
    """Collects problems while a plan is read, so that all are reported together."""

    where: KeyLines
    problems: list[Problem] = field(default_factory=list)

    def error(self, key: str, message: str) -> None:
        self.problems.append(Problem(key, message, self.where.get(key)))

    def warn(self, key: str, message: str) -> None:
        self.problems.append(Problem(key, message, self.where.get(key), "warning"))

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]


def short(value: Any, limit: int = 40) -> str:
    """A value as a message quotes it: a 400-digit number is cut, not printed whole."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
