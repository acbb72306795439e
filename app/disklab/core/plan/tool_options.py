"""A plan's tool options put to the tools themselves before anything runs: fio's job options
of `[test.fio_options]` checked against the names fio lists and by `fio --parse-only` on this
machine and on each running host's fio server, so that a refusal is fio's own words at the
plan's line and key. These start processes (the installed fio, its client), unlike the plan's
other checks (core.plan.checks)."""

from __future__ import annotations

import difflib
import functools
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from disklab.core import tools
from disklab.core.plan.checks import on_path
from disklab.core.plan.keylines import Checker
from disklab.core.plan.matrix import points
from disklab.core.proc import run
from disklab.core.tools.base import ToolAdapter
from disklab.core.tools.fio.client import host_names, job_text
from disklab.core.tools.fio.passthrough import NOT_OPTIONS, parse_only_problems
from disklab.core.vocab.errors import ToolError
from disklab.core.vocab.model import Plan

MAX_OPTION_CHECKS = 64  # distinct jobs of one test the tool is asked about (fio --parse-only)
OPTION_CHECK_SECONDS = 20.0
HOST_CHECK_SECONDS = 10.0


def check_tool_options(plan: Plan, check: Checker) -> None:
    """The tool's own options of each test ([test.fio_options]) as the installed tool reads
    them: each name one it lists as a job option (_names_listed), then `fio --parse-only` with
    each case's whole job (each distinct one, at most MAX_OPTION_CHECKS a test), a refusal in
    the tool's own words at the option's key. A test on fio servers is checked here too: the
    hosts' fio reads the same job file at the run."""
    for spec in plan.tests:
        adapter = tools.get_adapter(spec.tool)
        names = [k for k in spec.params if k not in adapter.params and k not in NOT_OPTIONS]
        if not adapter.options_table or not names:
            continue
        table = f"test[{spec.index + 1}].{adapter.options_table}"
        asked: set[tuple[str, ...]] = set()
        for params in points(spec):
            argv = adapter.options_check_argv(params)
            if argv is None or argv in asked:
                continue
            if len(asked) >= MAX_OPTION_CHECKS:
                check.warn(table, f"{adapter.executable} was asked about the first "
                           f"{MAX_OPTION_CHECKS} distinct jobs of this test only")
                break
            asked.add(argv)
            unlisted = _names_unlisted(adapter, params, names, table, check)
            if unlisted:  # the others are still put to the tool, without these
                argv = tuple(a for a in argv
                             if not a.startswith(tuple(f"--{n}=" for n in unlisted)))
            if (len(unlisted) == len(names) or not _tool_takes(adapter, argv, names, table, check)
                    or unlisted):
                break  # one case's refusal says it: the others would repeat it
            if not _hosts_take(plan, params, names, table, check):
                break


@functools.cache
def tool_options(tool: str) -> tuple[tuple[str, str], ...]:
    """The installed tool's own options DiskLab takes, as (name, what it does), for the Test
    matrix's completion (fio --cmdhelp=all); () when it has none or cannot say."""
    adapter = tools.get_adapter(tool)
    argv = adapter.options_list_argv()
    if argv is None or not on_path(adapter.executable):
        return ()
    try:
        done = run(argv, timeout=OPTION_CHECK_SECONDS)
    except ToolError:
        return ()
    return tuple(adapter.options_list(done.stdout))


def _names_unlisted(adapter: ToolAdapter, params: Mapping[str, Any], names: list[str],
                    table: str, check: Checker) -> list[str]:
    """The names refused here: each must be one the installed tool lists as a job option
    (fio --cmdhelp=all), else one it knows when asked by name (an alias: fio --cmdhelp=NAME;
    the case's engine's: --enghelp), an alias judged as the option it stands for. Asked
    before the tool reads the job: fio's command line takes a name it does not list as an
    abbreviation of another (`--crc` runs its crctest, `--norandomm` is norandommap)."""
    listed = {name for name, _what in tool_options(adapter.name)}
    if not listed:
        return []  # the tool cannot list them: its check of the job says why
    refused: list[str] = []
    for name in names:
        if name in listed:
            continue
        found = None
        for argv in adapter.options_lookup_argvs(name, params):
            try:
                found = adapter.options_lookup(_asked(argv)[1])
            except ToolError:
                found = None
            if found is not None:
                break
        if found is None:
            close = difflib.get_close_matches(name, sorted(listed), n=1)
            check.error(f"{table}.{name}", f"{adapter.executable} refuses it: unrecognized "
                        f"option '{name}'" + (f"; Did you mean {close[0]}?" if close else ""))
            refused.append(name)
            continue
        try:
            adapter.option_value(found, params[name])
        except ValueError as e:
            check.error(f"{table}.{name}", f"{e} (`{name}` is {adapter.executable}'s other "
                        f"name for `{found}`)")
            refused.append(name)
    return refused


def switch_problem(adapter: ToolAdapter, name: str, params: Mapping[str, Any]) -> str | None:
    """Why true, false or an empty value is no value of this option: it is not one of the
    tool's switches (fio would read `io_size = true` as 1 byte). None when it is one, or the
    tool does not know the name (the names check says so)."""
    if not on_path(adapter.executable):
        return None
    for argv in adapter.options_lookup_argvs(name, params):
        try:
            said = _asked(argv)[1]
        except ToolError:
            return None
        if adapter.options_lookup(said) is not None:
            return None if adapter.options_switch(said) else (
                f"give a value: {adapter.executable}'s `{name}` is not a switch (true, false "
                "or an empty value set switches only)")
    return None


def _hosts_take(plan: Plan, params: Mapping[str, Any], names: list[str], table: str,
                check: Checker) -> bool:
    """A case on fio servers: its job file put to each `running` host's fio through fio's
    client (`fio --client=A,P --parse-only JOB`: the server parses it and runs nothing). A host
    DiskLab starts over SSH has no server before the run: its fio reads the job at the run. A
    host not answering now is a warning (it may be started before the run)."""
    hosts = {h.name: h for h in plan.hosts if h.start == "running"}
    for name in host_names(params):
        host = hosts.get(name)
        if host is None:
            continue
        with tempfile.TemporaryDirectory(prefix="disklab-check-") as tmp:
            job = Path(tmp) / "check.job"
            job.write_text(job_text(params, host.directory, "check", name))
            try:
                done = run(("fio", f"--client={host.address},{host.port}", "--parse-only",
                            str(job)), timeout=HOST_CHECK_SECONDS)
            except ToolError:
                done = None
        said = f"{done.stdout}\n{done.stderr}" if done is not None else ""
        if done is None or "failed to connect" in said:
            check.warn(table, f"host {name} ({host.address}:{host.port}) did not answer: its fio "
                       "checks these options when the run sends it the job")
            continue
        verdict = [(n, w) for n, w in parse_only_problems(said, names) if n]
        for option, words in verdict:
            check.error(f"{table}.{option}" if option else table,
                        f"fio on host {name} refuses it: {words}")
        if verdict:
            return False
    return True


@functools.lru_cache(maxsize=512)
def _asked(argv: tuple[str, ...]) -> tuple[int, str]:
    """The tool's answer to one job (exit status, its words), kept: the window checks the plan
    again at each edit, and the same job gets the same answer from the same program."""
    done = run(argv, timeout=OPTION_CHECK_SECONDS)
    return done.returncode, f"{done.stderr}\n{done.stdout}"


def _tool_takes(adapter: ToolAdapter, argv: tuple[str, ...], names: list[str], table: str,
                check: Checker) -> bool:
    """One job put to the tool, its refusals at their options' keys; False if refused. fio
    stops at the first option it refuses, so the job is asked again without it (once per
    option at most) for the next one."""
    refused = False
    for _ in range(len(names) + 1):
        try:
            returncode, said = _asked(argv)
        except ToolError as e:
            check.error(table, f"{adapter.executable} could not check the options: {e}")
            return False
        if returncode == 0:
            return not refused
        refused = True
        verdict = adapter.options_verdict(said, names) or [(None, f"exit status {returncode}")]
        for name, words in verdict:
            check.error(f"{table}.{name}" if name else table,
                        f"{adapter.executable} refuses it: {words}")
        named = [f"--{name}=" for name, _words in verdict if name]
        if not named or any(name is None for name, _words in verdict):
            return False
        argv = tuple(a for a in argv if not a.startswith(tuple(named)))
    return False
