"""fio and bonnie++ for real on a scratch ext4: the adapters' argv runs, the parsed numbers are the
tools' own (read back independently from fio's JSON file and bonnie++'s CSV line), and nothing
is left behind once Command.files are removed."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from disklab.core.tools.base import Command, RunTarget, ToolOutput
from disklab.core.tools.bonnie import BonnieAdapter
from disklab.core.tools.fio import FioAdapter
from disklab.core.vocab.model import Metric
from disklab.core.vocab.units import KiB, MiB

pytestmark = [pytest.mark.root, pytest.mark.slow]
fio = FioAdapter()
bonnie = BonnieAdapter()


def run(argv: tuple[str, ...], cwd: str | None) -> subprocess.CompletedProcess[str]:
    """As the runner starts tools: no stdin, own session, pipes."""
    return subprocess.run(list(argv), cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, errors="replace", start_new_session=True, timeout=300,
                          check=False)


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != "lost+found")


def remove(command: Command) -> None:
    for f in command.files:
        Path(f).unlink(missing_ok=True)


def by_name(metrics: list[Metric]) -> dict[str, Metric]:
    return {m.name: m for m in metrics}


def run_fio(params: dict, directory: Path, tag: str) -> tuple[Command, list[Metric], dict]:
    target = RunTarget(directory=str(directory), tag=tag, is_root=os.geteuid() == 0)
    command = fio.build_command(params, target)
    try:
        for step in command.prepare:
            done = run(step, command.cwd)
            assert done.returncode == 0, done.stderr
        done = run(command.argv, command.cwd)
        assert done.returncode == 0, done.stderr
        assert command.result_file is not None
        result = Path(command.result_file).read_text()
        output = ToolOutput(stdout=done.stdout, stderr=done.stderr, result_file=result,
                            exit_status=done.returncode)
        metrics = fio.parse_result(output, params)
        parser = fio.progress_parser(params)
        for line in re.split(r"\r\n|\r|\n", done.stdout):
            parser.feed("stdout", line)  # whatever fio printed, the parser takes it
        doc = json.loads(result[result.index("{"):])  # fio's own numbers, read directly
    finally:
        remove(command)
    assert leftovers(directory) == []
    return command, metrics, doc


def test_fio_sequential_write(module_scratch_fs) -> None:
    params = {"rw": "write", "size": 32 * MiB, "bs": MiB, "end_fsync": True}
    command, metrics, doc = run_fio(params, module_scratch_fs.mountpoint, "itest-fio-w")
    (job,) = doc["jobs"]
    got = by_name(metrics)
    assert job["write"]["io_bytes"] == 32 * MiB
    assert got["write"].value == job["write"]["bw_bytes"]
    assert got["write:iops"].value == pytest.approx(job["write"]["iops"])
    assert got["write:lat_mean"].value == pytest.approx(job["write"]["lat_ns"]["mean"])
    assert got["write:lat_p99"].value == job["write"]["clat_ns"]["percentile"]["99.000000"]
    assert got["cpu:sys"].value == pytest.approx(job["sys_cpu"])
    assert "read" not in got
    assert command.planned_bytes == 32 * MiB


def test_fio_random_read_after_layout(module_scratch_fs) -> None:
    params = {"rw": "randread", "size": 16 * MiB, "bs": 4 * KiB}
    command, metrics, doc = run_fio(params, module_scratch_fs.mountpoint, "itest-fio-rr")
    assert command.prepare and command.reads_after_prepare
    (job,) = doc["jobs"]
    got = by_name(metrics)
    assert job["read"]["io_bytes"] == 16 * MiB
    assert got["read"].value == job["read"]["bw_bytes"]
    assert got["read:iops"].value == pytest.approx(job["read"]["iops"])
    assert got["read:lat_p50"].value == job["read"]["clat_ns"]["percentile"]["50.000000"]
    assert "write" not in got


def test_fio_two_jobs_one_file_each(module_scratch_fs) -> None:
    params = {"rw": "write", "size": 8 * MiB, "bs": 64 * KiB, "numjobs": 2,
              "group_reporting": False}
    _command, metrics, doc = run_fio(params, module_scratch_fs.mountpoint, "itest-fio-2j")
    jobs = doc["jobs"]
    assert len(jobs) == 2
    per_job = {(m.params or {}).get("job"): m.value for m in metrics if m.name == "write"}
    # the aggregate is every byte over the longest job's runtime (fio's own group figure), not
    # the sum of the jobs' rates, which overstates it when one job ends before the other
    total = sum(j["write"]["io_bytes"] for j in jobs)
    wall = max(j["write"]["runtime"] for j in jobs) / 1e3
    assert per_job.pop(None) == pytest.approx(total / wall)
    assert per_job == {"disklab.0": jobs[0]["write"]["bw_bytes"],
                       "disklab.1": jobs[1]["write"]["bw_bytes"]}


CSV_TESTS = [  # (metric, rate field, cpu field, latency field) of a format 1.98 line
    ("char_write", 9, 10, 38), ("block_write", 11, 12, 39), ("rewrite", 13, 14, 40),
    ("char_read", 15, 16, 41), ("block_read", 17, 18, 42), ("random_seeks", 19, 20, 43),
    ("seq_create", 26, 27, 44), ("seq_stat", 28, 29, 45), ("seq_delete", 30, 31, 46),
    ("random_create", 32, 33, 47), ("random_stat", 34, 35, 48), ("random_delete", 36, 37, 49),
]
LATENCY = {"us": 1e3, "ms": 1e6, "s": 1e9}


def test_bonnie_fast_small(module_scratch_fs) -> None:
    directory = module_scratch_fs.mountpoint
    params = {"size": 128 * MiB, "ram": 32 * MiB, "files": 1, "fast": True,
              "label": "disklab", "user": "root"}
    target = RunTarget(directory=str(directory), tag="itest-bonnie", is_root=os.geteuid() == 0)
    command = bonnie.build_command(params, target)
    assert command.files == ()
    done = run(command.argv, command.cwd)
    assert done.returncode == 0, done.stderr
    assert leftovers(directory) == []  # bonnie++ removed its own files

    output = ToolOutput(stdout=done.stdout, stderr=done.stderr, exit_status=0)
    got = by_name(bonnie.parse_result(output, params))
    fields = done.stdout.strip().splitlines()[-1].split(",")  # bonnie++'s CSV line, directly
    assert fields[:3] == ["1.98", "2.00a", "disklab"] and fields[5] == "128M"
    for name, rate, cpu, lat in CSV_TESTS:
        scale = 1.0 if name.startswith(("random_seeks", "seq_", "random_")) else 1024.0
        for key, raw, unit in ((name, fields[rate], scale), (f"{name}:cpu", fields[cpu], 1.0)):
            if raw == "":
                assert key not in got  # skipped by -f
            elif raw.startswith("+"):
                assert got[key].value is None and got[key].note == "too fast to measure"
            else:
                assert got[key].value == pytest.approx(float(raw) * unit)
        latency = fields[lat]
        if latency:
            m = re.fullmatch(r"(\d+)(us|ms|s)", latency)
            assert m is not None
            assert got[f"{name}:latency"].value == int(m[1]) * LATENCY[m[2]]
        else:
            assert f"{name}:latency" not in got
    assert "char_write" not in got and "char_read" not in got  # -f

    parser = bonnie.progress_parser(params)
    phases = [u.phase for line in done.stderr.splitlines() if (u := parser.feed("stderr", line))]
    assert phases == ["block_write", "rewrite", "block_read", "random_seeks", "seq_create",
                      "seq_stat", "seq_delete", "random_create", "random_stat",
                      "random_delete", "finishing"]
