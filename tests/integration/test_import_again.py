"""Tool outputs imported twice are one session (issue 46): an imported session's UUID is its
outputs' content key, so a second import of the same files says which session holds them, and
a bundle of it merged where the same outputs were imported is that session too."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from disklab.core.library import Library

SWEEP = Path(__file__).parents[1] / "fixtures" / "fio-plot-sweep"
FIO = Path(__file__).parents[1] / "fixtures" / "fio" / \
    "seqwrite_1m_qd1_libaio_direct_ext4_jsonplus.json"


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=120)


def names(library: Path) -> list[str]:
    with Library.open(library) as lib:
        return [s["name"] for s in lib.list_sessions()]


def test_the_same_folder_twice_is_one_session_and_compare_still_works(tmp_path: Path) -> None:
    library = tmp_path / "l.sqlite3"
    first = disklab("import", str(SWEEP), "--session", "pm883", "--library", str(library))
    assert first.returncode == 0, first.stderr
    copy = tmp_path / "copy"  # the same outputs elsewhere, under other names
    shutil.copytree(SWEEP, copy)
    for f in sorted(copy.glob("*.json"))[:3]:
        f.rename(f.with_name("renamed-" + f.name))
    again = disklab("import", str(copy), "--session", "pm883", "--library", str(library))
    assert again.returncode == 0, again.stderr
    assert "already in the library as session 1 'pm883' (the same outputs): not imported " \
           "again" in again.stdout
    assert names(library) == ["pm883"]
    pivot = disklab("compare", "pm883", "--rows", "rw,iodepth", "--columns", "numjobs",
                    "--metric", "read:iops", "--format", "csv", "--library", str(library))
    assert pivot.returncode == 0, pivot.stderr


def test_one_file_twice_and_its_bundle_are_one_session(tmp_path: Path) -> None:
    library = tmp_path / "l.sqlite3"
    assert disklab("import", str(FIO), "--library", str(library)).returncode == 0
    again = disklab("import", str(FIO), "--library", str(library), "--json")
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert doc["imported"] == [] and doc["present"] == [{"files": [str(FIO)], "session": 1}]
    assert names(library) == [FIO.name]

    bundle = tmp_path / "s.disklab"
    assert disklab("export", "1", "--format", "bundle", "-o", str(bundle),
                   "--library", str(library)).returncode == 0
    other = tmp_path / "other.sqlite3"
    assert disklab("import", str(FIO), "--library", str(other)).returncode == 0
    merged = disklab("import", str(bundle), "--library", str(other))
    assert merged.returncode == 0, merged.stderr
    assert "is already in the library (session 1)" in merged.stdout
    assert names(other) == [FIO.name]


def test_one_file_of_an_imported_folder_is_found_in_the_folders_session(tmp_path: Path) -> None:
    """Importing one file of a folder imported before made a new session with a duplicate
    output; each output is keyed now, and said held per file."""
    library = tmp_path / "l.sqlite3"
    assert disklab("import", str(SWEEP), "--session", "pm883",
                   "--library", str(library)).returncode == 0
    one = SWEEP / "randread-2-4.json"
    again = disklab("import", str(one), "--library", str(library), "--json")
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert doc["imported"] == [] and doc["present"] == [{"files": [str(one)], "session": 1}]
    said = disklab("import", str(one), str(FIO), "--library", str(library))
    assert said.returncode == 0, said.stderr
    assert f"{one}: already held in session 1 'pm883': not imported again" in said.stdout
    assert sorted(names(library)) == sorted(["pm883", FIO.name])  # the new one: a session


def test_fio_logs_are_part_of_an_outputs_key(tmp_path: Path) -> None:
    """The same fio JSON with other per-interval logs beside it is another output."""
    run = "randread-16-1.json"
    library = tmp_path / "l.sqlite3"
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(SWEEP / run, bare)
    logged = tmp_path / "logged"
    logged.mkdir()
    shutil.copy(SWEEP / run, logged)
    for log in SWEEP.glob("randread-iodepth-16-numjobs-1_*.log"):
        shutil.copy(log, logged)
    assert disklab("import", str(bare / run), "--library", str(library)).returncode == 0
    with_logs = disklab("import", str(logged / run), "--library", str(library), "--json")
    assert with_logs.returncode == 0, with_logs.stderr
    doc = json.loads(with_logs.stdout)
    assert doc["present"] == [] and doc["imported"][0]["series"] > 0
    again = json.loads(disklab("import", str(logged / run), "--library", str(library),
                               "--json").stdout)
    assert again["imported"] == [] and again["present"] == [
        {"files": [str(logged / run)], "session": 2}]

