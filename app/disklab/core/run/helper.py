"""The session's one privileged helper (disklab.core.helper_client), started on first use, and the
transcript of the root commands it ran.

One authorisation (one password prompt at most) per session, and a helper that cannot start is
not asked again for every case. A session whose cases need no root work (a directory target
without dropped caches or page-cache limits run as root) never starts it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from disklab.core.fs.apply import StateFile
from disklab.core.helper_client import Privileged
from disklab.core.vocab.errors import DisklabError, PrivilegeError
from disklab.core.vocab.events import LogLine


class SessionHelper:
    """The privileged helper of one session: `get()` starts it when first asked, `log()` says
    what it ran since the last call, `close()` stops it."""

    def __init__(self, password: Callable[[], str] | None, record: StateFile) -> None:
        self.password = password
        self.record = record  # the session's record: the helper's directory, should a kill come
        self.priv: Privileged | None = None
        self.no_priv: str | None = None  # why the helper could not start (said once)
        self.ran: list[Mapping[str, Any]] = []  # its commands, not yet in the transcript

    def get(self) -> Privileged:
        """The started helper; PrivilegeError (or the start's own error, in full the first
        time) when it cannot start."""
        if self.priv is None:
            if self.no_priv:
                raise PrivilegeError(self.no_priv)
            priv = Privileged(password=self.password, on_command=self.ran.append)
            try:
                priv.start()
            except DisklabError as e:
                self.no_priv = getattr(e, "again", str(e))  # said in full once, then short
                raise
            self.priv = priv
            if priv.workdir:
                # the helper removes its directory when it ends; should a kill's signal cut
                # that short, the next start removes it (when empty) by this record
                self.record.add({"kind": "dir", "path": priv.workdir, "owner": "helper"})
        return self.priv

    def log(self) -> Iterator[LogLine]:
        """What the helper ran since the last call, into the session's transcript (every root
        command is kept with the session, rule 8)."""
        while self.ran:
            cmd = self.ran.pop(0)
            if cmd.get("ended"):
                continue  # a tool's end: its status is in CaseFinished or CaseFailed
            text = " ".join(str(a) for a in cmd.get("argv") or ())
            if cmd.get("background"):
                text = f"started as root (pid {cmd.get('pid')}): {text}"
            elif cmd.get("error") or cmd.get("returncode") not in (0, None):
                text += f"  -> {cmd.get('error') or 'exit ' + str(cmd.get('returncode'))}"
            yield LogLine(case_id="", stream="helper", text=text, t=time.time())

    def close(self) -> str | None:
        """Stop the helper when it was started; the directory it worked in (gone once it
        ended cleanly), for the session's record to forget."""
        if self.priv is None:
            return None
        self.priv.close()
        return self.priv.workdir
