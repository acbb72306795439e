"""monitor: the tool tree's bytes counted once (children reaped, the leader gone), and the
page-cache levels. Real processes, no root."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from collections import defaultdict
from pathlib import Path

import pytest

from disklab.core.proc.tool import ToolProcess
from disklab.core.run.monitor import Monitor
from disklab.core.system.mountinfo import filesystem_of

MiB = 1 << 20
GIVE_UP = 30.0
LEVELS = {"dirty_bytes", "writeback_bytes"}
APP = {"app_read_bps", "app_write_bps", "app_rchar_bps", "app_wchar_bps", "cpu_pct"}


def script(body: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(body)]


def run_sampled(p: ToolProcess, monitor: Monitor, between: float = 0.05,
                on_line=None) -> tuple[list[dict[str, float]], dict[str, float]]:
    """Run the tool to its end, sampling; returns the samples and each rate integrated over
    the intervals it covers (rate x interval = bytes)."""
    samples: list[dict[str, float]] = []
    integral: dict[str, float] = defaultdict(float)
    give_up = time.monotonic() + GIVE_UP

    def take() -> None:
        s = monitor.sample()
        samples.append(s)
        for key, value in s.items():
            if key.endswith("_bps"):
                integral[key] += value * (monitor.last_interval or 0.0)

    while not p.poll():
        assert time.monotonic() < give_up, "the tool never finished"
        for line in p.read(between):
            if on_line is not None:
                on_line(line.text)
        take()
    take()
    return samples, integral


def test_the_first_sample_primes_and_the_next_give_rates(tmp_path: Path) -> None:
    monitor = Monitor(str(tmp_path), pids=lambda: [os.getpid()])
    assert set(monitor.sample()) == LEVELS
    with open(tmp_path / "f", "wb") as f:
        f.write(b"x" * MiB)
    second = monitor.sample()
    assert set(second) >= APP | LEVELS
    assert monitor.totals()["app_wchar_bytes"] >= MiB
    assert second["app_wchar_bps"] * (monitor.last_interval or 0) == pytest.approx(
        monitor.totals()["app_wchar_bytes"])


def test_bytes_of_a_child_that_exited_are_kept_and_counted_once(tmp_path: Path) -> None:
    """The parent forks a child that writes 8 MiB and exits; the parent reaps it (the kernel
    then adds the child's totals to the parent's counters), writes 1 MiB itself and exits
    (reaped by DiskLab). Counted right, the tree wrote 9 MiB, not 17."""
    go = tmp_path / "go"
    body = f"""
        import os, time
        pid = os.fork()
        if pid == 0:
            while not os.path.exists({str(go)!r}):
                time.sleep(0.01)
            t = time.process_time()
            while time.process_time() - t < 0.1:  # some CPU for cpu_pct to see
                pass
            with open({str(tmp_path / "child.dat")!r}, "wb") as f:
                for _ in range(8):
                    f.write(b"c" * {MiB}); f.flush(); time.sleep(0.05)
            os._exit(0)
        print("child", pid, flush=True)
        os.waitpid(pid, 0)
        print("reaped", flush=True)
        t = time.process_time()
        while time.process_time() - t < 0.1:  # CPU of its own: a reaped child's CPU goes to
            pass                              # cutime, which cpu_pct rightly leaves out
        time.sleep(0.3)
        with open({str(tmp_path / "parent.dat")!r}, "wb") as f:
            f.write(b"p" * {MiB})
        time.sleep(0.3)
    """
    p = ToolProcess(script(body))
    monitor = Monitor(str(tmp_path), pids=p.descendants)
    monitor.sample()  # primed before the start: every byte of the tool counts
    with p:
        p.start()
        samples, integral = run_sampled(p, monitor, on_line=lambda _t: go.touch())
    assert p.returncode == 0
    wrote = 9 * MiB
    assert wrote - 1 <= integral["app_wchar_bps"] < wrote + 64 * 1024  # + print()s; - round-off
    totals = monitor.totals()
    assert totals["app_wchar_bytes"] == pytest.approx(integral["app_wchar_bps"], rel=1e-6)
    assert totals["app_write_bytes"] < wrote + 64 * 1024  # never doubled
    assert all(v >= 0 for s in samples for v in s.values())
    assert any(s.get("cpu_pct", 0) > 0 for s in samples)
    assert all(set(s) >= LEVELS for s in samples)


def test_the_leaders_last_bytes_count_even_when_it_exits_between_samples(
        tmp_path: Path) -> None:
    body = f"""
        with open({str(tmp_path / "quick.dat")!r}, "wb") as f:
            f.write(b"q" * {4 * MiB})
    """
    p = ToolProcess(script(body))
    monitor = Monitor(str(tmp_path), pids=p.descendants)
    monitor.sample()
    with p:
        p.start()
        assert p.wait(GIVE_UP) == 0  # no sample while it ran
        after = monitor.sample()
    wrote = monitor.totals()["app_wchar_bytes"]
    assert 4 * MiB <= wrote < 4 * MiB + 64 * 1024
    assert after["app_wchar_bps"] * (monitor.last_interval or 0) == pytest.approx(wrote)
    assert p.exit_counters()[p.pid].write_chars >= 4 * MiB
    assert monitor.sample()["app_wchar_bps"] == 0  # counted once


def test_without_pids_there_are_no_app_rates(tmp_path: Path) -> None:
    monitor = Monitor(str(tmp_path))
    monitor.sample()
    assert not (APP & set(monitor.sample()))


@pytest.mark.parametrize(("directory", "fstype"), [("/proc", "proc"), ("/dev/shm", "tmpfs")])
def test_filesystems_without_a_device_have_no_device_rates(directory: str, fstype: str) -> None:
    mounted = filesystem_of(directory).get("fstype")
    if mounted != fstype:  # /proc is proc on every Linux; /dev/shm is tmpfs on most
        pytest.skip(f"{directory} is {mounted} on this machine, not {fstype}")
    monitor = Monitor(directory)
    assert monitor.device is None
    assert set(monitor.sample()) == LEVELS  # primed
    second = monitor.sample()
    assert set(second) >= LEVELS
    assert not any(k.startswith(("device_", "backing_")) for k in second), second
