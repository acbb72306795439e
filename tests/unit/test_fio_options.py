"""fio's job options are rendered once (tools.fio.options.job_options) and spelt three ways:
the command line of a local case, the common options of a case placed on several targets, and
the job file fio --client sends each server. These tests hold the three to the same options
for the same parameters, the job file as fio itself reads it (`fio --showcmd`, which prints a
job file's command-line equivalent)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from disklab.core.tools.base import RunTarget
from disklab.core.tools.fio import FioAdapter
from disklab.core.tools.fio.client import job_text

# options that say where and how DiskLab runs the job, not what the job does
PLACE = ("name", "directory", "filename", "filename_format", "thread", "unlink", "output",
         "output-format", "eta")
PER_JOB = ("numjobs", "group_reporting")

CASES = [
    {"rw": "write", "size": 8 << 20},
    {"rw": "randread", "size": 1 << 30, "bs": 4096, "iodepth": 32, "ioengine": "libaio",
     "direct": True, "numjobs": 4, "runtime": 30.0},
    {"rw": "randrw", "size": 64 << 20, "bs": 65536, "rwmixread": 60, "end_fsync": True,
     "fsync": 8, "runtime": 1.5, "ramp_time": 2.0, "group_reporting": False},
    {"rw": "rw", "size": 512, "bs": 512, "ioengine": "io_uring", "numjobs": 2,
     "ramp_time": 0.25},
]


def _options(argv: list[str] | tuple[str, ...]) -> list[str]:
    """The job options of a fio command line, in order, as '--key=value' / '--flag'."""
    return [a for a in argv if a.startswith("--")
            and a[2:].split("=", 1)[0] not in PLACE]


def _full(params: dict) -> dict:
    adapter = FioAdapter()
    defaults = {k: s.default for k, s in adapter.params.items()
                if k not in params and k not in ("rw", "size")}
    return {**defaults, **params}


@pytest.mark.parametrize("params", CASES)
def test_command_line_and_client_job_file_give_fio_the_same_options(
        params: dict, tmp_path: Path) -> None:
    params = _full(params)
    target = RunTarget(directory=str(tmp_path), tag="c1-r1")
    argv = FioAdapter().build_command(params, target).argv
    job = tmp_path / "h1.job"
    job.write_text(job_text(params, str(tmp_path), "c1-r1", "h1"))
    shown = subprocess.run(["fio", "--showcmd", str(job)], capture_output=True, text=True,
                           check=True).stdout.split()
    assert _options(shown) == _options(argv)
    assert _options(argv)  # not two empty lists
    assert f"--rw={params['rw']}" in _options(argv)


@pytest.mark.parametrize("params", CASES)
def test_a_placed_case_has_the_same_options_but_one_job_per_target(
        params: dict, tmp_path: Path) -> None:
    params = _full(params)
    one = FioAdapter().build_command(params, RunTarget(directory=str(tmp_path), tag="t"))
    placed_target = RunTarget(directory=str(tmp_path), tag="t",
                              directories={"a": str(tmp_path / "a"), "b": str(tmp_path / "b")})
    placed = FioAdapter().build_command({**params, "on": "a+b"}, placed_target)
    common = list(placed.argv[:placed.argv.index("--thread")])
    expected = [o for o in _options(one.argv) if o[2:].split("=", 1)[0] not in PER_JOB]
    assert _options(common) == expected
    assert placed.argv.count("--name=s0-a") == 1 and placed.argv.count("--name=s1-b") == 1


def test_the_time_values_are_fios_own_spelling(tmp_path: Path) -> None:
    """Whole seconds as '30s', anything finer in milliseconds, on the command line and in the
    job file alike (fio reads both)."""
    params = _full({"rw": "write", "size": 1 << 20, "runtime": 1.5, "ramp_time": 30.0})
    text = job_text(params, str(tmp_path), "t", "h1")
    assert "runtime=1500ms\n" in text and "ramp_time=30s\n" in text and "time_based\n" in text
    argv = FioAdapter().build_command(params, RunTarget(directory=str(tmp_path), tag="t")).argv
    assert "--runtime=1500ms" in argv and "--ramp_time=30s" in argv
