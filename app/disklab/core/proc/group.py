"""Several tool processes started together behind one barrier (dd on several targets):
each its own process tree, their start and end times recorded."""

from __future__ import annotations

import contextlib
import json
import os
import select
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from disklab.core.proc.lines import OutputLine
from disklab.core.proc.procfs import ProcCounters, TreeEntry, read_tree
from disklab.core.proc.tool import ToolProcess
from disklab.core.vocab.errors import ToolError

GROUP_POLL = 0.02  # seconds between looks at a group's members (their end times' resolution)
GROUP_START = 30.0  # seconds the members of a group may take to reach the barrier


class ToolGroup:
    """Several tools started together (the streams of one case on several targets, e.g. one
    dd per target): each is forked and set up, then waits in the child, before exec, on one
    pipe; the parent closes the pipe's write end and all of them go at once (a barrier, not
    "as soon as each is ready"). It reads like one ToolProcess to the runner. Each member's
    lines come out prefixed "[i:name] " (i its place in the group, name its target), and the
    release time and each member's end time are written to `timing_file` as JSON when all
    have ended, so that the adapter can give per-target figures and the start skew."""

    def __init__(self, members: Sequence[tuple[str, Sequence[str]]], *,
                 cwd: str | None = None, env: Mapping[str, str] | None = None,
                 cgroup: str | None = None, timing_file: str | None = None):
        self.members = [(str(name), tuple(str(a) for a in argv)) for name, argv in members]
        if not self.members:
            raise ToolError("a group of tools needs at least one member")
        self.argv = self.members[0][1]
        self.timing_file = timing_file
        self._barrier = os.pipe()
        self._ready = os.pipe()
        barrier = (*self._barrier, self._ready[1])
        self._procs = [ToolProcess(argv, cwd=cwd, env=env, cgroup=cgroup, barrier=barrier)
                       for _name, argv in self.members]
        self.released: float | None = None
        self.ended: list[float | None] = [None] * len(self._procs)
        self._written = False
        # Popen returns only once its child has exec'd, so each member is started from a
        # thread of its own; the thread lives until close(): a child's PDEATHSIG follows the
        # thread that forked it.
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._errors: list[BaseException] = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs]

    @property
    def returncode(self) -> int | None:
        codes = [p.returncode for p in self._procs]
        if any(c is None for c in codes):
            return None
        return next((c for c in codes if c), 0)

    @property
    def signal(self) -> int | None:
        return next((p.signal for p in self._procs if p.signal), None)

    @property
    def pid(self) -> int:
        """The first member's pid (the group's own pids are `pids`)."""
        return self._procs[0].pid

    @property
    def survivors(self) -> list[int]:
        return [pid for p in self._procs for pid in p.survivors]

    @property
    def lines_dropped(self) -> int:
        return sum(p.lines_dropped for p in self._procs)

    def _member(self, p: ToolProcess, started: threading.Event) -> None:
        try:
            p.start()
        except BaseException as e:  # said by start(); the child never ran
            self._errors.append(e)
            with contextlib.suppress(OSError):
                os.write(self._ready[1], b"0")  # not at the barrier: do not wait for it
        finally:
            started.set()
        self._stop.wait()

    def start(self) -> None:
        """Fork every member (each stops before exec), then release them all at once.
        ToolError when one could not start (the others are then stopped)."""
        read_end, write_end = self._barrier
        events = []
        for i, p in enumerate(self._procs):
            started = threading.Event()
            t = threading.Thread(target=self._member, args=(p, started), daemon=True,
                                 name=f"tool-group-{i}")
            t.start()
            self._threads.append(t)
            events.append(started)
        arrived = 0
        deadline = time.monotonic() + GROUP_START
        while arrived < len(self._procs) and time.monotonic() < deadline:
            ready, _, _ = select.select([self._ready[0]], [], [], 0.1)
            if ready:
                arrived += len(os.read(self._ready[0], len(self._procs)))
        self.released = time.time()
        os.close(write_end)  # the barrier: every member execs now
        for e in events:
            e.wait(GROUP_START)
        os.close(read_end)
        for fd in self._ready:
            os.close(fd)
        if self._errors or arrived < len(self._procs):
            self.close()
            error = self._errors[0] if self._errors else None
            raise ToolError(f"the group of {len(self._procs)} processes could not start"
                            + (f": {error}" if error else " (not all reached the barrier)"))

    def _prefix(self, i: int, lines: list[OutputLine]) -> list[OutputLine]:
        name = self.members[i][0]
        return [OutputLine(line.t, line.stream, f"[{i}:{name}] {line.text}", line.terminator)
                for line in lines]

    def _note_ends(self) -> None:
        now = time.time()
        for i, p in enumerate(self._procs):
            if self.ended[i] is None and p.poll():
                self.ended[i] = now
        if all(e is not None for e in self.ended):
            self._write_timing()

    def _write_timing(self) -> None:
        if self._written or self.timing_file is None:
            return
        self._written = True
        doc = {"released": self.released, "streams": [
            {"target": name, "argv": list(argv), "pid": p.pid, "ended": end,
             "returncode": p.returncode}
            for (name, argv), p, end in zip(self.members, self._procs, self.ended, strict=True)]}
        with contextlib.suppress(OSError):
            Path(self.timing_file).write_text(json.dumps(doc))

    def read(self, timeout: float) -> list[OutputLine]:
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            out: list[OutputLine] = []
            for i, p in enumerate(self._procs):
                out += self._prefix(i, p.read(0.0))
            self._note_ends()
            if out or time.monotonic() >= deadline or self.poll():
                return out
            time.sleep(min(GROUP_POLL, max(0.0, deadline - time.monotonic())))

    def poll(self) -> bool:
        done = all(p.poll() for p in self._procs)
        if done:
            self._note_ends()
        return done

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not all(p.returncode is not None for p in self._procs):
            self._note_ends()
            if deadline is not None and time.monotonic() >= deadline:
                return None
            for p in self._procs:
                p.wait(GROUP_POLL)
        self._note_ends()
        return self.returncode

    def descendants(self) -> list[int]:
        return [pid for p in self._procs for pid in p.descendants()]

    def tree_counters(self) -> dict[int, TreeEntry]:
        return read_tree(self.descendants())

    def exit_counters(self) -> dict[int, ProcCounters]:
        return {pid: c for p in self._procs for pid, c in p.exit_counters().items()}

    def terminate(self, grace: float = 5.0) -> None:
        for p in self._procs:
            p.terminate(grace)

    def close(self) -> None:
        for p in self._procs:
            p.close()
        self._note_ends()
        self._stop.set()
        for t in self._threads:
            t.join(1.0)

    def __enter__(self) -> ToolGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def output(self, stream: str) -> str:
        """Every member's output of one stream, each line prefixed as read() gives it."""
        parts = []
        for i, p in enumerate(self._procs):
            name = self.members[i][0]
            parts += [f"[{i}:{name}] {line}" for line in
                      p.output(stream).replace("\r", "\n").splitlines() if line]
        return "\n".join(parts) + ("\n" if parts else "")

    def tail(self, n_lines: int = 40) -> str:
        tails = [f"[{i}:{self.members[i][0]}] {line}" for i, p in enumerate(self._procs)
                 for line in p.tail(n_lines).splitlines()]
        return "\n".join(tails[-n_lines:] if n_lines > 0 else [])
