"""Plan -> the ordered list of cases, each with an id that stays the same when the plan is re-read.

Order: configurations outermost, then the [[test]] tables in plan order, then the product of each
test's axes with the first-written axis outermost (so a table reads like nested loops). Axes a
[[test]] zips together advance in step as one axis. A case's id comes from its parameters only,
so zipping two axes keeps the ids of the cases it keeps.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterator
from typing import Any

from disklab.core import tools
from disklab.core.plan.targets import fits, named_targets
from disklab.core.tools.base import PLACEMENT_KEY
from disklab.core.vocab.model import Case, Plan, TestSpec


def _axes(spec: TestSpec) -> list[tuple[str, ...]]:
    """The axes of one [[test]], each as the names it sets: a lone list parameter, or a zip
    group (zip = [["sync", "fsync"]]) placed where its first-written member stands."""
    zipped = {name: group for group in spec.zips for name in group}
    axes: list[tuple[str, ...]] = []
    for k in spec.params:
        if k not in spec.axes:
            continue
        names = zipped.get(k, (k,))
        if names not in axes:
            axes.append(names)
    return axes


def points(spec: TestSpec) -> Iterator[dict[str, Any]]:
    """Every parameter point of one [[test]], one at a time: the product of its axes, a zip
    group's lists read in step as one axis."""
    axes = _axes(spec)
    values = [list(zip(*(spec.params[n] for n in names), strict=True)) for names in axes]
    for combo in itertools.product(*values):
        chosen = {n: v for names, vs in zip(axes, combo, strict=True)
                  for n, v in zip(names, vs, strict=True)}
        yield {k: chosen.get(k, v) for k, v in spec.params.items()}


def grid(spec: TestSpec) -> list[dict[str, Any]]:
    """Every parameter point of one [[test]]."""
    return list(points(spec))


def point_count(spec: TestSpec) -> int:
    """How many points grid(spec) has, counted without making them (a plan's axes can
    multiply to more than memory holds)."""
    return math.prod(len(spec.params[names[0]]) for names in _axes(spec))


def run_count(plan: Plan) -> int:
    """Runs of a whole plan (sections x cases x repeats), counted without expanding. A
    configuration limited to some targets runs only the placements (`on`, an axis of its own,
    never zipped) on them: its share of each test's points is counted from that axis."""
    targets = named_targets(plan)
    configs = {c.label: c for c in plan.configs}
    total = 0
    for label in plan.sections():
        config = configs.get(label)
        for spec in plan.section_tests(label):
            if config is None or not config.targets:
                total += point_count(spec)
                continue
            on = spec.params.get(PLACEMENT_KEY)
            values = on if isinstance(on, tuple) else (on,)
            fitting = sum(fits(config, {PLACEMENT_KEY: v}, targets) for v in values)
            total += point_count(spec) // len(values) * fitting
    return total * plan.repeats


def case_id(config: str, tool: str, params: dict[str, Any]) -> str:
    """Stable id from what the case is (not where it sits in the plan): 12 hex digits."""
    key = json.dumps([config, tool, params], sort_keys=True, default=list)
    return hashlib.sha1(key.encode()).hexdigest()[:12]


def expand(plan: Plan) -> list[Case]:
    """All cases of a plan, in run order (the raw-device section first, then each
    configuration). Identical cases get '-2', '-3' suffixes."""
    cases: list[Case] = []
    seen: dict[str, int] = {}
    targets = named_targets(plan)
    configs = {c.label: c for c in plan.configs}
    for label in plan.sections():
        config = configs.get(label)
        for spec in plan.section_tests(label):
            for params in points(spec):
                if config is not None and not fits(config, params, targets):
                    continue  # a placement on a target this configuration is not made on
                cid = case_id(label, spec.tool, params)
                seen[cid] = seen.get(cid, 0) + 1
                if seen[cid] > 1:
                    cid = f"{cid}-{seen[cid]}"
                if PLACEMENT_KEY in params:  # the id stays the plan's; the params what runs
                    params = dict(tools.get_adapter(spec.tool).placed_params(params))
                cases.append(Case(cid, len(cases), label, spec.tool, spec.index, params))
    return cases
