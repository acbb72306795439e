"""What a session leaves behind, recorded before it is made and removed after each case.

A case's files (here, or on the hosts' fio servers) and the directories DiskLab makes are
written to the session's record (core.fs.apply.StateFile) before they exist, so that the next
start removes them when this process is killed; once removed, their record goes. DiskLab never
claims a file it did not make.
"""

from __future__ import annotations

import os
from typing import Any

from disklab.core.fs.apply import StateFile
from disklab.core.helper_client.protocol import ToolCleanup
from disklab.core.hosts.leftovers import remote_step
from disklab.core.hosts.servers import Servers
from disklab.core.run.helper import SessionHelper
from disklab.core.run.planning import Planned
from disklab.core.system.cleanup import remove_files
from disklab.core.tools.fio.client import host_names, server_files
from disklab.core.vocab.errors import DisklabError


class Records:
    """The session's record of its leftovers: `via_helper` when its tools run as root through
    the helper, which makes their files in root's places and removes them itself."""

    def __init__(self, record: StateFile, via_helper: bool) -> None:
        self.record = record
        self.via_helper = via_helper

    def case_files(self, run: Planned) -> dict[str, Any] | None:
        """Record the files the case is about to create, before it runs. Only files that are
        not there yet; none for tools run through the helper (its own cleanup and the
        teardown of the mount handle theirs)."""
        if self.via_helper:
            return None
        new = [f for f in run.command.files if not os.path.lexists(f)]
        if not new:
            return None
        return self.record.record_files(run.target.directory, new)

    def server_files(self, run: Planned, servers: Servers | None) -> dict[str, Any] | None:
        """Record the data files a case's fio servers are about to make (core.hosts.leftovers):
        a kill of this process leaves them on the servers, and the next start removes them."""
        if servers is None or not host_names(run.case.params):
            return None
        try:
            placed = server_files(run.case.params, run.target)
        except DisklabError:  # a host without a server: the case fails before any file is made
            return None
        ssh = {name: s.host for name, s in servers.states.items() if s.ssh is not None}
        return self.record.add(remote_step((ep, ssh.get(ep.name), paths) for ep, paths in placed))

    def settle(self, files: dict[str, Any] | None, remote: dict[str, Any] | None,
               left: list[str]) -> None:
        """After a case: its server files' record goes (the client ended: fio unlinked them);
        its own files' record keeps only what could not be removed (`left`)."""
        if remote is not None:
            self.record.remove(remote)
        if files is None:
            return
        if left:
            still = {os.path.abspath(p) for p in left}
            files["paths"] = [p for p in files["paths"] if p in still]
        if left and files["paths"]:
            self.record.save()
        else:
            self.record.remove(files)

    def make_dir(self, prefix: str) -> str:
        """A new directory of this session's, recorded before it is made."""
        return self.record.make_dir(prefix)

    def forget_dir(self, path: str) -> None:
        """Drop the record of a directory DiskLab made, once it is gone."""
        if os.path.exists(path):
            return
        for step in list(self.record.steps):
            if step.get("kind") == "dir" and step.get("path") == path:
                self.record.remove(step)


def remove_case_files(run: Planned, helper: SessionHelper | None) -> list[str]:
    """Remove a case's files, through the helper when its tool ran as root (`helper`); the
    ones left."""
    if helper is None:
        return remove_files(run.command.files)
    try:
        return list(helper.get().call(ToolCleanup(run.target.tag)).left)
    except DisklabError:
        return [f for f in run.command.files if os.path.lexists(f)]
