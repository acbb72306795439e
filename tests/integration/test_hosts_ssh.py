"""Hosts started over SSH (start = "ssh"), against the test's own sshd on 127.0.0.5/.6:2222 with a
throwaway host key and user key in a temporary directory; the ssh client reads a temporary
ssh_config (IdentityFile, UserKnownHostsFile), kept as the user's in DiskLab's settings (never
in the plan), so nothing of the real user's SSH setup is read or written. Checked: the two-host
run's rows; no fio server and no ssh left afterwards, also after a SIGKILL of disklab; the
unknown-host-key question answered through the callback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from disklab.core.library import Library
from disklab.core.plan.parse import parse_plan
from disklab.core.run.recorded import RecordedRun
from tests.helpers import SSH_ADDRESSES as ADDRESSES
from tests.helpers import SSH_PORT, Sshd, free_port, own_sshd

pytestmark = [pytest.mark.root, pytest.mark.slow]


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[Sshd]:
    with own_sshd(tmp_path) as daemon:
        yield daemon


def know_hosts(sshd: Sshd) -> None:
    sshd.known_hosts.write_text("".join(f"[{a}]:{SSH_PORT} {sshd.host_key_line}\n"
                                        for a in ADDRESSES))


def plan_text(tmp_path: Path, sshd: Sshd, ports: list[int], extra: str = "") -> str:
    text = f'name = "ssh hosts"\n[target]\ndirectory = "{tmp_path}"\n'
    for i, (address, port) in enumerate(zip(ADDRESSES, ports, strict=True), start=1):
        remote = tmp_path / f"remote{i}"
        remote.mkdir()
        text += (f'[hosts.s{i}]\naddress = "{address}"\nport = {port}\nstart = "ssh"\n'
                 f'directory = "{remote}"\n')
    return text + ('[[test]]\ntool = "fio"\nrw = "write"\nbs = "64k"\nsize = "8m"\n'
                   f'hosts = ["s1", "s2"]\n{extra}')


def leftovers(sshd: Sshd, ports: list[int]) -> list[str]:
    """fio servers on the test's remote ports, and ssh clients of the test's config."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if (cmd.startswith("fio") and any(f"127.0.0.1,{port}" in cmd for port in ports)) or (
                "ssh" in cmd.split(" ")[0] and str(sshd.config) in cmd):
            found.append(f"{p.pid} {cmd}")
    return found


def wait_gone(sshd: Sshd, ports: list[int], seconds: float = 15) -> list[str]:
    deadline = time.monotonic() + seconds
    while leftovers(sshd, ports) and time.monotonic() < deadline:
        time.sleep(0.1)
    return leftovers(sshd, ports)


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


def test_two_hosts_started_over_ssh_and_stopped(tmp_path: Path, sshd: Sshd) -> None:
    know_hosts(sshd)
    ports = [free_port(), free_port()]
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(tmp_path, sshd, ports))
    library = tmp_path / "lib.sqlite3"
    done = disklab("run", str(plan), "--library", str(library))
    assert done.returncode == 0, done.stdout + done.stderr
    shown = disklab("show", "1", "--library", str(library), "--json")
    doc = json.loads(shown.stdout)
    hosts = {r["params"]["host"] for r in doc["results"] if r["metric"] == "write"}
    assert hosts == {"s1", "s2", "all"}
    facts = doc["session"]["host"]["hosts"]
    assert facts["s1"]["start"] == "ssh" and facts["s1"]["fio"] == "fio-3.33"
    # what the remote command printed before fio: kernel, CPUs, the directory's filesystem
    assert facts["s1"]["kernel"] == f"Linux {os.uname().release}"
    assert facts["s2"]["cpus"] == os.cpu_count()
    here = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", str(tmp_path)],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert facts["s2"]["filesystem"]["fstype"] == here
    assert wait_gone(sshd, ports) == []


@pytest.mark.parametrize("nohup", [False, True], ids=["plain", "under-nohup"])
def test_sigkill_of_disklab_ends_the_ssh_sessions_and_their_servers(tmp_path: Path, sshd: Sshd,
                                                                    nohup: bool) -> None:
    # under nohup (a long headless run started that way) DiskLab and what it starts inherit
    # SIGHUP ignored; ssh must still end on the hangup its pty sends when DiskLab dies
    know_hosts(sshd)
    ports = [free_port(), free_port()]
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(tmp_path, sshd, ports, extra='runtime = "60s"\n'))
    hangup = signal.SIG_IGN if nohup else signal.SIG_DFL
    # its crash record in a state directory of its own: the next start of the session's other
    # tests (in this worker) would try the killed run's hosts, long gone, and say so
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    run = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                            "--library", str(tmp_path / "lib.sqlite3")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL, env=env,
                           preexec_fn=lambda: signal.signal(signal.SIGHUP, hangup))
    try:
        deadline = time.monotonic() + 60
        while not any(".s2.job" in p and str(tmp_path) in p for p in leftovers(sshd, ports) + [
                " ".join(q.info["cmdline"] or []) for q in psutil.process_iter(["cmdline"])]):
            assert run.poll() is None, "disklab ended before its case started"
            assert time.monotonic() < deadline, "the case's fio client did not start"
            time.sleep(0.1)
        servers = [p for p in leftovers(sshd, ports) if p.split(" ", 1)[1].startswith("fio")]
        assert len(servers) >= 2  # both remote servers run (and their job processes)
        run.send_signal(signal.SIGKILL)
        run.wait(10)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(10)
    assert wait_gone(sshd, ports) == []


def test_an_unknown_host_key_is_asked_through_the_callback(tmp_path: Path, sshd: Sshd) -> None:
    ports = [free_port(), free_port()]
    checked = parse_plan(plan_text(tmp_path, sshd, ports))
    asked: list[tuple[str, str, bool]] = []

    def ask(host: str, question: str, secret: bool) -> str | None:
        asked.append((host, question, secret))
        return "yes"

    with Library.open(str(tmp_path / "lib.sqlite3")) as library, \
            RecordedRun(checked.plan, library, ask=ask) as run:
        events = list(run)
    assert run.status == "finished", [e for e in events if type(e).__name__ == "CaseFailed"]
    assert [(h, s) for h, _q, s in asked] == [("s1", False), ("s2", False)]  # once per host
    for _host, question, _secret in asked:
        assert "continue connecting" in question and "SHA256:" in question
    assert len(sshd.known_hosts.read_text().splitlines()) == 2  # ssh kept the accepted keys
    assert wait_gone(sshd, ports) == []


def test_files_a_killed_run_left_on_ssh_hosts_are_removed_over_ssh_at_the_next_start(
        tmp_path: Path, sshd: Sshd) -> None:
    """Issue 32's soak: the servers' data files stayed after a SIGKILL (the servers end with
    the SSH sessions, before fio unlinks). The next start logs in as the session did and
    removes them, saying so."""
    know_hosts(sshd)
    ports = [free_port(), free_port()]
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(tmp_path, sshd, ports, extra='runtime = "60s"\n'))
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    remotes = [tmp_path / "remote1", tmp_path / "remote2"]
    run = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                            "--library", str(tmp_path / "lib.sqlite3")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 60
        while not all(list(r.glob("*disklab-*.fio")) for r in remotes):
            assert run.poll() is None, "disklab ended before its case started"
            assert time.monotonic() < deadline, "the servers made no data file"
            time.sleep(0.1)
        time.sleep(0.5)
        run.send_signal(signal.SIGKILL)
        run.wait(10)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(10)
    assert wait_gone(sshd, ports) == []
    left = {r.name: sorted(p.name for p in r.glob("*disklab-*.fio")) for r in remotes}
    assert all(left.values()), left  # what the soak found

    nothing = tmp_path / "next"
    nothing.mkdir()
    other = tmp_path / "next.toml"
    other.write_text(f'name = "next"\n[target]\ndirectory = "{nothing}"\n[[test]]\n'
                     'tool = "engine"\nmode = "write"\nblock_size = "1m"\nsize = "1m"\n'
                     "direct = false\n")
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(other),
                           "--library", str(tmp_path / "lib.sqlite3")],
                          capture_output=True, text=True, timeout=180, env=env,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    for remote, host in zip(remotes, ("s1", "s2"), strict=True):
        assert any(f"{remote}/{left[remote.name][0]}" in line and f"on host {host} over SSH"
                   in line for line in done.stderr.splitlines()), done.stderr
        assert list(remote.glob("*disklab-*")) == []
