"""Several targets in one plan: `[targets.a]`, `[targets.b]`..., their partitions, the test
parameter `on` that places a case's streams on them, and configurations limited to some.

Why a module of its own: the RAID study compares streams spread over several LUNs ("a+b+c+d")
with the same number of streams on one ("a+a+a+a"), and on GPT partitions of one LUN. Each
named target is read with exactly the rules of today's single `[target]` (checks.py reads
the table; this module never relaxes a check), so a plan with several targets is as safe as one
with one. `[target]` stays valid: it is the one target, named "target" for `on`.

A stream target is what `on` names: a named target, or one of its partitions (`partitions = 4`
on target "a" gives "a1".."a4", and "a" itself is then no longer a place for files).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Protocol

from disklab.core import tools
from disklab.core.tools.base import ALL_TARGETS, PLACEMENT_KEY
from disklab.core.vocab.model import FsConfig, Plan, Target, TestSpec

SINGLE = "target"  # the name of a plan's one [target], for `on`
NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")  # no '+' (the separator), no path characters
MAX_TARGETS = 16
MAX_PARTITIONS = 16
MAX_STREAMS = 64  # streams of one placement ("a+a+...")
# for gui/pages/matrix.py (another developer's file in issue 31); new code asks
# tools.placeable_tools()
PLACED_TOOLS = tools.ToolsWith("placeable")
CONFIG_TARGETS = "targets"  # in a [[config]]: the targets it is applied to


class _Check(Protocol):
    def error(self, key: str, message: str) -> None: ...


def named_targets(plan: Plan) -> dict[str, Target]:
    """Every named target of a plan, in plan order (a [target] plan: {"target": it})."""
    return dict(plan.targets) if plan.targets else {SINGLE: plan.target}


def partition_names(name: str, partitions: int) -> list[str]:
    """What `on` calls the partitions of target `name`: a1, a2... (the name itself when it has
    none)."""
    return [f"{name}{i}" for i in range(1, partitions + 1)] if partitions > 0 else [name]


def stream_targets(targets: Mapping[str, Target]) -> dict[str, tuple[str, int]]:
    """Stream target name -> (named target, partition number or 0), in plan order."""
    out: dict[str, tuple[str, int]] = {}
    for name, target in targets.items():
        for i, stream in enumerate(partition_names(name, target.partitions),
                                   start=1 if target.partitions else 0):
            out[stream] = (name, i)
    return out


def is_multi(plan: Plan) -> bool:
    """The plan has more than one place for files (several targets, or partitions)."""
    return len(stream_targets(named_targets(plan))) > 1 or bool(plan.target.partitions)


def read_targets(doc: Mapping[str, Any], check: _Check,
                 read_one: Callable[[Any, str], Target | None]) -> dict[str, Target] | None:
    """The `[targets.NAME]` tables, each read by `read_one(table, key)` (checks.py's reader of
    `[target]`, with its safety checks); None when the plan has none."""
    raw = doc.get("targets")
    if raw is None:
        return None
    # the key of the first [targets.NAME] table: the line a message about them all points to
    where = f"targets.{next(iter(raw))}" if isinstance(raw, dict) and raw else "targets"
    if "target" in doc:
        check.error(where, "give either [target] or [targets.NAME] tables, not both")
        return None
    if not isinstance(raw, dict) or not raw:
        check.error("targets", 'must hold [targets.NAME] tables, e.g. [targets.a] '
                    'directory = "/mnt/a"')
        return None
    if len(raw) > MAX_TARGETS:
        check.error(where, f"{len(raw)} targets: at most {MAX_TARGETS}")
        return None
    out: dict[str, Target] = {}
    for name, table in raw.items():
        key = f"targets.{name}"
        if not NAME.fullmatch(name):
            check.error(key, f"{name!r} is not a target name: a lower-case letter, then up to "
                        "31 letters, digits or '_' (no '+': it joins names in `on`)")
            continue
        if name == ALL_TARGETS:
            check.error(key, f"{name!r} names the aggregate of a placed case's targets (its "
                        "rows' target = \"all\"): give this target another name")
            continue
        target = read_one(table, key)
        if target is not None:
            out[name] = target
    kinds = {t.kind for t in out.values()}
    if "device" in kinds and len(out) > 1:
        check.error(where, "raw device targets run one at a time: several targets are "
                    "directories, images or formatted devices")
    elif "directory" in kinds and len(kinds) > 1:
        check.error(where, "mix no directory targets with image or format targets: "
                    "either every target is a directory, or DiskLab makes every filesystem")
    paths = [t.path for t in out.values()]
    for name, target in out.items():
        if paths.count(target.path) > 1:
            check.error(f"targets.{name}", f"{target.path} is named by another target too: "
                        "each target is a place of its own (a+a puts two streams on one)")
            break
    stream_names = stream_targets(out)
    for name in out:
        clash = [s for s, (parent, _n) in stream_names.items() if s == name and parent != name]
        if clash:
            check.error(f"targets.{name}", f"{name!r} is also a partition's name")
    return out


def read_partitions(table: Mapping[str, Any], key: str, kind: str, check: _Check) -> int:
    """`partitions = N` of an image or format target (0 when not given)."""
    raw = table.get("partitions")
    if raw is None:
        return 0
    if kind not in ("image", "format"):
        check.error(f"{key}.partitions", "only an image or format target is split into "
                    "partitions (DiskLab makes them with sgdisk)")
        return 0
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= MAX_PARTITIONS:
        check.error(f"{key}.partitions", f"{raw!r} is not a whole number from 1 to "
                    f"{MAX_PARTITIONS}")
        return 0
    return raw


def take_placements(raw_tests: list[Any]) -> tuple[list[Any], dict[int, Any]]:
    """The [[test]] tables without their `on`, and test index -> its raw `on` value (read
    apart from the tool's parameters: `on` is DiskLab's, not the tool's)."""
    placed = {i: t[PLACEMENT_KEY] for i, t in enumerate(raw_tests)
              if isinstance(t, dict) and PLACEMENT_KEY in t}
    tables = [{k: v for k, v in t.items() if k != PLACEMENT_KEY} if isinstance(t, dict) else t
              for t in raw_tests]
    return tables, placed


def _placement(value: Any, names: Mapping[str, Any], key: str, check: _Check) -> str | None:
    """One placement ("a+b+b") checked against the stream targets; canonical text or None.
    A placement is one string: `on = "a+b"` is one, `on = ["a", "a+b"]` an axis of two; a
    list inside the list, or names parted by commas, is said to be neither."""
    if not isinstance(value, str) or not value.strip():
        check.error(key, f"{value!r} is not a placement: a placement is a string of target "
                    'names joined by \'+\' ("a+b": a stream on a and one on b), and a list of '
                    'them is an axis (on = ["a", "a+b"])')
        return None
    if "," in value:
        listed = ", ".join(f'"{v.strip()}"' for v in value.split(",") if v.strip())
        check.error(key, f"{value!r} is one string: several placements are a list (an axis), "
                    f"on = [{listed}]; names of one placement are joined by '+'")
        return None
    parts = [p.strip() for p in value.split("+")]
    if "" in parts:
        check.error(key, f"{value!r} has an empty name: names are joined by single '+' "
                    '("a+b")')
        return None
    unknown = [p for p in parts if p not in names]
    if unknown:
        check.error(key, f"{unknown[0]!r} in {value!r} is not a target of this plan (known: "
                    f"{', '.join(names)})")
        return None
    if len(parts) > MAX_STREAMS:
        check.error(key, f"{value!r} places {len(parts)} streams: at most {MAX_STREAMS}")
        return None
    return "+".join(parts)


def place_tests(specs: list[TestSpec], placed: Mapping[int, Any],
                targets: Mapping[str, Target], check: _Check) -> list[TestSpec]:
    """Add each test's `on` to its parameters: a list is an axis (each value one placement),
    a string one placement. Only tools that can spread streams take it."""
    names = stream_targets(targets)
    if not names:  # the targets themselves are wrong: said at their keys
        return specs
    out = []
    for spec in specs:
        if spec.index not in placed:
            out.append(spec)
            continue
        key = f"test[{spec.index + 1}].{PLACEMENT_KEY}"
        raw = placed[spec.index]
        if spec.tool not in tools.placeable_tools():
            check.error(key, f"{spec.tool} runs one process on one target: `on` is for "
                        f"{', '.join(tools.placeable_tools())}")
            out.append(spec)
            continue
        if spec.tool == "iozone" and spec.params.get("auto") is True:
            check.error(key, "iozone's auto mode is one process: `on` needs throughput mode "
                        "(auto = false)")
        values = raw if isinstance(raw, list) else [raw]
        if not values:
            check.error(key, "an empty list gives no cases")
            out.append(spec)
            continue
        placements = [_placement(v, names, key, check) for v in values]
        if any(p is None for p in placements):
            out.append(spec)
            continue
        params = dict(spec.params)
        if isinstance(raw, list):
            params[PLACEMENT_KEY] = tuple(placements)
            axes = (*spec.axes, PLACEMENT_KEY)
        else:
            params[PLACEMENT_KEY] = placements[0]
            axes = spec.axes
        out.append(replace(spec, params=params, axes=axes))
    return out


def take_config_targets(doc: dict[str, Any]) -> dict[int, Any]:
    """Config index (1-based) -> its raw `targets` list, taken out of the [[config]] tables
    (the filesystem options' reader knows nothing of targets)."""
    raw = doc.get("config")
    if not isinstance(raw, list):
        return {}
    found: dict[int, Any] = {}
    tables = []
    for i, table in enumerate(raw, start=1):
        if isinstance(table, dict) and CONFIG_TARGETS in table:
            found[i] = table[CONFIG_TARGETS]
            table = {k: v for k, v in table.items() if k != CONFIG_TARGETS}
        tables.append(table)
    doc["config"] = tables
    return found


def limit_configs(configs: tuple[FsConfig, ...], limits: Mapping[int, Any],
                  targets: Mapping[str, Target], check: _Check) -> tuple[FsConfig, ...]:
    """Each configuration with its `targets` (stream targets, or named targets standing for
    all their partitions), checked by name."""
    if not limits:
        return configs
    streams = stream_targets(targets)
    out = list(configs)
    for index, raw in limits.items():
        key = f"config[{index}].{CONFIG_TARGETS}"
        if not targets or all(t.kind in ("directory", "device") for t in targets.values()):
            check.error(key, "a configuration is applied to targets DiskLab formats (image or "
                        "format)")
            continue
        if (not isinstance(raw, list) or not raw
                or not all(isinstance(v, str) for v in raw)):
            check.error(key, 'must be a list of target names, e.g. targets = ["a", "b"]')
            continue
        chosen: list[str] = []
        for name in raw:
            if name in streams:
                chosen.append(name)
            elif name in targets:
                chosen += [s for s, (parent, _n) in streams.items() if parent == name]
            else:
                check.error(key, f"{name!r} is not a target of this plan (known: "
                            f"{', '.join(dict.fromkeys([*targets, *streams]))})")
                break
        else:
            if index - 1 < len(out):
                out[index - 1] = replace(out[index - 1], targets=tuple(dict.fromkeys(chosen)))
    return tuple(out)


def config_targets(config: FsConfig, targets: Mapping[str, Target]) -> list[str]:
    """The stream targets a configuration is made on (all of them unless it is limited)."""
    streams = list(stream_targets(targets))
    return [s for s in streams if not config.targets or s in config.targets]


def fits(config: FsConfig, params: Mapping[str, Any], targets: Mapping[str, Target]) -> bool:
    """Whether a case's placement uses only targets the configuration is made on."""
    value = params.get(PLACEMENT_KEY)
    if not isinstance(value, str) or not config.targets:
        return True
    return set(value.split("+")) <= set(config.targets)


def check_placements(plan: Plan, check: _Check) -> None:
    """Placements that no configuration can run (all its targets never made together)."""
    targets = named_targets(plan)
    for spec in plan.tests:
        value = spec.params.get(PLACEMENT_KEY)
        values = value if isinstance(value, tuple) else (value,) if value else ()
        for v in values:
            params = {PLACEMENT_KEY: v}
            if not any(fits(c, params, targets) for c in plan.configs):
                check.error(f"test[{spec.index + 1}].{PLACEMENT_KEY}",
                            f"{v!r}: no configuration is applied to all of its targets")
                break
