"""fio's own job options in a plan ([test.fio_options]): taken or refused with the reason,
their values made safe, spelt after DiskLab's own options, counted in the planned bytes and the
ETA, swept as an axis, and fio --parse-only's words read back at the option's key (issue 50).
The tests that ask the installed fio start a process (make check skips them; make test runs)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disklab.core.plan.matrix import expand
from disklab.core.plan.parse import case_params, parse_plan
from disklab.core.root_helper.toolruns import NEVER, _check_argv
from disklab.core.run.progress import OverallProgress, Work
from disklab.core.run.summary import check_plan, estimate_seconds, summary_text
from disklab.core.tools.base import Command, RunTarget
from disklab.core.tools.fio import FioAdapter, passthrough
from disklab.core.tools.fio.client import job_text
from disklab.core.tools.fio.passthrough import (
    ALIASES,
    REFUSED,
    canonical_name,
    command_line_switch,
    option_list,
    option_problem,
    option_value,
    parse_only_problems,
    spelt,
)
from disklab.core.vocab.errors import PlanError, SafetyError
from disklab.core.vocab.units import GiB
from tests.helpers import HOSTILE, examples

FIO = FioAdapter()


def plan_text(directory: Path, options: str, test: str = 'rw = "randwrite"\nsize = "16m"') -> str:
    return (f'name = "opts"\n[target]\ndirectory = "{directory}"\n\n[[test]]\ntool = "fio"\n'
            f"{test}\n\n[test.fio_options]\n{options}\n")


def problems(text: str) -> list[tuple[str, str, int | None]]:
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    return [(p.key, p.message, p.line) for p in e.value.problems]


# --- which options are taken ---------------------------------------------------------------------

@pytest.mark.parametrize(("name", "reason"), [
    ("exec_prerun", "runs a command"), ("exec_postrun", "runs a command"),
    ("output", "DiskLab sets fio's output"), ("output-format", "DiskLab sets fio's output"),
    ("write_bw_log", "no fio log"), ("write_lat_log", "no fio log"),
    ("filename", "targets say where"), ("directory", "targets say where"),
    ("bs", "the test's own `bs`"), ("blocksize", "the test's own `bs`"),
    ("timeout", "the test's own `runtime`"), ("ioengine", "the test's own `ioengine`"),
    ("cgroup", "page_cache_limit"), ("uid", "another user"), ("on", "DiskLab's parameter"),
])
def test_options_diskLab_sets_or_that_run_commands_are_refused_with_the_reason(
        name: str, reason: str) -> None:
    said = option_problem(name)
    assert said is not None and reason in said


@pytest.mark.parametrize("name", ["io_size", "buffer_compress_percentage", "norandommap",
                                  "randrepeat", "rate_iops", "thinktime", "verify",
                                  "offset_increment", "nrfiles", "percentile_list",
                                  "cpus_allowed", "write_barrier"])
def test_the_options_a_study_reaches_for_are_fios_to_judge(name: str) -> None:
    assert option_problem(name) is None


def test_values_are_made_safe_for_a_command_line_and_a_job_file() -> None:
    assert option_value("io_size", "256g") == 256 * GiB  # bytes: fio reads what DiskLab counts
    assert option_value("norandommap", True) == 1  # as fio writes it: labels say 1
    assert option_value("norandommap", "") == 1  # an empty value sets a switch
    assert option_value("cpus_allowed", "0-1") == "0-1"
    for bad in ("1\nexec_prerun=/bin/sh", "a\x00b", "$HOME", "mmaphuge:/hugepages/f",
                "/etc/passwd", "x" * 600, "a|b", "`id`", "../up", "1#2"):
        with pytest.raises(ValueError):
            option_value("mem", bad)
    with pytest.raises(ValueError, match="DiskLab counts loops"):
        option_value("loops", "3x")
    with pytest.raises(ValueError):
        option_value("thinktime", [1])  # a list inside a value: not fio's


@settings(HOSTILE, max_examples=examples(400))
@given(name=st.text(max_size=80), value=st.one_of(st.text(max_size=700), st.integers(),
                                                  st.floats(), st.booleans()))
def test_any_name_and_value_are_taken_or_refused_with_a_reason(name: str, value: object) -> None:
    """Never a traceback: a name is refused in words or judged by fio; a value taken is one
    argument fio reads and one job-file line."""
    if option_problem(name) is not None:
        return
    try:
        taken = option_value(name, value)
    except ValueError as e:
        assert str(e)
        return
    text = spelt(taken)
    assert "\n" not in text and "\r" not in text and "\x00" not in text
    assert not NEVER.search(f"--{name}={text}")  # what the root helper would refuse


# --- spelt after DiskLab's options, on the command line and in the job file --------------------

def case(**extra: object) -> dict:
    params = {k: s.default for k, s in FIO.params.items()}
    return {**params, "rw": "randwrite", "size": 16 << 20, **extra}


def test_options_follow_the_engine_on_the_command_line_and_in_the_job_file(
        tmp_path: Path) -> None:
    params = case(ioengine="io_uring", hipri=True, io_size=32 << 20,
                  buffer_compress_percentage=50)
    argv = FIO.build_command(params, RunTarget(str(tmp_path), "c1-r1")).argv
    assert argv.index("--ioengine=io_uring") < argv.index("--hipri=1")
    assert "--io_size=33554432" in argv and "--buffer_compress_percentage=50" in argv
    text = job_text(params, str(tmp_path), "c1-r1", "h1")
    assert "hipri=1\n" in text and "io_size=33554432\n" in text


def test_a_read_case_lays_out_its_files_with_the_options_that_fill_and_split_them(
        tmp_path: Path) -> None:
    params = case(rw="randread", nrfiles=4, buffer_compress_percentage=50, norandommap=True)
    command = FIO.build_command(params, RunTarget(str(tmp_path), "t"))
    layout = command.prepare[0]
    assert "--nrfiles=4" in layout and "--buffer_compress_percentage=50" in layout
    assert "--norandommap=1" not in layout  # not a layout option
    assert any(a.endswith(".$jobnum.$filenum.fio") for a in command.argv)
    assert sum(f.endswith(".fio") for f in command.files) == 4  # each removed afterwards


def test_the_planned_bytes_are_what_fio_moves() -> None:
    def planned(**extra: object) -> int | None:
        return FIO.build_command(case(**extra), RunTarget("/tmp", "t")).planned_bytes

    assert planned() == 16 << 20
    assert planned(io_size=256 << 20, numjobs=2) == 512 << 20
    assert planned(loops=3) == 48 << 20
    assert planned(number_ios=10, bs=4096) == 40960


# --- fio's own words -----------------------------------------------------------------------------

MISTYPED = ("fio: unrecognized option '--io_sise=1g'\nfio: unrecognized option '--io_sise=1g'\n"
            "Did you mean io_size?\n")
OUT_OF_RANGE = ("buffer_compress_percentage: max value out of range: 150 (100 max)\n"
                "fio: failed parsing buffer_compress_percentage=150\n")


def test_fios_refusal_is_one_line_at_the_option_in_its_own_words() -> None:
    assert parse_only_problems(MISTYPED, ["io_sise"]) == [
        ("io_sise", "unrecognized option 'io_sise'; Did you mean io_size?")]
    assert parse_only_problems(OUT_OF_RANGE, ["buffer_compress_percentage"]) == [
        ("buffer_compress_percentage", "buffer_compress_percentage: max value out of range: "
         "150 (100 max); failed parsing buffer_compress_percentage=150")]


def test_the_completion_offers_fios_options_but_the_refused() -> None:
    listed = dict(option_list("description             : Text job description\n"
                              "  norandommap           : Accept potential duplicate random "
                              "blocks\nexec_prerun             : Execute this file prior\n"
                              "io_size                 : Total size of I/O to be performed\n"))
    assert listed == {"description": "Text job description",
                      "norandommap": "Accept potential duplicate random blocks",
                      "io_size": "Total size of I/O to be performed"}


# --- the plan ------------------------------------------------------------------------------------

def test_a_list_is_an_axis_and_labels_the_cases(tmp_path: Path) -> None:
    plan = parse_plan(plan_text(tmp_path, 'io_size = "32m"\nbuffer_compress_percentage = [0, 50]'
                                "\nnorandommap = true")).plan
    cases = expand(plan)
    assert [c.params["buffer_compress_percentage"] for c in cases] == [0, 50]
    assert "buffer_compress_percentage" in plan.tests[0].axes
    assert "io_size=32m" in cases[0].title()


def test_refused_options_are_named_at_their_plan_line(tmp_path: Path) -> None:
    text = plan_text(tmp_path, 'exec_prerun = "true"\noutput = "x.json"\nmem = "mmap:/dev/x"')
    found = problems(text)
    assert [(k, line) for k, _m, line in found] == [
        ("test[1].fio_options.exec_prerun", 11), ("test[1].fio_options.output", 12),
        ("test[1].fio_options.mem", 13)]
    assert "runs a command" in found[0][1] and "sets fio's output" in found[1][1]


def test_the_table_must_be_a_table(tmp_path: Path) -> None:
    text = (f'[target]\ndirectory = "{tmp_path}"\n[[test]]\ntool = "fio"\nrw = "write"\n'
            'size = "1m"\nfio_options = "io_size=1g"\n')
    assert problems(text)[0][:2] == ("test[1].fio_options",
                                     "must be a table ([test.fio_options]) of option = value")


def test_a_mistyped_option_is_refused_in_fios_words_before_anything_runs(
        tmp_path: Path) -> None:
    """The installed fio asked (fio --parse-only): both of fio's refusals, each at its line."""
    found = problems(plan_text(tmp_path, 'io_sise = "32m"\nbuffer_compress_percentage = 150'))
    assert found == [
        ("test[1].fio_options.io_sise",
         "fio refuses it: unrecognized option 'io_sise'; Did you mean io_size?", 11),
        ("test[1].fio_options.buffer_compress_percentage",
         "fio refuses it: buffer_compress_percentage: max value out of range: 150 (100 max); "
         "failed parsing buffer_compress_percentage=150", 12)]
    assert not list(tmp_path.iterdir())  # nothing ran


def test_an_engine_option_is_judged_with_the_cases_engine(tmp_path: Path) -> None:
    test = 'rw = "randread"\nsize = "16m"\nioengine = ["io_uring", "psync"]'
    found = problems(plan_text(tmp_path, "hipri = true", test))
    assert found[0][0] == "test[1].fio_options.hipri"
    assert "unrecognized option 'hipri'" in found[0][1]


def test_the_privileged_helper_takes_and_refuses_the_same_options() -> None:
    taken = case_params("fio", {"rw": "write", "size": 1 << 20, "io_size": "2m",
                                "norandommap": True})
    assert taken["io_size"] == 2 << 20 and taken["norandommap"] == 1
    with pytest.raises(PlanError) as e:
        case_params("fio", {"rw": "write", "size": 1 << 20, "exec_prerun": "/bin/sh"})
    assert e.value.problems[0].key == "exec_prerun"


def test_a_256_gib_io_size_over_a_16_gib_file_plans_with_an_honest_eta(tmp_path: Path) -> None:
    """Planned, not run: the run moves 256 GiB, not 16 GiB, and the estimate says so."""
    text = plan_text(tmp_path, 'io_size = "256g"', 'rw = "write"\nsize = "16g"').replace(
        f'directory = "{tmp_path}"', f'image = {{ path = "{tmp_path}/x.img", size = "32g" }}')
    summary = check_plan(text, None)  # an image's size is its room: not this disk's free space
    assert not summary.errors, summary.errors
    assert summary.bytes == 256 * GiB
    assert estimate_seconds(summary) == pytest.approx(256 * GiB / (200 << 20))  # 21 min 51 s
    assert "about 275 GB moved by 1 size-based run(s); estimated 21 min 51 s" in \
        summary_text(summary)


def test_showcmd_reads_the_job_file_as_the_command_line(tmp_path: Path) -> None:
    """fio itself reads the client's job file to the same options (fio --showcmd)."""
    params = case(io_size=32 << 20, norandommap=True, buffer_compress_percentage=50,
                  rate_iops="500")
    job = tmp_path / "h1.job"
    job.write_text(job_text(params, str(tmp_path), "c1-r1", "h1"))
    shown = subprocess.run(["fio", "--showcmd", str(job)], capture_output=True, text=True,
                           check=True).stdout.split()
    for option in ("--io_size=33554432", "--norandommap=1", "--buffer_compress_percentage=50",
                   "--rate_iops=500"):
        assert option in shown


def test_the_data_journal_warning_counts_what_io_size_writes(tmp_path: Path) -> None:
    """16 MiB files under a 64 MiB page-cache limit: no warning; 256 MiB written through them
    (io_size) is what the journal holds until it commits: warned of."""
    def warnings(options: str) -> list[str]:
        text = (f'page_cache_limit = "64m"\n[target]\nimage = {{ path = "{tmp_path}/x.img", '
                'size = "1g" }\n[[config]]\nlabel = "journal"\nfs = "ext4"\n'
                'mount = ["data=journal", "commit=300"]\n[[test]]\ntool = "fio"\n'
                f'rw = "write"\nsize = "16m"\n[test.fio_options]\n{options}\n')
        return [p.message for p in parse_plan(text).warnings if p.key == "config[1].mount"]

    assert warnings("norandommap = true") == []
    (said,) = warnings('io_size = "256m"')
    assert "writes 256m (io_size or loops over its files)" in said


def test_the_live_progress_and_eta_count_io_size_and_read_a_rate_limited_line() -> None:
    """fio's percentage is of io_size (fio 3.33, size=4m io_size=64m rate=16m printed this
    line 3 s into its 4 s); the case's done bytes and the session's ETA follow it."""
    params = case(size=4 << 20, io_size=64 << 20, bs=65536, rate="16m")
    planned = FIO.build_command(params, RunTarget("/tmp", "t")).planned_bytes
    assert planned == 64 << 20
    update = FIO.progress_parser(params).feed(
        "stdout", "Jobs: 1 (f=1), 0B/s-16.0MiB/s: [W(1)][80.0%][w=16.0MiB/s][w=256 IOPS]"
        "[eta 00m:01s]")
    assert update is not None and update.done_bytes == int(0.8 * (64 << 20))
    assert update.rate == 16 << 20
    overall = OverallProgress(Work.of([(None, planned)]), start=0.0)
    overall.start_run(0.0, None, planned)
    overall.update(measured=3.0, done_bytes=update.done_bytes)
    assert overall.estimate(3.0).eta == pytest.approx(0.75, rel=0.01)  # 12.8 MiB at 16 MiB/s


def test_a_servers_refusal_through_fios_client_is_read_without_the_hosts_prefix() -> None:
    """fio 3.33's client printed this for a job file with io_sise=1m (fio --client
    --parse-only)."""
    said = ("hostname=vm, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1\n"
            "<vm> Bad option <io_sise=1m>\n<vm> Did you mean io_size?\n"
            "<vm> fio: job x dropped\n")
    assert parse_only_problems(said, ["io_sise"]) == [
        ("io_sise", "Bad option <io_sise=1m>; Did you mean io_size?")]
    assert parse_only_problems(said.splitlines()[0], ["io_sise"]) == []


def test_a_paced_case_is_said_to_last_what_its_rate_makes_it() -> None:
    """256 GiB at rate_iops = 5000 of 4 KiB: 3.7 h, whatever a device's speed (a warning of
    the plan check at the option's key)."""
    advice = FIO.advice(case(size=16 * GiB, io_size=256 * GiB, bs=4096, rate_iops=5000))
    assert advice == [("fio_options.rate_iops", "fio paces each job at 19.5 MiB/s: this case "
                       "lasts about 3.7 h whatever the device's speed (the plan's estimate "
                       "counts it so)")]
    assert FIO.advice(case(rate="16m", runtime=30.0)) == []  # time-based: its runtime says


# --- fio's command-line switches, its aliases, switches set by an empty value ------------------

@pytest.mark.parametrize("name", [
    "server", "client", "daemonize", "section", "debug", "cmdhelp", "enghelp", "crctest",
    "memcpytest", "readonly", "minimal", "showcmd", "version", "help",
    "crc", "serv", "daemon", "sect", "cmdh", "memcpy", "readon", "merge", "trigger", "alloc"])
def test_fios_command_line_switches_and_their_abbreviations_are_refused(name: str) -> None:
    """fio acts on these at once, even with --parse-only (`--server` listens, `--crc=md5` runs
    crctest: fio's getopt takes an abbreviation), so no name that says one is taken."""
    said = option_problem(name)
    assert said is not None and ("command-line switch" in said or "command" in said)
    assert command_line_switch(name) is not None


def _fio(*args: str) -> str:
    return subprocess.run(["fio", *args], capture_output=True, text=True, check=False).stdout


def test_no_job_option_the_installed_fio_lists_is_taken_for_a_switch() -> None:
    """Every job option fio lists (and io_uring's and libaio's own) stays fio's to judge,
    `ba` and `mem` too, though they begin `bandwidth-log` and `memcpytest`."""
    listed = [line.split(":")[0].strip() for line in _fio("--cmdhelp=all").splitlines()
              if ":" in line]
    listed += [line.split(":")[0].strip() for engine in ("io_uring", "libaio")
               for line in _fio(f"--enghelp={engine}").splitlines() if ":" in line]
    assert len(listed) > 200 and "ba" in listed and "hipri" in listed
    assert [n for n in listed if n not in REFUSED and command_line_switch(n)] == []


def test_the_aliases_are_the_installed_fios() -> None:
    for alias, name in ALIASES.items():
        assert canonical_name(_fio(f"--cmdhelp={alias}")) == name, alias
    assert canonical_name(_fio("--cmdhelp=norandomm")) is None  # "No such command"


@pytest.mark.parametrize(("options", "name", "reason"), [
    ("disable_bw = 1", "disable_bw", "drops figures DiskLab reads"),
    ("fill_fs = true", "fill_fs", "the target's filesystem is full"),
    ("fill_device = true", "fill_device", "the target's filesystem is full"),
])
def test_an_alias_is_refused_as_the_option_it_stands_for(
        tmp_path: Path, options: str, name: str, reason: str) -> None:
    ((key, said, line),) = problems(plan_text(tmp_path, options))
    assert key == f"test[1].fio_options.{name}" and line == 11 and reason in said


def test_an_alias_this_diskLab_does_not_list_is_resolved_by_fio(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An alias a newer fio adds: fio --cmdhelp=NAME names its option, judged as that one."""
    monkeypatch.delitem(passthrough.ALIASES, "disable_bw")
    ((key, said, _line),) = problems(plan_text(tmp_path, "disable_bw = 1"))
    assert key == "test[1].fio_options.disable_bw"
    assert "drops figures" in said and "other name for `disable_bw_measurement`" in said
    assert parse_plan(plan_text(tmp_path, 'io_limit = "32m"')).plan.tests[0].params[
        "io_limit"] == 32 << 20


def test_a_name_fio_does_not_list_is_refused_before_fio_reads_the_job(tmp_path: Path) -> None:
    """fio's command line would take `norandomm` for norandommap (an abbreviation): only the
    names fio lists as job options are put to it."""
    assert problems(plan_text(tmp_path, "norandomm = 1")) == [
        ("test[1].fio_options.norandomm",
         "fio refuses it: unrecognized option 'norandomm'; Did you mean norandommap?", 11)]


def test_the_privileged_helper_refuses_fios_switches() -> None:
    with pytest.raises(PlanError) as e:
        case_params("fio", {"rw": "write", "size": 1 << 20, "server": "127.0.0.1,8799"})
    assert e.value.problems[0].key == "server"
    assert "command-line switch" in e.value.problems[0].message
    for arg in ("--server=127.0.0.1,8799", "--daemonize=d.pid", "--crc=md5", "--section=x"):
        with pytest.raises(SafetyError, match="not one DiskLab's adapter produces"):
            _check_argv(Command(argv=("fio", "--name=x", arg)))
    built = FIO.build_command(case(norandommap=1), RunTarget("/tmp", "t"))
    _check_argv(built)  # the adapter's own --output, --output-format and --eta pass


def test_true_or_an_empty_value_sets_a_switch_and_nothing_else(tmp_path: Path) -> None:
    """An empty value (the window's row left empty) sets a switch, spelt 1 as fio writes it;
    on an option that is not a switch it asks for a value (fio would read true as 1)."""
    checked = parse_plan(plan_text(tmp_path, 'norandommap = ""\nrefill_buffers = true'))
    (one,) = expand(checked.plan)
    assert one.params["norandommap"] == 1 and one.params["refill_buffers"] == 1
    argv = FIO.build_command(one.params, RunTarget(str(tmp_path), "t")).argv
    assert "--norandommap=1" in argv and "--refill_buffers=1" in argv
    for options in ('buffer_compress_percentage = ""', "io_size = true"):
        ((key, said, line),) = problems(plan_text(tmp_path, options))
        assert key.startswith("test[1].fio_options.") and line == 11
        assert said.startswith("give a value:"), said


def test_an_alias_counts_as_its_option() -> None:
    """nr_files splits the files as nrfiles does; io_limit counts as io_size."""
    command = FIO.build_command(case(rw="randread", nr_files=4, io_limit=32 << 20),
                                RunTarget("/tmp", "t"))
    assert sum(f.endswith(".fio") for f in command.files) == 4
    assert command.planned_bytes == 32 << 20
