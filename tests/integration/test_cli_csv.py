"""CSV as a spreadsheet and a script take it (issue 46): the same bytes in a file and on
standard output (a file had CRLF, stdout LF), CRLF line ends in every CSV export (RFC 4180),
and one column per parameter that varies (they sat in one JSON cell: no filter on bs)."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.library import Library
from disklab.core.vocab.model import Case, Metric
from tests.helpers import record_session


def disklab(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, timeout=120)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    path = tmp_path / "l.sqlite3"
    cases = [Case("c-dd-1", 0, "as is", "dd", 0, {"bs": 1048576, "direct": True}),
             Case("c-dd-2", 1, "as is", "dd", 1, {"bs": 65536, "direct": True})]
    with Library.open(path) as lib:
        record_session(lib, [(c, [(Metric("write", 100.0 + i + c.index, "B/s"),)
                                  for i in range(3)]) for c in cases],
                       name="a", host={"hostname": "box"}, sample_series="app_wchar_bps")
    return path


@pytest.mark.parametrize("fmt", ["csv", "samples"])
def test_a_csv_file_and_stdout_are_the_same_bytes_with_crlf(library: Path, tmp_path: Path,
                                                             fmt: str) -> None:
    out = tmp_path / f"a.{fmt}.csv"
    to_file = disklab("export", "a", "--format", fmt, "-o", str(out), "--library", str(library))
    assert to_file.returncode == 0, to_file.stderr
    to_stdout = disklab("export", "a", "--format", fmt, "-o", "-", "--library", str(library))
    assert to_stdout.returncode == 0, to_stdout.stderr
    assert to_stdout.stdout == out.read_bytes()
    lines = out.read_bytes().split(b"\n")
    assert len(lines) > 2 and all(line.endswith(b"\r") for line in lines[:-1])


def test_each_varying_parameter_has_its_own_column(library: Path) -> None:
    done = disklab("export", "a", "--format", "csv", "-o", "-", "--library", str(library))
    rows = list(csv.DictReader(io.StringIO(done.stdout.decode(), newline="")))
    assert {r["bs"] for r in rows} == {"1048576", "65536"}
    assert "direct" not in rows[0]  # the same in every row: no column of its own
    header = next(csv.reader(io.StringIO(done.stdout.decode(), newline="")))
    assert header.index("bs") == header.index("params") + 1


def test_the_samples_csv_has_a_column_per_varying_parameter(library: Path) -> None:
    """The samples CSV had only the JSON params cell: no filter on block size."""
    done = disklab("export", "a", "--format", "samples", "-o", "-", "--library", str(library))
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout.decode(), newline="")))
    assert rows and {r["bs"] for r in rows} == {"1048576", "65536"}
    assert all(r["bs"] == ("1048576" if r["case_id"] == "c-dd-1" else "65536") for r in rows)
    assert "direct" not in rows[0]
    header = next(csv.reader(io.StringIO(done.stdout.decode(), newline="")))
    assert header[:4] == ["case_id", "config", "params", "bs"]
    assert header[4:] == ["repeat", "series", "t_s", "value"]
