"""A command line with no surprises: each input issue 32 named gives one line and the
documented exit code, never a traceback; -o means a file; reading never creates a library;
the window's edits, presets, verbosity, the log file, an early Ctrl-C, the GUI-extra hint."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from disklab.core.library import Library
from disklab.core.vocab.model import Case, Metric
from tests.helpers import record_session

FIO = Path(__file__).parents[1] / "fixtures" / "fio" / \
    "seqwrite_1m_qd1_libaio_direct_ext4_jsonplus.json"


def disklab(*args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, **kw)


def one_line(done: subprocess.CompletedProcess, code: int) -> str:
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    return done.stderr


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """Two sessions of one dd case, three repeats each (several charts each)."""
    path = tmp_path / "lib" / "l.sqlite3"
    path.parent.mkdir()
    cases = [Case("c-dd-1", 0, "as is", "dd", 0, {"bs": 1048576}),
             Case("c-dd-2", 1, "as is", "dd", 1, {"bs": 65536})]
    with Library.open(path) as lib:
        for name, base in (("a", 100.0), ("b", 120.0)):
            record_session(lib, [(c, [(Metric("write", base + i + c.index, "B/s"),)
                                      for i in range(3)]) for c in cases],
                           name=name, host={"hostname": "box"}, sample_series="app_wchar_bps")
    return path


def test_a_missing_output_directory_is_one_line_exit_2_and_nothing_is_made(
        library: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent" / "dir"
    done = disklab("export", "a", "--format", "csv", "-o", str(missing / "x.csv"),
                   "--library", str(library))
    assert "does not exist" in one_line(done, 2)
    done = disklab("compare", "a", "b", "-o", str(missing / "c.md"), "--library", str(library))
    assert "does not exist" in one_line(done, 2)
    assert not (tmp_path / "nonexistent").exists()


def test_o_means_a_file_several_charts_only_into_a_directory(library: Path,
                                                             tmp_path: Path) -> None:
    svg = tmp_path / "X.svg"
    done = disklab("export", "a", "--format", "svg", "-o", str(svg), "--library", str(library))
    assert "charts; give a directory" in one_line(done, 2)
    assert not svg.exists()
    made = tmp_path / "charts"
    done = disklab("export", "a", "--format", "svg", "-o", f"{made}/", "--library", str(library))
    assert done.returncode == 0, done.stderr
    assert len(list(made.glob("*.svg"))) >= 2
    assert all(p.read_text().startswith("<svg") or "<svg" in p.read_text()[:200]
               for p in made.glob("*.svg"))
    deep = tmp_path / "no" / "such" / "dir/"
    done = disklab("export", "a", "--format", "svg", "-o", f"{deep}/", "--library", str(library))
    one_line(done, 2)
    assert not (tmp_path / "no").exists()


def test_o_dash_writes_text_to_stdout_and_refuses_binary(library: Path) -> None:
    done = disklab("export", "a", "--format", "csv", "-o", "-", "--library", str(library))
    assert done.returncode == 0 and done.stdout.startswith("session,") and not done.stderr
    assert "wrote" not in done.stdout
    done = disklab("export", "a", "--format", "bundle", "-o", "-", "--library", str(library))
    assert "not a text format" in one_line(done, 2)


def test_compare_o_dash_is_standard_output_not_a_file_named_dash(library: Path,
                                                                 tmp_path: Path) -> None:
    done = disklab("compare", "a", "b", "-o", "-", "--library", str(library), cwd=tmp_path)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert "a (baseline)" in done.stdout and "wrote" not in done.stdout
    assert not (tmp_path / "-").exists()


def test_a_tiny_alpha_is_taken_from_the_upper_tail(library: Path) -> None:
    """--alpha 1e-16: 1 - alpha rounds to 1.0, whose quantile does not exist; the quantile is
    taken from the tail itself, and the level is not printed as a false 100 %."""
    done = disklab("compare", "a", "b", "--alpha", "1e-16", "--library", str(library))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "1 - 1e-16 confidence interval" in done.stdout
    assert "100 % confidence" not in done.stdout


def test_commands_that_read_never_create_a_library(tmp_path: Path) -> None:
    typo = tmp_path / "typo" / "libary.sqlite3"
    for args in (("sessions",), ("show", "1"), ("compare", "1", "2"),
                 ("export", "1", "--format", "csv", "-o", str(tmp_path / "x.csv"))):
        done = disklab(*args, "--library", str(typo))
        assert "no library at" in one_line(done, 2)
    assert not (tmp_path / "typo").exists()
    fresh = {"XDG_DATA_HOME": str(tmp_path / "fresh"), "DISKLAB_LIBRARY": ""}
    done = disklab("sessions", env=fresh)  # nothing recorded yet, the default place
    assert done.returncode == 0 and done.stdout.startswith("no sessions yet")
    assert not (tmp_path / "fresh").exists()


def test_presets_and_an_unknown_plan_name_lists_them() -> None:
    done = disklab("presets")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("quick "))
    assert "about 24 s" in lines[at]  # its description on the lines below (80 columns)
    assert "A first look at a disk in about half a minute" in " ".join(lines[at + 1:at + 3])
    done = disklab("plan", "show", "nosuchpreset")
    line = one_line(done, 2)
    assert "'nosuchpreset' is neither a plan file nor a preset" in line
    assert "quick" in line and "fio-basic" in line and "Errno" not in line


def test_delete_rename_note_tag_as_the_window_does(library: Path) -> None:
    lib = ("--library", str(library))
    assert disklab("rename", "a", "laptop", *lib).returncode == 0
    assert disklab("note", "laptop", "after the firmware update", *lib).returncode == 0
    assert disklab("tag", "laptop", "ssd", "nvme", *lib).returncode == 0
    assert disklab("tag", "laptop", "nvme", "--remove", *lib).returncode == 0
    assert disklab("note", "laptop", *lib).stdout == "after the firmware update\n"
    refused = disklab("delete", "b", *lib, stdin=subprocess.DEVNULL)
    assert "--yes" in one_line(refused, 2)
    assert disklab("delete", "b", "--yes", *lib).returncode == 0
    with Library.open(library) as opened:
        [s] = opened.list_sessions()
    assert (s["name"], s["notes"], s["tags"]) == ("laptop", "after the firmware update",
                                                 ["ssd"])


def test_quiet_verbose_and_the_log_file(library: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    env = {"XDG_STATE_HOME": str(state)}
    out = tmp_path / "a.csv"
    quiet = disklab("export", "a", "--format", "csv", "-o", str(out), "--quiet",
                    "--library", str(library), env=env)
    assert quiet.returncode == 0 and quiet.stdout == "" and out.exists()
    loud = disklab("-v", "sessions", "--library", str(library), env=env)
    assert loud.returncode == 0 and "command line: disklab -v sessions" in loud.stderr
    log = (state / "disklab" / "disklab.log").read_text()
    assert "command line: disklab export a --format csv" in log
    assert "disklab export ended with exit code 0" in log
    failed = disklab("show", "nosuch", "--library", str(library), env=env)
    assert failed.returncode == 2
    assert "disklab show ended with exit code 2" in \
        (state / "disklab" / "disklab.log").read_text()


TRIP = """
import os, signal, sys
class Trip:  # Ctrl-C exactly while cli/commands.py imports what it needs
    def find_spec(self, name, path=None, target=None):
        if name == "disklab.core.results.charts":
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Trip())
sys.argv = ["disklab", "sessions", "--library", sys.argv[1]]
from disklab.cli.main import main
sys.exit(main())
"""


def test_ctrl_c_while_loading_is_exit_130_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", TRIP, str(tmp_path / "l.sqlite3")],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr, done.stdout) == (130, "disklab: cancelled\n", "")
    assert not (tmp_path / "l.sqlite3").exists()
    # and a real Ctrl-C a moment after the start, while the modules load
    p = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "sessions", "--library",
                          str(tmp_path / "l.sqlite3")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    _out, err = p.communicate(timeout=60)
    assert "Traceback" not in err


def test_without_the_gui_extra_one_line_says_what_needs_it(library: Path,
                                                           tmp_path: Path) -> None:
    """The extra is hidden from the interpreter (an import of PySide6 fails as when it is not
    installed): the window's launcher and a PNG export each say what needs it."""
    hide = ("import sys; sys.modules['PySide6'] = None; "
            "from disklab.cli import gui_cmd, main; ")
    env = {**os.environ, "DISPLAY": ":0"}
    gui = subprocess.run([sys.executable, "-c", hide + "sys.exit(gui_cmd.main())"],
                         capture_output=True, text=True, env=env, timeout=60)
    line = one_line(gui, 2)
    assert "the desktop window needs the GUI extra" in line
    png = subprocess.run(
        [sys.executable, "-c", hide + "sys.exit(main.main(sys.argv[1:]))", "export", "a",
         "--format", "png", "-o", f"{tmp_path}/", "--library", str(library)],
        capture_output=True, text=True, env=env, timeout=60)
    line = one_line(png, 2)
    assert "a PNG chart needs the GUI extra" in line and "desktop window" not in line
    assert "make run" in line  # this is a checkout: the hint says how to add it here
