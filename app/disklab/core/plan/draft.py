"""The plan being edited in the window: the TOML document as plain data (no Qt).

The GUI's source of truth is the same TOML a user would write, so whatever the window builds
can be saved, opened, run from the command line, and re-run from the library. Checking is
core.plan's job; this module only edits and converts the text the user typed in a field.
"""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from disklab.core.plan.targets import NAME as TARGET_NAME
from disklab.core.plan.targets import SINGLE, partition_names
from disklab.core.tools.base import ALL_TARGETS


def parse_field(text: str, multi: bool = False) -> Any:
    """What a user typed in a parameter field -> a TOML value.

    'a, b' is a list (a matrix axis); for a `multi` parameter (iozone tests) 'write,read' is one
    value and 'write,read | write' is an axis of two values. Numbers and true/false are typed.
    """
    text = text.strip()
    if multi:
        groups = [g.strip() for g in text.split("|") if g.strip()]
        values = [[_scalar(v) for v in g.split(",") if v.strip()] for g in groups]
        if len(values) == 1:
            return values[0]
        return values
    items = [_scalar(v) for v in text.split(",") if v.strip()]
    if not items:
        return ""
    return items[0] if len(items) == 1 else items


def _scalar(text: str) -> Any:
    t = text.strip()
    low = t.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return t


def field_text(value: Any, multi: bool = False) -> str:
    """The inverse of parse_field, for filling a field from a plan."""
    if multi and isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        return " | ".join(",".join(map(_show, g)) for g in value)
    if isinstance(value, list | tuple):
        return ", ".join(_show(v) for v in value)
    return _show(value)


def _saved_text(path: str | None) -> str | None:
    """The plan file's text as the draft writes it (None: no file, or it cannot be read)."""
    if not path:
        return None
    try:
        return PlanDraft.from_text(Path(path).read_text(encoding="utf-8")).to_text()
    except (OSError, ValueError):
        return None


def _show(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class PlanDraft:
    """A TOML plan document being edited: top-level keys, [target], [[config]], [[test]]."""

    def __init__(self, doc: dict[str, Any] | None = None):
        self.doc: dict[str, Any] = doc or {
            "name": "new plan",
            "repeats": 1,
            "drop_caches": False,
            "stop_on_failure": False,
            "target": {"directory": "/var/tmp"},
            "test": [],
        }
        self.path: str | None = None
        # the text as last opened or saved: what "save changes?" compares with
        self.saved_text: str | None = self.to_text()

    @property
    def modified(self) -> bool:
        """Changed since it was opened, saved or made: closing the window would lose it."""
        return self.to_text() != self.saved_text

    @property
    def is_blank(self) -> bool:
        """Nothing chosen yet (a new plan as made): the window opens on the Target page."""
        return self.path is None and self.to_text() == PlanDraft().to_text()

    @classmethod
    def from_text(cls, text: str, path: str | None = None) -> PlanDraft:
        draft = cls(tomllib.loads(text))
        draft.doc.setdefault("test", [])
        draft.path = path
        draft.saved_text = draft.to_text()
        return draft

    @classmethod
    def load(cls, path: str | Path) -> PlanDraft:
        return cls.from_text(Path(path).read_text(encoding="utf-8"), str(path))

    def copy(self) -> PlanDraft:
        d = PlanDraft(copy.deepcopy(self.doc))
        d.path = self.path
        d.saved_text = self.saved_text
        return d

    def to_text(self) -> str:
        """The TOML text: empty values are left out, [[test]] is always there."""
        doc = {k: v for k, v in self.doc.items() if v is not None and v != []}
        if "test" not in doc:
            doc["test"] = []
        return tomli_w.dumps(doc)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_text(), encoding="utf-8")
        self.path = str(path)
        self.saved_text = self.to_text()

    # --- the autosaved draft: the window's plan kept across restarts and crashes
    def autosave(self, file: str | Path) -> None:
        """Write the plan as it is now beside the window's settings, with where it came from
        and whether it was changed, so a restart (or a crash) gives it back as it was."""
        header = (f"# DiskLab's autosaved plan: the window's plan when it last closed.\n"
                  f"# from: {self.path or ''}\n# modified: {'yes' if self.modified else 'no'}\n")
        tmp = Path(f"{file}.tmp")
        tmp.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(header + self.to_text(), encoding="utf-8")
        tmp.replace(file)

    @classmethod
    def restore(cls, file: str | Path) -> PlanDraft | None:
        """The autosaved plan, None when there is none or it cannot be read (a broken file is
        ignored rather than keeping the window from opening)."""
        try:
            text = Path(file).read_text(encoding="utf-8")
            draft = cls.from_text(text)
        except (OSError, ValueError):
            return None
        meta = dict(line[2:].split(": ", 1) for line in text.splitlines()[:3]
                    if line.startswith("# ") and ": " in line)
        draft.path = meta.get("from") or None
        if meta.get("modified") == "yes":
            draft.saved_text = _saved_text(draft.path)
        return draft

    # --- convenience accessors
    @property
    def tests(self) -> list[dict[str, Any]]:
        return self.doc.setdefault("test", [])

    @property
    def configs(self) -> list[dict[str, Any]]:
        return self.doc.setdefault("config", [])

    def set(self, key: str, value: Any) -> None:
        self.doc[key] = value

    def get(self, key: str, default: Any = None) -> Any:
        return self.doc.get(key, default)

    @property
    def target(self) -> dict[str, Any]:
        """The plan's [target] table; in a plan of several targets ([targets.NAME]), the
        first one's (a page reading "the target" must not add a [target] beside them: the
        plan would then be refused, "give either [target] or [targets.NAME] tables")."""
        named = self.doc.get("targets")
        if "target" not in self.doc and isinstance(named, dict) and named:
            first = next(iter(named.values()))
            if isinstance(first, dict):
                return first
        return self.doc.setdefault("target", {})

    # --- several targets ([targets.NAME]): the Target page's list of them
    def target_names(self) -> list[str]:
        """The names of a plan of several targets, in plan order; [] for a [target] plan."""
        named = self.doc.get("targets")
        if "target" in self.doc or not isinstance(named, dict):
            return []
        return [str(k) for k, v in named.items() if isinstance(v, dict)]

    def stream_target_names(self) -> list[str]:
        """What a test's `on` may name: each target, or a partitioned one's a1, a2..."""
        names = self.target_names()
        tables = {n: self.target_table(n) for n in names} if names else {SINGLE: self.target}
        out = []
        for name, table in tables.items():
            parts = table.get("partitions")
            whole = isinstance(parts, int) and not isinstance(parts, bool)
            out += partition_names(name, parts if whole else 0)
        return out

    def target_table(self, name: str | None) -> dict[str, Any]:
        """The table of the target `name` ([targets.NAME]); None: the plan's [target]."""
        if name is None:
            return self.target
        return self.doc["targets"][name]

    def add_target(self) -> str:
        """Add a target and return its name: a [target] plan becomes [targets.a] (its table as
        it was) and [targets.b]; the new one starts as a directory not given yet (a copy of
        another's would be refused at once: two targets on one place), which the plan check
        asks for at its own key. The name is the first free letter, a..z, then t1, t2...
        (the user may rename it)."""
        names = self.target_names()
        if not names:
            single = self.doc.pop("target", {"directory": "/var/tmp"})
            self.doc["targets"] = {"a": single}
            names = ["a"]
        taken = set(names)
        name = next((c for c in "abcdefghijklmnopqrstuvwxyz" if c not in taken), None)
        if name is None:
            name = next(f"t{i}" for i in range(1, len(taken) + 2) if f"t{i}" not in taken)
        self.doc["targets"][name] = {"directory": ""}
        return name

    def remove_target(self, name: str) -> None:
        """Leave a target out (never the last one: a plan needs somewhere to run)."""
        names = self.target_names()
        if name in names and len(names) > 1:
            del self.doc["targets"][name]

    def rename_target(self, old: str, new: str) -> str | None:
        """Rename a target where the plan names it: its table, the tests' `on` placements
        ("a+b", and a partitioned target's "a1", "a2"...) and the configurations' `targets`.
        Returns why it cannot be done (the name is not a valid target name or is taken)."""
        if not TARGET_NAME.fullmatch(new):
            return (f"{new!r} is not a target name: a lowercase letter, then up to 31 "
                    "lowercase letters, digits or _")
        if new == ALL_TARGETS:
            return f"{new!r} names the aggregate of a placed case's targets: choose another"
        names = self.target_names()
        if new in names and new != old:
            return f"there is already a target named {new}"
        if old not in names or new == old:
            return None
        parted = bool(self.doc["targets"][old].get("partitions"))
        self.doc["targets"] = {new if k == old else k: v for k, v in self.doc["targets"].items()}
        part_of = re.compile(rf"{re.escape(old)}(\d+)")  # "a2": partition 2 of a

        def renamed(value: Any) -> Any:
            if isinstance(value, list):
                return [renamed(v) for v in value]
            if not isinstance(value, str):
                return value
            parts = []
            for part in value.split("+"):
                m = part_of.fullmatch(part) if parted else None
                parts.append(new if part == old else f"{new}{m.group(1)}" if m else part)
            return "+".join(parts)

        for test in self.tests:
            if "on" in test:
                test["on"] = renamed(test["on"])
        for config in self.configs:
            if "targets" in config:
                config["targets"] = renamed(config["targets"])
        return None
