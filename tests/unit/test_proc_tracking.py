"""proc's process tracker: which processes are the tool's, found the cheap way (only processes
started since the last look are looked at) and still every one of them: children started
seconds after the tool, escapees re-parented to init, fio's setsid()'d jobs forked late, and
never a stranger that got a pid the tool's process had (pids are reused).

Real processes only. The pid-reuse tests make the kernel hand out a chosen pid by writing
/proc/sys/kernel/ns_last_pid (root): another process on the machine may take it first, so they
try again a few times.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from disklab.core.proc import which
from disklab.core.proc.tool import ToolProcess
from disklab.core.run.monitor import Monitor

GIVE_UP = 30.0  # a hung test fails instead of hanging; never asserted as a duration
LAST_PID = Path("/proc/sys/kernel/ns_last_pid")
MiB = 1 << 20

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not os.access(LAST_PID, os.W_OK),
    reason="choosing the next pid (ns_last_pid) needs root")


def script(body: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(body)]


def until(p: ToolProcess, done, what: str, every: float = 0.25) -> None:
    """Read the tool's output and look at its tree (as the runner does) until done()."""
    give_up = time.monotonic() + GIVE_UP
    while not done():
        assert time.monotonic() < give_up, f"never: {what}\n{p.tail()}"
        p.read(every)


def wait_file(path: Path) -> int:
    give_up = time.monotonic() + GIVE_UP
    while not path.exists():
        assert time.monotonic() < give_up, f"{path} never came"
        time.sleep(0.02)
    return int(path.read_text())


def gone(pid: int, give_up: float = 10.0) -> bool:
    end = time.monotonic() + give_up
    while time.monotonic() < end:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def announce(path: str) -> str:
    """One Python line that writes this process's pid to `path` atomically."""
    return (f"f = open({path!r} + '.tmp', 'w'); f.write(str(os.getpid())); f.close(); "
            f"os.rename({path!r} + '.tmp', {path!r})")


def test_children_started_seconds_later_are_found_counted_and_dropped(tmp_path: Path) -> None:
    """After seconds of a quiet tree (refreshes that find nothing new), the tool forks a child
    that writes 4 MiB, then a grandchild that setsid()s and whose parent exits at once (so it
    is re-parented to init and found only by the token). Both are found, the child's bytes are
    counted once by the monitor, and each leaves the tree when it ends."""
    child_pid, orphan_pid = tmp_path / "child", tmp_path / "orphan"
    p = ToolProcess(script(f"""
        import os, sys, time
        time.sleep(2.5)
        if os.fork() == 0:
            {announce(str(child_pid))!s}
            with open({str(tmp_path / 'data')!r}, "wb") as f:
                f.write(b"x" * {4 * MiB})
            time.sleep(60)
            os._exit(0)
        time.sleep(1.0)
        if os.fork() == 0:  # B: starts C, then exits: C is re-parented away from the tree
            if os.fork() == 0:
                os.setsid()
                os.closerange(0, 3)
                {announce(str(orphan_pid))!s}
                time.sleep(60)
                os._exit(0)
            os._exit(0)
        os.wait()  # B
        print("started both", flush=True)
        time.sleep(60)
    """))
    with p:
        p.start()
        monitor = Monitor(str(tmp_path), pids=p.descendants)
        monitor.sample()
        for _ in range(8):  # two seconds of refreshes with nothing new in the tree
            p.read(0.25)
            monitor.sample()
        assert p.descendants() == [p.pid]
        child = wait_file(child_pid)
        until(p, lambda: child in p.descendants(), "the late child is tracked")
        orphan = wait_file(orphan_pid)
        until(p, lambda: orphan in p.descendants(), "the re-parented grandchild is tracked")
        assert psutil.Process(orphan).ppid() not in (p.pid, child)
        assert set(p.tree_counters()) == {p.pid, child, orphan}
        monitor.sample()
        assert monitor.totals()["app_wchar_bytes"] >= 4 * MiB
        os.kill(child, signal.SIGKILL)  # a zombie now: the tool does not reap it
        assert gone(child)
        until(p, lambda: child not in p.descendants(), "the dead child leaves the tree")
        assert child not in p.tree_counters()
        written = monitor.totals()["app_wchar_bytes"]
        monitor.sample()
        assert monitor.totals()["app_wchar_bytes"] - written < MiB  # not counted again
    assert gone(orphan)  # leaving the block killed the escapee too


def spawn_with_pid(pid: int, argv: list[str]) -> subprocess.Popen[bytes] | None:
    """A process (not the tool's) given `pid`, or None if another process took it first."""
    for _ in range(50):
        LAST_PID.write_text(str(pid - 1))
        stranger = subprocess.Popen(argv)
        if stranger.pid == pid:
            return stranger
        stranger.kill()
        stranger.wait()
        if psutil.pid_exists(pid):  # a live process holds it now: it cannot be had
            return None
    return None


@needs_root
def test_a_stranger_that_gets_a_tool_childs_pid_is_not_tracked(tmp_path: Path) -> None:
    with ToolProcess(script(f"""
        import os, time
        child = os.fork()
        if child == 0:
            {announce(str(tmp_path / 'child'))!s}
            time.sleep(60)
            os._exit(0)
        while not os.path.exists({str(tmp_path / 'go')!r}):
            time.sleep(0.02)
        os.kill(child, 9)
        os.waitpid(child, 0)
        print("reaped", flush=True)
        time.sleep(60)
    """)) as p:
        p.start()
        child = wait_file(tmp_path / "child")
        until(p, lambda: child in p.descendants(), "the child is tracked")
        (tmp_path / "go").touch()
        until(p, lambda: child not in p.descendants(), "the reaped child leaves the tree")
        stranger = spawn_with_pid(child, ["sleep", "60"])
        if stranger is None:
            pytest.skip(f"pid {child} was taken by another process first")
        try:
            p.track()
            assert child not in p.descendants() and child not in p.tree_counters()
            for _ in range(4):
                p.read(0.3)
                assert child not in p.descendants()
        finally:
            stranger.kill()
            stranger.wait()


@needs_root
def test_a_tool_child_that_gets_a_strangers_old_pid_is_tracked(tmp_path: Path) -> None:
    """The tracker remembers the processes it looked at and found not to be the tool's; a pid
    of those that the kernel hands out again (to the tool's child here) is looked at again:
    here the kernel's pid counter is written back to it (checkpoint/restore does that), and
    the tracker, finding the counter lower than at its last look (as after a wrap-round),
    lists /proc and looks again at the pids handed out since."""
    target = tmp_path / "target"
    with ToolProcess(script(f"""
        import os, time
        while not os.path.exists({str(target)!r}):
            time.sleep(0.01)
        pid = int(open({str(target)!r}).read())
        for _ in range(50):  # the kernel's next pid is pid; another process may take it first
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(pid - 1))
            child = os.fork()
            if child == 0:
                time.sleep(60)
                os._exit(0)
            if child == pid:
                break
            os.kill(child, 9)
            os.waitpid(child, 0)
        print(child, flush=True)
        time.sleep(60)
    """)) as p:
        p.start()
        stranger = subprocess.Popen(["sleep", "60"])  # started after the tool, not its own
        # the counter well ahead of the stranger's pid when the tracker looks, so that after
        # the tool writes it back the next look reads it lower, however busy the machine is
        ahead = stranger.pid + 2000
        if ahead >= int(Path("/proc/sys/kernel/pid_max").read_text()) - 10:
            stranger.kill()
            stranger.wait()
            pytest.skip("the stranger's pid is too close to pid_max")
        LAST_PID.write_text(str(ahead))
        subprocess.run(["true"], check=True)
        p.track()  # looked at: not the tool's
        assert stranger.pid not in p.descendants()
        stranger.kill()  # gone before the tracker looks again (once a second)
        stranger.wait()
        # whole or not at all: the tool reads it as soon as the name exists
        (tmp_path / "target.part").write_text(str(stranger.pid))
        (tmp_path / "target.part").rename(target)
        lines: list[str] = []
        until(p, lambda: bool(lines.extend(ln.text for ln in p.read(0.1)) or lines),
              "the tool said which pid its child got")
        child = int(lines[0])
        if child != stranger.pid:
            pytest.skip(f"pid {stranger.pid} was taken by another process first")
        until(p, lambda: child in p.descendants(), "the child with the reused pid is tracked")
        assert psutil.Process(child).ppid() == p.pid
        assert child in p.tree_counters()


@pytest.mark.skipif(which("fio") is None, reason="fio is not installed")
def test_fio_jobs_forked_later_are_tracked_and_their_bytes_counted(tmp_path: Path) -> None:
    """fio forks a job when it starts it; with stonewall the second job is forked only when
    the first has finished, seconds into the run. Each job is a setsid()'d process of its
    own; both are tracked in turn, and the monitor counts both jobs' writes."""
    job = tmp_path / "late.fio"
    job.write_text(textwrap.dedent(f"""
        [global]
        directory={tmp_path}
        rw=write
        bs=64k
        size=4m
        ioengine=psync
        time_based
        runtime=2
        [first]
        [second]
        stonewall
    """))
    jobs: set[int] = set()
    with ToolProcess(["fio", str(job)]) as p:
        p.start()
        monitor = Monitor(str(tmp_path), pids=p.descendants)
        monitor.sample()
        give_up = time.monotonic() + GIVE_UP
        while not p.poll():
            assert time.monotonic() < give_up, p.tail()
            p.read(0.25)
            monitor.sample()
            for pid in p.descendants():
                if pid != p.pid:
                    with contextlib.suppress(psutil.NoSuchProcess):
                        if os.getsid(pid) == pid:
                            jobs.add(pid)
        monitor.sample()
    assert p.returncode == 0, p.tail()
    assert len(jobs) == 2, f"jobs seen: {jobs}"  # the first, then the second forked later
    assert monitor.totals()["app_wchar_bytes"] >= 2 * 4 * MiB


def test_threads_of_the_tools_processes_are_not_processes_of_its_tree(tmp_path: Path) -> None:
    """Thread ids come from the same counter as pids and /proc/<tid> opens like a process's:
    the threads a child of the tool starts late (once the tracker only opens the new ids)
    are not counted as processes (their io would count the child's bytes again)."""
    child_pid = tmp_path / "child"
    with ToolProcess(script(f"""
        import os, threading, time
        time.sleep(1.5)
        if os.fork() == 0:
            for _ in range(4):
                threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
            {announce(str(child_pid))!s}
            time.sleep(60)
            os._exit(0)
        for _ in range(3):
            threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        time.sleep(60)
    """)) as p:
        p.start()
        for _ in range(4):  # the tracker has looked before the threads were started
            p.read(0.25)
        child = wait_file(child_pid)
        until(p, lambda: child in p.descendants(), "the child is tracked")
        tids = {int(t) for pid in (p.pid, child) for t in os.listdir(f"/proc/{pid}/task")}
        assert len(tids) >= 2 + 4 + 3
        for _ in range(8):  # two seconds of looks after the threads were started
            p.read(0.25)
            assert sorted(p.descendants()) == sorted([p.pid, child])
        assert set(p.tree_counters()) == {p.pid, child}


def test_the_kept_proc_files_are_closed_with_the_tool(tmp_path: Path) -> None:
    """Each tracked process's /proc files stay open while it is sampled; none outlives the
    tool (a GUI runs many sessions in one process)."""
    def fds() -> set[str]:
        return set(os.listdir("/proc/self/fd"))

    # the machine's files (meminfo, the device's stat, the pid counter) stay open for good
    with ToolProcess(["true"]) as warm_up:
        warm_up.start()
        Monitor(str(tmp_path), pids=warm_up.descendants).sample()
        warm_up.track()
    before = fds()
    with ToolProcess(script("""
        import os, time
        for _ in range(3):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
        print("forked", flush=True)
        time.sleep(60)
    """)) as p:
        p.start()
        monitor = Monitor(str(tmp_path), pids=p.descendants)
        monitor.sample()
        until(p, lambda: len(p.descendants()) == 4, "the three children are tracked")
        monitor.sample()
        assert len(p.tree_counters()) == 4
        assert len(fds() - before) >= 4 * 2  # stat and io of each, and the tool's pipes
    assert fds() - before == set()
