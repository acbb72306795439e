"""Hosts in a plan ([hosts.*], a fio test's `hosts` axis) and fio --client's argv and JSON, on
real fio 3.33 client outputs (tests/fixtures/fio/client_2servers_*)."""

from __future__ import annotations

from pathlib import Path

import pytest

from disklab.core.plan.matrix import expand
from disklab.core.plan.parse import parse_plan
from disklab.core.tools.base import RunTarget, ToolOutput
from disklab.core.tools.fio.client import (
    FioClientAdapter,
    client_command,
    client_metrics,
    job_text,
)
from disklab.core.vocab.errors import ParseError, PlanError, ToolError
from disklab.core.vocab.model import HostEndpoint
from tests.helpers import fixture_text

PLAN = """\
name = "hosts"
[target]
directory = "{dir}"
[hosts.h1]
address = "127.0.0.2"
start = "running"
directory = "/srv/a"
[hosts.h2]
address = "127.0.0.3"
start = "running"
directory = "/srv/b"
[hosts.h3]
address = "node3"
{h3}
[[test]]
tool = "fio"
rw = "write"
size = "8m"
{hosts}
"""

ENDPOINTS = (HostEndpoint("h1", "127.0.0.2", 8765, "/tmp/hx/a"),
             HostEndpoint("h2", "127.0.0.3", 8765, "/tmp/hx/b"))


def plan_of(tmp_path: Path, hosts: str = 'hosts = ["h1", "h2"]', h3: str = ""):
    return parse_plan(PLAN.format(dir=tmp_path, hosts=hosts, h3=h3))


def errors_of(tmp_path: Path, **kw: str) -> list[str]:
    with pytest.raises(PlanError) as e:
        plan_of(tmp_path, **kw)
    return [f"{p.key}: {p.message}" for p in e.value.problems]


def test_hosts_as_an_axis_give_one_case_per_host_list(tmp_path: Path) -> None:
    checked = plan_of(tmp_path, hosts='hosts = [["h1"], ["h1", "h2"], ["h1", "h2", "h3"]]')
    assert [c.params["hosts"] for c in expand(checked.plan)] == ["h1", "h1+h2", "h1+h2+h3"]
    h3 = next(h for h in checked.plan.hosts if h.name == "h3")
    assert (h3.start, h3.port, h3.directory) == ("ssh", 8765, "/tmp")  # the safe defaults


def test_a_plain_server_gets_the_security_warning(tmp_path: Path) -> None:
    warnings = [f"{w.key}: {w.message}" for w in plan_of(tmp_path).warnings]
    plain = [w for w in warnings if w.startswith("hosts.h")]
    assert [w.split(":")[0] for w in plain] == ["hosts.h1", "hosts.h2"]  # not h3 (ssh)
    assert all("unauthenticated" in w and 'start = "ssh"' in w for w in plain)


@pytest.mark.parametrize(("h3", "hosts", "key", "says"), [
    ("", 'hosts = ["h1", "h9"]', "test[1].hosts", "unknown host 'h9'"),
    ("", 'hosts = ["h1", "h1"]', "test[1].hosts", "named twice"),
    ("", "hosts = 3", "test[1].hosts", "a host name, a list"),
    ('start = "daemon"', "", "hosts.h3.start", "'daemon' is not one of ssh, running"),
    ("port = 70000", "", "hosts.h3.port", "not a TCP port"),
    ('user = "-oProxyCommand=x"', "", "hosts.h3.user", "is not a user name"),
    ('directory = "relative/dir"', "", "hosts.h3.directory", "an absolute path"),
    ('directory = "/srv/a\\tb"', "", "hosts.h3.directory", "no control character"),
    ('directory = "/srv/a\\u001b[2Jb"', "", "hosts.h3.directory", "no control character"),
    ('directory = "/srv/a\\u007fb"', "", "hosts.h3.directory", "no control character"),
    ('colour = "red"', "", "hosts.h3.colour", "unknown key"),
])
def test_bad_host_values_are_named_by_key(tmp_path: Path, h3: str, hosts: str, key: str,
                                          says: str) -> None:
    problems = errors_of(tmp_path, h3=h3, hosts=hosts or 'hosts = "h1"')
    assert any(p.startswith(f"{key}:") and says in p for p in problems), problems


def test_an_address_that_ssh_would_read_as_an_option_is_refused(tmp_path: Path) -> None:
    text = PLAN.format(dir=tmp_path, hosts='hosts = "h1"', h3="").replace(
        'address = "node3"', 'address = "-oProxyCommand=touch /tmp/x"')
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    assert any(p.key == "hosts.h3.address" for p in e.value.problems)


def test_only_fio_runs_on_hosts(tmp_path: Path) -> None:
    text = PLAN.format(dir=tmp_path, hosts='hosts = "h1"', h3="").replace(
        'tool = "fio"\nrw = "write"\nsize = "8m"',
        'tool = "dd"\nmode = "write"\nsize = "8m"')
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    assert any(p.key == "test[1].hosts" and "only fio" in p.message for p in e.value.problems)


def test_the_client_sends_each_host_its_own_job_file(tmp_path: Path) -> None:
    params = {"rw": "write", "size": 8 << 20, "bs": 65536, "hosts": "h1+h2"}
    target = RunTarget(directory=str(tmp_path), tag="c1-r1", hosts=ENDPOINTS)
    command = client_command(params, target)
    assert command.argv == (
        "fio", "--client=127.0.0.2,8765", f"{tmp_path}/disklab-c1-r1.h1.job",
        "--client=127.0.0.3,8765", f"{tmp_path}/disklab-c1-r1.h2.job",
        "--output-format=terse", "--terse-version=3", f"--output={tmp_path}/disklab-c1-r1.terse",
        "--eta=always")
    jobs = dict(command.inputs)
    assert "[disklab-h1]\ndirectory=/tmp/hx/a\n" in jobs[f"{tmp_path}/disklab-c1-r1.h1.job"]
    assert "[disklab-h2]\ndirectory=/tmp/hx/b\n" in jobs[f"{tmp_path}/disklab-c1-r1.h2.job"]
    assert all("unlink=1" in t and "thread" in t for t in jobs.values())
    assert set(jobs) <= set(command.files)  # removed after the case like its other files
    assert command.planned_bytes == 2 * (8 << 20)


def test_a_directory_with_a_line_break_cannot_add_job_options() -> None:
    with pytest.raises(ToolError):
        job_text({"rw": "write", "size": 1}, "/tmp/x\nexec_prerun=rm -rf /", "t")


ENDPOINTS_T = (HostEndpoint("h1", "127.0.0.41", 8765, "/tmp/hx/s1"),
               HostEndpoint("h2", "127.0.0.42", 8765, "/tmp/hx/s2"))


def _output(name: str, stderr: str = "", stdout: str = "") -> ToolOutput:
    return ToolOutput(stdout=stdout, stderr=stderr,
                      result_file=fixture_text("fio", "client", name))


def _terse_field(line: str, index: int) -> float:
    return float(line.split(";")[index - 1].rstrip("%"))


def test_per_host_rows_and_fios_all_clients_figures() -> None:
    metrics, failures = client_metrics(_output("client_2servers_randrw_terse.txt"),
                                       {"hosts": "h1+h2"}, list(ENDPOINTS_T))
    assert failures == {}
    lines = {line.split(";")[2]: line for line in
             fixture_text("fio", "client", "client_2servers_randrw_terse.txt").splitlines()
             if line.startswith("3;")}
    by = {(m.params["host"], m.name): m.value for m in metrics if m.params}
    for host, job in (("h1", "disklab-h1"), ("h2", "disklab-h2"), ("all", "All clients")):
        # terse v3: read KiB/s is field 7, read IOPS 8, write KiB/s 48; fio's own figures
        assert by[(host, "read")] == _terse_field(lines[job], 7) * 1024
        assert by[(host, "read:iops")] == _terse_field(lines[job], 8)
        assert by[(host, "write")] == _terse_field(lines[job], 48) * 1024
    assert by[("h1", "read:clat_mean")] == _terse_field(lines["disklab-h1"], 16) * 1000
    assert ("h1", "read:lat_p99") in by and ("all", "read:lat_p99") not in by
    assert by[("h2", "cpu:sys")] == _terse_field(lines["disklab-h2"], 89)
    assert all(m.params and m.params["hosts"] == "h1+h2" for m in metrics)


def test_the_clients_eta_line_is_the_live_progress() -> None:
    parser = FioClientAdapter(ENDPOINTS_T).progress_parser(
        {"hosts": "h1+h2", "size": 64 << 20, "numjobs": 1})
    stdout = fixture_text("fio", "client", "client_2servers_randrw_terse.stdout.txt")
    updates = [u for line in stdout.split("\r") if (u := parser.feed("stdout", line))]
    assert updates[-1].done_bytes == 2 * (64 << 20)  # [100.0%] of both hosts' bytes
    assert updates[1].rate == (48.2 + 20.4) * 1024**2  # r=48.2M,w=20.4M: all hosts at once
    assert updates[1].phase == "random mixed"


def test_a_killed_server_is_named_and_the_other_host_is_kept() -> None:
    adapter = FioClientAdapter(ENDPOINTS_T)
    output = _output("client_2servers_one-killed_terse.txt")
    with pytest.raises(ToolError, match=r"host h2: its fio server \(127.0.0.42,8765\) "
                                        "disconnected during the run"):
        adapter.parse_result(output, {"hosts": "h1+h2"})
    kept = adapter.parse_partial(output, {"hosts": "h1+h2"})
    assert {m.params["host"] for m in kept if m.params} == {"h1"}  # no All clients printed
    assert all(m.note is None for m in kept)  # h1 finished: its figures are complete


def test_a_refused_connection_is_named() -> None:
    endpoints = [ENDPOINTS_T[0], HostEndpoint("h9", "127.0.0.49", 8765, "/tmp")]
    output = _output("client_2servers_one-refused_terse.txt",
                     fixture_text("fio", "client", "client_2servers_one-refused_terse.stderr.txt"))
    metrics, failures = client_metrics(output, {"hosts": "h1+h9"}, endpoints)
    assert failures == {"h9": "its fio server (127.0.0.49,8765) stopped answering during the "
                              "run: it answered at the session's start, now it refused the "
                              "connection"}
    assert {m.params["host"] for m in metrics if m.params} == {"h1"}


def test_a_damaged_terse_line_is_reported_with_its_line() -> None:
    text = fixture_text("fio", "client", "client_2servers_randrw_terse.txt")
    first = text.splitlines()[0]
    damaged = text.replace(first, first.replace(";53556;", ";5x556;", 1), 1)
    with pytest.raises(ParseError, match="line 1"):
        client_metrics(ToolOutput(stdout="", result_file=damaged), {"hosts": "h1+h2"},
                       list(ENDPOINTS_T))


def test_drop_caches_says_it_is_this_machines_only(tmp_path: Path) -> None:
    text = "drop_caches = true\n" + PLAN.format(dir=tmp_path, hosts='hosts = "h1"', h3="")
    warnings = [w for w in parse_plan(text).warnings if w.key == "drop_caches"]
    assert any("this machine's page cache only" in w.message for w in warnings)
