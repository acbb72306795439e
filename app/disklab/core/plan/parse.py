"""Plans: TOML files in, a checked Plan out, with every problem reported at once by key and line.

The plan format is a contract (the GUI writes it, later checks read it), so checking is generic:
each tool declares its parameters as ParamSpecs and this module checks any plan against them.
tomllib gives no line numbers, so `KeyLines` scans the text for where each key was written.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from disklab.core import tools
from disklab.core.fs.options import config_from_toml
from disklab.core.hosts.config import HOSTS_KEY, read_hosts, read_hosts_param
from disklab.core.plan.checks import (
    CACHE_LIMIT,
    check_cache_limit,
    check_devices,
    check_resources,
    check_targets,
    on_path,
    read_target,
    target_table,
    warn_plan,
)
from disklab.core.plan.keylines import Checker, KeyLines, short
from disklab.core.plan.matrix import expand, point_count, points, run_count
from disklab.core.plan.report import read_report
from disklab.core.plan.targets import (
    limit_configs,
    place_tests,
    read_targets,
    take_config_targets,
    take_placements,
)
from disklab.core.plan.tool_options import check_tool_options, switch_problem
from disklab.core.system.cgroups import MIN_LIMIT
from disklab.core.tools.base import PLACEMENT_KEY, REQUIRED, ParamSpec, ToolAdapter
from disklab.core.vocab.errors import PlanError, Problem
from disklab.core.vocab.model import (
    AS_IS,
    ORDERS,
    RAW_KEY,
    RAW_SECTION,
    FsConfig,
    Plan,
    Target,
    TestSpec,
)
from disklab.core.vocab.units import MAX_BYTES, format_size, human_bytes, parse_duration, parse_size

TOP_KEYS = {"name", "description", "repeats", "drop_caches", "stop_on_failure", "order", "target",
            "test",
            "config", "page_cache_limit", "hosts", "targets", "report"}
ZIP_KEY = "zip"  # in a [[test]] table: groups of list parameters that advance together
# What one plan may ask for: its runs (configurations x cases x repeats) are counted before any
# is made, so that a plan cannot fill the memory, the library or the years ahead.
MAX_REPEATS = 10_000
MAX_RUNS = 100_000
MAX_NESTING = 100  # brackets and braces open at once: tomllib recurses on each


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
            raise ValueError(f"{short(value)} is not a whole number")
        return value
    if spec.kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{short(value)} is not a number")
        if (isinstance(value, int) and abs(value) > MAX_BYTES) or not math.isfinite(value):
            raise ValueError(f"{short(value)} is not a finite number a float holds")
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
        return f"{short(value)} is below the minimum {spec.minimum:g}"
    if spec.maximum is not None and value > spec.maximum:
        limit = format_size(int(spec.maximum)) if spec.kind == "size" else f"{spec.maximum:g}"
        return f"{short(value)} is above the maximum {limit}"
    return None


def _is_axis(spec: ParamSpec, value: Any) -> bool:
    if not isinstance(value, list):
        return False
    if spec.multi:
        return bool(value) and all(isinstance(v, list) for v in value)
    return True


def _read_test(index: int, table: Any, check: Checker) -> TestSpec | None:
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
    if adapter.executable and not on_path(adapter.executable):
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
        if adapter.options_table and key == adapter.options_table:
            _read_options(adapter, raw, f"{base}.{key}", params, axes, check)
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


def _read_options(adapter: ToolAdapter, raw: Any, where: str, params: dict[str, Any],
                  axes: list[str], check: Checker) -> None:
    """A test's table of the tool's own options ([test.fio_options]): each name and value as
    the adapter takes it, a list an axis like any parameter's; into `params` under the
    option's own name (so labels, pivots and exports show it when it varies)."""
    if not isinstance(raw, dict):
        check.error(where, f"must be a table ([test.{adapter.options_table}]) of option = value")
        return
    for name, value in raw.items():
        key = f"{where}.{name}"
        if name in params:
            check.error(key, f"{name!r} is set twice (the test's own and here)")
            continue
        values = value if isinstance(value, list) else [value]
        if not values:
            check.error(key, "an empty list gives no cases")
            continue
        converted = []
        for one in values:
            try:
                converted.append(adapter.option_value(str(name), one))
            except ValueError as e:
                check.error(key, str(e))
                break
        if len(converted) != len(values):
            continue
        switch = switch_problem(adapter, str(name), params) if any(
            isinstance(one, bool) or one == "" for one in values) else None
        if switch is not None:
            check.error(key, switch)
            continue
        if isinstance(value, list):
            axes.append(name)
            params[name] = tuple(converted)
        else:
            params[name] = converted[0]


def _read_zip(raw: Any, base: str, params: Mapping[str, Any], axes: list[str],
              check: Checker) -> tuple[tuple[str, ...], ...]:
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


def _raw_flags(raw_tests: list[Any], check: Checker) -> dict[int, bool]:
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


def _check_raw_section(plan: Plan, check: Checker) -> None:
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


def _check_raw(plan: Plan, check: Checker) -> None:
    """What runs on a device (a device target's tests, the raw = true tests of an image or
    format target): raw tools only, one stream, nothing larger than the device."""
    _check_raw_section(plan, check)
    if plan.target.kind != "device" and not plan.raw_section:
        return
    for spec in plan.tests:
        if plan.target.kind != "device" and not spec.raw:
            continue
        base = f"test[{spec.index + 1}]"
        for params in points(spec):
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
        if spec is None and adapter.options_table:  # one of the tool's own options
            try:
                params[key] = adapter.option_value(key, value)
            except ValueError as e:
                problems.append(Problem(key, str(e)))
            continue
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


def _read_configs(doc: Mapping[str, Any], target: Target | None, check: Checker,
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
        check_devices(config, i, target, check, library)
        configs.append(config)
    return tuple(configs) or (AS_IS,)


def _typed(doc: Mapping[str, Any], key: str, kind: type, default: Any, check: Checker) -> Any:
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
    where = KeyLines(text)
    check = Checker(where)
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
        check.error("repeats", f"{short(repeats)} is below the minimum 1")
    elif repeats > MAX_REPEATS:
        check.error("repeats", f"{short(repeats)} is above the maximum {MAX_REPEATS}")
        repeats = 1
    drop_caches = _typed(doc, "drop_caches", bool, False, check)
    stop_on_failure = _typed(doc, "stop_on_failure", bool, False, check)
    order = _typed(doc, "order", str, ORDERS[0], check)
    if order not in ORDERS:
        check.error("order", f"{short(order)} is not one of {', '.join(ORDERS)}")
        order = ORDERS[0]
    config_limits = take_config_targets(doc)
    named = read_targets(doc, check, lambda table, key: target_table(
        table, key, check, base_dir, library)) if "targets" in doc else None
    if named is not None:
        target = next(iter(named.values()), None)
    elif "targets" in doc:
        target = None  # [targets] was there and wrong: said at its key
    else:
        target = read_target(doc, check, base_dir, library)
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
        order=order,
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
                check: Checker) -> tuple[list[TestSpec], dict[int, Any], Any, Any]:
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
    declared = tuple(doc[HOSTS_KEY]) if isinstance(doc.get(HOSTS_KEY), dict) else ()
    host_params = {i: read_hosts_param(t[HOSTS_KEY], f"test[{i + 1}].{HOSTS_KEY}",
                                       t.get("tool"), hosts, check, declared)
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


def _check_plan(plan: Plan, check: Checker, host_params: Mapping[int, Any],
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
        check_targets(plan, check)
    if has_target:
        _check_raw(plan, check)
        check_cache_limit(plan, check, cgroup_root)
    if not check.errors:
        _check_run_count(plan, check)
    if not check.errors:
        _check_cases(plan, check)
    if not check.errors:
        check_tool_options(plan, check)
    if not check.errors and has_target:
        check_resources(plan, check)
    if not check.errors and has_target:
        warn_plan(plan, check, library)


def _with_hosts(spec: TestSpec, value: tuple[str, ...] | str | None) -> TestSpec:
    """A test with a `hosts` parameter ("h1+h2", or an axis of such): run by fio --client."""
    if value is None:
        return spec
    axes = (*spec.axes, HOSTS_KEY) if isinstance(value, tuple) else spec.axes
    return replace(spec, params={**spec.params, HOSTS_KEY: value}, axes=axes)


def _cache_limit(table: Mapping[str, Any], key: str, check: Checker) -> int | None:
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


def _check_run_count(plan: Plan, check: Checker) -> None:
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


def _check_cases(plan: Plan, check: Checker) -> None:
    """Cross-parameter checks of every case (block size vs size, ...), once per message."""
    seen: set[tuple[str, str]] = set()
    for case in expand(plan):
        adapter = tools.get_adapter(case.tool)
        for key, message in adapter.check(case.params):
            full = f"test[{case.test_index + 1}].{key}"
            if (full, message) not in seen:
                seen.add((full, message))
                check.error(full, message)


def load_plan(path: str | os.PathLike[str], **kwargs: Any) -> CheckedPlan:
    """Read a plan file; a missing or unreadable file is a PlanError too (exit 2)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise PlanError([Problem(str(p), f"cannot read the plan: {e}")]) from e
    return parse_plan(text, path=str(p), **kwargs)


