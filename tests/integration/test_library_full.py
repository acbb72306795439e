"""A library whose disk fills during a run: the run fails (exit 1) with one line naming the
library, not 'bad input' (exit 2) and not a traceback."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.library import Library
from tests.helpers import IS_ROOT, engine_plan, make_scratch_fs, teardown

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="needs root for a loop-mounted filesystem")


def _fill(directory: Path, leave: int) -> None:
    """Write until the filesystem is full, then give back about `leave` bytes."""
    filler = directory / "filler"
    chunk = b"\0" * (1 << 20)
    with filler.open("wb") as f:
        while True:
            try:
                f.write(chunk)
                f.flush()
            except OSError as e:
                assert e.errno == errno.ENOSPC
                break
        os.fsync(f.fileno())
    os.truncate(filler, max(filler.stat().st_size - leave, 0))
    os.sync()


def test_a_full_library_disk_during_a_run_is_a_failure_not_bad_input(tmp_path: Path) -> None:
    fs = make_scratch_fs(tmp_path, "ext4", size="32M")
    try:
        library = fs.mountpoint / "library.sqlite3"
        Library.open(library).close()
        target = tmp_path / "target"
        target.mkdir()
        # the session's plan text alone is more than the space left
        plan = tmp_path / "plan.toml"
        plan.write_text(engine_plan(target, runtime="0s").replace('runtime = "0s"\n', "")
                        + "".join(f"# {'x' * 70}\n" for _ in range(16000)))
        _fill(fs.mountpoint, leave=256 << 10)
        done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                               "--library", str(library)], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
        assert f"cannot write to the library {library}" in done.stderr
        assert "full" in done.stderr
        assert not list(target.iterdir())  # nothing of the run is left on the target
    finally:
        teardown(fs)


def test_an_import_into_a_full_library_is_a_failure_and_adds_nothing(tmp_path: Path) -> None:
    """The machine's fault is exit 1 for `disklab import` too; the library keeps what it had."""
    fs = make_scratch_fs(tmp_path, "ext4", size="32M")
    try:
        library = fs.mountpoint / "library.sqlite3"
        Library.open(library).close()
        outputs = Path(__file__).parents[1] / "fixtures" / "fio"  # ~1 MiB of fio outputs
        _fill(fs.mountpoint, leave=64 << 10)
        done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "import", str(outputs),
                               "--session", "fio", "--library", str(library)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr
        assert f"cannot write to the library {library}" in done.stderr
        (fs.mountpoint / "filler").unlink()
        with Library.open(library) as lib:
            assert lib.list_sessions() == []
    finally:
        teardown(fs)
