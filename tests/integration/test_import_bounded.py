"""`disklab import` of what is no tool output: /dev/zero, a FIFO, a 2 GB sparse file, a block
device, a kernel file. Each is refused in one line (exit 2) before it is read, inside a memory
cgroup of 512 MiB (the old import read /dev/zero until the OOM killer ended it at 23.9 GB), and
nothing is stored."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from disklab.core.system.cgroups import (
    create_group,
    find_memory_controller,
    group_name,
    oom_kills,
    remove_group,
)

LIMIT = 512 << 20


@pytest.fixture
def memory_group() -> Iterator[Path]:
    """A memory cgroup of 512 MiB of the test's own, removed after it."""
    controller = find_memory_controller()
    if os.geteuid() != 0 or controller is None or not controller.writable:
        pytest.skip("needs root and a writable memory cgroup controller")
    group = create_group(controller, group_name("import-bounded"), LIMIT)
    try:
        yield group
    finally:
        remove_group(group)


def import_in(group: Path, path: str, library: Path, timeout: float = 120
              ) -> subprocess.CompletedProcess[str]:
    """`disklab import PATH` run inside `group` (placed there before it starts)."""
    procs = str(group / "cgroup.procs")

    def enter() -> None:
        with open(procs, "w") as f:
            f.write(str(os.getpid()))

    return subprocess.run([sys.executable, "-m", "disklab.cli.main", "import", path,
                           "--library", str(library)], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=enter)


def peak(group: Path) -> int:
    """The group's peak memory (v1 max_usage_in_bytes, v2 memory.peak), 0 when not said."""
    for name in ("memory.max_usage_in_bytes", "memory.peak"):
        with_file = group / name
        if with_file.exists():
            return int(with_file.read_text().split()[0])
    return 0


def sessions(library: Path) -> int:
    if not library.exists():
        return 0
    db = sqlite3.connect(library)
    try:
        return int(db.execute("SELECT count(*) FROM session").fetchone()[0])
    finally:
        db.close()


def test_endless_and_huge_inputs_are_refused_in_one_line_inside_512_mib(
        memory_group: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    sparse = tmp_path / "huge.log"
    with sparse.open("wb") as f:
        f.truncate(2 << 30)
    library = tmp_path / "library.sqlite3"
    expected = {
        "/dev/zero": "/dev/zero: not a regular file (a character device)",
        str(fifo): f"{fifo}: not a regular file (a FIFO)",
        # 2 GiB and 128 MiB in MB, the default units
        str(sparse): f"{sparse}: 2.15 GB is larger than a tool output can be (134 MB at most)",
    }
    for path, words in expected.items():
        done = import_in(memory_group, path, library)
        assert done.returncode == 2, (path, done.returncode, done.stderr[-500:])
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"disklab import: {words}"), done.stderr
        assert "Traceback" not in done.stderr
    assert oom_kills(memory_group) == 0
    assert peak(memory_group) < 200 << 20, f"peak {peak(memory_group) >> 20} MiB"
    assert sessions(library) == 0


def test_a_block_device_and_kernel_files_are_refused_in_one_line(tmp_path: Path) -> None:
    library = tmp_path / "library.sqlite3"
    block = next((f"/dev/{d}" for d in sorted(os.listdir("/sys/block"))
                  if Path(f"/dev/{d}").exists()), None)
    cases = {"/proc/self/status": "a kernel file under /proc, not a tool output",
             "/sys/kernel/mm/transparent_hugepage/enabled":
                 "a kernel file under /sys, not a tool output"}
    if block is not None:
        cases[block] = "not a regular file (a block device): a tool output is a file"
    for path, words in cases.items():
        if not Path(path).exists():
            continue
        done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "import", path,
                               "--library", str(library)], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 2, (path, done.stderr)
        assert done.stderr.splitlines() == [f"disklab import: {path}: {words}"], done.stderr
    assert sessions(library) == 0


def test_a_fifo_in_a_folder_is_named_and_not_opened(tmp_path: Path) -> None:
    """A folder walked for outputs: its FIFO would block the import for ever."""
    folder = tmp_path / "outputs"
    folder.mkdir()
    os.mkfifo(folder / "pipe")
    library = tmp_path / "library.sqlite3"
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "import", str(folder),
                           "--library", str(library)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"disklab import: {folder}/pipe: not a regular file (a FIFO): a tool output is a file"]
    assert sessions(library) == 0


def test_a_fio_log_without_newlines_is_not_held_whole(tmp_path: Path) -> None:
    """A fio log beside a JSON output is read a line at a time, each at most 256 bytes: a
    64 MiB 'log' of no newline ends the reading at once (it was read whole as one line)."""
    from disklab.core.importing import _read_fio_log

    log = tmp_path / "x_bw.1.log"
    with log.open("wb") as f:
        f.write(b"1, 100, 0, 4096\n" + b"9" * (64 << 20))
    assert _read_fio_log(log, 1.0) == {"read": [(0.001, 100.0)]}


FIXTURES = Path(__file__).parents[1] / "fixtures"
MiB = 1 << 20


def big_dd_output(path: Path, size: int, seconds: float) -> None:
    """A dd status=progress output of `size` bytes: its redrawn progress line, then the
    fixture's summary with `seconds` in it (each file is another output)."""
    text = (FIXTURES / "dd" / "read_1m_iflag-direct_progress_btrfs.stderr.txt").read_text()
    block = "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.868586 s, 1.2 GB/s\r" * 10000
    with path.open("w") as f:
        for _ in range(size // len(block)):
            f.write(block)
        head, found, tail = text.rpartition("0.868586 s")
        f.write(head + (f"{seconds} s" if found else "") + tail)


def fio_output_with_logs(folder: Path, lines: int, first: int) -> None:
    """A fio JSON output beside its bw log of `lines` lines (fio's 1 ms log of ~35 minutes)."""
    folder.mkdir()
    shutil.copy(FIXTURES / "fio-plot-sweep" / "randread-16-1.json", folder)
    with (folder / "randread-iodepth-16-numjobs-1_bw.1.log").open("w") as f:
        chunk = 100_000
        for start in range(0, lines, chunk):
            f.write("".join(f"{t}, {first + t % 977}, 0, 4096, 0\n"
                            for t in range(start, min(start + chunk, lines))))


def test_a_folder_of_large_outputs_imports_inside_512_mib(memory_group: Path,
                                                           tmp_path: Path) -> None:
    """Four 120 MiB dd outputs and two fio outputs with 2.1 M-line bw logs in one folder:
    the import held every output (its text and series) until the last was read, and the
    OOM killer ended it in 512 MiB (peak 534 MB for six dd outputs). Each output is stored
    as it is read now: one at a time in memory, whatever the number of files."""
    folder = tmp_path / "outputs"
    folder.mkdir()
    for i in range(4):
        big_dd_output(folder / f"dd-{i}.txt", 120 * MiB, 1.5 + i)
    for i in range(2):
        fio_output_with_logs(folder / f"fio-{i}", 2_100_000, 180_000 + i)
    library = tmp_path / "library.sqlite3"
    done = import_in(memory_group, str(folder), library, timeout=600)
    assert oom_kills(memory_group) == 0, "OOM-killed"
    assert done.returncode == 0, (done.returncode, done.stderr[-800:])
    assert "Traceback" not in done.stderr
    assert "6 outputs (dd, fio) -> session 1 'outputs'" in done.stdout, done.stdout
    assert peak(memory_group) < LIMIT
    db = sqlite3.connect(library)
    try:
        assert db.execute("SELECT count(*) FROM run").fetchone()[0] == 6
        # every log line up to the per-output cap, in both fio runs
        assert db.execute("SELECT count(*) FROM sample").fetchone()[0] >= 2 * 2_000_000
    finally:
        db.close()

