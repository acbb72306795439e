"""Per-stream and per-process figures from real runs on a real ext4 filesystem on a loop device:
the engine's streams each over their own active time and the aggregate over the wall time, and
iozone's min/max/avg per process in `disklab show`'s text."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from disklab.core.library import Library

pytestmark = [pytest.mark.root]

MiB = 1 << 20
KiB = 1024

# Two streams of 32 MiB each, O_DIRECT: stream 0 in 4 KiB calls (thousands of small writes),
# stream 1 in 1 MiB calls (32 large ones). Measured here: 26 MB/s against 980 MB/s.
ENGINE_PLAN = """\
name = "slow and fast stream"
repeats = 1

[target]
directory = "{dir}"

[[test]]
tool = "engine"
mode = "write"
size = "32m"
streams = 2
stream_block_sizes = "4k 1m"
direct = true
"""

IOZONE_PLAN = """\
name = "iozone two processes"
repeats = 1

[target]
directory = "{dir}"

[[test]]
tool = "iozone"
tests = ["write"]
threads = 2
file_size = "16m"
record_size = "1m"
direct = true
excel = false
"""


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=600)


def run_plan(text: str, directory: Path, tmp_path: Path) -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(text.format(dir=directory))
    library = tmp_path / "library.sqlite3"
    done = disklab("run", str(plan), "--library", str(library))
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in directory.iterdir()) == ["lost+found"]  # test files removed
    return library


def shown(library: Path, name: str) -> tuple[str, list[dict[str, Any]]]:
    """`disklab show NAME` text and `--json` results."""
    text = disklab("show", name, "--library", str(library))
    doc = disklab("show", name, "--library", str(library), "--json")
    assert text.returncode == 0 and doc.returncode == 0, text.stderr + doc.stderr
    return text.stdout, json.loads(doc.stdout)["results"]


def table_line(text: str, metric: str) -> str:
    """The one line of `disklab show`'s table that holds `metric` (its first column when the
    table was fitted to a narrow terminal: the config and tool every row shares said above)."""
    (line,) = [ln for ln in text.splitlines()
               if re.search(rf"(^|\s){re.escape(metric)}\s", ln)]
    return line


def test_a_slow_and_a_fast_stream_show_their_own_rates(scratch_fs, tmp_path: Path) -> None:
    library = run_plan(ENGINE_PLAN, scratch_fs.mountpoint, tmp_path)
    text, results = shown(library, "slow and fast stream")
    by_metric = {(r["metric"], r["params"].get("stream")): r for r in results}
    slow = by_metric[("write:stream", 0)]["mean"]
    fast = by_metric[("write:stream", 1)]["mean"]
    # 4 KiB calls against 1 MiB calls: different speeds (26 against 980 MB/s on a quiet
    # machine, 61 against 170 with the suite's other worker on the same disk); that each figure
    # is its own stream's is checked below against what the engine counted per stream
    assert fast > slow
    assert by_metric[("write:min_proc", None)]["mean"] == slow
    assert by_metric[("write:max_proc", None)]["mean"] == fast
    assert by_metric[("write:avg_proc", None)]["mean"] == pytest.approx((slow + fast) / 2)
    aggregate = by_metric[("write", None)]["mean"]

    # what the engine printed, and the runner's own clock around the process
    lib = Library.open(library)
    try:
        sid = int(lib.find_session("slow and fast stream")["id"])
        (run,) = lib.runs(sid)
        lines = [t for _t, stream, t in lib.transcript(sid, run["case_id"], 1)
                 if stream == "stdout"]
    finally:
        lib.close()
    summary = json.loads(lines[-1])
    streams = summary["streams"]
    assert [s["block_size"] for s in streams] == [4 * KiB, MiB]
    assert [s["bytes"] for s in streams] == [32 * MiB, 32 * MiB]
    for s, rate in zip(streams, (slow, fast), strict=True):
        assert rate == pytest.approx(s["bytes"] / s["seconds"])  # over its own active time
        assert s["seconds"] == pytest.approx(s["end"] - s["start"])
    assert streams[1]["end"] < 0.5 * streams[0]["end"]  # the fast one was done long before
    # the aggregate: total bytes over the first stream's start to the last stream's end
    wall = max(s["end"] for s in streams) - min(s["start"] for s in streams)
    assert summary["seconds"] == pytest.approx(wall)
    assert aggregate == pytest.approx(64 * MiB / wall)
    # ... which the process's whole life (Python's start-up included) contains
    assert wall <= run["duration"]
    assert 64 * MiB / run["duration"] <= aggregate
    # neither a share of it (the old figure, aggregate / 2 per stream) nor the sum of the rates
    assert slow < aggregate < slow + fast and fast > aggregate

    # `disklab show` prints the spread, each line with the figure `show --json` has
    for metric in ("write", "write:min_proc", "write:max_proc", "write:avg_proc"):
        assert by_metric[(metric, None)]["shown"].split(" ±")[0] in table_line(text, metric)
    assert "write:stream" not in text  # every stream's own row: with all metrics


def kb_per_sec(stdout: str, label: str) -> float:
    (m,) = re.findall(rf"{re.escape(label)}\s*=\s*([\d.]+) kB/sec", stdout)
    return float(m)


@pytest.mark.slow  # iozone -t idles ~1 s after each phase and ~6 s before it ends
def test_iozone_min_max_avg_per_process_in_show(scratch_fs, tmp_path: Path) -> None:
    library = run_plan(IOZONE_PLAN, scratch_fs.mountpoint, tmp_path)
    text, results = shown(library, "iozone two processes")
    lib = Library.open(library)
    try:
        sid = int(lib.find_session("iozone two processes")["id"])
        (run,) = lib.runs(sid)
        stdout = "\n".join(t for _t, stream, t in lib.transcript(sid, run["case_id"], 1)
                           if stream == "stdout")
    finally:
        lib.close()
    by_metric = {r["metric"]: r for r in results}
    for test in ("write", "rewrite"):
        label = "initial writers" if test == "write" else "rewriters"
        # iozone's block of the phase: from its "Children see" line to the next one
        block = stdout.split(f"Children see throughput for  2 {label}")[1]
        block = block.split("Children see")[0]
        for key, line in (("min_proc", "Min throughput per process"),
                          ("max_proc", "Max throughput per process"),
                          ("avg_proc", "Avg throughput per process")):
            row = by_metric[f"{test}:{key}"]
            assert row["mean"] == pytest.approx(kb_per_sec(block, line) * KiB)
            # in the text `disklab show` prints, not only in its JSON
            assert row["shown"].split(" ±")[0] in table_line(text, f"{test}:{key}")
        assert (by_metric[f"{test}:min_proc"]["mean"] <= by_metric[f"{test}:avg_proc"]["mean"]
                <= by_metric[f"{test}:max_proc"]["mean"])


def test_fio_jobs_of_different_speeds_imported_and_shown(scratch_fs, tmp_path: Path) -> None:
    """fio without --group_reporting: each job over its own runtime (a rate-limited 4 KiB job
    next to a 1 MiB one), the group's total over the longest runtime, the spread in show."""
    out = tmp_path / "two-speeds.json"
    done = subprocess.run(
        ["fio", f"--directory={scratch_fs.mountpoint}", "--rw=write", "--size=16m",
         "--ioengine=psync", "--direct=1", "--end_fsync=1", "--thread",
         "--name=slow", "--bs=4096", "--rate=16m", "--name=fast", "--bs=1m",
         "--output-format=json", f"--output={out}"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    for p in scratch_fs.mountpoint.iterdir():
        if p.name != "lost+found":
            p.unlink()
    assert done.returncode == 0, done.stderr
    jobs = {j["jobname"]: j["write"] for j in json.loads(out.read_text())["jobs"]}
    library = tmp_path / "library.sqlite3"
    imported = disklab("import", str(out), "--tool", "fio", "--session", "two speeds",
                       "--library", str(library))
    assert imported.returncode == 0, imported.stderr
    text, results = shown(library, "two speeds")
    rows = {(r["metric"], r["params"].get("job")): r["mean"] for r in results}
    slow, fast = rows[("write", "slow")], rows[("write", "fast")]
    for job, rate in (("slow", slow), ("fast", fast)):  # over the job's own runtime
        assert rate == pytest.approx(jobs[job]["io_bytes"] / (jobs[job]["runtime"] / 1e3),
                                     rel=0.01)
    assert fast > 3 * slow
    longest = max(j["runtime"] for j in jobs.values()) / 1e3
    assert rows[("write", None)] == pytest.approx(32 * MiB / longest)
    assert (rows[("write:min_proc", None)], rows[("write:max_proc", None)]) == (slow, fast)
    for metric in ("write:min_proc", "write:max_proc", "write:avg_proc"):
        assert re.search(rf"\s{re.escape(metric)}\s", text)
