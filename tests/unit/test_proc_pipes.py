"""ToolProcess with real child processes: line splitting, kills, stdin, bounded output."""

from __future__ import annotations

import sys
import textwrap
import time

import psutil
import pytest

from disklab.core.proc import run
from disklab.core.proc.tool import ToolProcess
from disklab.core.vocab.errors import ToolError


def script(body: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(body)]


def collect(p: ToolProcess) -> list[tuple[str, str, str]]:
    out = []
    while not p.poll():
        out += [(ln.stream, ln.text, ln.terminator) for ln in p.read(0.2)]
    return out


def test_lines_split_on_cr_and_lf_and_the_last_partial_line_is_kept() -> None:
    with ToolProcess(script("""
        import sys, time
        w = sys.stdout.write
        w("10%\\r"); sys.stdout.flush(); time.sleep(0.2)
        w("20%\\r"); sys.stdout.flush()
        w("\\r\\nwin line\\r\\n"); sys.stderr.write("oops\\n"); sys.stderr.flush()
        w("tail without newline")
    """)) as p:
        p.start()
        lines = collect(p)
    stdout = [(t, term) for s, t, term in lines if s == "stdout"]
    assert stdout == [("10%", "\r"), ("20%", "\r"), ("", "\n"), ("win line", "\n"),
                      ("tail without newline", "")]
    assert ("stderr", "oops", "\n") in lines
    assert p.returncode == 0 and p.signal is None
    assert p.output("stdout") == "10%\r20%\r\r\nwin line\r\ntail without newline"


def test_stdin_is_closed() -> None:
    with ToolProcess(script("import sys; print(repr(sys.stdin.read()))")) as p:
        p.start()
        lines = collect(p)
    assert lines == [("stdout", "''", "\n")]


def test_a_tool_ignoring_sigterm_is_killed_after_the_grace() -> None:
    with ToolProcess(script("""
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ready", flush=True)
        time.sleep(60)
    """)) as p:
        p.start()
        while not p.read(0.5):
            pass
        p.terminate(grace=0.5)
        p.wait(5)
    assert p.signal == 9 and p.returncode == -9


def test_a_grandchild_that_left_the_group_with_setsid_is_killed_too() -> None:
    """fio without --thread: jobs call setsid() and escape a process-group kill."""
    with ToolProcess(script("""
        import os, sys, time
        pid = os.fork()
        if pid == 0:
            os.setsid()
            time.sleep(60)
            os._exit(0)
        print(pid, flush=True)
        time.sleep(60)
    """)) as p:
        p.start()
        lines = []
        while not lines:
            lines = p.read(0.5)
        escaped = int(lines[0].text)
        assert psutil.Process(escaped).pid == escaped
        p.terminate(grace=1.0)
    gone = psutil.wait_procs([psutil.Process(escaped)], timeout=5)[0] if psutil.pid_exists(
        escaped) else []
    assert not psutil.pid_exists(escaped) or gone


def test_missing_executable_is_named() -> None:
    with pytest.raises(ToolError, match="no-such-tool"):
        ToolProcess(["no-such-tool", "-x"]).start()
    with pytest.raises(ToolError, match="no-such-tool"):
        run(["no-such-tool"])


def test_long_output_keeps_head_and_tail() -> None:
    with ToolProcess(script("""
        for i in range(200000):
            print(f"line {i}")
    """), keep_bytes=64 << 10) as p:
        p.start()
        n = len(collect(p))
    assert n == 200000
    kept = p.output("stdout")
    assert kept.startswith("line 0\n") and kept.rstrip().endswith("line 199999")
    assert "dropped" in kept and len(kept) < 100 << 10


def test_exit_status_and_tail() -> None:
    with ToolProcess(script("import sys; print('a'); print('b', file=sys.stderr); sys.exit(3)")
                     ) as p:
        p.start()
        collect(p)
    assert p.returncode == 3 and p.tail() in ("a\nb", "b\na")
    started = time.monotonic()
    assert run([sys.executable, "-c", "print(1)"]).stdout == "1\n"
    assert time.monotonic() - started < 30
