"""The fio servers of one session: reached as they run, or started over SSH; probed for their
facts; stopped at the end (also on cancel and on an error, from the runner's `finally`).

A host that cannot be reached or started is not an error of the whole session: it is recorded
with what happened, the cases that name it fail with that reason, and the other hosts' cases
run (stop_on_failure decides whether the session goes on after such a failure).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from disklab.core import proc
from disklab.core.hosts.leftovers import remote_step
from disklab.core.hosts.ssh import Ask, HostError, SshServer, listening
from disklab.core.vocab.errors import DisklabError
from disklab.core.vocab.model import Host, HostEndpoint, Plan

if TYPE_CHECKING:
    from disklab.core.fs.apply import StateFile

PROBE_FILE = "disklab-probe.tmp"
PROBE_TIMEOUT = 30.0  # seconds for the probe job on one host (connect, 1 MiB, report)
_HELLO = re.compile(r"hostname=(?P<hostname>[^,]*), be=(?P<be>\d+), (?P<bits>\d+)-bit, "
                    r"os=(?P<os>[^,]*), arch=(?P<arch>[^,]*), fio=(?P<fio>[^,\s]*)")
_DISK = re.compile(r"^\s+(?P<disk>[A-Za-z0-9_.-]+): ios=", re.M)
_CPU = re.compile(r"cpu\s*: usr=(?P<usr>[0-9.]+)%, sys=(?P<sys>[0-9.]+)%")
_JOB_ERROR = re.compile(r"err=\s*(?P<err>-?\d+)(?: \((?P<msg>[^)]*)\))?")


def probe_paths(endpoint: HostEndpoint) -> list[str]:
    """The file the probe job writes (and fio unlinks) in a host's directory, as the server
    names it (after the address its client used) and as the job does."""
    base = endpoint.directory.rstrip("/")
    return [f"{base}/{endpoint.address}.{PROBE_FILE}", f"{base}/{PROBE_FILE}"]


def probe_job(directory: str) -> str:
    """A 1 MiB write in the host's directory, removed by fio (unlink): proves the server runs
    jobs there, and its report names the machine, its OS, architecture, fio version and the
    disk under the directory."""
    return ("[disklab-probe]\nthread\nunlink=1\nrw=write\nbs=64k\nsize=1m\n"
            f"directory={directory}\nfilename={PROBE_FILE}\n")


def parse_probe(text: str) -> dict[str, Any]:
    """The facts fio's client prints about a server: its greeting ('hostname=..., os=Linux,
    arch=x86-64, fio=fio-3.33') and the disks of the job's 'Disk stats'."""
    facts: dict[str, Any] = {}
    if m := _HELLO.search(text):
        facts.update(hostname=m["hostname"], os=m["os"], arch=m["arch"], fio=m["fio"],
                     bits=int(m["bits"]), big_endian=m["be"] == "1")
    if "Disk stats" in text:
        facts["disks"] = _DISK.findall(text.split("Disk stats", 1)[1])
    return facts


PROBE_DIR_PREFIX = "disklab-probe-"  # + the pid of the DiskLab that made it, + a random tail


def stale_probe_dirs(base: str | None = None) -> list[str]:
    """Remove the probe directories (in TMPDIR) of DiskLab processes that were killed before
    removing theirs; one line per directory removed. Each is named with its maker's pid: one
    whose process is gone, or is a newer process with that pid, is stale. Never raises."""
    base = base or tempfile.gettempdir()
    removed = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return []
    for entry in entries:
        m = re.fullmatch(re.escape(PROBE_DIR_PREFIX) + r"(\d+)-[A-Za-z0-9_]+", entry.name)
        if m is None or not entry.is_dir(follow_symlinks=False):
            continue
        with contextlib.suppress(OSError):
            if _alive_since(int(m.group(1)), entry.stat(follow_symlinks=False).st_mtime):
                continue
            shutil.rmtree(entry.path)
            removed.append(f"removed {entry.path}, a fio server probe's directory")
    return removed


def _alive_since(pid: int, made: float) -> bool:
    """Is `pid` a live process that was already running at time `made`?"""
    try:
        return psutil.Process(pid).create_time() <= made + 1.0
    except (psutil.Error, ValueError, OverflowError):
        return False


def probe(endpoint: HostEndpoint, timeout: float = PROBE_TIMEOUT) -> dict[str, Any]:
    """Run the probe job on one server; its facts, or HostError saying what went wrong."""
    name, where = endpoint.name, f"{endpoint.address},{endpoint.port}"
    with tempfile.TemporaryDirectory(prefix=f"{PROBE_DIR_PREFIX}{os.getpid()}-") as tmp:
        job = Path(tmp) / f"{name}.job"
        job.write_text(probe_job(endpoint.directory))
        try:
            done = proc.run(["fio", f"--client={where}", str(job)], timeout=timeout)
        except DisklabError as e:
            raise HostError(f"host {name}: the probe job did not run ({e})") from e
    text = done.stdout + "\n" + done.stderr
    if "failed to connect" in text or ("connect:" in text and "hostname=" not in text):
        raise HostError(f"host {name}: could not connect to its fio server ({where})")
    facts = parse_probe(text)
    if "fio" not in facts:
        tail = " ".join(text.split())[-200:]
        raise HostError(f"host {name}: no fio server answered at {where} ({tail})")
    refused = _server_messages(text)
    if "disklab-probe: (groupid" not in text:
        said = "; ".join(refused[:3]) or " ".join(text.split())[-200:]
        raise HostError(f"host {name}: the server refused the job in {endpoint.directory} "
                        f"({said})")
    err = _JOB_ERROR.search(text)
    if err and err["err"] != "0":
        raise HostError(f"host {name}: the server refused the job in {endpoint.directory} "
                        f"(error {err['err']}{': ' + err['msg'] if err['msg'] else ''})")
    return facts


def _server_messages(text: str) -> list[str]:
    """fio's error lines from the server side, as the client prints them ('<host> fio: ...')."""
    return [m.group(1) for m in re.finditer(r"^<[^>]*> (fio: .*?)\s*$", text, re.M)]


@dataclass
class HostState:
    host: Host
    endpoint: HostEndpoint | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    ssh: SshServer | None = None


def used_hosts(plan: Plan) -> list[Host]:
    """The plan's hosts that a test names, in plan order (an unused one is never started)."""
    named: set[str] = set()
    for spec in plan.tests:
        value = spec.params.get("hosts")
        for v in (value if isinstance(value, tuple) else (value,)):
            if v:
                named.update(str(v).split("+"))
    return [h for h in plan.hosts if h.name in named]


def _planned(host: Host) -> HostEndpoint:
    return HostEndpoint(host.name, host.address if host.start == "running" else "127.0.0.1",
                        host.port, host.directory)


def planned_endpoints(plan: Plan) -> tuple[HostEndpoint, ...]:
    """Endpoints as a plan shows them before anything starts: an SSH host's server is reached
    through a forward whose local port is chosen at the start, shown as its remote port."""
    return tuple(_planned(h) for h in plan.hosts)


class Servers:
    """The session's servers: start() reaches or starts each, close() stops what it started."""

    def __init__(self, hosts: Iterable[Host], ask: Ask | None = None,
                 cancelled: Callable[[], bool] | None = None,
                 record: StateFile | None = None):
        self.states = {h.name: HostState(h) for h in hosts}
        self.ask = ask
        self.cancelled = cancelled
        self.record = record  # the session's state file: the probe files, before the probes

    def start(self, client_version: str | None = None) -> list[str]:
        """Reach or start every host, then probe them all at once; returns one message per
        problem (a host that failed, a fio version that differs from the client's). The SSH
        logins go one after another (a person may have to answer), the probes (about 1.3 s
        each, mostly fio's client connecting) side by side."""
        messages: list[str] = []
        for state in self.states.values():
            try:
                self._reach(state)
            except HostError as e:
                self._failed(state, e, messages)
        reached = [s for s in self.states.values() if s.error is None]
        step = None if self.record is None else self.record.add(remote_step(
            (s.endpoint, s.host if s.ssh is not None else None, probe_paths(s.endpoint))
            for s in reached if s.endpoint is not None))
        with ThreadPoolExecutor(max_workers=max(1, min(len(reached), 8))) as pool:
            probes = {s.host.name: pool.submit(probe, s.endpoint) for s in reached
                      if s.endpoint is not None}
        if step is not None and self.record is not None:  # the probes ended: fio unlinked
            self.record.remove(step)
        for state in reached:
            try:
                state.facts = probes[state.host.name].result()
            except HostError as e:
                self._failed(state, e, messages)
                continue
            if state.ssh is not None:  # kernel, CPUs, the directory's filesystem
                state.facts.update(state.ssh.facts)
            version = state.facts.get("fio")
            if client_version and version and version != client_version:
                messages.append(f"host {state.host.name} runs {version}, the client here "
                                f"{client_version}: fio's protocol may differ between versions")
                state.facts["version_differs"] = True
        return messages

    def _reach(self, state: HostState) -> None:
        host = state.host
        if host.start == "ssh":
            state.ssh = SshServer(host, self.ask, self.cancelled)
            state.ssh.start()
            state.host = state.ssh.host  # with the ssh_config it logged in with (leftovers)
            state.endpoint = HostEndpoint(host.name, "127.0.0.1", state.ssh.local_port,
                                          host.directory)
            return
        state.endpoint = HostEndpoint(host.name, host.address, host.port, host.directory)
        if not listening(host.address, host.port):
            raise HostError(f"host {host.name}: nothing listens at {host.address},{host.port}"
                            f" (start `fio --server={host.address},{host.port}` there)")

    @staticmethod
    def _failed(state: HostState, error: HostError, messages: list[str]) -> None:
        state.error = str(error)
        messages.append(state.error)
        if state.ssh is not None:
            state.ssh.stop()

    @property
    def endpoints(self) -> tuple[HostEndpoint, ...]:
        """Where each host's server is reached; a host that failed keeps its planned endpoint
        (its cases fail with its reason before they start, but their commands can be shown)."""
        return tuple(s.endpoint or _planned(s.host) for s in self.states.values())

    def failed(self, names: Iterable[str]) -> dict[str, str]:
        """Of these hosts, the ones that cannot run a job now, and why (a server started over
        SSH whose session ended since is reported as such)."""
        out = {}
        for name in names:
            state = self.states.get(name)
            if state is None:
                out[name] = f"host {name}: not started"
            elif state.error:
                out[name] = state.error
            elif state.ssh is not None and not state.ssh.alive():
                state.error = f"host {name}: its SSH session ended{state.ssh.said()}"
                out[name] = state.error
        return out

    def facts(self) -> Mapping[str, Any]:
        """Per host: how it is reached and what it reported, for the session's host record."""
        return {name: {"address": s.host.address, "port": s.host.port, "start": s.host.start,
                       "directory": s.host.directory, "error": s.error, **s.facts}
                for name, s in self.states.items()}

    def close(self) -> None:
        """Stop every server DiskLab started (a running one is the user's, left as it is)."""
        for state in self.states.values():
            if state.ssh is not None:
                state.ssh.stop()
