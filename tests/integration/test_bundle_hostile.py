"""Hostile bundles (issue 43): a bundle DiskLab did not write that way is refused by `disklab
import` with one line, exit 2, and the library is left as it was, byte for byte: text and
infinite figures (show, export and compare did arithmetic on them and died), a session without
its UUID (imported again at every import), rows of a session the bundle does not hold (the
session arrived empty, without a word). A real bundle of the same session imports."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.library import Library
from disklab.core.library.bundle import export_bundle
from disklab.core.vocab.model import Case, Metric
from tests.helpers import record_session

pytestmark = [pytest.mark.slow]

CASE = Case("c-dd-1", 0, "as is", "dd", 0, {"bs": 1048576})

TAMPERINGS = {
    "text figure": ("UPDATE metric SET value = 'fast' WHERE rowid = (SELECT min(rowid) "
                    "FROM metric)", "a metric value of session 1 is 'fast'"),
    "infinite figure": ("UPDATE metric SET value = 9e999 WHERE rowid = (SELECT min(rowid) "
                        "FROM metric)", "a metric value of session 1 is 'inf'"),
    "text sample": ("UPDATE sample SET value = 'x' WHERE rowid = (SELECT min(rowid) "
                    "FROM sample)", "a sample value of session 1 is 'x'"),
    "no uuid": ("UPDATE session SET uuid = NULL", "session 1 ('travel') has no UUID"),
    "rows of no session": ("UPDATE metric SET session_id = 77", "metric rows of session 77"),
}


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=120)


def state(library: Path) -> tuple[str, dict[str, int]]:
    """The library file's bytes (its hash) and every table's row count."""
    with sqlite3.connect(library) as db:
        tables = [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    return hashlib.sha256(library.read_bytes()).hexdigest(), rows


@pytest.fixture(scope="module")
def good_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("bundle")
    with Library.open(d / "source.sqlite3") as lib:
        sid = record_session(lib, [(CASE, [[Metric("write", 1.5e9, "B/s")],
                                            [Metric("write", 1.6e9, "B/s")]])],
                             name="travel", sample_series="write_bps", log="a line")
        return export_bundle(lib, [sid], d / "travel.disklab")


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """A library holding a session of its own, its WAL folded into the file."""
    path = tmp_path / "library.sqlite3"
    with Library.open(path) as lib:
        record_session(lib, [(CASE, [[Metric("write", 2e9, "B/s")]])], name="mine")
    return path


@pytest.mark.parametrize("tampering", sorted(TAMPERINGS))
def test_a_hostile_bundle_is_refused_in_one_line_and_changes_nothing(
        tmp_path: Path, good_bundle: Path, library: Path, tampering: str) -> None:
    sql, says = TAMPERINGS[tampering]
    bundle = tmp_path / "hostile.disklab"
    shutil.copyfile(good_bundle, bundle)
    with sqlite3.connect(bundle) as db:
        db.execute(sql)
    before = state(library)
    done = disklab("import", str(bundle), "--library", str(library))
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "nothing imported" in lines[0], lines
    assert "Traceback" not in done.stderr
    assert state(library) == before
    again = disklab("import", str(bundle), "--library", str(library))  # and again: the same
    assert again.returncode == 2 and state(library) == before


def test_the_untouched_bundle_imports_once_and_shows(tmp_path: Path, good_bundle: Path,
                                                     library: Path) -> None:
    for _ in range(2):
        done = disklab("import", str(good_bundle), "--library", str(library))
        assert done.returncode == 0, done.stderr
    assert state(library)[1]["session"] == 2
    shown = disklab("show", "travel", "--library", str(library), "--json")
    assert shown.returncode == 0 and '"mean": 1550000000.0' in shown.stdout, shown.stdout[-500:]


def test_a_library_that_took_in_a_text_figure_earlier_still_shows(library: Path) -> None:
    """Before the import refused them, such rows got in: show and compare read them as
    missing figures instead of dying on a TypeError."""
    with Library.open(library) as lib:
        record_session(lib, [(CASE, [[Metric("write", 2.1e9, "B/s")]])], name="other")
    with sqlite3.connect(library) as db:
        db.execute("UPDATE metric SET value = 'fast'")
        db.execute("DELETE FROM result_stamp")
    for argv in (("show", "mine", "--json"), ("compare", "mine", "other"),
                 ("export", "mine", "--format", "csv", "-o", str(library.parent / "o.csv"))):
        done = disklab(*argv, "--library", str(library))
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
