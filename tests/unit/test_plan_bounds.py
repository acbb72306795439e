"""Plans that would exhaust the machine, or hold numbers too large for a float or for SQLite, are
refused by `plan validate` with exit 2 and the TOML key and line, before anything is expanded."""

from __future__ import annotations

import math
import sys
import textwrap
from pathlib import Path

import pytest

from disklab.cli.main import main
from disklab.core import tools
from disklab.core.fs.options import MKFS_OPTIONS
from disklab.core.plan.parse import parse_plan
from disklab.core.vocab.errors import PlanError
from disklab.core.vocab.units import MiB, parse_size
from tests.helpers import run_measured

ENGINE = """\
{top}
[target]
directory = "{dir}"

[[test]]
tool = "engine"
mode = "write"
size = "1m"
{extra}
"""


def _plan(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plan.toml"
    path.write_text(text)
    return path


def _validate(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["plan", "validate", str(_plan(tmp_path, text)),
                 "--library", str(tmp_path / "lib" / "library.sqlite3")])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("repeats", ["9223372036854775807", str(2**64), str(10**30), "100001"])
def test_huge_repeats_are_refused_at_once_without_growing(tmp_path: Path, repeats: str) -> None:
    """The issue's plan grew to 3 GB in `run`; validate must say no in a moment, in little
    memory (measured on a child process)."""
    text = ENGINE.format(top=f"repeats = {repeats}", dir=tmp_path, extra="")
    done, peak = run_measured([sys.executable, "-m", "disklab.cli.main", "plan", "validate",
                               str(_plan(tmp_path, text)), "--library",
                               str(tmp_path / "library.sqlite3")], timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "line 1: repeats:" in done.stderr
    assert "Traceback" not in done.stderr
    assert peak < 300 * MiB


def test_a_large_matrix_is_checked_and_summed_one_run_at_a_time(tmp_path: Path) -> None:
    """40000 runs validate in the memory of a few: no list of every run's command is made
    (it took 16 KiB a run)."""
    axes = ("size = [" + ", ".join(f'"{i}m"' for i in range(1, 201)) + "]\n"
            "runtime = [" + ", ".join(f'"{i}s"' for i in range(1, 101)) + "]")
    text = ENGINE.format(top="repeats = 2", dir=tmp_path, extra=axes).replace(
        'size = "1m"\n', "")
    done, peak = run_measured([sys.executable, "-m", "disklab.cli.main", "plan", "validate",
                               str(_plan(tmp_path, text)), "--library",
                               str(tmp_path / "library.sqlite3")], timeout=120)
    assert done.returncode == 0, done.stderr
    assert "20000 case(s) × 2 repeat(s) = 40000 run(s)" in done.stdout
    assert peak < 200 * MiB


def test_fio_numjobs_beyond_what_fio_accepts_is_refused(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    text = textwrap.dedent(f"""\
        [target]
        directory = "{tmp_path}"

        [[test]]
        tool = "fio"
        rw = "write"
        size = "1m"
        numjobs = 2147483648
        """)
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    (problem,) = e.value.problems
    assert (problem.key, problem.line) == ("test[1].numjobs", 8)
    assert "maximum" in problem.message


def test_every_numeric_parameter_of_every_tool_has_an_upper_bound() -> None:
    for name in tools.tool_names():
        for key, spec in tools.get_adapter(name).params.items():
            if spec.kind in ("size", "int", "float", "duration"):
                assert spec.maximum is not None and math.isfinite(spec.maximum), (name, key)
                assert spec.maximum < 2**63, (name, key)
    for key, option in MKFS_OPTIONS.items():
        if option.kind in ("size", "int", "float") and not option.choices:
            assert option.maximum is not None and option.maximum < 2**63, key


def test_a_matrix_with_too_many_runs_is_refused_before_expansion(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """8 axes of 10 values: 10**8 cases, counted, never made."""
    axes = "\n".join(f"{k} = [{', '.join(v)}]" for k, v in {
        "block_size": [f'"{2**i}k"' for i in range(1, 11)],
        "size": [f'"{i}m"' for i in range(1, 11)],
        "streams": [str(i) for i in range(1, 11)],
        "queue_depth": [str(i) for i in range(1, 11)],
        "runtime": [f'"{i}s"' for i in range(1, 11)],
        "sync": ["true", "false"] * 1,
    }.items())
    text = ENGINE.format(top="repeats = 3", dir=tmp_path, extra=axes).replace(
        'size = "1m"\n', "")
    code, err = _validate(tmp_path, text, capsys)
    assert code == 2
    assert "test[1]:" in err and "runs" in err


def test_the_run_cap_counts_configurations_tests_and_repeats(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    axis = "streams = [" + ", ".join(str(i) for i in range(1, 201)) + "]\n"
    axis += "queue_depth = [" + ", ".join(str(i) for i in range(1, 201)) + "]"
    text = ENGINE.format(top="repeats = 3", dir=tmp_path, extra=axis)
    code, err = _validate(tmp_path, text, capsys)
    assert code == 2
    assert "120000 runs" in err


def test_a_case_larger_than_the_free_space_of_the_target_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = ENGINE.format(top="", dir=tmp_path, extra="").replace('size = "1m"',
                                                                 'size = "500t"')
    code, err = _validate(tmp_path, text, capsys)
    assert code == 2
    assert "line 8: test[1].size:" in err and "free" in err


@pytest.mark.parametrize("size", ['"99999999999999999999g"', '"' + "9" * 400 + 'm"',
                                  "99999999999999999999999", '"1e999g"'])
def test_sizes_too_large_for_sqlite_or_a_float_name_the_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], size: str) -> None:
    text = ENGINE.format(top="", dir=tmp_path, extra="").replace('size = "1m"',
                                                                 f"size = {size}")
    code, err = _validate(tmp_path, text, capsys)
    assert code == 2, err
    assert "line 8: test[1].size:" in err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400", '"' + "9" * 400 + 's"'])
def test_durations_that_are_not_finite_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    text = ENGINE.format(top="", dir=tmp_path, extra=f"runtime = {value}")
    code, err = _validate(tmp_path, text, capsys)
    assert code == 2, err
    assert "line 9: test[1].runtime:" in err


def test_parse_size_refuses_sizes_beyond_what_sqlite_holds() -> None:
    assert parse_size("8191p") == 8191 * 2**50
    assert parse_size("1.5k") == 1536
    for text in ("99999999999999999999g", "9" * 400 + "m", "9" * 5000, "8192p"):
        with pytest.raises(ValueError, match="too large"):
            parse_size(text)
    with pytest.raises(ValueError, match="too large"):
        parse_size(2**63)
    with pytest.raises(ValueError, match="too many digits"):
        parse_size("1." + "9" * 5000)


# --- TOML syntax errors: each one with its line -----------------------------------------------

# (text, the line reported: where the error is, or for an error at the end of the document (an
# unclosed string or array) its last line that is not blank, where the unclosed thing often starts)
SYNTAX_ERRORS = [
    ('name = "x"\nrepeats = \n', 2),
    ('name = "x"\nrepeats = 1 2\n', 2),
    ('name = "x\n', 1),
    ('a = 1\na = 2\n', 2),
    ('[target]\n[target]\n', 2),
    ('x = [1, 2\n', 1),
    ('x = {a = 1\n', 1),
    ('x = {a = 1,}\n', 1),
    ('\n\nx = 1979-13-40\n', 3),
    ('x = 0x\n', 1),
    ('x = 1__0\n', 1),
    ('x = """abc\n\n', 1),
    ("x = '''abc\n", 1),
    ('[a\nb = 1\n', 1),
    ('[[test]\n', 1),
    ('= 1\n', 1),
    ('x.= 1\n', 1),
    ('x = "\\q"\n', 1),
    ('x = tru\n', 1),
    ('x = 1\n\n\ny', 4),
    ('x = "a"\n\n"y', 3),
    ('x = [\n1,\n2,\n', 3),
    ('x = "\x01"\n', 1),
    ('a.b = 1\na = 2\n', 2),
    ('x = ' + '[' * 2000 + ']' * 2000 + '\n', 1),
    ('a = 1\nrepeats = ' + '9' * 5000 + '\n', 2),
]


@pytest.mark.parametrize(("text", "line"), SYNTAX_ERRORS)
def test_toml_syntax_errors_are_reported_with_their_line(text: str, line: int) -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    (problem,) = e.value.problems
    assert problem.line == line, str(problem)
    assert "TOML" in problem.message


# --- image targets: where the tools' files go, which key the warnings name ---------------------

def _image_plan(tmp_path: Path) -> str:
    return textwrap.dedent(f"""\
        [target]
        image = {{ path = "{tmp_path / 'scratch.img'}", size = "256m" }}

        [[config]]
        label = "ext4"
        fs = "ext4"

        [[test]]
        tool = "dd"
        mode = "write"
        size = "1m"
        """)


def test_plan_show_puts_an_image_targets_files_under_the_mountpoint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _plan(tmp_path, _image_plan(tmp_path))
    assert main(["plan", "show", str(path), "--library", str(tmp_path / "l.sqlite3")]) == 0
    out = capsys.readouterr().out
    (run,) = [line for line in out.splitlines() if line.strip().startswith("run:")]
    assert "disklab-mnt-" in run
    assert str(tmp_path / "scratch.img") + "/" not in run


def test_the_library_on_target_warning_names_the_image_key(tmp_path: Path) -> None:
    checked = parse_plan(_image_plan(tmp_path), library=str(tmp_path / "library.sqlite3"))
    keys = [w.key for w in checked.warnings if "library" in w.message]
    assert keys == ["target.image"]


# --- a corpus of hostile plans: exit 2 with a key, never a traceback ---------------------------

def _hostile(d: Path) -> list[str]:
    top = f'[target]\ndirectory = "{d}"\n'
    engine = '[[test]]\ntool = "engine"\nmode = "write"\n'
    fio = '[[test]]\ntool = "fio"\nrw = "write"\nsize = "1m"\n'
    iozone = '[[test]]\ntool = "iozone"\nfile_size = "1m"\n'
    bonnie = '[[test]]\ntool = "bonnie"\n'
    dd = '[[test]]\ntool = "dd"\nmode = "write"\n'
    nines = "9" * 400
    plans = [
        f"repeats = {2**63 - 1}\n{top}{engine}size = '1m'\n",
        f"repeats = -{2**63}\n{top}{engine}size = '1m'\n",
        f"repeats = 1.5\n{top}{engine}size = '1m'\n",
        f"repeats = 'many'\n{top}{engine}size = '1m'\n",
        f"repeats = 0\n{top}{engine}size = '1m'\n",
        f"{top}{engine}size = '{nines}m'\n",
        f"{top}{engine}size = '99999999999999999999g'\n",
        f"{top}{engine}size = {nines}\n",
        f"{top}{engine}size = -1\n",
        f"{top}{engine}size = '1m'\nstreams = {2**31}\n",
        f"{top}{engine}size = '1m'\nqueue_depth = {2**40}\n",
        f"{top}{engine}size = '1m'\nstreams = 256\nqueue_depth = 256\n",
        f"{top}{engine}size = '1m'\nblock_size = '{nines}k'\n",
        f"{top}{engine}size = '1m'\nruntime = nan\n",
        f"{top}{engine}size = '1m'\nruntime = inf\n",
        f"{top}{engine}size = '1m'\nruntime = '{nines}h'\n",
        f"{top}{engine}size = ['1m', '{nines}m']\n",
        f"{top}{engine}size = '1m'\nstreams = [" + ", ".join(["1"] * 100001) + "]\n",
        f"{top}{fio}numjobs = 2147483648\n",
        f"{top}{fio}numjobs = {2**64}\n",
        f"{top}{fio}iodepth = {2**31}\n",
        f"{top}{fio}fsync = {2**63}\n",
        f"{top}{fio}bs = '{nines}'\n",
        f"{top}{fio}runtime = {10**30}\n",
        f"{top}{fio}ramp_time = -inf\n",
        f"{top}{fio}rwmixread = {2**70}\n",
        f"{top}{iozone}threads = {2**31}\n",
        f"{top}{iozone}record_size = '{nines}k'\n",
        f"{top}{iozone}auto = true\nmax_file_size = '99999999999999999999g'\n",
        f"{top}{bonnie}size = '{nines}g'\n",
        f"{top}{bonnie}size = '1g'\nfiles = {2**40}\n",
        f"{top}{bonnie}size = '1g'\nram = '{nines}'\n",
        f"{top}{dd}size = '{nines}'\n",
        f"{top}{dd}size = '1m'\nblock_size = {2**62}\n",
        f"{top}{dd}size = '1m'\nblock_size = '1e3'\n",
        f'[target]\nimage = {{ path = "{d}/i.img", size = "{nines}g" }}\n{dd}size = "1m"\n',
        f'[target]\nimage = {{ path = "{d}/i.img", size = "{nines}" }}\n{dd}size = "1m"\n',
        f'[target]\ndirectory = {nines}\n{dd}size = "1m"\n',
        f"{top}{dd}size = '1m'\n" + "[[test]]\n" * 3,
        'x = "\n',
        "[target\n",
        "= 1\n",
        "x = " + "[" * 5000 + "]" * 5000 + "\n",
        "x = {" * 3000 + "}" * 3000 + "\n",
        "\x00",
        f"repeats = {'9' * 5000}\n{top}{engine}size = '1m'\n",
        f"{top}{engine}size = '1.{'9' * 5000}m'\n",
        *(f'[target]\nimage = {{ path = "{d}/i.img", size = "1g" }}\n[[config]]\n'
          f'label = "a"\nfs = "{fs}"\n{option}\n{dd}size = "1m"\n'
          for fs, option in (("ext4", f"mkfs = {{ stride = {2**70} }}"),
                             ("ext4", "mkfs = { reserved_percent = nan }"),
                             ("ext4", f"mkfs = {{ journal_size = '{nines}m' }}"),
                             ("xfs", f"mkfs = {{ log_size = {2**40} }}"),
                             ("ext4", f'mount = ["commit={"9" * 5000}"]'),
                             ("btrfs", f'mount = ["compress=zstd:{"9" * 5000}"]'))),
    ]
    return plans


def test_hostile_plans_all_give_exit_2_with_a_key_never_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plans = _hostile(tmp_path)
    assert len(plans) >= 40
    for i, text in enumerate(plans):
        code, err = _validate(tmp_path, text, capsys)
        assert code == 2, (i, text[:200], err)
        problems = [line for line in err.splitlines()[1:] if line.strip()]
        assert problems and all(":" in p for p in problems), (i, err)
        assert "Traceback" not in err and "Error:" not in err.split("\n", 1)[0], (i, err)
