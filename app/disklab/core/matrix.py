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
from typing import Any

from disklab.core.model import Case, Plan, TestSpec


def grid(spec: TestSpec) -> list[dict[str, Any]]:
    """Every parameter point of one [[test]]: the product of its axes, where a zip group
    (zip = [["sync", "fsync"]]) is one axis whose values are the groups' lists read in step,
    placed where its first-written member stands."""
    zipped = {name: group for group in spec.zips for name in group}
    axes: list[tuple[str, ...]] = []  # each axis: the names it sets
    for k in spec.params:
        if k not in spec.axes:
            continue
        names = zipped.get(k, (k,))
        if names not in axes:
            axes.append(names)
    values = [list(zip(*(spec.params[n] for n in names), strict=True)) for names in axes]
    points = []
    for combo in itertools.product(*values):
        chosen = {n: v for names, vs in zip(axes, combo, strict=True)
                  for n, v in zip(names, vs, strict=True)}
        points.append({k: chosen.get(k, v) for k, v in spec.params.items()})
    return points


def case_id(config: str, tool: str, params: dict[str, Any]) -> str:
    """Stable id from what the case is (not where it sits in the plan): 12 hex digits."""
    key = json.dumps([config, tool, params], sort_keys=True, default=list)
    return hashlib.sha1(key.encode()).hexdigest()[:12]


def expand(plan: Plan) -> list[Case]:
    """All cases of a plan, in run order. Identical cases get '-2', '-3' suffixes."""
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for config in plan.configs:
        for spec in plan.tests:
            for params in grid(spec):
                cid = case_id(config.label, spec.tool, params)
                seen[cid] = seen.get(cid, 0) + 1
                if seen[cid] > 1:
                    cid = f"{cid}-{seen[cid]}"
                cases.append(Case(cid, len(cases), config.label, spec.tool, spec.index, params))
    return cases
