"""Plans: TOML files in, a checked Plan out, with every problem reported at once by key and line.

The plan format is a contract (the GUI writes it, later checks read it), so checking is generic:
each tool declares its parameters as ParamSpecs and this module checks any plan against them.
tomllib gives no line numbers, so `_KeyLines` scans the text for where each key was written.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psutil

from disklab.core import tools
from disklab.core.fs.options import config_from_toml, device_options, journalled_data_seconds
from disklab.core.hosts.config import HOSTS_KEY, read_hosts, read_hosts_param
from disklab.core.plan.direct_io import direct_io_refusal_once
from disklab.core.plan.matrix import expand, point_count, points, run_count
from disklab.core.plan.targets import (
    check_placements,
    limit_configs,
    named_targets,
    place_tests,
    read_partitions,
    read_targets,
    stream_targets,
    take_config_targets,
    take_placements,
)
from disklab.core.proc import which
from disklab.core.system.cgroups import MIN_LIMIT, find_memory_controller
from disklab.core.system.devices import check_destructive, kernel_name
from disklab.core.system.mountinfo import mount_of, same_filesystem
from disklab.core.tools.base import PLACEMENT_KEY, REQUIRED, ParamSpec, ToolAdapter
from disklab.core.vocab.errors import DisklabError, PlanError, Problem
from disklab.core.vocab.model import (
    AS_IS,
    PIVOT_KEYS,
    RAW_KEY,
    RAW_SECTION,
    FsConfig,
    Plan,
    Report,
    Target,
    TestSpec,
)
from disklab.core.vocab.units import (
    MAX_BYTES,
    format_size,
    human_bytes,
    parse_duration,
    parse_size,
)

TOP_KEYS = {"name", "description", "repeats", "drop_caches", "stop_on_failure", "target", "test",
            "config", "page_cache_limit", "hosts", "targets", "report"}
CACHE_LIMIT = "page_cache_limit"  # plan-level, and per [[test]] (not a tool parameter)
# Filesystems that are the kernel's interfaces, not storage: a target directory there measures
# nothing and writes into /sys or /proc (as root, settings)
PSEUDO_FILESYSTEMS = frozenset({
    "sysfs", "proc", "devtmpfs", "devpts", "cgroup", "cgroup2", "debugfs", "tracefs",
    "securityfs", "configfs", "bpf", "pstore", "efivarfs", "fusectl", "mqueue", "binfmt_misc",
    "autofs", "rpc_pipefs", "nsfs"})
TARGET_KINDS = ("directory", "image", "format", "device")
TARGET_KEYS = {*TARGET_KINDS, "confirm", "partitions"}
MIN_IMAGE = 64 << 20
ZIP_KEY = "zip"  # in a [[test]] table: groups of list parameters that advance together
# What one plan may ask for: its runs (configurations x cases x repeats) are counted before any
# is made, so that a plan cannot fill the memory, the library or the years ahead.
MAX_REPEATS = 10_000
MAX_RUNS = 100_000
MAX_NESTING = 100  # brackets and braces open at once: tomllib recurses on each


class _KeyLines:
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
class _Checker:
    """Collects problems while a plan is read, so that all are reported together."""

    where: _KeyLines
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


@dataclass(frozen=True)
class CheckedPlan:
    """A plan that can run, and the warnings to show and record with its session."""

    plan: Plan
    warnings: tuple[Problem, ...]


def convert(spec: ParamSpec, value: Any) -> Any:
    """One plan value -> the canonical value of a parameter; ValueError says what was expected."""
    if spec.kind == "size":
        return parse_size(value)
    if spec.kind == "duration":
        return parse_duration(value)
    if spec.kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{value!r} is not true or false")
        return value
    if spec.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{_short(value)} is not a whole number")
        return value
    if spec.kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{_short(value)} is not a number")
        if (isinstance(value, int) and abs(value) > MAX_BYTES) or not math.isfinite(value):
            raise ValueError(f"{_short(value)} is not a finite number a float holds")
        return float(value)
    if spec.kind == "choice":
        if spec.multi:
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list) or not items:
                raise ValueError(f"{value!r} is not a list of {', '.join(spec.choices)}")
            bad = [v for v in items if v not in spec.choices]
            if bad:
                raise ValueError(f"{bad[0]!r} is not one of {', '.join(spec.choices)}")
            return tuple(items)
        if value not in spec.choices:
            raise ValueError(f"{value!r} is not one of {', '.join(spec.choices)}")
        return value
    if spec.kind == "str":
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not a string")
        return value
    raise ValueError(f"unknown parameter kind {spec.kind}")


def _value(spec: ParamSpec, value: Any) -> Any:
    """One parameter value converted and range-checked; ValueError says what is wrong."""
    converted = convert(spec, value)
    out_of_range = _check_range(spec, converted)
    if out_of_range:
        raise ValueError(out_of_range)
    return converted


def _check_range(spec: ParamSpec, value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if spec.minimum is not None and value < spec.minimum:
        return f"{_short(value)} is below the minimum {spec.minimum:g}"
    if spec.maximum is not None and value > spec.maximum:
        limit = format_size(int(spec.maximum)) if spec.kind == "size" else f"{spec.maximum:g}"
        return f"{_short(value)} is above the maximum {limit}"
    return None


def _short(value: Any, limit: int = 40) -> str:
    """A value as a message quotes it: a 400-digit number is cut, not printed whole."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _is_axis(spec: ParamSpec, value: Any) -> bool:
    if not isinstance(value, list):
        return False
    if spec.multi:
        return bool(value) and all(isinstance(v, list) for v in value)
    return True


def _read_test(index: int, table: Any, check: _Checker) -> TestSpec | None:
    base = f"test[{index + 1}]"
    if not isinstance(table, dict):
        check.error(base, "must be a table ([[test]])")
        return None
    tool = table.get("tool")
    if tool is None:
        check.error(f"{base}.tool", "missing: which tool runs this test")
        return None
    try:
        adapter = tools.get_adapter(str(tool))
    except KeyError:
        check.error(
            f"{base}.tool", f"unknown tool {tool!r} (known: {', '.join(tools.tool_names())})"
        )
        return None
    if adapter.executable and not _which(adapter.executable):
        check.error(
            f"{base}.tool",
            f"{adapter.executable} is not installed: install the Debian package "
            f"'{adapter.package}' (apt install {adapter.package})",
        )
    params: dict[str, Any] = {}
    axes: list[str] = []
    for key, raw in table.items():
        if key in ("tool", ZIP_KEY):
            continue
        spec = adapter.params.get(key)
        where = f"{base}.{key}"
        if key == "direct" and not adapter.capabilities.direct_io and any(
                v is True for v in (raw if isinstance(raw, list) else [raw])):
            check.error(where, f"{tool} cannot do direct I/O (O_DIRECT), so its figures would "
                               "come through the page cache: remove `direct` or use another tool")
            continue
        if spec is None:
            check.error(where, f"unknown key for {tool} (known: {', '.join(adapter.params)})")
            continue
        values = raw if _is_axis(spec, raw) else [raw]
        if _is_axis(spec, raw):
            if not raw:
                check.error(where, "an empty list gives no cases")
                continue
            axes.append(key)
        converted = []
        for value in values:
            try:
                converted.append(_value(spec, value))
            except ValueError as e:
                check.error(where, str(e))
        if len(converted) == len(values):
            params[key] = tuple(converted) if key in axes else converted[0]
    for key, spec in adapter.params.items():
        if key in params or key in table:
            continue
        if spec.default is REQUIRED:
            check.error(f"{base}.{key}", f"missing: {tool} needs {key!r}")
        else:
            params[key] = spec.default
    zips = _read_zip(table.get(ZIP_KEY), base, params, axes, check)
    return TestSpec(index=index, tool=str(tool), params=params, line=check.where.get(base),
                    axes=tuple(axes), zips=zips)


def _read_zip(raw: Any, base: str, params: Mapping[str, Any], axes: list[str],
              check: _Checker) -> tuple[tuple[str, ...], ...]:
    """`zip = [["sync", "fsync"]]`: the named list parameters advance together (their first
    values make one case, their second values the next, ...) instead of multiplying. Each name
    must be a list parameter of the test, in one group only, and a group's lists equally long."""
    if raw is None:
        return ()
    key = f"{base}.{ZIP_KEY}"
    if isinstance(raw, list) and raw and all(isinstance(n, str) for n in raw):
        raw = [raw]  # zip = ["sync", "fsync"]: one group
    if (not isinstance(raw, list) or not raw
            or not all(isinstance(g, list) and all(isinstance(n, str) for n in g) for g in raw)):
        check.error(key, 'must be a list of groups of parameter names, e.g. '
                    'zip = [["sync", "fsync"]]')
        return ()
    groups: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for group in raw:
        if len(group) < 2:
            check.error(key, f"{group!r}: a group zips at least two list parameters")
            continue
        bad = False
        for name in group:
            if name in seen:
                check.error(key, f"{name!r} is in more than one zip group (or twice in one)")
                bad = True
            elif name not in axes:
                what = "not a parameter of this test" if name not in params else \
                    "not a list (a matrix axis) in this test"
                check.error(key, f"{name!r} is {what}: zip pairs list parameters")
                bad = True
            seen.add(name)
        if bad:
            continue
        lengths = {name: len(params[name]) for name in group if name in params}
        if len(lengths) < len(group):
            continue  # a value of the group is wrong: already reported at its key
        if len(set(lengths.values())) > 1:
            check.error(key, "zipped lists must be equally long: " + ", ".join(
                f"{name} has {n}" for name, n in lengths.items()))
            continue
        groups.append(tuple(group))
    return tuple(groups)


def _which(executable: str) -> bool:
    return which(executable) is not None


def _read_target(doc: Mapping[str, Any], check: _Checker, base_dir: Path,
                 library: str | None) -> Target | None:
    table = doc.get("target")
    if table is None:
        check.error("target", "missing: add a [target] table with directory = \"...\"")
        return None
    return _target_table(table, "target", check, base_dir, library)


def _target_table(table: Any, base: str, check: _Checker, base_dir: Path,
                  library: str | None) -> Target | None:
    """One target table ([target], or [targets.NAME] with `base` its key), every check."""
    if not isinstance(table, dict):
        check.error(base, "must be a table")
        return None
    for key in table:
        if key not in TARGET_KEYS:
            check.error(f"{base}.{key}", f"unknown key (known: {', '.join(sorted(TARGET_KEYS))})")
    kinds = [k for k in TARGET_KINDS if k in table]
    if len(kinds) != 1:
        check.error(base, "give exactly one of directory, image, format or device"
                    + (f" (found {', '.join(kinds)})" if kinds else ""))
        return None
    kind = kinds[0]
    if kind == "directory":
        target = _directory_target(table["directory"], check, base_dir, base)
    elif kind == "image":
        target = _image_target(table["image"], check, base_dir, base)
    else:
        target = _format_target(table[kind], table.get("confirm"), check, library, kind, base)
    partitions = read_partitions(table, base, kind, check)
    if target is not None and partitions:
        target = replace(target, partitions=partitions)
    return target


def _directory_target(directory: Any, check: _Checker, base_dir: Path,
                      base: str = "target") -> Target | None:
    if not isinstance(directory, str) or not directory:
        check.error(f"{base}.directory", "must be a path")
        return None
    path = Path(directory).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    if not path.exists():
        check.error(f"{base}.directory", f"{path} does not exist")
    elif not path.is_dir():
        check.error(f"{base}.directory", f"{path} is not a directory")
    elif (pseudo := mount_of(str(path))) is not None and pseudo.fstype in PSEUDO_FILESYSTEMS:
        check.error(f"{base}.directory", f"{path} is on {pseudo.fstype} (mounted on "
                    f"{pseudo.mountpoint}), the kernel's view of itself, not storage: give a "
                    "directory on a disk's filesystem")
    elif not os.access(path, os.W_OK | os.X_OK):
        check.error(f"{base}.directory", f"{path} is not writable")
    return Target(kind="directory", path=str(path))


def _image_target(image: Any, check: _Checker, base_dir: Path,
                  base: str = "target") -> Target | None:
    """A scratch image DiskLab makes, attaches with direct I/O, formats per config, removes."""
    if not isinstance(image, dict) or set(image) - {"path", "size"}:
        check.error(f"{base}.image", 'must be { path = "/var/tmp/disklab.img", size = "8g" }')
        return None
    raw_path, raw_size = image.get("path"), image.get("size")
    if not isinstance(raw_path, str) or not raw_path:
        check.error(f"{base}.image", "needs path = \"...\" (a file DiskLab creates)")
        return None
    path = Path(raw_path).expanduser()
    path = path if path.is_absolute() else base_dir / path
    if path.exists():
        check.error(f"{base}.image", f"{path} exists: DiskLab makes a new image there and "
                    "removes it afterwards; choose a path that does not exist")
    if not path.parent.is_dir():
        check.error(f"{base}.image", f"{path.parent} is not a directory")
    try:
        size = parse_size(raw_size if raw_size is not None else "")
    except ValueError as e:
        check.error(f"{base}.image", f"size: {e}")
        return None
    if size < MIN_IMAGE:
        check.error(f"{base}.image", f"size {format_size(size)} is below {format_size(MIN_IMAGE)}")
    elif path.parent.is_dir() and size > shutil.disk_usage(path.parent).free:
        check.warn(f"{base}.image", f"the image ({human_bytes(size)}) is larger than the free "
                   f"space under {path.parent}; it is sparse, but filling it will fail")
    if os.geteuid() != 0 and not _which("pkexec") and not _which("sudo"):
        check.error(f"{base}.image", "attaching an image needs root, pkexec or sudo")
    return Target(kind="image", path=str(path), size=size)


def _format_target(device: Any, confirm: Any, check: _Checker, library: str | None,
                   kind: str = "format", base: str = "target") -> Target | None:
    """A device DiskLab formats per config (format) or writes raw (device): every safety check
    of disklab.core.system.devices, and the plan's confirm must match the device as read now."""
    if not isinstance(device, str) or not device.startswith("/dev/"):
        check.error(f"{base}.{kind}", "must be a block device path such as /dev/sdb1")
        return None
    if not isinstance(confirm, str) or not confirm:
        verb = "formatting" if kind == "format" else "raw I/O on"
        check.error(f"{base}.confirm", f"{verb} {device} destroys its data: add confirm = "
                    "\"PATH SERIAL SIZE\" as `disklab devices` shows it")
        confirm = None
    size = None
    try:
        size = check_destructive(device, confirm, library).size
    except DisklabError as e:
        check.error(f"{base}.{kind}", str(e))
    return Target(kind=kind, path=device, confirm=confirm, size=size)


# The Test matrix page (gui/pages/matrix.py, another developer's file in issue 31) still reads
# these names; new code asks tools.raw_tools() / tools.placeable_tools().
RAW_TOOLS = tools.ToolsWith("raw_device")


def _raw_problem(tool: str, params: Mapping[str, Any]) -> tuple[str, str] | None:
    """Why a case cannot run on a raw device, as (key, message); None if it can. The plan
    loader and the privileged helper (case_params) ask this same question."""
    if tool not in tools.raw_tools():
        return "tool", (f"{tool} needs a filesystem: on a raw device use "
                        f"{', '.join(tools.raw_tools())} (or a format target with configs)")
    if int(params.get("streams", 1) or 1) > 1 or int(params.get("numjobs", 1) or 1) > 1:
        return "streams", "a raw device is one stream: streams/numjobs = 1"
    return None


def _raw_flags(raw_tests: list[Any], check: _Checker) -> dict[int, bool]:
    """Each [[test]]'s `raw` (true: it runs on the target's block device), checked as a bool."""
    flags: dict[int, bool] = {}
    for i, t in enumerate(raw_tests):
        if not isinstance(t, dict) or RAW_KEY not in t:
            continue
        if isinstance(t[RAW_KEY], bool):
            flags[i] = t[RAW_KEY]
        else:
            check.error(f"test[{i + 1}].{RAW_KEY}", f"{t[RAW_KEY]!r} is not true or false")
    return flags


def _check_raw_section(plan: Plan, check: _Checker) -> None:
    """Tests with raw = true: only where the target is a block device DiskLab may write (an
    image it attaches, a format target already confirmed), one of them, with no placement."""
    raw = [s for s in plan.tests if s.raw]
    if not raw or plan.target.kind == "device":
        return  # on a device target every test runs on the device anyway
    key = f"test[{raw[0].index + 1}].{RAW_KEY}"
    if plan.target.kind == "directory":
        check.error(key, "a directory target has no device of its own: raw = true needs an "
                    "image, format or device target")
    elif plan.targets or plan.target.partitions:
        check.error(key, "raw = true runs on the plan's one image or format target: not with "
                    "several targets or partitions")
    for i, config in enumerate(plan.configs, start=1):
        if config.label == RAW_SECTION:
            check.error(f"config[{i}].label", f"{RAW_SECTION!r} names the raw-device section "
                        "of this plan's raw = true tests: give the configuration another label")


def _check_raw(plan: Plan, check: _Checker) -> None:
    """What runs on a device (a device target's tests, the raw = true tests of an image or
    format target): raw tools only, one stream, nothing larger than the device."""
    _check_raw_section(plan, check)
    if plan.target.kind != "device" and not plan.raw_section:
        return
    for spec in plan.tests:
        if plan.target.kind != "device" and not spec.raw:
            continue
        base = f"test[{spec.index + 1}]"
        for params in _points(spec):
            problem = _raw_problem(spec.tool, params)
            if PLACEMENT_KEY in params:
                problem = (PLACEMENT_KEY, "a raw device case is one stream on the device: no `on`")
            if problem is not None:
                key, message = problem
                check.error(f"{base}.tool" if key == "tool" else base, message)
                break
            size = params.get("size")
            if plan.target.size and isinstance(size, int) and size > plan.target.size:
                check.error(f"{base}.size", f"{format_size(size)} is more than the device "
                            f"holds ({human_bytes(plan.target.size)})")
                break


def case_params(tool: str, raw: Mapping[str, Any], device: bool = False) -> dict[str, Any]:
    """One case's parameters (single values, as a Case holds them), checked as the plan loader
    checks a test: for the privileged helper, which trusts nothing its client sends. `device`:
    the case runs on a raw device (raw tools only, one stream). PlanError names each problem."""
    try:
        adapter = tools.get_adapter(tool)
    except KeyError:
        raise PlanError([Problem("tool", f"unknown tool {tool!r}")]) from None
    problems: list[Problem] = []
    params: dict[str, Any] = {}
    for key, value in raw.items():
        spec = adapter.params.get(key)
        if spec is None:
            problems.append(Problem(key, f"unknown key for {tool}"))
            continue
        if value is None and spec.default is None:  # an optional parameter left unset
            params[key] = None
            continue
        try:
            params[key] = _value(spec, value)
        except ValueError as e:
            problems.append(Problem(key, str(e)))
    for key, spec in adapter.params.items():
        if key in raw:
            continue
        if spec.default is REQUIRED:
            problems.append(Problem(key, f"missing: {tool} needs {key!r}"))
        else:
            params[key] = spec.default
    if not problems:
        problems += [Problem(key, message) for key, message in adapter.check(params)]
    raw_problem = _raw_problem(tool, params) if device else None
    if raw_problem is not None:
        problems.append(Problem(*raw_problem))
    if problems:
        raise PlanError(problems)
    return params


def _read_configs(doc: Mapping[str, Any], target: Target | None, check: _Checker,
                  library: str | None = None) -> tuple[FsConfig, ...]:
    """[[config]] tables: only for targets DiskLab formats; labels unique; every second device
    a config writes to (external journal/log) confirmed and safe like a format target."""
    raw = doc.get("config", [])
    if not isinstance(raw, list):
        check.error("config", "use [[config]] tables")
        return (AS_IS,)
    if target is not None and target.kind in ("directory", "device"):
        if raw:
            check.error("config[1]", f"a {target.kind} target has no filesystem DiskLab makes; "
                        "configurations need an image or format target")
        return (AS_IS if target.kind == "directory" else FsConfig(label=RAW_SECTION),)
    if not raw:
        raw = [{"label": "ext4 defaults", "fs": "ext4"}]
    configs = []
    labels: set[str] = set()
    for i, table in enumerate(raw, start=1):
        config, problems = config_from_toml(table, i)
        for key, message in problems:
            check.error(key, message)
        if config is None:
            continue
        if not config.label:
            check.error(f"config[{i}].label", "every config needs a label")
        elif config.label in labels:
            check.error(f"config[{i}].label", f"{config.label!r} is used twice")
        labels.add(config.label)
        _check_devices(config, i, target, check, library)
        configs.append(config)
    return tuple(configs) or (AS_IS,)


def _check_devices(config: FsConfig, index: int, target: Target | None, check: _Checker,
                   library: str | None) -> None:
    """An external journal or log device is wiped and formatted like the target: the same
    safety classes, its own confirm, and never the target itself."""
    for name, path in device_options(config).items():
        key = f"config[{index}].mkfs.{name}"
        confirm = config.confirms.get(name)
        if not path.startswith("/dev/"):
            check.error(key, f"{path} must be a block device path such as /dev/sdc1")
            continue
        if confirm is None:
            check.error(key, f"{name} {path} is wiped and formatted, destroying its data: write "
                        f'{name} = {{ path = "{path}", confirm = "PATH SERIAL SIZE" }} with the '
                        "confirm as `disklab devices` shows it")
        try:
            if (target is not None and target.kind == "format"
                    and kernel_name(path) == kernel_name(target.path)):
                check.error(key, f"{path} is the target itself: an external {name} needs a "
                            "device of its own")
                continue
            check_destructive(path, confirm, library)
        except DisklabError as e:
            check.error(key, str(e))


@dataclass(frozen=True)
class Destroyed:
    """A device a run wipes: the format or raw device target, or an external journal or log
    device of a configuration. Each is confirmed in the plan and typed back (--yes-destroy)."""

    path: str
    confirm: str | None
    key: str  # the TOML key that names it ('target.format', 'config[2].mkfs.journal_device')
    line: int | None
    role: str  # what is done to it, for the question asked before the run


def destroyed_devices(plan: Plan) -> list[Destroyed]:
    """Every device a run of `plan` destroys, the target first, each once."""
    where = _KeyLines(plan.source)
    out: list[Destroyed] = []
    target = plan.target
    for name, each in (plan.targets or {"": target}).items():
        if not each.destructive:
            continue
        key = f"targets.{name}.{each.kind}" if name else f"target.{each.kind}"
        role = ("formatted once per configuration" if each.kind == "format"
                else "written to directly")
        out.append(Destroyed(each.path, each.confirm, key, where.get(key), role))
    if target.kind in ("image", "format"):
        for i, config in enumerate(plan.configs, start=1):
            for name, path in device_options(config).items():
                if any(d.path == path for d in out):
                    continue
                key = f"config[{i}].mkfs.{name}"
                out.append(Destroyed(path, config.confirms.get(name), key, where.get(key),
                                     f"formatted as the external {name.replace('_', ' ')} of "
                                     f"{config.label!r}"))
    return out


def _typed(doc: Mapping[str, Any], key: str, kind: type, default: Any, check: _Checker) -> Any:
    value = doc.get(key, default)
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        check.error(key, f"{value!r} is not a whole number")
        return default
    if not isinstance(value, kind):
        check.error(key, f"{value!r} is not a {kind.__name__}")
        return default
    return value


def _toml(text: str) -> dict[str, Any]:
    """The TOML document, or a PlanError with the line of the syntax error. tomllib says
    "(at line L, column C)", or "(at end of document)" for what is never closed (a string, an
    array): then the last line that is not blank, often the one the unclosed thing opens on.
    Deep nesting is refused before tomllib recurses into it (RecursionError)."""
    deep = _too_deep(text)
    if deep is not None:
        raise PlanError([Problem("(syntax)", f"not valid TOML for DiskLab: more than "
                                 f"{MAX_NESTING} brackets or braces open at once", deep)])
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        if m:
            line: int | None = int(m.group(1))
        else:
            filled = [n for n, raw in enumerate(text.splitlines(), start=1) if raw.strip()]
            line = filled[-1] if filled else 1
        raise PlanError([Problem("(syntax)", f"not valid TOML: {e}", line)]) from e
    except RecursionError as e:
        raise PlanError([Problem("(syntax)", "not valid TOML for DiskLab: nested too deeply",
                                 1)]) from e
    except ValueError as e:  # tomllib's int() of a number with more than 4300 digits
        long = re.search(r"\d{1000,}", text)
        line = text.count("\n", 0, long.start()) + 1 if long else 1
        raise PlanError([Problem("(syntax)", f"not valid TOML for DiskLab: {e}".split(";")[0],
                                 line)]) from e


def _too_deep(text: str) -> int | None:
    """The line on which more than MAX_NESTING brackets or braces are open (strings and
    comments counted too: a plan has no reason to come near), or None."""
    depth = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        for char in raw:
            if char in "[{":
                depth += 1
                if depth > MAX_NESTING:
                    return number
            elif char in "]}":
                depth = max(depth - 1, 0)
    return None


def parse_plan(
    text: str,
    *,
    path: str | None = None,
    target_dir: str | None = None,
    library: str | None = None,
    cgroup_root: str = "/",
) -> CheckedPlan:
    """Read and check a plan. Raises PlanError holding every error; warnings come back.

    `target_dir` replaces the plan's target directory (the CLI's --target, the quick preset).
    `library` is where the session will be stored, for the library-on-target warning.
    `cgroup_root`: where /proc and /sys are for finding the memory controller (a page-cache limit).
    """
    where = _KeyLines(text)
    check = _Checker(where)
    doc = _toml(text)
    if target_dir is not None:
        doc["target"] = {"directory": target_dir}
    for key in doc:
        if key not in TOP_KEYS:
            check.error(key, f"unknown key (known: {', '.join(sorted(TOP_KEYS))})")
    base_dir = Path(path).resolve().parent if path else Path.cwd()
    default_name = Path(path).stem if path else "plan"
    name = _typed(doc, "name", str, default_name, check)
    repeats = _typed(doc, "repeats", int, 1, check)
    if repeats < 1:
        check.error("repeats", f"{_short(repeats)} is below the minimum 1")
    elif repeats > MAX_REPEATS:
        check.error("repeats", f"{_short(repeats)} is above the maximum {MAX_REPEATS}")
        repeats = 1
    drop_caches = _typed(doc, "drop_caches", bool, False, check)
    stop_on_failure = _typed(doc, "stop_on_failure", bool, False, check)
    config_limits = take_config_targets(doc)
    named = read_targets(doc, check, lambda table, key: _target_table(
        table, key, check, base_dir, library)) if "targets" in doc else None
    if named is not None:
        target = next(iter(named.values()), None)
    elif "targets" in doc:
        target = None  # [targets] was there and wrong: said at its key
    else:
        target = _read_target(doc, check, base_dir, library)
    configs = _read_configs(doc, target, check, library)
    places = named if named is not None else {"target": target} if target else {}
    configs = limit_configs(configs, config_limits, places, check)
    specs, host_params, cache_limit, hosts = _read_tests(doc, places, base_dir, check)
    plan = Plan(
        name=name,
        target=target or Target("directory", ""),
        tests=tuple(specs),
        configs=configs,
        repeats=max(repeats, 1),
        drop_caches=drop_caches,
        stop_on_failure=stop_on_failure,
        source=text,
        path=path,
        page_cache_limit=cache_limit,
        hosts=hosts,
        targets=named or {},
        report=read_report(doc.get("report"), [s.tool for s in specs], check),
    )
    _check_plan(plan, check, host_params, library, cgroup_root, target is not None)
    if check.errors:
        raise PlanError(check.errors)
    return CheckedPlan(plan, tuple(check.warnings))


def _read_tests(doc: Mapping[str, Any], places: Mapping[str, Target], base_dir: Path,
                check: _Checker) -> tuple[list[TestSpec], dict[int, Any], Any, Any]:
    """The [[test]] tables, each with its page-cache limit, `hosts`, `raw` and placement read
    apart from the tool's parameters; each test's hosts by test index; the plan's own
    page-cache limit and [hosts.*] (read here, in this order, so that problems come in the
    order of the plan's reading)."""
    raw_tests = doc.get("test", [])
    if not isinstance(raw_tests, list) or not raw_tests:
        check.error("test", "no tests: add at least one [[test]] table")
        raw_tests = []
    cache_limit = _cache_limit(doc, CACHE_LIMIT, check)
    test_limits = {i: _cache_limit(t, f"test[{i + 1}].{CACHE_LIMIT}", check)
                   for i, t in enumerate(raw_tests) if isinstance(t, dict) and CACHE_LIMIT in t}
    raw_tests = [{k: v for k, v in t.items() if k != CACHE_LIMIT} if isinstance(t, dict) else t
                 for t in raw_tests]
    hosts = read_hosts(doc, check, base_dir)
    host_params = {i: read_hosts_param(t[HOSTS_KEY], f"test[{i + 1}].{HOSTS_KEY}",
                                       t.get("tool"), hosts, check)
                   for i, t in enumerate(raw_tests) if isinstance(t, dict) and HOSTS_KEY in t}
    raw_tests = [{k: v for k, v in t.items() if k != HOSTS_KEY} if isinstance(t, dict) else t
                 for t in raw_tests]
    raw_flags = _raw_flags(raw_tests, check)
    raw_tests = [{k: v for k, v in t.items() if k != RAW_KEY} if isinstance(t, dict) else t
                 for t in raw_tests]
    raw_tests, placed = take_placements(raw_tests)
    specs = [s for i, t in enumerate(raw_tests) if (s := _read_test(i, t, check)) is not None]
    specs = place_tests(specs, placed, places, check)
    specs = [replace(s, page_cache_limit=test_limits.get(s.index),
                     raw=raw_flags.get(s.index, False)) for s in specs]
    specs = [_with_hosts(s, host_params.get(s.index)) for s in specs]
    return specs, host_params, cache_limit, hosts


def _check_plan(plan: Plan, check: _Checker, host_params: Mapping[int, Any],
                library: str | None, cgroup_root: str, has_target: bool) -> None:
    """The checks of the plan as a whole, once its parts are read: hosts and the target,
    targets and placements, raw sections, the page-cache limit, the run count, each case,
    the resources, and the warnings; each later check only on a plan without errors (and
    those about the target only when it could be read: `has_target`)."""
    if has_target and plan.target.kind != "directory":
        for i in host_params:  # the client here needs no root, nor a filesystem made for it
            check.error(f"test[{i + 1}].{HOSTS_KEY}", "a test on hosts runs in each host's "
                        "directory: the plan's [target] must be a directory here (where the "
                        "client keeps its job files), not an image or a device")
    if plan.drop_caches and host_params:
        check.warn("drop_caches", "drops this machine's page cache only, not the hosts': on "
                   "each host fio drops the cache of the job's own files before it reads "
                   "(invalidate=1)")
    if has_target and not check.errors:
        _check_targets(plan, check)
    if has_target:
        _check_raw(plan, check)
        _check_cache_limit(plan, check, cgroup_root)
    if not check.errors:
        _check_run_count(plan, check)
    if not check.errors:
        _check_cases(plan, check)
    if not check.errors and has_target:
        _check_resources(plan, check)
    if not check.errors and has_target:
        _warn(plan, check, library)


def _with_hosts(spec: TestSpec, value: tuple[str, ...] | str | None) -> TestSpec:
    """A test with a `hosts` parameter ("h1+h2", or an axis of such): run by fio --client."""
    if value is None:
        return spec
    axes = (*spec.axes, HOSTS_KEY) if isinstance(value, tuple) else spec.axes
    return replace(spec, params={**spec.params, HOSTS_KEY: value}, axes=axes)
def _check_targets(plan: Plan, check: _Checker) -> None:
    """Several targets: every placement runnable by some configuration, and each target able
    to hold the files placed on it."""
    check_placements(plan, check)
    _check_placed_room(plan, check)


def _check_placed_room(plan: Plan, check: _Checker) -> None:
    """Each target of a placement takes one file per stream placed on it ("a+a+a" is three
    files on a): against that target's room (a partition: its share of the image or device)."""
    targets = named_targets(plan)
    streams = stream_targets(targets)
    rooms: dict[str, tuple[int | None, str]] = {}
    for name, (parent, _n) in streams.items():
        room, where = _room(replace(plan, target=targets[parent]))
        parts = targets[parent].partitions
        if room is not None and parts:
            room, where = room // parts, f"{where} / {parts} partitions"
        rooms[name] = (room, where)
    for spec in plan.tests:
        if PLACEMENT_KEY not in spec.params:
            continue
        adapter = tools.get_adapter(spec.tool)
        for params in _points(spec):
            names = str(params[PLACEMENT_KEY]).split("+")
            size = adapter.file_size({k: v for k, v in params.items() if k != PLACEMENT_KEY})
            over = [(n, size * names.count(n)) for n in dict.fromkeys(names)
                    if size and rooms[n][0] is not None
                    and size * names.count(n) > (rooms[n][0] or 0)]
            if over:
                name, need = over[0]
                room, where = rooms[name]
                check.error(f"test[{spec.index + 1}].{PLACEMENT_KEY}",
                            f"{params[PLACEMENT_KEY]!r} puts {human_bytes(need)} of test files "
                            f"on {name}, more than {where} ({human_bytes(room or 0)})")
                break


def _cache_limit(table: Mapping[str, Any], key: str, check: _Checker) -> int | None:
    """A page_cache_limit value in bytes (None when not given); an error names the key."""
    raw = table.get(key.rpartition(".")[2])
    if raw is None:
        return None
    try:
        limit = parse_size(raw)
    except ValueError as e:
        check.error(key, str(e))
        return None
    if limit < MIN_LIMIT:
        check.error(key, f"{format_size(limit)} is below the minimum {format_size(MIN_LIMIT)} "
                    "(the tool's own memory counts against the limit too)")
        return None
    return limit


def _check_cache_limit(plan: Plan, check: _Checker, cgroup_root: str) -> None:
    """A page-cache limit needs a memory cgroup controller, and a place to make groups in: as
    root or in a delegated subtree here, or as root through the privileged helper (the tools of
    image, format and device targets run there when DiskLab is not root)."""
    keys = ([CACHE_LIMIT] if plan.page_cache_limit is not None else []) + [
        f"test[{s.index + 1}].{CACHE_LIMIT}" for s in plan.tests if s.page_cache_limit]
    if not keys:
        return
    controller = find_memory_controller(cgroup_root)
    if controller is None:
        check.error(keys[0], "no memory cgroup controller is available (neither cgroup v2 with "
                    "the memory controller on for this process's group nor a cgroup v1 memory "
                    "hierarchy is mounted): the page cache cannot be limited")
    elif (plan.target.kind == "directory" and os.geteuid() != 0
          and not controller.writable):
        check.error(keys[0], f"limiting the page cache of a directory target needs root or a "
                    f"delegated cgroup: {controller.base} is not writable for this user "
                    "(run as root, or use an image or format target: its tools run as root)")


def _check_run_count(plan: Plan, check: _Checker) -> None:
    """The whole matrix's runs, counted from the axes' lengths before any case is made."""
    runs = run_count(plan)
    if runs <= MAX_RUNS:
        return
    counts = [point_count(spec) for spec in plan.tests]
    biggest = max(range(len(counts)), key=counts.__getitem__)
    cases = runs // plan.repeats
    key = "repeats" if cases <= MAX_RUNS else f"test[{plan.tests[biggest].index + 1}]"
    check.error(key, f"the plan makes {runs} runs ({cases} case(s) x {plan.repeats} repeat(s)),"
                     f" more than the {MAX_RUNS} one session may have: use fewer values on the "
                     "axes or fewer repeats, or split the plan")


def _written(check: _Checker, base: str, keys: tuple[str, ...]) -> str:
    """The first of `keys` the plan wrote in table `base` (for the line), else the table."""
    return next((f"{base}.{k}" for k in keys if f"{base}.{k}" in check.where.lines), base)


def _check_resources(plan: Plan, check: _Checker) -> None:
    """What one case needs at once against what the machine has: its test files against the
    target's free space (or the image's or device's size), its I/O buffers against the RAM."""
    room, where = _room(plan)
    ram = psutil.virtual_memory().total
    for spec in plan.tests:
        adapter = tools.get_adapter(spec.tool)
        base = f"test[{spec.index + 1}]"
        need = max((adapter.space_bytes(p) or 0 for p in points(spec)), default=0)
        if room is not None and need > room:
            check.error(_written(check, base, ("size", "file_size", "max_file_size")),
                        f"a case of this test needs {human_bytes(need)} of test files, more "
                        f"than {where} ({human_bytes(room)})")
        buffers = max((adapter.buffer_bytes(p) or 0 for p in points(spec)), default=0)
        if buffers > ram:
            check.error(_written(check, base, ("bs", "block_size", "record_size", "iodepth",
                                               "queue_depth", "numjobs", "streams", "threads")),
                        f"a case of this test needs {human_bytes(buffers)} of I/O buffers, more "
                        f"than this machine's RAM ({human_bytes(ram)})")


def _room(plan: Plan) -> tuple[int | None, str]:
    """Bytes of test files the target can take, and how to say where; None: not known."""
    target = plan.target
    if target.kind == "directory" and os.path.isdir(target.path):
        usage = shutil.disk_usage(target.path)
        if usage.total == 0:  # ramfs and the like report no size: their limit is the RAM
            return None, ""
        return usage.free, f"the space free under {target.path}"
    if target.kind in ("image", "format") and target.size:
        return int(target.size), f"the size of {target.path}"
    if target.kind == "device" and target.size:
        return int(target.size), f"the size of {target.path}"
    return None, ""


def _check_cases(plan: Plan, check: _Checker) -> None:
    """Cross-parameter checks of every case (block size vs size, ...), once per message."""
    seen: set[tuple[str, str]] = set()
    for case in expand(plan):
        adapter = tools.get_adapter(case.tool)
        for key, message in adapter.check(case.params):
            full = f"test[{case.test_index + 1}].{key}"
            if (full, message) not in seen:
                seen.add((full, message))
                check.error(full, message)


def _warn(plan: Plan, check: _Checker, library: str | None) -> None:
    """What will make the figures misleading: page-cache reads, the library on the target,
    a filesystem that refuses O_DIRECT (that one is an error), caches not dropped."""
    ram = psutil.virtual_memory().total
    refusal_checked = False
    for spec in plan.tests:
        adapter = tools.get_adapter(spec.tool)
        base = f"test[{spec.index + 1}]"
        limit = plan.page_cache_limit_of(spec.index)
        # with a limit, the tool's page cache is at most the limit, not the machine's RAM
        what = (f"page_cache_limit ({format_size(2 * limit)})" if limit
                else f"RAM ({human_bytes(2 * ram)})")
        cache = limit or ram
        advised: set[tuple[str, str]] = set()
        for params in _points(spec):
            for key, message in adapter.advice(params):
                if (key, message) not in advised:  # once per test, not once per case
                    advised.add((key, message))
                    check.warn(f"{base}.{key}", message)
        for params in _points(spec):
            touched, how = _data_touched(adapter, params)
            if (adapter.is_buffered(params) and adapter.reads(params) and touched is not None
                    and touched < 2 * cache):
                check.warn(
                    base,
                    f"buffered test (direct = false) on {how}, below 2 x "
                    f"{what}: its read figures will come from the page cache",
                )
                break
        if plan.target.kind != "directory":
            continue  # a filesystem DiskLab makes: ext4, xfs and btrfs accept O_DIRECT
        if not refusal_checked and any(adapter.uses_direct_io(p) for p in _points(spec)):
            refusal_checked = True
            message = direct_io_refusal_once(plan.target.path)
            if message:
                check.error(f"{base}.direct", message)
    _warn_journal_oom(plan, check)
    under_test = {"directory": plan.target.path,
                  "image": str(Path(plan.target.path).parent)}.get(plan.target.kind)
    if library and under_test and same_filesystem(library, under_test):
        check.warn(  # the key of the target's own table: targets.a.image in a [targets] plan
            f"targets.{next(iter(plan.targets))}.{plan.target.kind}" if plan.targets
            else f"target.{plan.target.kind}",
            f"the library ({library}) is on the filesystem under test: its commits add a little "
            "I/O to the measurement; point it elsewhere with --library PATH or DISKLAB_LIBRARY",
        )
    if plan.drop_caches and os.geteuid() != 0:
        check.warn("drop_caches", "not root: caches cannot be dropped, reads may come from memory")


def _warn_journal_oom(plan: Plan, check: _Checker) -> None:
    """A data=journal configuration whose cases write more than their page_cache_limit: the
    journal pins written pages until it commits, the memory cgroup cannot reclaim them, and
    its OOM killer ends the tool (the data=journal study's commit=300 lost 2 of 3 repeats)."""
    for i, config in enumerate(plan.configs, start=1):
        held = journalled_data_seconds(config.fs, config.mount)
        if held is None:
            continue
        for spec in plan.tests:
            limit = plan.page_cache_limit_of(spec.index)
            if limit is None:
                continue
            adapter = tools.get_adapter(spec.tool)
            most = max((_data_touched(adapter, p) for p in _points(spec)),
                       key=lambda t: t[0] or 0, default=(None, ""))
            if most[0] is not None and most[0] > limit:
                check.warn(f"config[{i}].mount",
                           f"{config.label!r}: data=journal with commit={held} keeps up to "
                           f"{held} s of written data in memory until the journal commits (or "
                           "fills); "
                           f"test[{spec.index + 1}] writes {most[1]} under a page_cache_limit "
                           f"of {format_size(limit)}: the memory cgroup's OOM killer may end "
                           "the tool (raise page_cache_limit, lower commit or make the journal "
                           "smaller)")
                break


def _data_touched(adapter: ToolAdapter,
                  params: Mapping[str, Any]) -> tuple[int | None, str]:
    """The bytes one case reads back, with the words saying how they add up.

    Why all of them: a case's processes (iozone's threads, fio's jobs, the engine's streams, a
    placement's streams on each target) share one page cache and, with page_cache_limit, one
    memory cgroup; 4 threads on 256m files fill 1 GiB of it, not 256m."""
    own = {k: v for k, v in params.items() if k != PLACEMENT_KEY}
    size = adapter.file_size(own)
    if size is None:
        return None, ""
    if PLACEMENT_KEY in params:  # one file per stream of `on` (as _check_placed_room counts)
        every = size * len(str(params[PLACEMENT_KEY]).split("+"))
    else:
        every = adapter.space_bytes(own) or size
    if every <= size:
        return size, f"a {format_size(size)} file"
    files = every // size
    return every, f"{files} files of {format_size(size)} ({format_size(every)})"


def _points(spec: TestSpec) -> Iterator[dict[str, Any]]:
    return points(spec)


def load_plan(path: str | os.PathLike[str], **kwargs: Any) -> CheckedPlan:
    """Read a plan file; a missing or unreadable file is a PlanError too (exit 2)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise PlanError([Problem(str(p), f"cannot read the plan: {e}")]) from e
    return parse_plan(text, path=str(p), **kwargs)


# ---- the [report] table ----------------------------------------------------------------------

REPORT_KEYS = ("rows", "columns", "metrics", "baseline", "where", "title", "chart", "x")
REPORT_CHARTS = ("lines", "bars", "heatmap")
REPORT_LISTS = ("rows", "columns", "metrics")


def report_keys(tool_names: Iterable[str]) -> list[str]:
    """The pivot keys a plan's report may name: model.PIVOT_KEYS and its tools' parameters."""
    valid = [*PIVOT_KEYS]
    for name in tool_names:
        if name in tools.tool_names():
            valid += [k for k in tools.get_adapter(name).params if k not in valid]
    return valid


def read_report(raw: Any, tool_names: Iterable[str], check: _Checker) -> Report | None:
    """The plan's [report] table (None when it has none). `rows` and `columns` are pivot keys
    (report_keys), `metrics` metric names ('write', 'write:iops') or suffixes ('iops',
    'lat_mean'); every error names its key."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        check.error("report", "must be a table: [report] rows = [...] columns = [...]")
        return None
    for key in raw:
        if key not in REPORT_KEYS:
            check.error(f"report.{key}", f"unknown key (known: {', '.join(REPORT_KEYS)})")
    valid = report_keys(tool_names)
    lists: dict[str, tuple[str, ...]] = {}
    for key in (*REPORT_LISTS, "where"):
        value = raw.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            check.error(f"report.{key}", f"{_short(value)} is not a list of names")
            value = []
        if key in ("rows", "columns"):
            for name in value:
                if name not in valid:
                    check.error(f"report.{key}",
                                f"unknown pivot key {name!r} (valid: {', '.join(valid)})")
        lists[key] = tuple(dict.fromkeys(value))
    both = set(lists["rows"]) & set(lists["columns"])
    if both:
        check.error("report.columns", f"{', '.join(sorted(both))} in both rows and columns")
    where = tuple(p for w in lists["where"]
                  if (p := _report_pair(w, "where", valid, check)) is not None)
    baseline = raw.get("baseline")
    if baseline is not None and (not isinstance(baseline, str)
                                 or _report_pair(baseline, "baseline", valid, check) is None):
        if not isinstance(baseline, str):
            check.error("report.baseline", f"{_short(baseline)} is not KEY=VALUE text")
        baseline = None
    title = raw.get("title", "")
    if not isinstance(title, str):
        check.error("report.title", f"{_short(title)} is not text")
        title = ""
    chart = raw.get("chart", "")
    if chart != "" and chart not in REPORT_CHARTS:
        check.error("report.chart", f"{_short(chart)} is not a chart: one of "
                    f"{', '.join(REPORT_CHARTS)}")
        chart = ""
    x = raw.get("x", "")
    if x != "" and (not isinstance(x, str) or x not in (*lists["rows"], *lists["columns"])):
        check.error("report.x", f"{_short(x)} is not one of the report's rows or columns")
        x = ""
    return Report(rows=lists["rows"] or ("config",), columns=lists["columns"] or ("test",),
                  metrics=lists["metrics"], baseline=baseline, where=where, title=title,
                  chart=chart, x=x)


def _report_pair(text: str, key: str, valid: list[str], check: _Checker
                 ) -> tuple[str, str] | None:
    """A report's 'KEY=VALUE' (its baseline, each of its where filters), the key a pivot key."""
    name, eq, value = text.partition("=")
    name, value = name.strip(), value.strip().strip("\"'")
    if not eq or not name or not value:
        check.error(f"report.{key}", f"{text!r}: expected KEY=VALUE (e.g. config=ext4)")
        return None
    if name not in valid:
        check.error(f"report.{key}", f"unknown pivot key {name!r} (valid: {', '.join(valid)})")
        return None
    return name, value


def _tool_names(doc: Mapping[str, Any]) -> list[str]:
    tests = doc.get("test")
    return [str(t.get("tool")) for t in tests if isinstance(t, dict)] if isinstance(
        tests, list) else []


def session_report(plan_text: str | None) -> Report | None:
    """The [report] table of a recorded session's plan text, or None (no plan, no table, or a
    table that no longer reads: the session is then shown in the default pivot)."""
    if not plan_text:
        return None
    try:
        doc = tomllib.loads(plan_text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return None
    check = _Checker(_KeyLines(plan_text))
    report = read_report(doc.get("report"), _tool_names(doc), check)
    return None if check.errors else report
