"""A fio server DiskLab starts on another machine: `ssh -tt -L ... HOST fio --server=127.0.0.1,P`
driven under a pty with pexpect.

Why a terminal (core.proc.start_on_terminal starts ssh on one; this module imports pexpect
for its expect() patterns and errors, the one exception the import-linter contract names): ssh
asks its questions (an unknown host key with its fingerprint, a password, a key passphrase) on
its controlling terminal, never on a pipe; a person must answer them, through the `Ask`
callback (the terminal for the CLI, a dialog in the GUI). This is the design card's choice for
exactly this. Every value in the argv is checked by core.hosts.config first.

What runs where, and how it ends:
- The server listens on the remote's loopback only (127.0.0.1,PORT): nobody on the network can
  send it a job. DiskLab reaches it through the SSH local forward 127.0.0.1:LOCAL -> remote
  127.0.0.1:PORT, so the job and its results travel inside the SSH connection.
- `-tt` gives the remote command a terminal: when the SSH session ends for any reason (stop(),
  a cancel, DiskLab killed: its end of the pty closes, ssh gets SIGHUP), the remote terminal
  hangs up and the kernel sends the fio server SIGHUP, which ends it.
- Each question is asked once per host per session; an answer is sent to ssh and never kept.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shlex
import socket
import time
from collections.abc import Callable

import pexpect

from disklab.core.hosts.ssh_settings import SshSettingsError, chosen_ssh_config
from disklab.core.proc import start_on_terminal
from disklab.core.vocab.errors import DisklabError
from disklab.core.vocab.model import Host

# (host name, the question as ssh put it, secret) -> the answer, or None to decline
Ask = Callable[[str, str, bool], str | None]

_HOST_KEY = r"continue connecting \(yes/no[^)]*\)\? ?"
_PASSPHRASE = r"Enter passphrase for key [^\n]*: ?"
_PASSWORD = r"(?i)[^\n]*password[^\n]*: ?$"
READY_TIMEOUT = 60.0  # seconds for ssh to log in and the server to listen (a person answers)
SAID_CHARS = 300  # the most of what ssh said that an error (and so the library) keeps
# ssh's complaints about a configuration line ("FILE: line N: Bad configuration option: TEXT",
# "FILE line N: no argument after keyword \"TEXT\""): the line's own text may be a secret of
# that file; the complaint's words before any quote or colon stay
_CONFIG_LINE = re.compile(r"(?m)^(?P<where>[^\n]*?:? line \d+): (?P<what>[^:\"'\n]*)[^\n]*$")


class HostError(DisklabError):
    """A host could not be reached or started; the message names it and says what happened."""


def free_local_port() -> int:
    """A TCP port free on 127.0.0.1 now, for an SSH local forward."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(address: str, port: int, wait: float = 0.3) -> bool:
    """Whether a server answers at address:port. Through an SSH forward the local port always
    accepts; when nothing listens at the far end ssh closes the connection at once, while fio's
    server keeps it open waiting for a command: open for `wait` seconds means a server."""
    try:
        with socket.create_connection((address, port), timeout=2.0) as s:
            s.settimeout(wait)
            try:
                return s.recv(1) != b""
            except TimeoutError:
                return True
    except OSError:
        return False


FACTS_BEGIN = "DISKLAB-FACTS-BEGIN"
FACTS_END = "DISKLAB-FACTS-END"


# fact -> the remote shell's command that prints it (one line)
_FACT_COMMANDS = (
    ("kernel", "uname -sr"), ("machine", "uname -m"), ("cpus", "nproc"),
    ("cpu_model", "grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2-"),
)


def remote_command(host: Host) -> str:
    """What ssh runs there (ssh hands the remote shell one string, so each value is quoted):
    a few facts fio does not report (kernel, CPUs, the directory's filesystem) as key=value
    lines between two markers, then `exec fio --server` bound to loopback, so that the server
    is the process the terminal's hangup reaches."""
    commands = [*_FACT_COMMANDS, ("filesystem", "findmnt -n -o FSTYPE,SOURCE,OPTIONS -T "
                                                 + shlex.quote(host.directory))]
    script = "; ".join([
        f"echo {FACTS_BEGIN}",
        *(f"printf '{key}=%s\\n' \"$({command} 2>/dev/null)\"" for key, command in commands),
        f"echo {FACTS_END}",
        f"exec fio --server=127.0.0.1,{host.port}"])
    return shlex.join(["sh", "-c", script])  # whatever the account's login shell is


def parse_facts(text: str) -> dict[str, object]:
    """The facts remote_command printed; an empty or missing one is left out."""
    if FACTS_BEGIN not in text or FACTS_END not in text:
        return {}
    body = text.split(FACTS_BEGIN, 1)[1].split(FACTS_END, 1)[0]
    facts: dict[str, object] = {}
    for line in body.replace("\r", "\n").split("\n"):
        key, _, value = line.strip().partition("=")
        value = value.strip()
        if not value:
            continue
        if key == "cpus" and value.isdigit():
            facts["cpus"] = int(value)
        elif key == "filesystem" and len(value.split()) == 3:
            fstype, source, options = value.split()
            facts["filesystem"] = {"fstype": fstype, "source": source, "options": options}
        elif key in ("kernel", "machine", "cpu_model"):
            facts[key] = value
    return facts


def scrubbed(text: str) -> str:
    """What ssh said, without the text of any configuration line it quotes in a complaint
    (the file and line number stay): what is kept goes into errors, events and bundles."""
    return _CONFIG_LINE.sub(lambda m: f"{m['where'][-200:]}: {m['what'].strip()[:60]}", text)


def ssh_argv(host: Host, local_port: int) -> list[str]:
    """ssh's argv (without 'ssh'): a terminal, the forward, the user's chosen ssh_config
    (core.hosts.ssh_settings; a plan names none) and the command."""
    args = ["-tt", "-o", "ExitOnForwardFailure=yes", "-o", "ServerAliveInterval=5",
            "-o", "ServerAliveCountMax=3",
            "-L", f"127.0.0.1:{local_port}:127.0.0.1:{host.port}"]
    if host.ssh_config:
        args += ["-F", host.ssh_config]
    if host.ssh_port:
        args += ["-p", str(host.ssh_port)]
    if host.user:
        args += ["-l", host.user]
    return [*args, "--", host.address, remote_command(host)]


class SshServer:
    """One host's fio server, started over SSH and stopped with the SSH session."""

    def __init__(self, host: Host, ask: Ask | None = None,
                 cancelled: Callable[[], bool] | None = None):
        self.host = host
        self.ask = ask
        self.cancelled = cancelled or (lambda: False)  # the run's cancel, checked while waiting
        self.local_port = free_local_port()
        self.child: pexpect.spawn | None = None
        self.transcript: list[str] = []
        self.asked: set[str] = set()
        self.facts: dict[str, object] = {}  # what the remote command printed before fio

    @property
    def argv(self) -> list[str]:
        return ["ssh", *ssh_argv(self.host, self.local_port)]

    def start(self, timeout: float = READY_TIMEOUT) -> None:
        """Log in, answer ssh's questions through `ask`, and wait until the server listens.
        HostError names the host and what went wrong; nothing is left running then."""
        env = {**os.environ, "LC_ALL": "C"}
        try:  # the user's own choice, read at each start; never the plan's
            config = chosen_ssh_config()
        except SshSettingsError as e:
            raise HostError(f"host {self.host.name}: {e}") from e
        self.host = dataclasses.replace(self.host, ssh_config=config)
        try:
            self.child = start_on_terminal("ssh", ssh_argv(self.host, self.local_port), env)
        except pexpect.ExceptionPexpect as e:
            raise HostError(f"host {self.host.name}: ssh could not start: {e}") from e
        try:
            self._log_in(time.monotonic() + timeout)
        except BaseException:
            self.stop()
            raise

    def _log_in(self, deadline: float) -> None:
        child = self.child
        assert child is not None
        name = self.host.name
        while True:
            if self.cancelled():
                raise HostError(f"host {name}: cancelled while its server was starting")
            if time.monotonic() > deadline:
                raise HostError(f"host {name}: its fio server did not answer through SSH "
                                f"within {READY_TIMEOUT:g} s{self.said()}")
            i = child.expect([_HOST_KEY, _PASSPHRASE, _PASSWORD, pexpect.EOF, pexpect.TIMEOUT],
                             timeout=0.3)
            self.transcript.append(child.before or "")
            if i in (0, 1, 2):
                kind = ("host key", "passphrase", "password")[i]
                question = ((child.before or "") + (child.after or "")).strip()
                self._answer(kind, question, secret=i != 0)
            elif i == 3:
                raise HostError(f"host {name}: ssh ended before the fio server started"
                                f"{self.said()}")
            elif listening("127.0.0.1", self.local_port):
                self.facts = parse_facts("".join(self.transcript))
                return

    def _answer(self, kind: str, question: str, secret: bool) -> None:
        """Ask the person, once per kind; a second identical question means the first answer
        was refused, and the host fails instead of asking again."""
        assert self.child is not None
        name = self.host.name
        if kind in self.asked:
            raise HostError(f"host {name}: ssh refused the {kind} and asked again")
        self.asked.add(kind)
        answer = self.ask(name, question, secret) if self.ask is not None else None
        if answer is None:
            what = ("the host key is unknown (answer the question, or add it to "
                    "known_hosts with ssh first)" if kind == "host key"
                    else f"ssh asked for a {kind} and none was given")
            raise HostError(f"host {name}: {what}")
        self.child.sendline(answer)

    def said(self) -> str:
        text = "\n".join(self.transcript)
        if self.child is not None:
            with contextlib.suppress(pexpect.EOF, pexpect.TIMEOUT, OSError, ValueError):
                text += "\n" + self.child.read_nonblocking(4096, timeout=0)
        text = " ".join(scrubbed(text.replace("\r", "\n")).split())
        return f" (ssh said: {text[-SAID_CHARS:]})" if text else ""

    def drain(self) -> None:
        """Read what the server printed, so that its terminal never fills up."""
        if self.child is None:
            return
        for _ in range(64):
            try:
                data = self.child.read_nonblocking(4096, timeout=0)
            except (pexpect.EOF, pexpect.TIMEOUT, OSError, ValueError):
                return
            self.transcript.append(data)
            del self.transcript[:-50]

    def alive(self) -> bool:
        self.drain()
        return self.child is not None and self.child.isalive()

    def stop(self) -> None:
        """End the server: ^C on its terminal (fio stops), then the SSH session (the terminal
        hangs up, which ends whatever is left there). Never raises."""
        child, self.child = self.child, None
        if child is None:
            return
        with contextlib.suppress(pexpect.ExceptionPexpect, OSError):
            if child.isalive():
                child.sendcontrol("c")
                child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=3)
        with contextlib.suppress(pexpect.ExceptionPexpect, OSError):
            child.close(force=True)

