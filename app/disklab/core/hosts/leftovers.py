"""Files a killed session left on fio servers: recorded before they are made, removed at the
next start.

The probe job's file and each case's data files are made by the servers, in the hosts'
directories; fio unlinks them at the end of a job, but a SIGKILL of DiskLab (its client gone
mid-job) leaves them. Like the local files of a case (core.fs.apply's `files` steps), they are
recorded in the session's state file before the job starts (a `remote-files` step: host,
address, port, paths) and the step is dropped when the job ended. The next start, finding the
state file of a dead session, removes them through fio's own client with a job that unlinks
(core.tools.fio.client.unlink_job), and says so. A server that does not answer keeps its record
for a later start; on a host that was started over SSH (its server went with the killed
session's SSH connection) they are removed over SSH, logging in as the session did without
asking anything (BatchMode).
"""

from __future__ import annotations

import json
import shlex
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from disklab.core import proc
from disklab.core.fs.apply import StateFile, leftover_files
from disklab.core.hosts.ssh import listening, scrubbed
from disklab.core.hosts.ssh_settings import config_problem
from disklab.core.tools.fio.client import unlink_job
from disklab.core.vocab.errors import DisklabError
from disklab.core.vocab.model import Host, HostEndpoint

KIND = "remote-files"
REMOVE_TIMEOUT = 20.0  # seconds for fio's client to connect, run the unlink job and report


def remote_step(entries: Iterable[tuple[HostEndpoint, Host | None, list[str]]]
                ) -> dict[str, Any]:
    """The state-file step for files about to be made on servers: (endpoint, the host when
    its server was started over SSH, paths) each. An SSH host's login is kept (address, user,
    port, ssh_config): its server goes with the killed run, the files are removed over SSH."""
    return {"kind": KIND, "hosts": [
        {"name": ep.name, "address": ep.address, "port": ep.port, "paths": list(paths),
         "ssh": None if host is None else {"address": host.address, "user": host.user,
                                           "ssh_port": host.ssh_port,
                                           "ssh_config": host.ssh_config}}
        for ep, host, paths in entries if paths]}


def recover_remote_files(state_dir: str | Path) -> list[str]:
    """Remove the files dead sessions recorded on fio servers; one line per host. Runs
    before core.fs.apply.recover_leftovers, which leaves these steps alone. Never raises."""
    lines: list[str] = []
    for path in leftover_files(state_dir):
        try:
            state = StateFile(path, _read(path))
        except (OSError, ValueError):
            continue
        for step in [s for s in state.steps if s.get("kind") == KIND]:
            kept = []
            for host in step.get("hosts") or ():
                line, done = _recover_host(host)
                lines.append(f"{line} (left by DiskLab pid {state.data.get('pid')})")
                if not done:
                    kept.append(host)
            if kept:
                step["hosts"] = kept
                state.save()
            else:
                state.remove(step)
    return lines


def _read(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise ValueError("not a state file")
    return data


def _recover_host(host: dict[str, Any]) -> tuple[str, bool]:
    """(what was done, whether the host's record can go)."""
    name, address, port = str(host.get("name")), str(host.get("address")), host.get("port")
    paths = [str(p) for p in host.get("paths") or ()]
    shown = ", ".join(paths)
    ssh = host.get("ssh")
    if isinstance(ssh, dict):
        try:
            remove_over_ssh(ssh, paths)
        except DisklabError as e:
            return (f"could not remove {shown} on host {name} over SSH ({e}): kept for the "
                    "next start", False)
        return f"removed {shown} on host {name} over SSH", True
    if not isinstance(port, int) or not listening(address, port):
        return (f"could not reach host {name}'s fio server at {address},{port} to remove "
                f"{shown}: kept for the next start", False)
    try:
        remove_on_server(address, port, paths)
    except DisklabError as e:
        return f"could not remove {shown} on host {name}: {e}; kept for the next start", False
    return f"removed {shown} on host {name} ({address},{port})", True


def remove_over_ssh(login: dict[str, Any], paths: list[str],
                    timeout: float = REMOVE_TIMEOUT) -> None:
    """`rm -f` the paths on an SSH host, logging in as the session did but without asking
    anything (BatchMode: a key or an agent; no terminal at a start). DisklabError when it did
    not run there."""
    argv = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]
    if login.get("ssh_config"):  # the user's own choice, as the session had it: checked again
        problem = config_problem(login["ssh_config"])
        if problem is not None:
            raise DisklabError(f"ssh_config: {problem}")
        argv += ["-F", str(login["ssh_config"])]
    if login.get("ssh_port"):
        argv += ["-p", str(int(login["ssh_port"]))]
    if login.get("user"):
        argv += ["-l", str(login["user"])]
    # the remote side's shell reads the command: every path quoted
    argv += ["--", str(login.get("address")), "rm -f -- " + " ".join(map(shlex.quote, paths))]
    done = proc.run(argv, timeout=timeout)
    if done.returncode != 0:
        said = " ".join(scrubbed(done.stderr or done.stdout or "").split())[-200:]
        raise DisklabError(said or f"ssh exited {done.returncode}")


def remove_on_server(address: str, port: int, paths: list[str],
                     timeout: float = REMOVE_TIMEOUT) -> None:
    """Unlink `paths` on the fio server at address,port with a job through fio's client;
    DisklabError when it did not run there."""
    with tempfile.TemporaryDirectory(prefix="disklab-remove-") as tmp:
        job = Path(tmp) / "remove.job"
        job.write_text(unlink_job(paths))
        done = proc.run(["fio", f"--client={address},{port}", str(job)], timeout=timeout)
    text = done.stdout + "\n" + done.stderr
    if "failed to connect" in text or "Run status group" not in text:
        raise DisklabError(" ".join(text.split())[-200:] or f"fio exited {done.returncode}")
