"""fio's own options from a plan, end to end with `disklab` (issue 50): a plan with io_size,
buffer_compress_percentage (an axis) and norandommap shows them in `plan show`'s argv, runs fio
with them (the session's argv), gives one row per buffer_compress_percentage whose figures are
fio's own JSON's (kept in the session); a mistyped option, exec_prerun and output are refused
by `plan validate` with exit 2 and nothing run."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from disklab.core.library import Library
from disklab.core.plan.keylines import Checker, KeyLines
from disklab.core.plan.matrix import expand
from disklab.core.plan.parse import parse_plan
from disklab.core.plan.tool_options import _hosts_take
from disklab.core.vocab.units import MiB
from tests.helpers import free_port, loopback

SIZE = 4 * MiB
IO_SIZE = 3 * SIZE  # fio goes over the file three times


def disklab(*args: str, env: dict[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=300, check=False, env=env,
                          cwd=cwd)


def plan(tmp_path: Path, options: str, name: str = "plan.toml") -> Path:
    target = tmp_path / "target"
    target.mkdir(exist_ok=True)
    path = tmp_path / name
    path.write_text(f'name = "fio options"\n[target]\ndirectory = "{target}"\n\n[[test]]\n'
                    f'tool = "fio"\nrw = "randwrite"\nsize = "{SIZE}"\nbs = "4k"\n\n'
                    f"[test.fio_options]\n{options}\n")
    return path


OPTIONS = 'io_size = "12m"\nbuffer_compress_percentage = [0, 50]\nnorandommap = true'


def test_options_run_with_fio_and_the_figures_are_fios_own(tmp_path: Path) -> None:
    path = plan(tmp_path, OPTIONS)
    shown = disklab("plan", "show", str(path))
    assert shown.returncode == 0, shown.stderr
    runs = [line for line in shown.stdout.splitlines() if line.strip().startswith("run:")]
    assert len(runs) == 2
    for line, percent in zip(runs, (0, 50), strict=True):
        assert f"--io_size={IO_SIZE}" in line and "--norandommap=1" in line
        assert f"--buffer_compress_percentage={percent}" in line

    library = tmp_path / "lib.sqlite3"
    done = disklab("run", str(path), "--library", str(library))
    assert done.returncode == 0, done.stdout + done.stderr
    lib = Library.open(library)
    (session,) = lib.list_sessions()
    sid = session["id"]
    cases = {c["case_id"]: c["params"] for c in lib.cases(sid)}
    results = lib.results(sid)
    rows = {cases[r["case_id"]]["buffer_compress_percentage"]: r
            for r in results if r["metric"] == "write"}
    moved = {cases[r["case_id"]]["buffer_compress_percentage"]: r["mean"]
             for r in results if r["metric"] == "write:bytes"}
    assert sorted(rows) == [0, 50]  # two rows, told apart by the option
    for run in lib.runs(sid):
        percent = cases[run["case_id"]]["buffer_compress_percentage"]
        assert f"--buffer_compress_percentage={percent}" in run["argv"]
        assert f"--io_size={IO_SIZE}" in run["argv"] and "--norandommap=1" in run["argv"]
        assert run["planned_bytes"] == IO_SIZE
        kept = "\n".join(text for _t, stream, text in lib.transcript(sid, run["case_id"], 1)
                         if stream == "result")
        (job,) = json.loads(kept[kept.index("{"):])["jobs"]
        assert job["job options"]["buffer_compress_percentage"] == str(percent)
        assert job["write"]["io_bytes"] == IO_SIZE  # what fio moved: io_size, not size
        assert rows[percent]["mean"] == pytest.approx(job["write"]["bw_bytes"])
        assert moved[percent] == IO_SIZE  # the session reports the bytes fio moved
    lib.close()
    assert list((tmp_path / "target").iterdir()) == []
    _labelled_by_the_option(library, str(sid))


def _labelled_by_the_option(library: Path, sid: str) -> None:
    """`show`, `compare` and the CSV export tell the two cases apart by the swept option,
    say the shared switch as fio writes it (norandommap=1), and call bytes moved neither
    better higher nor lower."""
    # a wide terminal: the table's own columns (config, tool, metric ...), not folded to 80
    shown = disklab("show", sid, "--library", str(library), env={**os.environ, "COLUMNS": "400"})
    assert shown.returncode == 0, shown.stderr
    (heading,) = [x for x in shown.stdout.splitlines() if x.startswith("every case:")]
    assert "norandommap=1" in heading
    assert "True" not in shown.stdout
    for percent in (0, 50):
        assert any(line.split()[:4] == ["as", "is", "fio", "write"]
                   and f" buffer_compress_percentage={percent} " in line
                   for line in shown.stdout.splitlines()), shown.stdout
    compared = disklab("compare", sid, "--rows", "buffer_compress_percentage",
                       "--library", str(library))
    assert compared.returncode == 0, compared.stderr
    lines = compared.stdout.splitlines()
    assert [line.split()[0] for line in lines if line.startswith("buffer_compress_percentage=")
            ] == ["buffer_compress_percentage=0", "buffer_compress_percentage=50"]
    exported = disklab("export", sid, "--format", "csv", "-o", "-", "--library", str(library))
    assert exported.returncode == 0, exported.stderr
    table = list(csv.DictReader(io.StringIO(exported.stdout)))
    writes = [r for r in table if r["metric"] == "write"]
    assert sorted(r["buffer_compress_percentage"] for r in writes) == ["0", "50"]
    assert {r["better"] for r in table if r["metric"] == "write:bytes"} == {"neither"}
    assert {r["better"] for r in writes} == {"higher"}


@pytest.mark.parametrize(("options", "line", "words"), [
    ('io_sise = "12m"', "line 12: test[1].fio_options.io_sise: fio refuses it: unrecognized "
     "option 'io_sise'; Did you mean io_size?", None),
    ('exec_prerun = "/bin/true"', "line 12: test[1].fio_options.exec_prerun:", "runs a command"),
    ('output = "mine.json"', "line 12: test[1].fio_options.output:", "sets fio's output"),
])
def test_refused_options_exit_2_with_the_key_and_the_reason(
        tmp_path: Path, options: str, line: str, words: str | None) -> None:
    path = plan(tmp_path, options)
    for command in (("plan", "validate", str(path)), ("run", str(path), "--library",
                                                       str(tmp_path / "lib.sqlite3"))):
        done = disklab(*command)
        assert done.returncode == 2, done.stdout + done.stderr
        said = [x for x in done.stderr.splitlines() if "fio_options" in x]
        assert len(said) == 1 and line in said[0] and (words is None or words in said[0])
        assert "Traceback" not in done.stderr
    assert list((tmp_path / "target").iterdir()) == []  # nothing ran


def test_a_running_hosts_fio_checks_the_options_through_fios_client(tmp_path: Path) -> None:
    """A test on a `running` fio server: the job file is put to that server's fio (fio
    --client --parse-only: parsed there, nothing run), its refusal at the option's key with the
    host named; a host that does not answer is a warning (checked at the run)."""
    address, port = loopback(61), free_port()
    served = tmp_path / "served"
    served.mkdir()
    server = subprocess.Popen(["fio", f"--server={address},{port}"], cwd=served,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not _listening(address, port):
            assert server.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)

        def validate(options: str, host_port: int) -> subprocess.CompletedProcess[str]:
            path = tmp_path / "hosts.toml"
            path.write_text(plan_host_text(tmp_path, address, host_port, served, options))
            return disklab("plan", "validate", str(path))

        good = validate("io_size = \"8m\"\nnorandommap = true", port)
        assert good.returncode == 0, good.stderr
        assert "did not answer" not in good.stdout + good.stderr
        # what fio here refuses is refused before the hosts are asked: the server's own words
        # are read from the host check itself, on a job only the server sees
        checked = parse_plan(plan_host_text(tmp_path, address, port, served), path=None)
        case = {**expand(checked.plan)[0].params, "io_sise": "8m"}
        check = Checker(KeyLines(""))
        assert not _hosts_take(checked.plan, case, ["io_sise"], "test[1].fio_options", check)
        assert [(p.key, p.message) for p in check.errors] == [
            ("test[1].fio_options.io_sise", "fio on host h1 refuses it: Bad option "
             "<io_sise=8m>; Did you mean io_size?")]
        away = validate("norandommap = true", free_port())
        assert away.returncode == 0
        assert "host h1" in away.stdout + away.stderr and "did not answer" in \
            away.stdout + away.stderr
        assert sorted(p.name for p in served.iterdir()) == []  # nothing ran there
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)


def plan_host_text(tmp_path: Path, address: str, port: int, served: Path,
                   options: str = "norandommap = true") -> str:
    text = plan(tmp_path, options, "hosts.toml").read_text()
    return text.replace("[[test]]\n", f'[hosts.h1]\naddress = "{address}"\nport = {port}\n'
                        f'start = "running"\ndirectory = "{served}"\n\n[[test]]\n'
                        'hosts = ["h1"]\n', 1)


def _listening(address: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=1):
        return True
    return False


SWITCHES = [
    ("server", '"127.0.0.1,{port}"'), ("client", '"127.0.0.1,{port}"'),
    ("daemonize", '"d2.pid"'), ("crctest", '"md5"'), ("crc", '"md5"'), ("cmdhelp", '"all"'),
    ("section", '"x"'), ("debug", '"io"'), ("readonly", "1"), ("norandomm", "1"),
]


@pytest.mark.parametrize(("name", "value"), SWITCHES)
def test_fios_command_line_switches_are_refused_and_no_fio_runs_them(
        tmp_path: Path, name: str, value: str) -> None:
    """fio acts on these at once (`--server` listens, `--daemonize` leaves a server behind,
    `--crc=md5`, an abbreviation, runs crctest), even under --parse-only: refused at the line
    and key before any fio sees them. fio is run through a wrapper that logs its argv (the
    real fio runs): none has the name, and nothing listens on the port."""
    port = free_port()
    shim = tmp_path / "bin"
    shim.mkdir()
    log = tmp_path / "fio-argv.log"
    real = subprocess.run(["which", "fio"], capture_output=True, text=True,
                          check=True).stdout.strip()
    (shim / "fio").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nexec {real} "$@"\n')
    (shim / "fio").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}"}
    path = plan(tmp_path, f"{name} = {value.format(port=port)}")
    done = disklab("plan", "validate", str(path), env=env, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    said = [x for x in done.stderr.splitlines() if "fio_options" in x]
    assert len(said) == 1 and f"line 12: test[1].fio_options.{name}:" in said[0], said
    assert ("command-line switch" in said[0] if name != "norandomm"
            else "Did you mean norandommap?" in said[0])
    assert "Traceback" not in done.stderr
    ran = log.read_text().splitlines() if log.exists() else []
    assert not [a for a in ran if f"--{name}=" in a or "--parse-only" in a], ran  # no job
    assert not _listening("127.0.0.1", port)
    assert not list(tmp_path.rglob("d2.pid"))
    assert list((tmp_path / "target").iterdir()) == []


def test_a_paced_case_is_counted_as_time_bound_in_the_plans_estimate(tmp_path: Path) -> None:
    """The README's example (rate_iops = 5000 of 4 KiB over 256 GiB): each case lasts
    256 GiB / 20.48 MB/s = 3 h 43 min 42 s whatever the device, two cases 7 h 27 min, not
    the 43 min the bytes at an assumed 210 MB/s would say."""
    path = tmp_path / "paced.toml"
    path.write_text(f'name = "paced"\n[target]\nimage = {{ path = "{tmp_path}/x.img", '
                    'size = "32g" }\n\n[[test]]\ntool = "fio"\nrw = "randwrite"\n'
                    'size = "16g"\nbs = "4k"\n\n[test.fio_options]\nio_size = "256g"\n'
                    "buffer_compress_percentage = [0, 50]\nnorandommap = true\n"
                    "rate_iops = 5000\n")
    checked = disklab("plan", "validate", str(path), "--library", str(tmp_path / "l.sqlite3"))
    assert checked.returncode == 0, checked.stderr
    assert "2 time-based run(s) of 7 h 27 min in all; estimated 7 h 27 min." in checked.stdout
    assert "43 min" not in checked.stdout
