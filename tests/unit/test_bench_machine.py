"""bench/machine.py: where a bench run was measured (issue 34 point 4). results.json keeps the
earlier runs beside the latest and the records earlier passes left there; the side-by-side table
shows the last two full runs with the load each figure ran at; the scratch disk's facts are
the kernel's own (/sys)."""

from __future__ import annotations

import os
from pathlib import Path

from bench.machine import (
    LoadWatch,
    calibration,
    calibration_row,
    disk_of,
    facts,
    keep_runs,
    side_by_side,
)


def _run(when: str, value: str, full: bool = True, load: float = 1.0) -> dict:
    command = ["bench/run.py"] + ([] if full else ["--only", "4"])
    return {"when": when, "full": full, "command": command,
            "machine": {"cpu_model": "Xeon", "cpus": 2, "kernel": "6.18",
                        "scratch_disk": {"disk": "vda", "scheduler": "mq-deadline"}},
            "rows": [{"figure": "4 engine/fio qd32", "value": value, "verdict": "ok; detail",
                      "load": {"min": load, "max": load + 1}}]}


def test_results_keep_earlier_runs_and_other_records() -> None:
    old = {"when": "t0", "rows": [{"figure": "x"}], "kernel": "6.1", "pooled": {"a": 1}}
    new = keep_runs(old, _run("t1", "0.97"))
    assert new["when"] == "t1" and new["rows"][0]["value"] == "0.97"
    assert new["pooled"] == {"a": 1}  # an earlier pass's record stays
    assert [r["when"] for r in new["runs"]] == ["t0", "t1"]  # the run from before "runs"
    for i in range(10):
        new = keep_runs(new, _run(f"u{i}", "1.0"))
    assert len(new["runs"]) == 6 and new["runs"][-1]["when"] == "u9"


def test_the_last_two_full_runs_stay_however_many_partial_runs_follow() -> None:
    """Figure 4's noisy rows are measured again with --cases: those partial runs must not push
    the full runs the README compares out of results.json."""
    new: dict = {}
    for when, full in (("f1", True), ("f2", True), ("f3", True)):
        new = keep_runs(new, _run(when, "1.0", full))
    for i in range(8):
        new = keep_runs(new, _run(f"p{i}", "0.9", False))
    assert [r["when"] for r in new["runs"]] == ["f2", "f3", "p2", "p3", "p4", "p5", "p6", "p7"]
    assert "run A: f2," in side_by_side(new) and "run B: f3," in side_by_side(new)


def test_the_table_puts_the_last_two_full_runs_side_by_side() -> None:
    results = {"runs": [_run("a", "0.80"), _run("b", "0.96", load=3.0), _run("c", "0.5", False),
                        _run("d", "0.99", load=0.5)]}
    table = side_by_side(results)
    assert "run A: b, Xeon x 2, kernel 6.18, disk vda (mq-deadline)" in table
    assert "| 4 engine/fio qd32 | 0.96 ok (load 3.0-4.0) | 0.99 ok (load 0.5-1.5) |" in table
    assert "run B: d," in table and "c, Xeon" not in table  # the partial run is left out
    partial = side_by_side({"runs": [_run("p", "0.9", False)]})
    assert "--only 4" in partial and "0.9 ok" in partial


def test_the_scratch_disk_and_load_are_the_kernels() -> None:
    here = disk_of("/var/tmp")
    dev = os.stat("/var/tmp").st_dev
    if Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}").exists():
        sched = Path(f"/sys/block/{here['disk']}/queue/scheduler").read_text()
        assert f"[{here['scheduler']}]" in sched or sched.strip() == here["scheduler"]
    f = facts()
    assert f["cpus"] == os.cpu_count() and f["kernel"] == os.uname().release
    assert f["cpu_model"]
    with LoadWatch(every=0.05).running() as watch:
        pass
    s = watch.summary()
    assert s["min"] <= s["mean"] <= s["max"] and len(watch.samples) >= 2


def test_the_cpu_calibration_is_in_the_table() -> None:
    """The fixed CPU work a reader compares between runs: a run whose machine did it 3x slower
    says so in its header and in a row of its own, beside the other run's figure."""
    small = calibration(adds=200_000, hashed=4 << 20, best_of=2)
    assert small["python_adds"] == 200_000 and small["sha256_bytes"] == 4 << 20
    assert 0 < small["python_s"] < 10 and 0 < small["sha256_s"] < 10
    fast = {"python_adds": 10_000_000, "python_s": 0.38, "sha256_bytes": 256 << 20,
            "sha256_s": 0.61}
    slow = fast | {"python_s": 1.15, "sha256_s": 1.9}
    runs = []
    for when, cpu in (("a", fast), ("b", slow)):
        run = _run(when, "0.97")
        run["machine"]["calibration"] = cpu
        run["rows"].insert(0, calibration_row(cpu, cpu | {"python_s": cpu["python_s"] + 0.01}))
        runs.append(run)
    table = side_by_side({"runs": runs})
    assert "(mq-deadline), 10 M Python additions in 1.15 s, commit" in table
    row = next(line for line in table.splitlines() if line.startswith("| 0 CPU"))
    assert row == ("| 0 CPU: 10 M Python additions; SHA-256 of 256 MiB (best of 3) "
                   "| 0.38 s; 0.61 s info | 1.15 s; 1.90 s info |")
