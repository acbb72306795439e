"""fio's own job options a plan passes through (`[test.fio_options]`): which are taken, their
values made safe to spell on a command line and in a job file, and fio's own verdict on them
(`fio --parse-only`) read back into one line per option.

A plan is data. So an option is refused, with the reason, when it would take the run out of
DiskLab's hands: one of DiskLab's own parameters under fio's name (the test's `bs` says it), an
output or log DiskLab sets or does not keep, a file or directory (the targets say where), a
command to run, a user, cgroup or scheduler to switch to, a switch that drops the figures
DiskLab reads, or one of fio's command-line switches (`server`, `daemonize`, `crctest`...):
those are not job options, fio acts on them at once, even with --parse-only, and fio's
getopt takes an abbreviation of one (`--crc=md5` runs crctest), so a name that starts one is
refused too. An alias is judged as the name it stands for (`disable_bw` is
disable_bw_measurement). The plan check then takes only names the installed fio lists as job
options (fio --cmdhelp=all, an alias through --cmdhelp=NAME, an engine's through --enghelp)
and runs `fio --parse-only` with the case's whole job (core.plan.checks); this module turns
fio's words into a problem at the option's key. Pure: no process is started here. The root
helper refuses the same switches in the argv it builds (command_line_switch).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from disklab.core.vocab.units import MAX_BYTES, parse_size

TABLE = "fio_options"  # the [[test]] sub-table: [test.fio_options]
NOT_OPTIONS = ("on", "hosts")  # a case's parameters that are DiskLab's, not fio's
MAX_NAME = 64
MAX_VALUE = 512  # characters of one value: fio's longest (bssplit, cpus_allowed) are short
_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
# an absolute path in a value (mem=mmaphuge:/hugetlbfs/f, a pattern file): the targets say where
_PATH = re.compile(r"(^|[:,@=])/")
_SHELL = re.compile(r"[|&<>`]|(?:^|[/=:,])\.\.(?:/|$)")

# fio's names (and aliases) of what the test's own parameters set
OWN = {
    "rw": "rw", "readwrite": "rw", "bs": "bs", "blocksize": "bs", "size": "size",
    "numjobs": "numjobs", "iodepth": "iodepth", "ioengine": "ioengine", "direct": "direct",
    "buffered": "direct", "end_fsync": "end_fsync", "fsync": "fsync", "runtime": "runtime",
    "timeout": "runtime", "time_based": "runtime", "rwmixread": "rwmixread",
    "rwmixwrite": "rwmixread", "group_reporting": "group_reporting", "ramp_time": "ramp_time",
}
_WHERE = "the plan's targets say where fio's files go"
_OUTPUT = "DiskLab sets fio's output itself and reads it (JSON in a file of its own)"
_COMMAND = "it runs a command, and a plan is data: DiskLab runs nothing a plan names"
_LOG = "DiskLab keeps no fio log files (a log file would be left on the target)"
_FIGURES = "it drops figures DiskLab reads from fio's report"
REFUSED = {
    "name": "DiskLab names the job", "thread": "DiskLab runs fio's jobs as threads always",
    "create_only": "DiskLab lays out the files itself before a read",
    "filename": _WHERE, "directory": _WHERE, "filename_format": _WHERE, "opendir": _WHERE,
    "filesize": "the test's `size` decides the files' size (nrfiles splits it)",
    "output": _OUTPUT, "output-format": _OUTPUT, "output_format": _OUTPUT,
    "eta": _OUTPUT, "status_interval": _OUTPUT, "unit_base": _OUTPUT,
    "kb_base": "DiskLab spells sizes in bytes and reads fio's figures in its default units",
    "write_bw_log": _LOG, "write_lat_log": _LOG, "write_iops_log": _LOG,
    "write_hist_log": _LOG, "write_iolog": _LOG,
    "read_iolog": "it replays a trace file from this machine: " + _WHERE,
    "merge_blktrace_file": _WHERE, "replay_redirect": "it sends the I/O to another device",
    "exec_prerun": _COMMAND, "exec_postrun": _COMMAND, "trigger": _COMMAND,
    "trigger_file": _COMMAND, "trigger_remote": _COMMAND, "trigger_timeout": _COMMAND,
    "profile": "it replaces the job with one of fio's built-in ones",
    "uid": "it switches the job to another user", "gid": "it switches the job to another group",
    "cgroup": "DiskLab places the tool in a memory cgroup itself (page_cache_limit)",
    "cgroup_weight": "DiskLab places the tool in a memory cgroup itself (page_cache_limit)",
    "cgroup_nodelete": "DiskLab places the tool in a memory cgroup itself (page_cache_limit)",
    "ioscheduler": "a [[config]]'s scheduler sets the device's I/O scheduler",
    "stats": _FIGURES, "gtod_reduce": _FIGURES, "disable_lat": _FIGURES,
    "disable_clat": _FIGURES, "disable_slat": _FIGURES, "disable_bw_measurement": _FIGURES,
    "fill_device": "it writes until the target's filesystem is full, whatever the plan's "
                   "size says: DiskLab plans and checks the target's space by the test's size",
}
# fio's other names for its options (fio 3.33 --cmdhelp=NAME "alias:"): judged as the option
ALIASES = {
    "readwrite": "rw", "blocksize": "bs", "blockalign": "ba", "blocksize_range": "bsrange",
    "blocksize_unaligned": "bs_unaligned", "iodepth_batch_submit": "iodepth_batch",
    "iodepth_batch_complete": "iodepth_batch_complete_min", "io_limit": "io_size",
    "fill_fs": "fill_device", "fileoffset": "offset", "nr_files": "nrfiles",
    "timeout": "runtime", "iomem": "mem", "ratemin": "rate_min", "ratecycle": "rate_cycle",
    "wait_for_previous": "stonewall", "disable_bw": "disable_bw_measurement",
    "ss": "steadystate", "ss_dur": "steadystate_duration", "ss_ramp": "steadystate_ramp_time",
}
# fio's command-line switches (fio 3.33 init.c l_opts): not job options; fio acts on them as a
# program (a server, a daemon, a test of its own, its output) before or instead of a job
COMMAND_LINE = (
    "output", "latency-log", "bandwidth-log", "minimal", "output-format", "append-terse",
    "version", "help", "cmdhelp", "enghelp", "showcmd", "readonly", "eta", "eta-interval",
    "eta-newline", "debug", "parse-only", "section", "inflate-log", "alloc-size", "profile",
    "warnings-fatal", "max-jobs", "terse-version", "server", "daemonize", "client",
    "remote-config", "cpuclock-test", "crctest", "memcpytest", "idle-prof", "status-interval",
    "trigger-file", "trigger-timeout", "trigger", "trigger-remote", "aux-path",
    "merge-blktrace-only",
)
_SWITCH = ("one of fio's command-line switches, not a job option: fio acts on it as a program "
           "(a server, a daemon, a test or output of its own), even when only checking a job")
OWN_SWITCHES = ("output", "output-format", "eta")  # the switches the adapter sets itself
# job options that begin a switch's name (getopt takes an exact name before an abbreviation)
_JOB_PREFIXES = ("ba", "mem")
_REFUSED_PREFIXES = (("trigger", _COMMAND), ("write_", _LOG))
# options DiskLab counts (the bytes a case moves, its planned bytes and ETA): read as sizes
SIZE_VALUED = ("io_size", "io_limit", "offset", "offset_increment")
COUNTED = ("io_size", "io_limit", "loops", "number_ios")


def option_problem(name: str) -> str | None:
    """Why an option name is not taken (None: fio judges it)."""
    if not isinstance(name, str) or len(name) > MAX_NAME:
        return "not a fio option name"
    switch = command_line_switch(name)
    if switch is not None and name not in REFUSED:
        return f"`{switch}` is {_SWITCH}" if switch == name else (
            f"it is how fio's command line abbreviates `{switch}`, {_SWITCH}")
    if name in ALIASES:
        problem = option_problem(ALIASES[name])
        return f"{problem} (`{name}` is fio's other name for `{ALIASES[name]}`)" if problem \
            else None
    if name in REFUSED and not _NAME.match(name):  # output-format, as fio's command line has it
        return REFUSED[name]
    if not _NAME.match(name):
        return "not a fio option name (lower-case letters, digits and _)"
    if name in NOT_OPTIONS:
        return f"`{name}` is DiskLab's parameter of the test, not one of fio's options"
    if name in OWN:
        own = OWN[name]
        return (f"set the test's own `{own}` instead: DiskLab reads it (the figures, the "
                "checks, the labels)")
    reason = REFUSED.get(name)
    if reason is None:
        reason = next((r for prefix, r in _REFUSED_PREFIXES if name.startswith(prefix)
                       and (prefix != "write_" or name.endswith("_log"))), None)
    return reason


def command_line_switch(name: str) -> str | None:
    """The fio command-line switch a name (or `--name=value`) says, or is the start of (fio's
    getopt takes an abbreviation), or None."""
    name = name.removeprefix("--").partition("=")[0]
    if name in COMMAND_LINE:
        return name
    if not name or name in _JOB_PREFIXES:
        return None
    return next((s for s in COMMAND_LINE if s.startswith(name)), None)


def foreign_switch(argv: Sequence[str]) -> str | None:
    """The first argument of a fio argv that is a command-line switch DiskLab's adapter does
    not set itself (OWN_SWITCHES), or None: the root helper's last check of what it runs."""
    if not argv or os.path.basename(argv[0]) != "fio":
        return None
    return next((arg for arg in argv[1:] if arg.startswith("--")
                 and command_line_switch(arg) not in (None, *OWN_SWITCHES)), None)


def is_switch(cmdhelp: str) -> bool:
    """Whether `fio --cmdhelp=NAME` (or --enghelp=ENGINE,NAME) describes a switch: an option
    of type 'boolean value' or 'empty or boolean value', set by 1 (or no value)."""
    return any(line.strip().startswith("type:") and "boolean" in line
               for line in cmdhelp.splitlines())


def canonical_name(cmdhelp: str) -> str | None:
    """fio's own name of an option from `fio --cmdhelp=NAME` (its first line 'CANONICAL:
    help', an alias's listed under it), or None: fio has no such job option ("No such
    command")."""
    first = next((line.strip() for line in cmdhelp.splitlines() if line.strip()), "")
    canonical, sep, _help = first.partition(":")
    canonical = canonical.strip()
    return canonical if sep and _NAME.match(canonical) and not first.startswith("No such") \
        else None


def option_value(name: str, value: Any) -> bool | int | float | str:
    """The canonical value of one option (an int, a float, true/false, or text fio reads);
    ValueError says why not. A size DiskLab counts is bytes ('256g' -> 274877906944), so that
    fio and DiskLab read the same number (fio's own kb_base would read '256GB' otherwise).
    true/false are 1/0 and an empty value is 1 (a switch set), as fio writes them (labels
    and exports say `norandommap=1`); the plan check asks fio which options are switches."""
    if isinstance(value, bool) or value == "":
        return 1 if value in (True, "") else 0
    if name in SIZE_VALUED:
        return parse_size(value)
    if isinstance(value, int):
        if abs(value) > MAX_BYTES:
            raise ValueError(f"{value} is beyond what fio reads")
        if name in COUNTED and value < 0:
            raise ValueError(f"{value} is negative")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a finite number")
        return value
    if not isinstance(value, str):
        raise ValueError(f"{type(value).__name__} is not a value fio takes (a number, true or "
                         "false, or text)")
    if len(value) > MAX_VALUE:
        raise ValueError(f"longer than {MAX_VALUE} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError("a control character (a line break ends a job file's line)")
    if "#" in value or ";" in value:
        raise ValueError("a `#` or `;` starts a comment in fio's job files")
    if _SHELL.search(value):
        raise ValueError("a shell's character (| & < > `) or a `..` path: no value of fio's "
                         "needs one, and DiskLab's root helper refuses them")
    if "$" in value:
        raise ValueError("a `$` is expanded from the environment in fio's job files")
    if _PATH.search(value):
        raise ValueError(f"a path ({value!r}): {_WHERE}")
    if name in COUNTED:
        raise ValueError(f"DiskLab counts {name}: give a whole number"
                         + (" or a size such as '256g'" if name.startswith("io_") else ""))
    return value


def spelt(value: bool | int | float | str) -> str:
    """An option's value as fio reads it: true/false as 1/0 (a bare --flag would take the next
    argument as its value), numbers as written."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def passed_options(params: Mapping[str, Any], own: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The case's pass-through options in the plan's order as (name, fio's spelling): its
    parameters that are neither the adapter's own (`own`) nor DiskLab's (`on`, `hosts`)."""
    return [(k, spelt(v)) for k, v in params.items()
            if k not in own and k not in NOT_OPTIONS and v is not None]


def io_bytes(params: Mapping[str, Any], size: int, jobs: int, bs: int) -> int:
    """The bytes one case's jobs move by fio's rules: io_size (else size) per job, times loops,
    capped by number_ios x bs."""
    per_job = params.get("io_size", params.get("io_limit"))
    per_job = int(per_job) if isinstance(per_job, int) and per_job > 0 else size
    loops = params.get("loops")
    per_job *= int(loops) if isinstance(loops, int) and loops > 0 else 1
    ios = params.get("number_ios")
    if isinstance(ios, int) and ios > 0:
        per_job = min(per_job, ios * bs)
    return per_job * jobs


def paced_rate(params: Mapping[str, Any], bs: int) -> tuple[str, float] | None:
    """The option that paces a job and its bytes per second (rate, else rate_iops x bs; the
    first of fio's 'read,write' values), or None: fio goes as fast as the device lets it."""
    for name in ("rate", "rate_iops"):
        value = params.get(name)
        first = str(value).split(",")[0].strip() if value is not None else ""
        try:
            per_second = parse_size(first) if name == "rate" else int(first) * bs
        except ValueError:
            continue
        if per_second > 0:
            return name, float(per_second)
    return None


def files_per_job(params: Mapping[str, Any]) -> int:
    """nrfiles (or fio's other name, nr_files): the files each job splits its size between
    (1 unless the plan says)."""
    n = params.get("nrfiles", params.get("nr_files"))
    return int(n) if isinstance(n, int) and not isinstance(n, bool) and n > 1 else 1


# --- fio's own words ---------------------------------------------------------------------------

_UNRECOGNIZED = re.compile(r"unrecognized option '--?(?P<name>[^=' ]+)(=[^']*)?'")
_BAD = re.compile(r"Bad option <(?P<name>[^=> ]+)")  # a server's words for a job file's line
_HOST = re.compile(r"^<[^>]*> ")  # a server's line, through fio's client
_NOISE = re.compile(r"^(hostname=|fio: job \S+ dropped)")
_FAILED = re.compile(r"failed parsing (?P<name>[^= ]+)=")
_NAMED = re.compile(r"^(?P<name>[a-z][a-z0-9_]*): ")


def parse_only_problems(text: str, names: list[str]) -> list[tuple[str | None, str]]:
    """fio --parse-only's refusals as (option name or None, one line in fio's own words),
    one per option it names; `names` are the plan's pass-through names (a refusal of another
    option, one of DiskLab's own, is said without a name). fio prints "unrecognized option
    '--io_sise=1g'" twice and "Did you mean io_size?" after it; a value's refusal is "NAME:
    <why>" then "fio: failed parsing NAME=VALUE"; a server, through fio's client, "<host> Bad
    option <io_sise=1m>" (the host's prefix and its "job dropped" are left out)."""
    found: dict[str | None, list[str]] = {}
    current: str | None = None
    for raw in text.splitlines():
        line = _HOST.sub("", raw.strip())
        if not line or _NOISE.match(line):
            continue
        m = (_UNRECOGNIZED.search(line) or _BAD.search(line) or _FAILED.search(line)
             or _NAMED.match(line))
        if m:
            current = m["name"] if m["name"] in names else None
            line = _UNRECOGNIZED.sub(lambda u: f"unrecognized option '{u['name']}'", line)
        words = line.removeprefix("fio: ")
        said = found.setdefault(current, [])
        if words not in said:
            said.append(words)
    return [(name, "; ".join(lines)) for name, lines in found.items()]


def option_list(cmdhelp: str) -> list[tuple[str, str]]:
    """fio --cmdhelp=all's options as (name, what it does), the taken ones only: the Test
    matrix offers them as completion."""
    out = []
    for line in cmdhelp.splitlines():
        name, sep, what = line.strip().partition(":")
        name = name.strip()
        if sep and _NAME.match(name) and option_problem(name) is None:
            out.append((name, what.strip()))
    return out
