"""fio's options: the parameters a plan gives a fio test, and the job options rendered once
(job_options) and spelt as command-line arguments or job-file lines."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from disklab.core.tools.base import (
    MAX_BLOCK,
    MAX_COUNT,
    MAX_FILE,
    MAX_SECONDS,
    REQUIRED,
    ParamSpec,
)
from disklab.core.tools.fio.passthrough import files_per_job, io_bytes, passed_options

TOOL = "fio"
RW_CHOICES = ("read", "write", "randread", "randwrite", "rw", "randrw", "trim", "randtrim")
READS_FIRST = ("read", "randread", "rw", "randrw", "trim", "randtrim")  # need a laid-out file
MIXED = ("rw", "randrw")
ENGINES = ("psync", "sync", "libaio", "io_uring", "posixaio", "mmap", "pvsync2")
SYNC_ENGINES = ("psync", "sync", "mmap", "pvsync2")  # one I/O at a time: iodepth is ignored
DIRECTIONS = ("read", "write", "trim")
# metric suffix -> fio's percentile key (clat_ns.percentile)
PERCENTILES = (("lat_p50", "50.000000"), ("lat_p99", "99.000000"), ("lat_p99.9", "99.900000"))
TEXT_PERCENTILES = {50.0: "lat_p50", 99.0: "lat_p99", 99.9: "lat_p99.9"}
JOB_KEYS = ("rw", "bs", "size", "numjobs", "iodepth", "ioengine", "direct")
SIZE_OPTIONS = ("bs", "size")
MAX_JOBS = 1024  # jobs of one case, a thread and a file each (fio 3.33 refuses 4096: "maximum
# number of jobs reached")
MAX_IODEPTH = 65536  # the most in flight libaio (aio-max-nr) and io_uring take

PARAMS: Mapping[str, ParamSpec] = {
    "rw": ParamSpec("choice", REQUIRED, choices=RW_CHOICES, help="--rw: the I/O pattern",
                    label="I/O pattern"),
    "bs": ParamSpec("size", 4096, minimum=1, maximum=MAX_BLOCK, help="--bs: bytes per I/O",
                    label="block size"),
    "size": ParamSpec("size", REQUIRED, minimum=1, maximum=MAX_FILE,
                      help="--size: bytes per job; each job has a file of its own",
                      label="file size per job"),
    "numjobs": ParamSpec("int", 1, minimum=1, maximum=MAX_JOBS,
                         help="--numjobs: jobs (threads), one file each", label="jobs (threads)"),
    "iodepth": ParamSpec("int", 1, minimum=1, maximum=MAX_IODEPTH,
                         help="--iodepth: I/Os in flight per job", label="queue depth"),
    "ioengine": ParamSpec("choice", "psync", choices=ENGINES, help="--ioengine",
                          label="I/O engine"),
    "direct": ParamSpec("bool", False, help="--direct=1: O_DIRECT, bypass the page cache",
                        label="direct I/O"),
    "end_fsync": ParamSpec("bool", False, help="--end_fsync=1: fsync at the end, timed",
                           label="fsync at the end"),
    "fsync": ParamSpec("int", 0, minimum=0, maximum=MAX_COUNT,
                       help="--fsync=N: fsync every N writes (0: never)",
                       label="fsync every N writes"),
    "runtime": ParamSpec("duration", 0.0, minimum=0, maximum=MAX_SECONDS,
                         help="--runtime with --time_based (0: run until size is done)",
                         label="run time"),
    "rwmixread": ParamSpec("int", 70, minimum=0, maximum=100,
                           help="--rwmixread: % reads of rw and randrw",
                           label="reads in a mix (%)"),
    "group_reporting": ParamSpec("bool", True,
                                 help="--group_reporting: one result for all jobs",
                                 label="one result for all jobs"),
    "ramp_time": ParamSpec("duration", 0.0, minimum=0, maximum=MAX_SECONDS,
                           help="--ramp_time: run this long before measuring",
                           label="warm-up time"),
}


def param_value(params: Mapping[str, Any], key: str) -> Any:
    """The plan's value, or the spec's default (plans fill defaults; direct callers may not)."""
    value = params.get(key)
    if value is None:
        default = PARAMS[key].default
        return None if default is REQUIRED else default
    return value


def _seconds_arg(seconds: float) -> str:
    """fio time values: whole seconds as '30s', anything finer in milliseconds ('1500ms')."""
    if float(seconds).is_integer():
        return f"{int(seconds)}s"
    return f"{round(seconds * 1000)}ms"


# ---------------------------------------------------------------------------------------------
# a job's options, rendered once: fio's command line (--k=v, this module) and the job file that
# fio --client sends each server (k=v, fio/client.py) are the same options in two spellings

Option = tuple[str, str | None]  # (fio option, value); None: a flag ("time_based")
# what the --create_only=1 layout step needs: the files' number, size and place, and what fills
# them (a compressing device reads back what the layout wrote)
LAYOUT_OPTIONS = ("rw", "bs", "size", "numjobs", "nrfiles", "fallocate", "offset",
                  "buffer_compress_percentage", "buffer_compress_chunk", "refill_buffers",
                  "scramble_buffers", "zero_buffers", "buffer_pattern", "dedupe_percentage")
PER_JOB_OPTIONS = ("numjobs", "group_reporting")  # not in a placed case: one job per stream,
# each reported on its own (its target's row)


def job_options(params: Mapping[str, Any], placed: bool = False) -> list[Option]:
    """The options of the case's job, in one order, from its checked parameters (every value
    an int or a choice: nothing a line break or an option of fio's could hide in). `placed`:
    the common options of a case placed on several targets, without numjobs and
    group_reporting."""
    rw = str(params["rw"])
    options: list[Option] = [
        ("rw", rw), ("bs", str(int(param_value(params, "bs")))), ("size", str(int(params["size"]))),
        ("numjobs", str(int(param_value(params, "numjobs")))),
        ("iodepth", str(int(param_value(params, "iodepth")))),
        ("ioengine", str(param_value(params, "ioengine"))),
        ("direct", "1" if param_value(params, "direct") else "0"),
    ]
    if rw in MIXED:
        options.append(("rwmixread", str(int(param_value(params, "rwmixread")))))
    if param_value(params, "end_fsync"):
        options.append(("end_fsync", "1"))
    if int(param_value(params, "fsync")) > 0:
        options.append(("fsync", str(int(param_value(params, "fsync")))))
    runtime = float(param_value(params, "runtime"))
    if runtime > 0:
        options += [("runtime", _seconds_arg(runtime)), ("time_based", None)]
    ramp = float(param_value(params, "ramp_time"))
    if ramp > 0:
        options.append(("ramp_time", _seconds_arg(ramp)))
    if param_value(params, "group_reporting"):
        options.append(("group_reporting", None))
    options += passed_options(params, PARAMS)  # after ioengine: its own options need it first
    if placed:
        options = [(k, v) for k, v in options if k not in PER_JOB_OPTIONS]
    return options


def moved_bytes(params: Mapping[str, Any], streams: int | None = None) -> int | None:
    """The bytes a size-based case moves (io_size or size per job, loops, number_ios), for
    its progress and the session's ETA; None for a time-based one (it moves what the device
    allows in its runtime). `streams`: a placed case's jobs, one per stream."""
    size, jobs, bs = (param_value(params, k) for k in ("size", "numjobs", "bs"))
    if float(param_value(params, "runtime") or 0) > 0:
        return None
    if not all(isinstance(v, int) for v in (size, jobs, bs)):
        return None
    return io_bytes(params, int(size), int(streams or jobs), int(bs))


def file_name_format(stem: str, params: Mapping[str, Any]) -> str:
    """fio's filename_format of a case's files in a directory: one per job, or with nrfiles
    one per job and file (fio expands $jobnum and $filenum; no shell)."""
    if files_per_job(params) > 1:
        return f"{stem}.$jobnum.$filenum.fio"
    return f"{stem}.$jobnum.fio"


def data_files(directory: str, stem: str, params: Mapping[str, Any]) -> tuple[str, ...]:
    """The files file_name_format makes, to be removed after the case."""
    jobs = int(param_value(params, "numjobs"))
    nrfiles = files_per_job(params)
    if nrfiles > 1:
        return tuple(f"{directory}/{stem}.{n}.{f}.fio" for n in range(jobs)
                     for f in range(nrfiles))
    return tuple(f"{directory}/{stem}.{n}.fio" for n in range(jobs))


def as_arguments(options: list[Option]) -> list[str]:
    """fio's command-line spelling: --key=value, --flag."""
    return [f"--{k}" if v is None else f"--{k}={v}" for k, v in options]


def as_job_lines(options: list[Option]) -> list[str]:
    """A job file's spelling: key=value, flag."""
    return [k if v is None else f"{k}={v}" for k, v in options]
