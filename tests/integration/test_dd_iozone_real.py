"""dd and iozone really run with the argv the adapters build, on a scratch ext4 filesystem.

Each test runs the prepare steps and the measured command with subprocess, parses the output
with the adapter, and checks the figure against the tool's own text read independently (a
plain split of the line, not the adapter's regular expressions). The test removes the
command's files itself and checks nothing is left.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from disklab.core.tools.base import Command, RunTarget, ToolOutput
from disklab.core.tools.dd import DdAdapter
from disklab.core.tools.iozone import IozoneAdapter
from disklab.core.vocab.errors import ToolError

pytestmark = [pytest.mark.root]
MiB = 1 << 20
KiB = 1024
dd = DdAdapter()
iozone = IozoneAdapter()


def run(cmd: Command) -> subprocess.CompletedProcess[str]:
    for step in cmd.prepare:
        subprocess.run(step, cwd=cmd.cwd, check=True, capture_output=True, text=True, timeout=120)
    return subprocess.run(cmd.argv, cwd=cmd.cwd, capture_output=True, text=True, timeout=300)


def remove(cmd: Command, directory: Path) -> None:
    for f in cmd.files:
        Path(f).unlink(missing_ok=True)
    assert not [p for p in directory.iterdir() if p.name.startswith("disklab-")]


def dd_summary(stderr: str) -> tuple[int, float]:
    """bytes and seconds of dd's last line, by splitting it: 'N bytes (...) copied, S s, R'."""
    last = stderr.replace("\r", "\n").strip().splitlines()[-1]
    nbytes = int(last.split(" ", 1)[0])
    seconds = float(last.split(" copied, ", 1)[1].split(" s,", 1)[0])
    return nbytes, seconds


@pytest.mark.parametrize(("mode", "direct", "sync"), [
    ("write", True, False), ("write", False, True), ("read", True, False), ("read", False, False),
])
def test_dd_runs_and_the_figure_is_its_own_bytes_over_seconds(module_scratch_fs, mode, direct,
                                                               sync) -> None:
    directory = module_scratch_fs.mountpoint
    params = {"mode": mode, "block_size": MiB, "size": 48 * MiB, "direct": direct, "sync": sync}
    assert dd.check(params) == []
    cmd = dd.build_command(params, RunTarget(directory=str(directory), tag=f"{mode}{direct}"))
    try:
        done = run(cmd)
        assert done.returncode == 0, done.stderr
        assert done.stdout == ""  # dd speaks on stderr only
        out = ToolOutput(done.stdout, done.stderr, exit_status=done.returncode)
        (metric,) = dd.parse_result(out, params)
        nbytes, seconds = dd_summary(done.stderr)
        assert nbytes == 48 * MiB == cmd.planned_bytes
        assert metric.name == mode and metric.unit == "B/s"
        assert metric.value == pytest.approx(nbytes / seconds, rel=1e-12)
        assert os.path.getsize(cmd.files[0]) == 48 * MiB
        parser = dd.progress_parser(params)
        updates = [u for ln in done.stderr.replace("\r", "\n").splitlines()
                   if (u := parser.feed("stderr", ln)) is not None]
        assert updates and updates[-1].done_bytes == 48 * MiB
    finally:
        remove(cmd, directory)


def test_dd_on_a_full_filesystem_is_a_tool_error_and_keeps_the_partial(module_scratch_fs):
    """2 GiB onto a 1 GiB filesystem: dd's own 'No space left on device' line is the error."""
    directory = module_scratch_fs.mountpoint
    params = {"mode": "write", "block_size": 4 * MiB, "size": 2048 * MiB, "direct": True,
              "sync": False}
    cmd = dd.build_command(params, RunTarget(directory=str(directory), tag="full"))
    try:
        done = run(cmd)
        assert done.returncode == 1
        out = ToolOutput(done.stdout, done.stderr, exit_status=done.returncode)
        with pytest.raises(ToolError, match="No space left on device"):
            dd.parse_result(out, params)
        (partial,) = dd.parse_partial(out, params)
        nbytes, seconds = dd_summary(done.stderr)
        assert 0 < nbytes < 1024 * MiB
        assert partial.value == pytest.approx(nbytes / seconds) and partial.note == "partial"
    finally:
        remove(cmd, directory)


def kb_per_sec(stdout: str, start: str) -> float:
    """The number after '=' on the line that starts with `start` (tabs and spaces squeezed)."""
    for line in stdout.splitlines():
        squeezed = " ".join(line.split())
        if squeezed.startswith(start):
            return float(squeezed.split("=", 1)[1].split()[0])
    raise AssertionError(f"no line {start!r}")


@pytest.mark.slow  # iozone -t idles ~1 s after each phase and ~6 s before it ends
def test_iozone_throughput_mode_matches_its_children_see_lines(module_scratch_fs) -> None:
    directory = module_scratch_fs.mountpoint
    params = {"tests": ("write", "read"), "record_size": MiB, "file_size": 32 * MiB,
              "threads": 2, "excel": True, "cpu": True, "direct": True}
    assert iozone.check(params) == []
    cmd = iozone.build_command(params, RunTarget(directory=str(directory), tag="tp"))
    try:
        done = run(cmd)
        assert done.returncode == 0, done.stdout[-2000:]
        metrics = iozone.parse_result(ToolOutput(done.stdout, done.stderr, 0), params)
        for name, label in (("write", "initial writers"), ("rewrite", "rewriters"),
                            ("read", "readers"), ("reread", "re-readers")):
            (m,) = [m for m in metrics if m.name == name]
            expected = kb_per_sec(done.stdout, f"Children see throughput for 2 {label} =")
            assert m.value == pytest.approx(expected * KiB)
            assert m.params == {"threads": 2, "file_size": 32 * MiB, "record_size": MiB}
            assert [m for m in metrics if m.name == f"{name}:cpu"]
        # the same output imported without parameters gives the same figures
        assert iozone.parse_result(ToolOutput(done.stdout), {}) == metrics
        # progress read from the real lines ends done, having walked every phase
        parser = iozone.progress_parser(params)
        phases = [u.phase for ln in done.stdout.splitlines()
                  if (u := parser.feed("stdout", ln)) is not None]
        assert phases[:4] == ["write", "rewrite", "read", "reread"] and phases[-1] == "done"
    finally:
        remove(cmd, directory)


def test_iozone_auto_mode_rows_match_its_table(module_scratch_fs) -> None:
    directory = module_scratch_fs.mountpoint
    params = {"tests": ("write", "read", "random"), "auto": True, "threads": 0,
              "file_size": 4 * MiB, "min_record_size": 64 * KiB, "max_record_size": 256 * KiB,
              "excel": True, "record_size": 4 * MiB}
    assert iozone.check(params) == []
    cmd = iozone.build_command(params, RunTarget(directory=str(directory), tag="auto"))
    try:
        done = run(cmd)
        assert done.returncode == 0, done.stdout[-2000:]
        metrics = iozone.parse_result(ToolOutput(done.stdout), params)
        rows = [ln.split() for ln in done.stdout.splitlines()
                if ln.strip() and ln.split()[0] == "4096" and ln.split()[1].isdigit()]
        assert [int(r[1]) for r in rows] == [64, 128, 256]  # as planned: 3 record sizes
        assert cmd.planned_bytes == 3 * 6 * 4 * MiB
        names = ["write", "rewrite", "read", "reread", "random_read", "random_write"]
        for row in rows:
            point = {"file_size": 4 * MiB, "record_size": int(row[1]) * KiB}
            got = [m for m in metrics if m.params == point]
            assert [(m.name, m.value) for m in got] == [
                (n, int(v) * KiB) for n, v in zip(names, row[2:], strict=True)]
    finally:
        remove(cmd, directory)


def test_iozone_single_o_direct_with_a_column_gap(module_scratch_fs) -> None:
    """-i 0 -i 3: backward read's value sits after blank columns and must land there."""
    directory = module_scratch_fs.mountpoint
    params = {"tests": ("write", "backward"), "record_size": 256 * KiB, "file_size": 16 * MiB,
              "threads": 0, "direct": True, "excel": False}
    cmd = iozone.build_command(params, RunTarget(directory=str(directory), tag="gap"))
    try:
        done = run(cmd)
        assert done.returncode == 0, done.stdout[-2000:]
        metrics = iozone.parse_result(ToolOutput(done.stdout), params)
        (row,) = [ln.split() for ln in done.stdout.splitlines()
                  if ln.split()[:2] == ["16384", "256"]]
        assert [(m.name, m.value) for m in metrics] == [
            ("write", int(row[2]) * KiB), ("rewrite", int(row[3]) * KiB),
            ("backward_read", int(row[4]) * KiB)]
    finally:
        remove(cmd, directory)


def test_iozone_refusing_its_options_is_a_tool_error(module_scratch_fs) -> None:
    """What `check` forbids, iozone refuses too: its message reaches the user."""
    directory = module_scratch_fs.mountpoint
    argv = ("iozone", "-a", "-t", "2", "-s", "1024k", "-i", "0")
    done = subprocess.run(argv, cwd=directory, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    with pytest.raises(ToolError, match="Can not mix throughput mode and auto-mode flags"):
        iozone.parse_result(ToolOutput(done.stdout, done.stderr, done.returncode), {})
    assert iozone.check({"auto": True, "threads": 2, "file_size": MiB,
                         "tests": ("write",)}) != []
