"""bench figure 11 (issue 45), its logic without the run: the sizes scaled for a smoke test, the
fio job as a DiskLab plan with io_size passed through, the ETA's error at each checkpoint
against the real end, the GUI thread's longest gap and each measure's verdict."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest
from bench.figures.long_run import (
    GIB,
    eta_errors,
    longest_gap,
    plan_problem,
    plan_text,
    run,
    sizes,
    verdicts,
)


def test_full_scale_is_256_gib_over_16_and_a_smoke_test_is_a_hundredth() -> None:
    assert sizes(1.0) == (256 * GIB, 16 * GIB)
    io_size, file_size = sizes(0.01)
    assert io_size == 2621 << 20 and file_size == 163 << 20
    assert sizes(1e-6) == (64 << 20, 64 << 20)  # never below 64 MiB
    for bad in (0.0, -1.0, 1.5):
        with pytest.raises(ValueError, match="--long-scale"):
            sizes(bad)


def test_the_plan_is_one_direct_fio_write_with_io_size_passed_through(tmp_path: Path) -> None:
    text = plan_text(tmp_path, 256 * GIB, 16 * GIB)
    plan = tomllib.loads(text)
    (test,) = plan["test"]
    assert test["tool"] == "fio" and test["rw"] == "write" and test["direct"] is True
    assert test["size"] == "16384m" and test["fio_options"] == {"io_size": "262144m"}
    assert plan["target"]["directory"] == str(tmp_path)
    problem = plan_problem(text)  # None once DiskLab takes [test.fio_options]
    assert problem is None or "fio_options" in problem


def test_the_eta_error_is_taken_at_the_first_report_past_each_checkpoint() -> None:
    # a run from 0 to 100 s: at 10 % (t=10) the ETA says 80 s, 90 were left: 11 % off
    progress = [(5.0, 0.05, 100.0), (10.0, 0.10, 80.0), (12.0, 0.12, 88.0),
                (25.0, 0.25, 75.0), (50.0, 0.5, None), (51.0, 0.51, 49.0)]
    errors = eta_errors(progress, 100.0)
    assert errors == {"10 %": pytest.approx(0.1111, abs=1e-4), "25 %": 0.0,
                      "50 %": 0.0, "75 %": None}  # no report reached 75 %
    assert verdicts({"eta_errors": errors, "rss_growth": 1e6, "max_gap": 0.05,
                     "zoom": 0.02})["eta"] == "not measured"


def test_gaps_and_verdicts() -> None:
    assert longest_gap([0.0, 0.01, 0.02, 0.25, 0.26]) == pytest.approx(0.23)
    assert longest_gap([1.0]) == 0.0
    result = {"eta_errors": {"10 %": 0.05, "25 %": 0.02, "50 %": 0.01, "75 %": 0.12},
              "rss_growth": 31e6, "max_gap": 0.099, "zoom": 0.2}
    assert verdicts(result) == {"eta": "short", "rss": "short", "gap": "ok", "zoom": "short"}


def test_a_directory_without_room_is_not_measured(tmp_path: Path, monkeypatch) -> None:
    import bench.figures.long_run as long_run

    usage = shutil.disk_usage(tmp_path)._replace(free=GIB)
    monkeypatch.setattr(long_run.shutil, "disk_usage", lambda _path: usage)
    (row,) = run(tmp_path, scale=1.0)  # a 16 GiB file in 1 GiB free: nothing is started
    assert row["verdict"].startswith("not measured") and "MiB free" in row["verdict"]
