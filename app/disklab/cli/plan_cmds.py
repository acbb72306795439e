"""`disklab plan validate` and `plan show`: a plan's verdict and every case's exact argv,
as text or JSON (a plan with problems is JSON too with --json: valid false, its problems)."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from disklab.cli import library_cmds
from disklab.cli.arguments import LibraryArgs, PlanArgs, typed
from disklab.core.fs.commands import command_line
from disklab.core.plan.parse import CheckedPlan, load_plan
from disklab.core.plan.setup_preview import setup_preview
from disklab.core.plan.targets import named_targets, partition_names
from disklab.core.resources import find_plan
from disklab.core.run.planning import plan_runs
from disklab.core.run.summary import estimate_seconds, summarize, summary_text
from disklab.core.system.directories import library_path
from disklab.core.vocab.errors import DisklabError, PlanError, Problem
from disklab.core.vocab.jsonformat import versioned
from disklab.core.vocab.model import SIZE_KEYS, Plan
from disklab.core.vocab.units import format_size

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def load_plan_args(args: PlanArgs, target: str | None = None) -> CheckedPlan:
    """The plan named by args.plan: a file, or a preset's name ('quick')."""
    path = find_plan(args.plan)
    if not path.exists() and os.sep not in str(args.plan):
        raise DisklabError(library_cmds.unknown_plan(str(args.plan)))
    return load_plan(path, target_dir=target or args.target,
                     library=str(library_path(typed(LibraryArgs, args).library)))


def plan_validate(args: argparse.Namespace) -> int:
    """The plan's verdict as the Test matrix page shows it: the summary line (core.run.summary),
    then each tool the plan uses, as the page's tool list names it, then the warnings."""
    a = typed(PlanArgs, args)
    if a.json:
        return _plan_validate_json(a)
    summary = summarize(load_plan_args(a))
    print(f"{a.plan}: valid")
    print(summary_text(summary))
    for row in summary.tools:
        print(f"tool: {row.label}" + ("" if row.installed else f" ({row.install_hint})"))
    for w in summary.warnings:
        print(f"warning: {w}")
    return EXIT_OK


def _plan_validate_json(args: PlanArgs) -> int:
    """`plan validate --json`: the verdict as one document; a plan with problems is valid
    false with each problem (key, line, message), exit 2."""
    try:
        summary = summarize(load_plan_args(args))
    except PlanError as e:
        return _invalid_json(args, e)
    print(json.dumps(versioned("disklab.plan-check", {
        "plan": str(args.plan), "valid": True, "summary": summary_text(summary),
        "cases": summary.cases, "repeats": summary.repeats, "runs": summary.runs,
        "bytes": summary.bytes, "estimate_s": round(estimate_seconds(summary), 1),
        "tools": [{"tool": r.name, "label": r.label, "installed": r.installed,
                   "install_hint": None if r.installed else r.install_hint}
                  for r in summary.tools],
        "warnings": [str(w) for w in summary.warnings]}), indent=2))
    return EXIT_OK


def _invalid_json(args: PlanArgs, error: PlanError) -> int:
    """A plan with problems under --json (validate and show alike): valid false with each
    problem (key, line, message), exit 2."""
    print(json.dumps(versioned("disklab.plan-check", {
        "plan": str(args.plan), "valid": False,
        "problems": [_problem_json(p) for p in error.problems]}), indent=2))
    return EXIT_BAD_INPUT


def _problem_json(problem: Problem) -> dict[str, Any]:
    return {"key": problem.key, "line": problem.line, "message": problem.message,
            "severity": problem.severity}


def _plan_show_json(checked: CheckedPlan) -> int:
    """`plan show --json`: every case with the exact argv of each step."""
    plan = checked.plan
    cases = []
    for run in plan_runs(plan):
        if run.repeat != 1:
            continue
        case: dict[str, Any] = {"index": run.case.index + 1, "id": run.case.id,
                                "config": run.case.config, "title": run.case.title(),
                                "prepare": [list(step) for step in run.command.prepare]}
        if run.command.group:
            case["group"] = [{"target": t, "argv": list(a)} for t, a in run.command.group]
        else:
            case["argv"] = list(run.command.argv)
        cases.append(case)
    print(json.dumps(versioned("disklab.plan", {
        "name": plan.name, "targets": _targets_text(plan), "repeats": plan.repeats,
        "warnings": [str(w) for w in checked.warnings], "cases": cases}), indent=2,
        default=str))
    return EXIT_OK


def plan_show(args: argparse.Namespace) -> int:
    a = typed(PlanArgs, args)
    if a.json:
        try:
            checked = load_plan_args(a)
        except PlanError as e:
            return _invalid_json(a, e)
        return _plan_show_json(checked)
    checked = load_plan_args(a)
    plan = checked.plan
    print(f"plan {plan.name!r}: {_targets_text(plan)}, repeats {plan.repeats}")
    for w in checked.warnings:
        print(f"warning: {w}")
    for spec in plan.tests:
        for group in spec.zips:
            print(f"test[{spec.index + 1}]: {', '.join(group)} advance together (zip): "
                  + "; ".join(" ".join(f"{n}={_value_text(n, spec.params[n][i])}" for n in group)
                              for i in range(len(spec.params[group[0]]))))
    _show_setup(plan)
    for run in plan_runs(plan):
        if run.repeat != 1:
            continue
        print(f"\n[{run.case.index + 1}] {run.case.id}  {run.case.config} | {run.case.title()}")
        for step in run.command.prepare:
            print("  prepare: " + command_line(step))
        if run.command.group:  # several processes, released together
            for target, argv in run.command.group:
                print(f"  run on {target}: " + command_line(argv))
        else:
            print("  run:     " + command_line(run.command.argv))
    return EXIT_OK


def _targets_text(plan: Plan) -> str:
    """Every target of the plan with its kind, path and partitions (not only the first)."""
    targets = named_targets(plan)
    if not plan.targets:
        return f"target {plan.target.path}" + (
            f" ({plan.target.partitions} partitions)" if plan.target.partitions else "")
    words = []
    for name, t in targets.items():
        parts = (f", {t.partitions} partitions: "
                 + " ".join(partition_names(name, t.partitions)) if t.partitions else "")
        size = f", {format_size(t.size)}" if t.size else ""
        words.append(f"{name} ({t.kind} {t.path}{size}{parts})")
    return f"targets {', '.join(words)}"


def _value_text(key: str, value: Any) -> str:
    """One parameter value in the plan's spelling (sizes as 64k, booleans as true)."""
    if key in SIZE_KEYS and isinstance(value, int) and not isinstance(value, bool):
        return format_size(value)
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    return str(value).lower() if isinstance(value, bool) else str(value)


def _show_setup(plan: Plan) -> None:
    """What applying each configuration runs as root on every image and format target, as the
    Configurations page previews it (core.plan.setup_preview)."""
    for step in setup_preview(plan):
        print(f"\n{step.heading}")
        for line in step.commands:
            print("  setup:   " + line)
        if step.note:
            print(f"  {step.note}")
