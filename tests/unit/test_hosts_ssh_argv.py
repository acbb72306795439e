"""The ssh command DiskLab runs for a host started over SSH: a terminal (so that the server dies
with the session), the forward to the remote's loopback, values that cannot become options, and
the remote command's facts read back (run here by sh, as the remote's would)."""

from __future__ import annotations

import os
import shlex
import subprocess

from disklab.core.hosts.ssh import parse_facts, ssh_argv
from disklab.core.vocab.model import Host


def test_the_server_listens_on_the_remotes_loopback_through_a_forward() -> None:
    host = Host("h1", "node1", 8771, "ssh", "/srv/it's mine", user="bench", ssh_port=2222,
                ssh_config="/etc/disklab/ssh_config")
    argv = ssh_argv(host, 40001)
    assert argv[:1] == ["-tt"]  # a terminal there: its hangup ends the server
    assert argv[argv.index("-L") + 1] == "127.0.0.1:40001:127.0.0.1:8771"
    assert argv[argv.index("-F") + 1] == "/etc/disklab/ssh_config"
    assert argv[argv.index("-p") + 1] == "2222" and argv[argv.index("-l") + 1] == "bench"
    assert argv[-3:-1] == ["--", "node1"]  # nothing after '--' is read as an ssh option
    remote = shlex.split(argv[-1])
    assert remote[:2] == ["sh", "-c"]
    assert remote[2].endswith("exec fio --server=127.0.0.1,8771")


def test_the_remote_commands_facts_are_read_back(tmp_path) -> None:
    odd = tmp_path / "it's a dir"
    odd.mkdir()
    command = shlex.split(ssh_argv(Host("h1", "node1", 8771, "ssh", str(odd)), 1)[-1])
    script = command[2].replace("exec fio --server=127.0.0.1,8771", "true")
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    facts = parse_facts(out.stdout.replace("\n", "\r\n"))  # as a terminal delivers it
    assert facts["kernel"] == f"Linux {os.uname().release}"
    assert facts["cpus"] == os.cpu_count()
    fstype = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "-T", str(odd)],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert facts["filesystem"]["fstype"] == fstype
    assert parse_facts("no markers") == {}
