"""A folder of results is one session: the real fio-plot sweep (a Samsung PM883 measured by
bench-fio) imports in one command, its cases are the job options fio printed, identical ones
are repeats, fio's per-interval logs are the run's time series; a name several sessions share is
refused with their ids."""

from __future__ import annotations

import csv
import html
import io
import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.library import Library
from disklab.core.results.limits import IMPORTED_SERIES
from tests.helpers import FIXTURES

SWEEP = FIXTURES / "fio-plot-sweep"


def disklab(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=120, **kw)


def fio_json(name: str) -> dict:
    return json.loads((SWEEP / name).read_text())


def test_the_sweep_folder_is_one_session_pivoting_as_iodepth_by_numjobs(tmp_path: Path) -> None:
    library = tmp_path / "l.sqlite3"
    done = disklab("import", str(SWEEP), "--session", "pm883", "--library", str(library))
    assert done.returncode == 0, done.stderr
    outputs = sorted(SWEEP.glob("*.json"))
    with Library.open(library) as lib:
        [session] = lib.list_sessions()
        assert session["name"] == "pm883" and session["cases"] == len(outputs)
        params = {json.dumps(c["params"], sort_keys=True) for c in lib.cases(session["id"])}
    assert len(params) == len(outputs)  # every file its own parameters: no repeats
    assert "README.md: skipped" in done.stdout

    pivot = disklab("compare", "pm883", "--rows", "rw,iodepth", "--columns", "numjobs",
                    "--metric", "read:iops", "--format", "csv", "--library", str(library))
    assert pivot.returncode == 0, pivot.stderr
    rows = {r["rw / iodepth"]: r for r in csv.DictReader(io.StringIO(pivot.stdout))}
    doc = fio_json("randread-16-4.json")["jobs"][0]
    options = doc["job options"]
    cell = rows[f"rw=randread / iodepth={options['iodepth']}"]
    assert float(cell[f"numjobs={options['numjobs']} mean (op/s)"]) == pytest.approx(
        doc["read"]["iops"])
    randread = [k for k in rows if k.startswith("rw=randread")]
    assert len(randread) == 7
    assert sum(1 for k in randread for c in rows[k] if c.endswith(" n") and rows[k][c]) == 49


def test_identical_parameters_are_repeats_and_a_shared_name_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    for sub in ("monday", "tuesday"):
        (folder / sub).mkdir(parents=True)
        shutil.copy(SWEEP / "randread-1-1.json", folder / sub / "a.json")
    shutil.copy(SWEEP / "randread-2-1.json", folder / "monday" / "b.json")
    library = tmp_path / "l.sqlite3"
    done = disklab("import", str(folder), "--session", "qd", "--library", str(library),
                   "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(disklab("show", "qd", "--json", "--library", str(library)).stdout)
    iops = {r["params"]["iodepth"]: r for r in shown["results"] if r["metric"] == "read:iops"}
    assert iops[1]["n"] == 2 and iops[2]["n"] == 1
    want = fio_json("randread-1-1.json")["jobs"][0]["read"]["iops"]
    assert iops[1]["values"] == pytest.approx([want, want])

    # another output (one of the folder's would be found in session 1: test_import_again)
    again = disklab("import", str(SWEEP / "randread-4-1.json"), "--session", "qd",
                    "--library", str(library))
    assert again.returncode == 0, again.stderr
    refused = disklab("show", "qd", "--library", str(library))
    assert refused.returncode == 2
    assert refused.stderr.strip() == ("disklab: 2 sessions are named 'qd': 1, 2; give one id")


def test_fio_logs_beside_a_json_are_that_runs_time_series_and_export_as_csv(
        tmp_path: Path) -> None:
    library = tmp_path / "l.sqlite3"
    run = "randread-16-1.json"  # its job wrote randread-iodepth-16-numjobs-1_{bw,...}.1.log
    folder = tmp_path / "one"
    folder.mkdir()
    shutil.copy(SWEEP / run, folder)
    shutil.copy(SWEEP / "randread-1-1.json", folder)
    for log in SWEEP.glob("randread-iodepth-16-numjobs-1_*.log"):
        shutil.copy(log, folder)
    done = disklab("import", str(folder), "--session", "logs", "--library", str(library))
    assert done.returncode == 0, done.stderr
    with Library.open(library) as lib:
        sid = lib.find_session("logs")["id"]
        case = next(c["case_id"] for c in lib.cases(sid) if c["params"]["iodepth"] == 16)
        logged = [s for s in lib.samples(sid) if s["series"].startswith("fio_")]
        series = {s["series"] for s in logged}
        assert {s["case_id"] for s in logged} == {case}
        bw = lib.samples(sid, series="fio_read_bw_bps")
        # each output's disk_util is one point of evidence per run (what limited it)
        evidence = [s for s in lib.samples(sid) if not s["series"].startswith("fio_")]
        assert sorted(s["series"] for s in evidence) == sorted(
            [*IMPORTED_SERIES.values()] * 2)
    assert series == {"fio_read_bw_bps", "fio_read_iops", "fio_read_lat_ns",
                      "fio_read_clat_ns", "fio_read_slat_ns"}
    first = (SWEEP / "randread-iodepth-16-numjobs-1_bw.1.log").read_text().splitlines()
    assert len(bw) == len(first)
    assert bw[0]["value"] == int(first[0].split(",")[1]) * 1024  # KiB/s -> B/s
    assert bw[1]["t"] - bw[0]["t"] == pytest.approx(0.25)

    out = disklab("export", "logs", "--format", "samples", "-o", "-", "--library", str(library))
    assert out.returncode == 0, out.stderr
    rows = [r for r in csv.DictReader(io.StringIO(out.stdout))
            if r["series"] == "fio_read_iops"]
    iops_log = (SWEEP / "randread-iodepth-16-numjobs-1_iops.1.log").read_text().splitlines()
    assert [(float(r["t_s"]), float(r["value"])) for r in rows[:2]] == [
        (int(line.split(",")[0]) / 1000, float(line.split(",")[1])) for line in iops_log[:2]]

    # and as charts: the HTML report draws the run's logged throughput, IOPS and latency
    page = tmp_path / "logs.html"
    out = disklab("export", "logs", "--format", "html", "-o", str(page), "--library",
                  str(library))
    assert out.returncode == 0, out.stderr
    text = html.unescape(page.read_text())
    for title in ("fio's logged throughput over time", "fio's logged IOPS over time",
                  "fio's logged latency over time"):
        assert title in text, title


def test_a_terminal_sees_a_progress_line_a_pipe_does_not(tmp_path: Path) -> None:
    main, child = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "disklab.cli.main", "import", str(SWEEP), "--session", "p",
             "--library", str(tmp_path / "l.sqlite3")], stderr=child, stdout=subprocess.PIPE,
            text=True, timeout=120)
        os.close(child)
        seen = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(main)
    assert done.returncode == 0
    n = len(list(SWEEP.glob("*.json"))) + 2  # and README.md, LICENSE.fio-plot
    assert f"reading {n}/{n}".encode() in seen
    piped = disklab("import", str(SWEEP), "--session", "p",
                    "--library", str(tmp_path / "l2.sqlite3"))
    assert "reading" not in piped.stderr


def test_a_folder_without_outputs_is_said_and_exits_2(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.txt").write_text("buy disks\n")
    done = disklab("import", str(folder), "--library", str(tmp_path / "l.sqlite3"))
    assert done.returncode == 2
    assert done.stderr == f"disklab import: {folder}: no dd, iozone, fio or bonnie++ output in it\n"
    with Library.open(tmp_path / "l.sqlite3") as lib:
        assert lib.list_sessions() == []

