"""PrivilegedTool: one step of a case run as root by the session's helper (a raw device, or a
filesystem the helper mounted, is root's), with the interface of proc.ToolProcess that the
runner and the monitor use, so that a case reads the same whichever side runs its tool."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from disklab.core import proc
from disklab.core.helper_client.client import Privileged
from disklab.core.helper_client.protocol import (
    ToolClose,
    ToolRead,
    ToolStart,
    ToolStop,
    ToolTree,
)
from disklab.core.proc import OutputLine, ProcCounters, TreeEntry
from disklab.core.vocab.errors import DisklabError

READ_SLACK = 30.0  # seconds past a tool_read's own wait before the helper counts as hung
STOP_SLACK = proc.KILL_WAIT + 30.0


def _tree_entry(values: list[Any]) -> TreeEntry:
    create_time, ppid, *counters = values
    return TreeEntry(float(create_time), int(ppid), _proc_counters(counters))


def _proc_counters(values: list[Any]) -> ProcCounters:
    rb, wb, rc, wc, cpu = values
    return ProcCounters(int(rb), int(wb), int(rc), int(wc), float(cpu))


class PrivilegedTool:
    """One step of a case (step -1: the measured run; 0..: its prepare steps) run as root by
    the session's helper. The helper builds the argv itself from the tool's name and the case's
    parameters (it takes intent, not argv), re-checks the target, and keeps the process; this
    side asks for its output a few times a second, as the runner asks a local ToolProcess."""

    def __init__(self, priv: Privileged, tool: str, params: Mapping[str, Any], *, tag: str,
                 directory: str, step: int = -1, device: str | None = None,
                 confirm: str | None = None, library_path: str | None = None,
                 directories: Mapping[str, str] | None = None):
        self.priv = priv
        self.request = ToolStart(tool, dict(params), tag, directory, step, device, confirm,
                                 library_path, dict(directories) if directories else None)
        self.argv: tuple[str, ...] = ()
        self.pid = 0
        self.returncode: int | None = None
        self.signal: int | None = None
        self.survivors: list[int] = []
        self.result_text: str | None = None  # the tool's result file, read by the helper
        self._run: int | None = None
        self._done = False
        self._closed = False
        self._pending: list[OutputLine] = []  # read by wait(), not yet handed out
        self._seen: list[OutputLine] = []  # every line (for output() before close())
        self._tree: dict[int, TreeEntry] = {}
        self._finals: dict[int, ProcCounters] = {}
        self._final: dict[str, str] = {}  # stdout, stderr, tail as the helper kept them

    def start(self) -> None:
        answer = self.priv.call(self.request)
        self._run, self.pid = answer.run, answer.pid
        self.argv = tuple(answer.argv)

    def read(self, timeout: float) -> list[OutputLine]:
        if self._pending:
            lines, self._pending = self._pending, []
            return lines
        if self._run is None or self._done or self._closed:
            return []
        answer = self.priv.call(ToolRead(self._run, max(0.0, timeout)), timeout + READ_SLACK)
        lines = [OutputLine(float(t), str(stream), str(text), str(end))
                 for t, stream, text, end in answer.lines]
        self._seen += lines
        self._done = answer.done
        self.returncode, self.signal = answer.returncode, answer.signal
        return lines

    def poll(self) -> bool:
        return self._done and not self._pending

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._done and self._run is not None and not self._closed:
            if deadline is not None and time.monotonic() >= deadline:
                break
            self._pending += self._fetch(0.5)
        return self.returncode

    def _fetch(self, wait: float) -> list[OutputLine]:
        pending, self._pending = self._pending, []
        try:
            return self.read(wait)
        finally:
            self._pending = pending + self._pending

    def terminate(self, grace: float = 5.0) -> None:
        if self._run is None or self._closed:
            return
        answer = self.priv.call(ToolStop(self._run, max(0.0, grace)), grace + STOP_SLACK)
        self.survivors = list(answer.survivors)

    def close(self) -> None:
        """End the run in the helper (killing what is left of it) and take its whole output.
        Never raises: a helper that died leaves the output read so far."""
        if self._run is None or self._closed:
            return
        self._closed = True
        try:
            answer = self.priv.call(ToolClose(self._run), STOP_SLACK)
        except DisklabError:
            return
        self._final = {"stdout": answer.stdout, "stderr": answer.stderr, "tail": answer.tail}
        self.returncode, self.signal = answer.returncode, answer.signal
        self.survivors = list(answer.survivors)
        self.result_text = answer.result_file
        self._done = True

    def __enter__(self) -> PrivilegedTool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- what the monitor and the runner read ------------------------------------------
    def descendants(self) -> list[int]:
        return list(self._tree)

    def tree_counters(self) -> dict[int, TreeEntry]:
        """The tree's counters now, read by the helper (the monitor's sample asks; never
        raises: a helper that is gone has no tree to show, as a vanished process has none)."""
        if self._run is None or self._closed:
            return {}
        try:
            answer = self.priv.call(ToolTree(self._run), READ_SLACK)
        except DisklabError:
            return {}
        self._tree = {int(pid): _tree_entry(v) for pid, v in answer.tree.items()}
        self._finals = {int(pid): _proc_counters(v) for pid, v in answer.finals.items()}
        return dict(self._tree)

    def exit_counters(self) -> dict[int, ProcCounters]:
        return dict(self._finals)

    def output(self, stream: str) -> str:
        if stream in self._final:
            return self._final[stream]
        return "".join(line.text + (line.terminator or "\n") for line in self._seen
                       if line.stream == stream)

    def tail(self, n_lines: int = 40) -> str:
        if "tail" in self._final:
            return "\n".join(self._final["tail"].splitlines()[-n_lines:])
        return "\n".join(line.text for line in self._seen[-n_lines:])
