"""The only package that starts processes (DESIGN.md rule 2).

Tools run on pipes (iozone, fio, bonnie++ and dd all flush their output on a pipe as on a pty), or
with stdout on a pty when an adapter says it needs one; always in a new session, with stdin on
/dev/null (a prompt must never wait for an answer nobody gives: mke2fs asks on a tty), in the C
locale (the parsers read '1.2 GB/s', not '1,2 GB/s'), and with a SIGKILL on DiskLab's death.

Output is split on '\\r' as well as '\\n' (dd and fio redraw progress with '\\r'), timestamped,
kept bounded in memory (head and tail of each stream) and handed to the caller line by line; the
runner stores every line in the library. The reader is poll-based and single-threaded: the
runner's loop asks for what arrived within a timeout, so there are no reader threads.

Killing: fio (without --thread) forks its jobs with setsid(), out of reach of a process-group
kill, and they keep writing after their parent died. So every process the tool starts is tracked
two ways: by parenthood (new processes in /proc, looked for once a second) and by a token in the
environment that every descendant inherits (found even after its parent died and it was
re-parented to init). terminate() sends SIGTERM to the group and to every tracked process, waits,
then SIGKILLs whatever survived. A cgroup would be tighter but needs root and a delegated
hierarchy; this works for any user.

Memory cgroups (a page-cache limit) are used for placement only: a ToolProcess given a group's
directory joins it in the child, between fork and exec (child_setup writes the child's own pid
into cgroup.procs). That is race-free where writing the pid from the parent after the start is
not: Popen returns only once the child has exec'd, so the tool would already be running, and
could already have read, written or forked, outside the group. Joining before exec, every byte
the tool moves and every process it starts is in the group. The parent opens cgroup.procs
itself, so that a group it may not use is a ToolError naming it, not a child that fails.

The package's rooms: `spawn` (a short command to its end, a program on a terminal, what every
child gets), `procfs` (a process tree's /proc files and counters), `tracking` (every process a
tool starts, by parenthood and by token), `lines` (output split into bounded lines), `tool`
(ToolProcess), `group` (ToolGroup: several behind one barrier), `line_process` (LineProcess: the
privileged helper's channel). What the rest of DiskLab uses is named here; a tool's process
(`tool`, `group`) is not: the runner (core.run) and the root helper's side of a case's step
(core.root_helper.toolruns) import it from its module, and no one else may (import contract
run-starts-the-tools).
"""

from __future__ import annotations

from disklab.core.proc.line_process import LineProcess
from disklab.core.proc.lines import OutputLine
from disklab.core.proc.procfs import (
    TOKEN_VAR,
    ProcCounters,
    TreeEntry,
    kept_files,
    process_counters,
    read_tree,
)
from disklab.core.proc.spawn import KILL_WAIT, SBIN, Completed, run, start_on_terminal, which

__all__ = ["KILL_WAIT", "SBIN", "TOKEN_VAR", "Completed", "LineProcess", "OutputLine",
           "ProcCounters", "TreeEntry", "kept_files", "process_counters", "read_tree", "run",
           "start_on_terminal", "which"]
