"""A JSON Schema of the plan format, generated from what the loader checks: the adapters'
ParamSpecs, the target kinds and the filesystem options.

Editors that validate TOML against a JSON Schema (taplo / Even Better TOML, IntelliJ) then
complete tool parameters and flag unknown keys while a plan is typed. Generated, not written,
so a new adapter parameter is in the schema without anyone editing it; `disklab plan schema`
prints it and the package ships it as resources/plan.schema.json (a test keeps the two equal).
The loader stays the authority: cross-parameter rules (block size vs size, safety of devices)
are not in the schema.
"""

from __future__ import annotations

import json
from typing import Any

from disklab.core import tools
from disklab.core.fs.options import (
    CONFIG_KEYS,
    FILESYSTEMS,
    MKFS_OPTIONS,
    MOUNT_OPTIONS,
    SCHEDULERS,
    MkfsOption,
)
from disklab.core.hosts.config import HOSTS_KEY, HOSTS_PARAM_SCHEMA, hosts_schema
from disklab.core.plan.checks import CACHE_LIMIT, MIN_IMAGE, TARGET_KINDS
from disklab.core.plan.parse import ZIP_KEY
from disklab.core.plan.targets import (
    CONFIG_TARGETS,
    MAX_PARTITIONS,
    MAX_TARGETS,
    NAME,
)
from disklab.core.tools.base import PLACEMENT_KEY, REQUIRED, ParamSpec
from disklab.core.vocab.model import ORDERS, RAW_KEY

SCHEMA_ID = "https://disklab.org/schemas/plan.schema.json"
SIZE = {"anyOf": [{"type": "integer", "minimum": 0},
                  {"type": "string",
                   "pattern": r"^\s*\d+(\.\d+)?\s*[kKmMgGtTpP]?([iI]?[bB])?\s*$"}],
        "description": "bytes, or a number with k, m, g or t (powers of 1024): '4096k'"}
DURATION = {"anyOf": [{"type": "number", "minimum": 0},
                      {"type": "string",
                       "pattern": r"^\s*\d+(\.\d+)?\s*(ms|MS|s|S|m|M|min|MIN|h|H)?\s*$"}],
            "description": "seconds, or a number with ms, s, m, min or h: '30s'"}


def _scalar(kind: str, choices: tuple[Any, ...] = (), minimum: float | None = None,
            maximum: float | None = None) -> dict[str, Any]:
    """The schema of one value of a parameter or mkfs option kind."""
    if kind == "size":
        out: dict[str, Any] = dict(SIZE)
    elif kind == "duration":
        out = dict(DURATION)
    elif kind == "bool":
        out = {"type": "boolean"}
    elif kind == "int":
        out = {"type": "integer"}
    elif kind == "float":
        out = {"type": "number"}
    elif kind == "choice":
        out = {"enum": list(choices)}
    else:  # str, path
        out = {"type": "string"}
    if kind in ("int", "float"):
        if minimum is not None:
            out["minimum"] = minimum
        if maximum is not None:
            out["maximum"] = maximum
    if choices and kind != "choice":
        out = {"enum": list(choices)} if kind != "size" else {"anyOf": [
            {"enum": list(choices)}, {"type": "string"}]}
    return out


def param_schema(spec: ParamSpec) -> dict[str, Any]:
    """A parameter: one value, or a list of values (a matrix axis). A `multi` parameter's value
    is itself a list of choices, so its axis is a list of lists."""
    one = _scalar(spec.kind, spec.choices, spec.minimum, spec.maximum)
    if spec.multi:
        one = {"anyOf": [{"enum": list(spec.choices)},
                         {"type": "array", "items": {"enum": list(spec.choices)},
                          "minItems": 1}]}
    out: dict[str, Any] = {"anyOf": [one, {"type": "array", "items": one, "minItems": 1}]}
    if spec.help:
        out["description"] = spec.help
    if spec.default is not REQUIRED and isinstance(spec.default, str | int | float | bool):
        out["default"] = spec.default
    return out


CACHE_LIMIT_SCHEMA = {**SIZE, "description": "the page cache the tool may fill (a memory "
                      "cgroup): buffered figures then come from the device"}
ZIP_SCHEMA = {"anyOf": [{"type": "array", "items": {"type": "string"}, "minItems": 2},
                        {"type": "array", "minItems": 1,
                         "items": {"type": "array", "items": {"type": "string"},
                                   "minItems": 2}}],
              "description": "groups of list parameters that advance together instead of "
                             "multiplying: [[\"sync\", \"fsync\"]]"}


RAW_SCHEMA = {"type": "boolean", "description": "run on the target's block device itself, "
              "before any configuration is made (an image or format target's raw-device "
              "section)"}


OPTION_VALUE = {"type": ["string", "integer", "number", "boolean"]}


def options_schema(tool: str, table: str) -> dict[str, Any]:
    """A test's table of the tool's own options ([test.fio_options]): any name the tool has
    (the plan check asks the tool itself), a value or a list of values (an axis)."""
    return {"type": "object", "description": f"{tool}'s own job options, passed through as "
            f"{tool} reads them (checked by {tool} before anything runs); a list is an axis",
            "additionalProperties": {"anyOf": [OPTION_VALUE, {"type": "array", "minItems": 1,
                                                             "items": OPTION_VALUE}]}}


def _test_schema() -> dict[str, Any]:
    """A [[test]] table: `tool` picks which parameters it may have."""
    branches = []
    for name in tools.tool_names():
        adapter = tools.get_adapter(name)
        required = [k for k, s in adapter.params.items() if s.default is REQUIRED]
        branches.append({
            "if": {"properties": {"tool": {"const": name}}, "required": ["tool"]},
            "then": {
                "properties": {"tool": {"const": name},
                               **{k: param_schema(s) for k, s in adapter.params.items()},
                               CACHE_LIMIT: CACHE_LIMIT_SCHEMA, ZIP_KEY: ZIP_SCHEMA,
                               **({HOSTS_KEY: HOSTS_PARAM_SCHEMA} if name == "fio" else {}),
                               **({PLACEMENT_KEY: ON_SCHEMA}
                                  if adapter.capabilities.placeable else {}),
                               **({RAW_KEY: RAW_SCHEMA}
                                  if adapter.capabilities.raw_device else {}),
                               **({adapter.options_table: options_schema(
                                   name, adapter.options_table)}
                                  if adapter.options_table else {})},
                "required": ["tool", *required],
                "additionalProperties": False,
            },
        })
    return {"type": "object", "required": ["tool"],
            "properties": {"tool": {"enum": list(tools.tool_names()),
                                    "description": "the benchmark tool of this test"}},
            "allOf": branches}


def _mkfs_schema(option: MkfsOption) -> dict[str, Any]:
    out = _scalar(option.kind, option.choices, option.minimum, option.maximum)
    out["description"] = f"{option.help} ({', '.join(option.fs)})"
    if option.kind == "path":  # a device DiskLab wipes: a table with its confirm
        out = {"anyOf": [out, {"type": "object", "additionalProperties": False,
                               "required": ["path", "confirm"],
                               "properties": {"path": {"type": "string", "pattern": "^/dev/"},
                                              "confirm": {"type": "string"}}}],
               "description": out["description"] + "; { path, confirm = \"PATH SERIAL SIZE\" }"}
    return out


def _config_schema() -> dict[str, Any]:
    mount_names = sorted(MOUNT_OPTIONS)
    mount_item = {"type": "string", "description": "a mount option: "
                  + ", ".join(n if MOUNT_OPTIONS[n].kind == "flag" else f"{n}=..."
                              for n in mount_names)}
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "label": {"type": "string", "description": "the name results are grouped by"},
            "fs": {"enum": list(FILESYSTEMS)},
            "mkfs": {"type": "object", "additionalProperties": False,
                     "properties": {k: _mkfs_schema(o) for k, o in MKFS_OPTIONS.items()}},
            "mount": {"anyOf": [{"type": "array", "items": mount_item},
                                {"type": "string", "description": "comma-separated options"}]},
            "readahead": {"type": "integer", "minimum": 0,
                          "description": "read-ahead in 512-byte sectors"},
            "scheduler": {"enum": list(SCHEDULERS)},
            "cache": {"type": "object", "additionalProperties": False,
                      "description": "dm-cache under the filesystem (where the kernel has it)",
                      "properties": {"device": {"type": "string", "pattern": "^/dev/"},
                                     "confirm": {"type": "string"},
                                     "mode": {"enum": ["writeback", "writethrough"]}}},
            CONFIG_TARGETS: {"type": "array", "minItems": 1, "items": {"type": "string"},
                             "description": "the targets (or partitions) this configuration "
                                            "is made on; all when not given"},
        },
        "required": ["label"],
        "propertyNames": {"enum": [*CONFIG_KEYS, CONFIG_TARGETS]},
    }


def _target_schema() -> dict[str, Any]:
    device = {"type": "string", "pattern": "^/dev/"}
    kinds = {
        "directory": {"type": "string", "description": "an existing, writable directory"},
        "image": {"type": "object", "additionalProperties": False, "required": ["path", "size"],
                  "properties": {"path": {"type": "string",
                                          "description": "a file DiskLab creates and removes"},
                                 "size": {**SIZE, "description":
                                          f"at least {MIN_IMAGE >> 20} MiB (sparse)"}},
                  "description": "a scratch image, attached with direct I/O, formatted per "
                                 "[[config]]"},
        "format": {**device, "description": "a device DiskLab formats (destructive: confirm)"},
        "device": {**device, "description": "raw I/O on a device (destructive: confirm)"},
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {**kinds, "confirm": {
            "type": "string", "description": "PATH SERIAL SIZE as `disklab devices` shows it"},
            "partitions": {"type": "integer", "minimum": 1, "maximum": MAX_PARTITIONS,
                           "description": "image or format: split into N GPT partitions, "
                                          "targets NAME1..NAMEN"}},
        "oneOf": [{"required": [k]} for k in TARGET_KINDS],
    }


def _report_schema() -> dict[str, Any]:
    """The [report] table: the pivot table a session of the plan opens with."""
    names = {"type": "array", "items": {"type": "string", "minLength": 1}}
    return {"type": "object", "additionalProperties": False,
            "description": "the pivot table the plan's sessions open with (Compare, "
                           "`disklab compare`, the HTML report)",
            "properties": {
                "rows": {**names, "description": "pivot keys of the rows: config, tool, test, "
                                                 "metric, session, target, host, on, hosts or "
                                                 "a parameter"},
                "columns": {**names, "description": "pivot keys of the columns"},
                "metrics": {**names, "description": "metric names ('write', 'write:iops') or "
                                                    "suffixes ('iops', 'lat_mean')"},
                "baseline": {"type": "string", "pattern": "^[^=]+=.+$",
                             "description": "KEY=VALUE: the cell each other is compared with, "
                                            "only where every other key is the same "
                                            "(config=ext4)"},
                "where": {"type": "array", "items": {"type": "string", "pattern": "^[^=]+=.+$"},
                          "description": "KEY=VALUE filters of the rows shown"},
                "title": {"type": "string",
                          "description": "which table of the study it reproduces"},
                "units": {"enum": ["si", "iec"],
                          "description": "rates and sizes in si (MB/s, GB; the default) or "
                                         "iec (MiB/s, GiB) in `disklab show`, `compare` and "
                                         "`export` unless --units is given"},
                "chart": {"enum": ["lines", "bars", "heatmap"],
                          "description": "the chart's shape (default: as the data asks)"},
                "x": {"type": "string",
                      "description": "the row or column key a line chart sweeps"}}}


def plan_schema() -> dict[str, Any]:
    """The JSON Schema (draft-07, which most editors support) of a plan's TOML document."""
    properties: dict[str, Any] = {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "repeats": {"type": "integer", "minimum": 1, "default": 1,
                    "description": "each case runs this many times, in rounds"},
        "drop_caches": {"type": "boolean", "default": False,
                        "description": "sync and drop the page cache before each case (root)"},
        "stop_on_failure": {"type": "boolean", "default": False},
        "order": {"enum": list(ORDERS), "default": ORDERS[0],
                  "description": "configuration: every repeat of a configuration before the "
                                 "next; interleaved: each configuration's repeat r before any "
                                 "repeat r + 1 (a drift of the machine lands on all alike)"},
        CACHE_LIMIT: CACHE_LIMIT_SCHEMA,
        "target": _target_schema(),
        "test": {"type": "array", "minItems": 1, "items": _test_schema()},
        "config": {"type": "array", "items": _config_schema()},
        HOSTS_KEY: hosts_schema(),
        "targets": {"type": "object", "minProperties": 1, "maxProperties": MAX_TARGETS,
                    "propertyNames": {"pattern": f"^{NAME.pattern}$"},
                    "additionalProperties": _target_schema(),
                    "description": "several targets, [targets.a], [targets.b]...: a test's "
                                   "`on` places its streams on them"},
    }
    properties["report"] = _report_schema()
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": SCHEMA_ID,
        "title": "DiskLab plan",
        "description": "A DiskLab benchmark plan (TOML); `disklab plan validate` checks the rest",
        "type": "object",
        "additionalProperties": False,
        "required": ["test"],
        "oneOf": [{"required": ["target"]}, {"required": ["targets"]}],
        "properties": properties,
    }


def plan_schema_text() -> str:
    """The schema as the shipped file holds it."""
    return json.dumps(plan_schema(), indent=2, ensure_ascii=False) + "\n"


ON_SCHEMA: dict[str, Any] = {
    "anyOf": [{"type": "string"}, {"type": "array", "minItems": 1, "items": {
        "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}}],
    "description": "where the streams run: target names joined by '+' (\"a+b\": one stream on "
                   "a, one on b; \"a+a\": two on a); a list is an axis of placements",
}
