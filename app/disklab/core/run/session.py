"""A session's set-up before its first event: the tools' versions, the host record (where it
ran, and what a resume compares to refuse another machine or another target), the hosts' fio
servers when a case uses one, and the first event itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from disklab.core import proc, tools
from disklab.core.fs.apply import StateFile
from disklab.core.hosts.servers import Servers, used_hosts
from disklab.core.hosts.ssh import Ask
from disklab.core.run.resume import Resumption, host_identity, target_identity
from disklab.core.system.host import host_facts, target_device_facts
from disklab.core.vocab.errors import DisklabError
from disklab.core.vocab.events import SessionResumed, SessionStarted
from disklab.core.vocab.model import Case, Plan


def tool_versions(names: set[str]) -> dict[str, str | None]:
    """Each tool's version as it prints it (None when it is missing or says nothing)."""
    versions: dict[str, str | None] = {}
    for name in sorted(names):
        adapter = tools.get_adapter(name)
        argv = adapter.version_argv()
        if adapter.builtin_version() is not None:
            versions[name] = adapter.builtin_version()
            continue
        if argv is None:
            versions[name] = None
            continue
        try:
            done = proc.run(list(argv), timeout=10)
        except DisklabError:
            versions[name] = None
            continue
        versions[name] = adapter.parse_version(done.stdout + "\n" + done.stderr)
    return versions


def host_record(plan: Plan, versions: Mapping[str, str | None]) -> dict[str, Any]:
    """The session's record of where it ran: the host's facts, the tools' versions, and what
    a resume compares to refuse another machine or another target."""
    host = host_facts(plan.target.path if plan.target.kind == "directory" else None)
    if plan.target.kind != "directory" and plan.target.path:
        host["target_device"] = target_device_facts(plan.target.kind, plan.target.path)
    host["tools"] = versions
    host["order"] = plan.order  # how the configurations' repeats were laid out in time
    host.update(host_identity())
    host["target"] = {"kind": plan.target.kind, "path": plan.target.path,
                      "size": plan.target.size, "identity": target_identity(plan.target)}
    if plan.targets:  # several targets: each one's facts, by name
        host["targets"] = {name: {"kind": t.kind, "path": t.path, "size": t.size,
                                  "partitions": t.partitions}
                           for name, t in plan.targets.items()}
    return host


def start_servers(plan: Plan, ask: Ask | None, cancelled: Callable[[], bool],
                  record: StateFile, client_version: str | None
                  ) -> tuple[Servers | None, list[str]]:
    """The hosts' fio servers reached or started, and one message per problem; (None, [])
    when no case uses a host. Servers that started are stopped when this raises."""
    hosts = used_hosts(plan)
    if not hosts:
        return None, []
    servers = Servers(hosts, ask, cancelled, record=record)
    try:
        return servers, servers.start(client_version=client_version)
    except BaseException:
        servers.close()
        raise


def session_start(plan: Plan, cases: Sequence[Case], host: dict[str, Any],
                  warnings: tuple[str, ...], resume: Resumption | None
                  ) -> SessionStarted | SessionResumed:
    """The session's first event: started, or the incomplete session `resume` taken up."""
    if resume is None:
        return SessionStarted(name=plan.name, cases=tuple(cases), repeats=plan.repeats,
                              host=host, plan_text=plan.source, warnings=warnings, t=time.time())
    return SessionResumed(session_id=resume.session_id, name=plan.name, cases=tuple(cases),
                          repeats=plan.repeats, runs=resume.runs, complete=resume.complete,
                          previous_status=resume.previous_status, host=host,
                          plan_text=plan.source, t=time.time())


def version_changes(resume: Resumption, versions: Mapping[str, str | None]) -> list[str]:
    """A tool whose version changed since the session started: its resumed figures come from
    another program than its earlier ones."""
    before = resume.tools or {}
    return [f"{name} is {now!r} now, the session started with {before[name]!r}: its resumed "
            "runs' figures may differ from the earlier ones"
            for name, now in versions.items() if name in before and before[name] != now]
