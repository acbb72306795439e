"""Several machines through fio's client/server engine, on real fio servers this test starts on
loopback addresses (127.0.0.21..24, port 8765, or helpers.loopback's of a pytest-xdist worker;
each in its own scratch directory): per-host and aggregate rows stored, the aggregate fio's
"All clients" figure, a server killed mid-run named with the other hosts' figures kept, and no
fio process left afterwards."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from disklab.core.hosts.servers import Servers
from disklab.core.library import Library
from disklab.core.resources import resource
from disklab.core.vocab.model import Host
from tests.helpers import loopback

pytestmark = [pytest.mark.slow]

PORT = 8765


@dataclass
class Server:
    name: str
    address: str
    directory: Path
    popen: subprocess.Popen[bytes]

    def kill(self) -> None:
        """SIGKILL the server and the job process it forked (its process group)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(10)


def _listening(address: str, port: int) -> bool:
    return any(c.laddr and c.laddr.ip == address and c.laddr.port == port
               and c.status == psutil.CONN_LISTEN for c in psutil.net_connections("tcp"))


def start_server(name: str, address: str, base: Path) -> Server:
    directory = base / name
    directory.mkdir()
    popen = subprocess.Popen(["fio", f"--server={address},{PORT}"], cwd=directory,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    deadline = time.monotonic() + 10
    while not _listening(address, PORT):
        assert popen.poll() is None, f"fio --server={address},{PORT} ended at once"
        assert time.monotonic() < deadline, f"fio --server={address},{PORT} does not listen"
        time.sleep(0.05)
    return Server(name, address, directory, popen)


def fio_processes(addresses: list[str]) -> list[str]:
    """fio processes (servers or clients) that name one of these addresses, or a job file of
    this test's plans."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if cmd.startswith("fio") and any(a in cmd for a in addresses):
            found.append(f"{p.pid} {cmd}")
    return found


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[Server]]:
    started: list[Server] = []
    try:
        for i in range(3):
            started.append(start_server(f"h{i + 1}", loopback(21 + i), tmp_path))
        yield started
    finally:
        for s in started:
            s.kill()
        addresses = [s.address for s in started]
        deadline = time.monotonic() + 10
        while fio_processes(addresses) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert fio_processes(addresses) == []


def plan_text(tmp_path: Path, servers: list[Server], hosts: str, extra: str = "",
              unreachable: bool = False, stop: bool = False) -> str:
    text = f'name = "hosts"\nstop_on_failure = {str(stop).lower()}\n'
    text += f'[target]\ndirectory = "{tmp_path}"\n'
    for s in servers:
        text += (f'[hosts.{s.name}]\naddress = "{s.address}"\nport = {PORT}\n'
                 f'start = "running"\ndirectory = "{s.directory}"\n')
    if unreachable:  # nothing listens there
        text += f'[hosts.gone]\naddress = "{loopback(29)}"\nstart = "running"\n'
    return text + ('[[test]]\ntool = "fio"\nrw = "write"\nbs = "64k"\nsize = "8m"\n'
                   f"hosts = {hosts}\n{extra}")


def disklab(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=timeout)


def show(library: Path) -> dict:
    done = disklab("show", "1", "--library", str(library), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def rows(doc: dict, metric: str = "write") -> dict[tuple[str, str], dict]:
    return {(r["params"]["hosts"], r["params"]["host"]): r for r in doc["results"]
            if r["metric"] == metric}


def all_clients(library: Path) -> dict[str, float]:
    """fio's own "All clients" write figure of each case (terse v3: field 48, KiB/s), from the
    report kept with the session's transcript."""
    out = {}
    with Library.open(str(library)) as lib:
        for case in lib.cases(1):
            lines = lib.transcript(1, case["case_id"], 1)
            for _t, stream, text in lines:
                if stream == "result" and text.startswith("3;fio-") and ";All clients;" in text:
                    out[case["params"]["hosts"]] = float(text.split(";")[47]) * 1024
    return out


def test_one_to_three_hosts_per_host_rows_and_fios_aggregate(tmp_path: Path,
                                                            servers: list[Server]) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(tmp_path, servers, '[["h1"], ["h1", "h2"], ["h1", "h2", "h3"]]'))
    library = tmp_path / "lib.sqlite3"
    done = disklab("run", str(plan), "--library", str(library))
    assert done.returncode == 0, done.stdout + done.stderr
    doc = show(library)
    got = rows(doc)
    assert set(got) == {("h1", "h1"), ("h1", "all"), ("h1+h2", "h1"), ("h1+h2", "h2"),
                        ("h1+h2", "all"), ("h1+h2+h3", "h1"), ("h1+h2+h3", "h2"),
                        ("h1+h2+h3", "h3"), ("h1+h2+h3", "all")}
    # the aggregate is what fio printed as "All clients", not a sum DiskLab made
    fio_says = all_clients(library)
    assert set(fio_says) == {"h1+h2", "h1+h2+h3"}
    for hosts, total in fio_says.items():
        assert got[(hosts, "all")]["mean"] == total
    assert got[("h1", "all")]["mean"] == got[("h1", "h1")]["mean"]  # one server: its own
    # each host's facts, from its server, are kept with the session
    facts = doc["session"]["host"]["hosts"]
    assert {facts[h]["fio"] for h in ("h1", "h2", "h3")} == {"fio-3.33"}
    assert facts["h2"]["address"] == loopback(22) and facts["h2"]["os"] == "Linux"
    # fio removed its files on every server (unlink=1), and DiskLab its job files here
    assert [list(s.directory.iterdir()) for s in servers] == [[], [], []]
    assert not list(tmp_path.glob("disklab-*"))


def test_a_server_killed_mid_run_is_named_and_the_others_are_kept(
        tmp_path: Path, servers: list[Server]) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(tmp_path, servers[:2], '["h1", "h2"]',
                              extra='runtime = "4s"\n'))
    library = tmp_path / "lib.sqlite3"

    def kill_h2_when_busy() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            # the case's client (the probe at the start names a probe job, not the case's)
            if any(".h2.job" in p for p in fio_processes([loopback(22)])):
                time.sleep(1.5)
                servers[1].kill()
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_h2_when_busy)
    killer.start()
    done = disklab("run", str(plan), "--library", str(library), "--json")
    killer.join()
    assert done.returncode == 1, done.stdout + done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    failed = [e for e in events if e.get("event") == "CaseFailed"]
    assert len(failed) == 1
    assert f"host h2: its fio server ({loopback(22)},8765) disconnected during the run" \
        in failed[0]["error"]
    # h1's figures are kept with the failed run (shown; counted with --include-partial)
    got = rows(show(library))
    assert set(got) == {("h1+h2", "h1")}, got
    assert got[("h1+h2", "h1")]["values"] and got[("h1+h2", "h1")]["values"][0] > 0
    # the client is gone (h1's server stays: the user's; the fixture stops it and its job)
    assert [p for p in fio_processes([loopback(21)]) if "--client" in p] == []


def test_an_unreachable_host_fails_its_cases_only(tmp_path: Path,
                                                  servers: list[Server]) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(tmp_path, servers[:1], '[["h1"], ["h1", "gone"]]',
                              unreachable=True))
    library = tmp_path / "lib.sqlite3"
    done = disklab("run", str(plan), "--library", str(library), "--json")
    assert done.returncode == 1
    events = [json.loads(line) for line in done.stdout.splitlines()]
    notices = [e["message"] for e in events if e.get("event") == "Notice"]
    assert any(f"host gone: nothing listens at {loopback(29)},8765" in n for n in notices)
    failed = [e for e in events if e.get("event") == "CaseFailed"]
    assert len(failed) == 1 and "host gone" in failed[0]["error"]
    assert ("h1", "h1") in rows(show(library))


def test_the_host_scaling_preset_runs_against_four_local_servers(tmp_path: Path) -> None:
    """The shipped preset, with its addresses and directories pointed at this test's servers
    and its sizes made small: one to four hosts, each case's per-host rows and total."""
    text = resource("presets", "fio-host-scaling.toml").read_text()
    started = []
    try:
        for i in range(1, 5):
            server = start_server(f"h{i}", loopback(30 + i), tmp_path)
            started.append(server)
            text = text.replace(f'address = "127.0.0.{i + 1}"', f'address = "{server.address}"')
            text = text.replace(f'"/tmp/disklab-h{i}"', f'"{server.directory}"')
        text = (text.replace('size = "1g"', 'size = "8m"').replace('runtime = "10s"\n', "")
                .replace("repeats = 2", "repeats = 1")
                .replace('directory = "/tmp"', f'directory = "{tmp_path}"'))
        plan = tmp_path / "plan.toml"
        plan.write_text(text)
        library = tmp_path / "lib.sqlite3"
        done = disklab("run", str(plan), "--library", str(library))
        assert done.returncode == 0, done.stdout + done.stderr
        got = rows(show(library))
        for n in range(1, 5):
            hosts = "+".join(f"h{i}" for i in range(1, n + 1))
            assert {h for (hs, h) in got if hs == hosts} == {*hosts.split("+"), "all"}
        # the preset's [report]: `disklab compare` opens on the scaling table, a row per set
        # of hosts, a column per host and "all"
        shown = disklab("compare", "1", "--format", "json", "--library", str(library))
        assert shown.returncode == 0, shown.stderr
        table = json.loads(shown.stdout)
        assert table["rows"] == ["hosts=h1", "hosts=h1+h2", "hosts=h1+h2+h3", "hosts=h1+h2+h3+h4"]
        assert sorted(table["columns"]) == ["host=all", "host=h1", "host=h2", "host=h3",
                                            "host=h4"]
        assert all(cell is not None for cell in table["cells"][-1])  # four hosts: every column
    finally:
        for s in started:
            s.kill()
    assert fio_processes([s.address for s in started]) == []


def test_a_host_whose_directory_is_missing_refuses_the_job(tmp_path: Path,
                                                           servers: list[Server]) -> None:
    text = plan_text(tmp_path, servers[:2], '[["h1"], ["h1", "h2"]]').replace(
        f'directory = "{servers[1].directory}"', 'directory = "/nonexistent/disklab"')
    plan = tmp_path / "plan.toml"
    plan.write_text(text)
    done = disklab("run", str(plan), "--library", str(tmp_path / "lib.sqlite3"), "--json")
    assert done.returncode == 1
    events = [json.loads(line) for line in done.stdout.splitlines()]
    said = "host h2: the server refused the job in /nonexistent/disklab (fio: " \
           "/nonexistent/disklab is not a directory"
    assert any(said in e["message"] for e in events if e.get("event") == "Notice")
    failed = [e for e in events if e.get("event") == "CaseFailed"]
    finished = [e for e in events if e.get("event") == "CaseFinished"]
    assert len(failed) == 1 and said in failed[0]["error"] and len(finished) == 1


def test_a_server_of_another_fio_version_is_reported(servers: list[Server]) -> None:
    """The check compares the server's own greeting with the client's version: here the client
    is said to be another version than the servers' real one."""
    host = Host("h1", servers[0].address, PORT, "running", str(servers[0].directory))
    reached = Servers([host])
    try:
        messages = reached.start(client_version="fio-9.99")
    finally:
        reached.close()
    assert messages == ["host h1 runs fio-3.33, the client here fio-9.99: fio's protocol may "
                        "differ between versions"]
    assert reached.facts()["h1"]["version_differs"] is True


def test_stop_on_failure_stops_at_a_failed_host(tmp_path: Path, servers: list[Server]) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(tmp_path, servers[:1], '[["h1", "gone"], ["h1"]]',
                              unreachable=True, stop=True))
    done = disklab("run", str(plan), "--library", str(tmp_path / "lib.sqlite3"), "--json")
    assert done.returncode == 1
    events = [json.loads(line)["event"] for line in done.stdout.splitlines()]
    assert events.count("CaseFailed") == 1 and "CaseFinished" not in events
    assert events.count("CaseStarted") == 1  # the h1 case never started


def test_a_killed_run_leaves_a_servers_data_file_that_the_next_start_removes(
        tmp_path: Path, servers: list[Server]) -> None:
    """Issue 32's soak: a SIGKILL of DiskLab mid-case left the job's data file on the server
    (fio unlinks it only at the job's end) and no later start removed it. It is recorded
    before the case runs and the next start removes it through fio's client, saying so."""
    h1 = servers[0]
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(tmp_path, servers[:1], '["h1"]', extra='runtime = "60s"\n'))
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    run = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                            "--library", str(tmp_path / "lib.sqlite3"), "--json"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not list(h1.directory.glob("*disklab-*.fio")):  # the server adds its address
            assert run.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        os.killpg(run.pid, signal.SIGKILL)  # DiskLab and its fio client, as a kill -9 of all
        run.wait(10)
    deadline = time.monotonic() + 30  # the server ends the job of a client that went away
    while [p for p in fio_processes([h1.address]) if "--client" in p]:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    time.sleep(1.0)
    left = sorted(p.name for p in h1.directory.glob("*disklab-*.fio"))
    assert left, "the kill left nothing on the server: the test proves nothing"

    nothing = tmp_path / "next"
    nothing.mkdir()
    other = tmp_path / "next.toml"
    other.write_text(f'name = "next"\n[target]\ndirectory = "{nothing}"\n[[test]]\n'
                     'tool = "engine"\nmode = "write"\nblock_size = "1m"\nsize = "1m"\n'
                     "direct = false\n")
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(other),
                           "--library", str(tmp_path / "lib.sqlite3"), "--json"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    said = done.stderr.splitlines()  # cleanups before the session are said on stderr
    assert any(f"removed {h1.directory}/{left[0]}" in m and "on host h1" in m for m in said), said
    assert list(h1.directory.glob("*disklab-*")) == []
    assert not list((tmp_path / "state").glob("**/setup-state-*.json"))
