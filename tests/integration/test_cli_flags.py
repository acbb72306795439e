"""Flags that mean what they say (issue 46): --quiet is quieter, a Ctrl-C while the command
line is built is one line, a closed pipe under `run --json` cancels the run and says so in the
exit code, and only run, import and start make a library."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from disklab.core.library import Library

PLAN = """\
name = "flags"
repeats = 1
drop_caches = false

[target]
directory = "{dir}"

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = "64k"
size = "{size}"
streams = 1
queue_depth = 1
direct = false
"""


def disklab(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=300, **kw)


def plan_file(tmp_path: Path, size: str = "8m") -> Path:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(dir=work, size=size))
    return plan


def test_quiet_run_prints_the_results_and_no_events(tmp_path: Path) -> None:
    """`run -q` printed every JSON event on stdout, then the table (57 lines for 2 cases)."""
    library = tmp_path / "lib.sqlite3"
    wide = {**os.environ, "COLUMNS": "400"}  # one line a row: the 'limited by' cells unfolded
    done = disklab("run", str(plan_file(tmp_path)), "--library", str(library), "-q", env=wide)
    assert done.returncode == 0, done.stderr
    assert not [line for line in done.stdout.splitlines() if line.startswith("{")], done.stdout
    assert "session 1: flags (finished)" in done.stdout
    assert len(done.stdout.splitlines()) < 15, done.stdout
    assert done.stderr == ""
    loud = disklab("run", str(plan_file(tmp_path)), "--library", str(library), env=wide)
    assert len(loud.stdout.splitlines()) >= len(done.stdout.splitlines())


def test_a_closed_pipe_under_run_json_cancels_the_run_and_exits_130(tmp_path: Path) -> None:
    """`run --json | head -1` ended the session 'interrupted' and exited 0."""
    library = tmp_path / "lib.sqlite3"
    proc = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run",
                             str(plan_file(tmp_path, "256m")), "--library", str(library),
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    assert json.loads(first)["event"]
    proc.stdout.close()  # what `head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert "standard output was closed (a broken pipe): session 1 cancelled" in err
    with Library.open(library) as lib:
        assert lib.session(1)["status"] == "cancelled"


def test_a_ctrl_c_while_the_parser_is_built_is_one_line_exit_130(tmp_path: Path) -> None:
    """The interrupt handling began after build_parser (which loads the tools' adapters): a
    Ctrl-C there was a KeyboardInterrupt traceback. The SIGINT is sent from inside
    build_parser, so the moment is hit every time."""
    code = textwrap.dedent("""
        import os, signal, sys
        import disklab.cli.main as m
        real = m.build_parser
        def interrupted():
            os.kill(os.getpid(), signal.SIGINT)
            return real()
        m.build_parser = interrupted
        sys.exit(m.main(["sessions", "--library", sys.argv[1]]))
    """)
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "lib.sqlite3")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "disklab: cancelled\n"


def test_ctrl_c_at_any_moment_of_the_start_is_never_a_traceback(tmp_path: Path) -> None:
    """Ctrl-C pressed at 0.05 to 1 s after the start, as a user does: exit 130 (or 2 when
    the command was done first; killed by the signal when it came as the interpreter ended),
    never a traceback."""
    for i in range(12):
        proc = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "sessions",
                                 "--library", str(tmp_path / "none.sqlite3")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.05 + i * 0.08)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode in (0, 2, 130, -signal.SIGINT), (proc.returncode, err)
        assert "Traceback" not in err, err
        assert len(err.splitlines()) <= 1, err


def test_ctrl_c_in_the_first_30_ms_is_never_a_traceback_from_disklab(tmp_path: Path) -> None:
    """Ctrl-C 10 to 30 ms after the `disklab` command starts: the handler was installed only
    after cli.main's own imports (signal, enum: a traceback from main.py). The console script
    (cli.entry) installs it before anything of DiskLab but the package loads; what is left is
    the interpreter's own start-up and the import statement that begins loading DiskLab, which
    no program's code can reach (their tracebacks name no DiskLab file)."""
    script = Path(sys.executable).with_name("disklab")
    assert "disklab.cli.entry" in script.read_text(), "reinstall: pip install -e ."
    ours = re.compile(r'File "[^"]*/disklab/[^"]*\.py"')
    for i in range(21):
        proc = subprocess.Popen([str(script), "sessions", "--library",
                                 str(tmp_path / "none.sqlite3")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.010 + i * 0.001)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        assert not ours.search(err), err
        if "disklab: cancelled" in err:
            assert (proc.returncode, err) == (130, "disklab: cancelled\n")


WRITERS = [("note", "1", "text"), ("tag", "1", "t"), ("rename", "1", "n"),
           ("delete", "1", "--yes"), ("resume", "1")]


def test_write_commands_make_no_library_from_a_typo(tmp_path: Path) -> None:
    """note, tag, rename, delete and resume created the mistyped --library; a 0-byte file got
    the schema written into it."""
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    for command in WRITERS:
        typo = tmp_path / f"typo-{command[0]}.sqlite3"
        done = disklab(*command, "--library", str(typo))
        assert done.returncode == 2, (command, done.stderr)
        assert done.stderr == (f"disklab: no library at {typo}: nothing has been recorded "
                               "there (check --library and $DISKLAB_LIBRARY)\n"), done.stderr
        assert not typo.exists()
        done = disklab(*command, "--library", str(empty))
        assert done.returncode == 2, (command, done.stderr)
        assert "is an empty file, not a DiskLab library" in done.stderr
        assert empty.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.sqlite3"]


def test_run_and_import_make_the_library_and_say_so(tmp_path: Path) -> None:
    library = tmp_path / "new" / "lib.sqlite3"
    done = disklab("run", str(plan_file(tmp_path)), "--library", str(library))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == f"disklab: created a new library at {library}"
    again = disklab("run", str(plan_file(tmp_path)), "--library", str(library))
    assert "created a new library" not in again.stderr
    fio = Path(__file__).parents[1] / "fixtures" / "fio" / \
        "seqwrite_1m_qd1_libaio_direct_ext4_jsonplus.json"
    other = tmp_path / "other.sqlite3"
    done = disklab("import", str(fio), "--library", str(other))
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"disklab: created a new library at {other}\n"
    assert os.path.getsize(other) > 0


def _run_into_its_first_case(tmp_path: Path, size: str, library: Path
                             ) -> subprocess.Popen[str]:
    """`disklab run --json` of a plan writing `size`, returned once its first case started."""
    proc = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run",
                             str(plan_file(tmp_path, size)), "--library", str(library),
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line)["event"] == "CaseStarted":
            break
    return proc


def test_a_cancelled_runs_rows_do_not_say_imported(tmp_path: Path) -> None:
    """A run cancelled in its first case: its partial rows said 'limited by: not known
    (imported)' although nothing was imported."""
    library = tmp_path / "lib.sqlite3"
    proc = _run_into_its_first_case(tmp_path, "2g", library)
    time.sleep(1.5)  # some of the case written: partial figures
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode == 130
    # a wide terminal, so that no row folds 'limited by' under another line (as a pipe of
    # 80 columns does)
    shown = disklab("show", "1", "--include-partial", "--library", str(library),
                    env={**os.environ, "COLUMNS": "400"})
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    header = next(line for line in lines if line.startswith("config"))
    assert header.rstrip().endswith("limited by"), shown.stdout
    rows = [line for line in lines if line.startswith("as is")]
    assert rows and all(r.rstrip().endswith("not known: no run of it completed") for r in rows), \
        shown.stdout
    assert "imported" not in shown.stdout


def test_the_closing_table_of_run_says_what_limited_each_row(tmp_path: Path) -> None:
    """`show` had a 'limited by' column; the table `run` ends with had none."""
    library = tmp_path / "lib.sqlite3"
    done = disklab("run", str(plan_file(tmp_path)), "--library", str(library), "-q",
                   env={**os.environ, "COLUMNS": "400"})
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if line.startswith("config"))
    assert header.rstrip().endswith("limited by"), done.stdout
    shown = disklab("show", "1", "--library", str(library), env={**os.environ, "COLUMNS": "400"})
    table = done.stdout[done.stdout.index("session 1:"):]
    assert table.strip() == shown.stdout.strip()


def test_quiet_resume_and_start_print_only_results(tmp_path: Path) -> None:
    """`resume -q` said 'resuming session ...' on stderr; `start -q` without a display said
    'No display ...' and 'DiskLab quick look: ...'."""
    library = tmp_path / "lib.sqlite3"
    proc = _run_into_its_first_case(tmp_path, "1g", library)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode == 130
    resumed = disklab("resume", "1", "--library", str(library), "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr == "", resumed.stderr
    assert "session 1: flags (finished)" in resumed.stdout
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    started = disklab("start", "-q", "--library", str(tmp_path / "quick.sqlite3"), env=env)
    assert started.returncode == 0, started.stderr
    assert "No display" not in started.stdout + started.stderr
    assert "DiskLab quick look" not in started.stdout + started.stderr
    assert started.stdout.startswith("\nsession 1: quick look (finished)"), started.stdout[:300]
