"""proc: real child processes (python -c scripts) on pipes and a pty; lines, kills, the tree.

Nothing is mocked: each test starts real processes and checks by pid what is left of them.
"""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from disklab.core.proc import TOKEN_VAR, OutputLine, run, which
from disklab.core.proc.tool import ToolProcess
from disklab.core.vocab.errors import ToolError

GIVE_UP = 30.0  # a hung test fails instead of hanging; never asserted as a duration


def script(body: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(body)]


def collect(p: ToolProcess) -> list[OutputLine]:
    lines: list[OutputLine] = []
    give_up = time.monotonic() + GIVE_UP
    while not p.poll():
        assert time.monotonic() < give_up, "the tool never finished"
        lines += p.read(0.2)
    return lines


def first_lines(p: ToolProcess) -> list[OutputLine]:
    give_up = time.monotonic() + GIVE_UP
    while True:
        lines = p.read(0.5)
        if lines:
            return lines
        assert time.monotonic() < give_up, "the tool said nothing"


def dead(p: psutil.Process) -> bool:
    """Gone, or a zombie (it has finished; only its parent - maybe init - has yet to reap it).
    A psutil.Process made while it lived tells a reused pid from it."""
    try:
        return not p.is_running() or p.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_dead(p: psutil.Process) -> bool:
    give_up = time.monotonic() + 10
    while not dead(p) and time.monotonic() < give_up:
        time.sleep(0.05)
    return dead(p)


def texts(lines: list[OutputLine], stream: str) -> list[tuple[str, str]]:
    return [(ln.text, ln.terminator) for ln in lines if ln.stream == stream]


# -- lines -----------------------------------------------------------------------------------


def test_cr_lf_and_crlf_end_lines_and_a_bare_cr_before_a_redraw_is_no_line() -> None:
    with ToolProcess(script(r"""
        import os, time
        os.write(1, b"a\rb\r\nc\n")
        os.write(1, b"\r10 bytes copied\r20 bytes copied\n")  # dd's progress redraw
        os.write(1, b"half\r"); time.sleep(0.2); os.write(1, b"\nnext\n")  # \r | \n in 2 reads
        os.write(1, b"no end")
    """)) as p:
        p.start()
        lines = collect(p)
    assert texts(lines, "stdout") == [
        ("a", "\r"), ("b", "\n"), ("c", "\n"), ("10 bytes copied", "\r"),
        ("20 bytes copied", "\n"),
        ("half", "\r"),  # handed out at once (fio ETA lines end in \r): the \n is then skipped
        ("next", "\n"), ("no end", ""),
    ]
    assert p.output("stdout") == ("a\rb\r\nc\n\r10 bytes copied\r20 bytes copied\n"
                                  "half\r\nnext\nno end")


def test_a_partial_line_is_held_until_its_end_arrives() -> None:
    with ToolProcess(script(r"""
        import os, time
        os.write(1, b"abc"); time.sleep(0.5); os.write(1, b"def\n")
    """)) as p:
        p.start()
        lines = collect(p)
    assert texts(lines, "stdout") == [("abcdef", "\n")]


def test_a_utf8_character_cut_between_two_reads_stays_whole() -> None:
    with ToolProcess(script(r"""
        import os, time
        os.write(1, b"caf\xc3"); time.sleep(0.2); os.write(1, b"\xa9\n")
    """)) as p:
        p.start()
        lines = collect(p)
    assert texts(lines, "stdout") == [("café", "\n")]


def test_stdout_and_stderr_are_kept_apart_and_the_tail_interleaves_them_by_time() -> None:
    with ToolProcess(script(r"""
        import os, time
        os.write(1, b"out 1\n"); time.sleep(0.1)
        os.write(2, b"err 2\n"); time.sleep(0.1)
        os.write(1, b"out 3\n"); time.sleep(0.1)
        os.write(2, b"err 4")
    """)) as p:
        p.start()
        lines = collect(p)
    assert texts(lines, "stdout") == [("out 1", "\n"), ("out 3", "\n")]
    assert texts(lines, "stderr") == [("err 2", "\n"), ("err 4", "")]
    assert [ln.t for ln in lines] == sorted(ln.t for ln in lines)
    assert p.tail() == "out 1\nerr 2\nout 3\nerr 4"
    assert p.tail(2) == "out 3\nerr 4"
    assert p.output("stderr") == "err 2\nerr 4"


def test_a_long_silence_is_just_empty_reads() -> None:
    """iozone is silent for many seconds between results: read() returns nothing meanwhile."""
    with ToolProcess(script("""
        import time
        print("first", flush=True); time.sleep(1.5); print("second", flush=True)
    """)) as p:
        p.start()
        lines: list[OutputLine] = []
        empty_reads = 0
        while not p.poll():
            got = p.read(0.2)
            empty_reads += not got and p.returncode is None
            lines += got
    assert texts(lines, "stdout") == [("first", "\n"), ("second", "\n")]
    assert empty_reads >= 1 and p.returncode == 0


def test_stdin_is_closed_a_reader_gets_eof_at_once() -> None:
    with ToolProcess(script("import sys; print(repr(sys.stdin.read()))")) as p:
        p.start()
        lines = collect(p)
    assert texts(lines, "stdout") == [("''", "\n")]


def test_bounded_output_keeps_head_and_tail_and_read_still_hands_out_every_line() -> None:
    # 1000 lines of 10 bytes ("line 0000\n") = 10000 bytes, 1000 kept: 500 of head, 500 of tail
    with ToolProcess(script("""
        for i in range(1000):
            print(f"line {i:04d}")
    """), keep_bytes=1000) as p:
        p.start()
        lines = collect(p)
    assert len(lines) == 1000 and lines[-1].text == "line 0999"
    head = "".join(f"line {i:04d}\n" for i in range(50))
    tail = "".join(f"line {i:04d}\n" for i in range(950, 1000))
    assert p.output("stdout") == head + "[... 9000 bytes dropped ...]\n" + tail


def test_under_a_pty_stdout_is_a_terminal_and_lines_end_in_lf() -> None:
    with ToolProcess(script("""
        import os, sys
        print("tty", os.isatty(1), os.isatty(2))
        print("to stderr", file=sys.stderr)
    """), pty=True) as p:
        p.start()
        lines = collect(p)
    assert texts(lines, "stdout") == [("tty True False", "\n")]
    assert texts(lines, "stderr") == [("to stderr", "\n")]
    assert p.output("stdout") == "tty True False\n"


def test_environment_adds_to_ours_with_the_c_locale_and_the_tracking_token() -> None:
    with ToolProcess(script(f"""
        import os
        print(os.environ["DISKLAB_TEST"], os.environ["LC_ALL"], bool(os.environ["PATH"]))
        print(os.environ["{TOKEN_VAR}"])
    """), env={"DISKLAB_TEST": "yes"}) as p:
        p.start()
        lines = collect(p)
    assert lines[0].text == "yes C True"
    assert len(lines[1].text) >= 32
    with ToolProcess(script("import os; print(os.environ['LC_ALL'])"), env={"LC_ALL": "en"}) as p:
        p.start()
        assert texts(collect(p), "stdout") == [("en", "\n")]


def test_cwd_is_where_the_tool_runs(tmp_path: Path) -> None:
    with ToolProcess(script("import os; print(os.getcwd())"), cwd=str(tmp_path)) as p:
        p.start()
        assert texts(collect(p), "stdout") == [(str(tmp_path), "\n")]


# -- exit status -----------------------------------------------------------------------------


def test_exit_status_is_recorded() -> None:
    with ToolProcess(script("import sys; sys.exit(3)")) as p:
        p.start()
        collect(p)
    assert (p.returncode, p.signal) == (3, None)
    assert p.wait() == 3


def test_death_by_signal_is_recorded() -> None:
    with ToolProcess(script("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")) as p:
        p.start()
        collect(p)
    assert (p.returncode, p.signal) == (-9, 9)


def test_wait_returns_none_while_the_tool_runs() -> None:
    with ToolProcess(["sleep", "30"]) as p:
        p.start()
        assert p.wait(0.2) is None
        leader = psutil.Process(p.pid)
    assert dead(leader) and p.signal == signal.SIGTERM


# -- missing tools ---------------------------------------------------------------------------


def test_a_missing_executable_is_a_tool_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="no-such-tool-xyz is not installed"):
        ToolProcess(["no-such-tool-xyz", "-x"]).start()
    with pytest.raises(ToolError, match="no-such-tool-xyz"):
        run(["no-such-tool-xyz"], timeout=5)
    not_exec = tmp_path / "tool.sh"
    not_exec.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(ToolError, match=f"{not_exec} is not executable"):
        ToolProcess([str(not_exec)]).start()
    with pytest.raises(ToolError, match="does not exist"):
        ToolProcess([str(tmp_path / "absent")]).start()
    with pytest.raises(ToolError, match="empty"):
        ToolProcess([]).start()


def test_which_looks_in_path_and_in_sbin() -> None:
    assert which("sh") is not None and os.access(which("sh") or "", os.X_OK)
    assert which("no-such-tool-xyz") is None
    assert which("/bin/sh") == "/bin/sh"
    # bonnie++ and mkfs live in sbin, which a user's PATH often lacks
    sbin = [d for d in ("/usr/local/sbin", "/usr/sbin", "/sbin")
            if os.access(f"{d}/losetup", os.X_OK)]
    if sbin:
        assert which("losetup", path="/nonexistent") == f"{sbin[0]}/losetup"


# -- stopping --------------------------------------------------------------------------------


def test_terminate_sends_sigterm_first() -> None:
    with ToolProcess(script("""
        import signal, sys, time
        def bye(*_):
            print("got SIGTERM", flush=True)
            sys.exit(5)
        signal.signal(signal.SIGTERM, bye)
        print("ready", flush=True)
        time.sleep(60)
    """)) as p:
        p.start()
        first_lines(p)
        p.terminate(grace=10)
        lines = p.read(0)
    assert p.returncode == 5 and p.signal is None
    assert texts(lines, "stdout") == [("got SIGTERM", "\n")]  # output read during the grace


def test_a_tool_ignoring_sigterm_is_sigkilled_after_the_grace() -> None:
    with ToolProcess(script("""
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ready", flush=True)
        time.sleep(60)
    """)) as p:
        p.start()
        first_lines(p)
        leader = psutil.Process(p.pid)
        p.terminate(grace=0.5)
        assert (p.returncode, p.signal) == (-9, 9)
        assert dead(leader) and p.survivors == []
        p.terminate(grace=0.5)  # idempotent: nothing left to do
        assert (p.returncode, p.signal) == (-9, 9)


def test_a_child_that_setsid_away_is_killed_with_the_tool() -> None:
    """The fio trap: jobs call setsid() and are out of reach of a process-group kill."""
    with ToolProcess(script("""
        import os, signal, time
        if os.fork() == 0:
            os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            print(os.getpid(), flush=True)  # announced once out of the group
            time.sleep(60)
            os._exit(0)
        time.sleep(60)
    """)) as p:
        p.start()
        escaped = psutil.Process(int(first_lines(p)[0].text))
        assert os.getsid(escaped.pid) == escaped.pid != os.getpgid(p.pid)  # really left
        assert escaped.pid in p.descendants() and p.pid in p.descendants()
        leader = psutil.Process(p.pid)
        p.terminate(grace=0.5)
    assert wait_dead(escaped) and dead(leader)


def test_an_orphan_whose_parent_exited_first_is_found_and_killed(tmp_path: Path) -> None:
    """The tool forks a child that setsid()s, closes its output and lives on; the tool exits at
    once. Re-parented to init, the child is found by the token it inherited."""
    pid_file = tmp_path / "pid"
    with ToolProcess(script(f"""
        import os, time
        if os.fork() == 0:
            os.setsid()
            os.closerange(0, 3)
            with open({str(pid_file)!r} + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename({str(pid_file)!r} + ".tmp", {str(pid_file)!r})
            time.sleep(60)
            os._exit(0)
    """)) as p:
        p.start()
        assert p.wait(GIVE_UP) == 0  # the tool itself is done; no track() so far
        give_up = time.monotonic() + GIVE_UP
        while not pid_file.exists():
            assert time.monotonic() < give_up
            time.sleep(0.05)
        orphan = psutil.Process(int(pid_file.read_text()))
        assert orphan.ppid() != p.pid and not dead(orphan)
        assert p.descendants() == [orphan.pid]
    assert wait_dead(orphan)  # __exit__ killed what was left of the tool


def test_leaving_the_block_kills_the_running_tool() -> None:
    with ToolProcess(["sleep", "60"]) as p:
        p.start()
        leader = psutil.Process(p.pid)
    assert dead(leader) and p.signal == signal.SIGTERM


def test_descendants_lists_the_live_tree_and_drops_the_dead() -> None:
    with ToolProcess(script("""
        import os, sys, time
        pid = os.fork()
        if pid == 0:
            sys.stdin.read()  # EOF at once
            time.sleep(0.3)
            os._exit(0)
        print(pid, flush=True)
        os.waitpid(pid, 0)
        print("reaped", flush=True)
        time.sleep(60)
    """)) as p:
        p.start()
        child = int(first_lines(p)[0].text)
        assert child in p.descendants()
        while "reaped" not in [ln.text for ln in p.read(0.5)]:
            pass
        assert p.descendants() == [p.pid]


# -- run() -----------------------------------------------------------------------------------


def test_run_captures_output_and_status() -> None:
    done = run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10)
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")
    assert done.argv == ("sh", "-c", "echo out; echo err >&2; exit 3") and not done.ok
    assert run(["sh", "-c", "read x; echo \"[$x]\""], 10).stdout == "[]\n"  # stdin closed


def test_run_feeds_input() -> None:
    done = run([sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"], 10,
               input="yes\n")
    assert done.ok and done.stdout == "YES\n\n"


def test_run_timeout_stops_the_whole_tree(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    body = f"""
        import os, signal, sys, time
        if os.fork() == 0:
            os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            open({str(pid_file)!r}, "w").write(str(os.getpid()))
            time.sleep(60)
        print("parent waits", file=sys.stderr, flush=True)
        time.sleep(60)
    """
    with pytest.raises(ToolError, match="did not finish within 1 s"):
        run(script(body), timeout=1)
    try:
        orphan = psutil.Process(int(pid_file.read_text()))
    except psutil.NoSuchProcess:
        return  # already gone and reaped
    assert wait_dead(orphan)


def test_a_stopped_tool_s_last_words_are_in_the_error() -> None:
    """What a tool said last before it was stopped names where it hung: stderr's last line,
    or stdout's when stderr is empty (fio's client greets its server on stdout, then waits)."""
    quiet = script("""
        import sys, time
        print("hostname=far, fio=fio-3.33", flush=True)
        sys.stdout.write("Jobs: 1 [eta 00m:10s]\\rJobs: 1 [eta 00m:09s]\\r"); sys.stdout.flush()
        time.sleep(60)
    """)
    with pytest.raises(ToolError, match=r"within 1 s and was stopped \(last said: Jobs: 1 "
                                        r"\[eta 00m:09s\]\)$"):
        run(quiet, timeout=1)
    loud = script("""
        import sys, time
        print("on stdout", flush=True)
        print("fio: connect: Connection refused", file=sys.stderr, flush=True)
        time.sleep(60)
    """)
    with pytest.raises(ToolError, match=r"\(last said: fio: connect: Connection refused\)$"):
        run(loud, timeout=1)


@pytest.mark.skipif(which("fio") is None, reason="fio is not installed")
def test_real_fio_jobs_that_outlive_their_parent_are_still_killed(tmp_path: Path) -> None:
    """The measured trap: fio without --thread setsid()s its jobs; SIGKILL the fio parent and
    they run on, re-parented. terminate() still reaches them."""
    with ToolProcess(["fio", "--name=trap", f"--directory={tmp_path}", "--rw=write",
                      "--bs=64k", "--size=4m", "--numjobs=2", "--time_based", "--runtime=60",
                      "--ioengine=psync"]) as p:
        p.start()
        give_up = time.monotonic() + GIVE_UP
        while len(p.descendants()) < 3:  # the parent and its two jobs
            assert time.monotonic() < give_up, p.tail()
            p.read(0.2)
        jobs = [psutil.Process(pid) for pid in p.descendants() if pid != p.pid]
        assert all(os.getsid(j.pid) == j.pid for j in jobs)  # each job is its own session
        os.kill(p.pid, signal.SIGKILL)
        give_up = time.monotonic() + GIVE_UP
        while p.returncode is None:
            assert time.monotonic() < give_up
            p.read(0.1)
        assert p.signal == signal.SIGKILL
        while any(j.ppid() == p.pid for j in jobs if not dead(j)):
            assert time.monotonic() < give_up
            time.sleep(0.05)
        assert not any(dead(j) for j in jobs)  # the trap: they outlived their parent
        p.terminate(grace=1.0)
        assert p.survivors == []
    assert all(wait_dead(j) for j in jobs)
