"""What the root-boundary tests share: a user who is not root (made for the test and removed
after it, by name), a root-owned helper installed by `disklab install-helper` into a test
directory (never over /usr/local or /usr/libexec of the machine), and a helper spoken to in raw
lines, so that a test can send what no request dataclass would build."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

import disklab

BRANCH = "s7-root"
CHECKOUT_APP = Path(disklab.__file__).resolve().parents[1]


@dataclass
class LocalUser:
    name: str
    uid: int
    gid: int
    home: Path  # owned by the user


@contextmanager
def made_user(name: str) -> Iterator[LocalUser]:
    """A system user made for the test (and removed after it, with its home) unless it exists.
    Each test module names a user of its own: modules run at once on the suite's workers, and
    the module that made a user removes it, and kills its processes, at its end."""
    for tool in ("useradd", "userdel", "sudo"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} is missing: `make test` installs it")
    made = False
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--shell",
                        "/usr/sbin/nologin", name], check=True)
        made = True
    entry = pwd.getpwnam(name)
    home = Path(tempfile.mkdtemp(prefix=f"disklab-{BRANCH}-home-", dir="/var/tmp"))
    os.chown(home, entry.pw_uid, entry.pw_gid)
    os.chmod(home, 0o755)
    try:
        yield LocalUser(name, entry.pw_uid, entry.pw_gid, home)
    finally:
        if made:  # what the test started as its user (a killed run's last writes), by pid
            for p in psutil.process_iter(["uids"]):
                if p.info["uids"] and p.info["uids"].real == entry.pw_uid:
                    with contextlib.suppress(psutil.Error):
                        p.kill()
                        p.wait(10)
        shutil.rmtree(home, ignore_errors=True)
        if made:
            subprocess.run(["userdel", name], check=False)


@dataclass
class Installed:
    root: Path  # root-owned directory holding both
    libdir: Path
    launcher: Path


@contextmanager
def sudoers_rule(user: LocalUser, launcher: Path) -> Iterator[Path]:
    """The README's rule: the user may start the launcher as root, without a password, and
    nothing else (a file of its own under /etc/sudoers.d, removed after)."""
    rule = Path(f"/etc/sudoers.d/disklab-{BRANCH}-{user.name}-{launcher.parent.parent.name}")
    rule.write_text(f"{user.name} ALL=(root) NOPASSWD: {launcher}\n")
    os.chmod(rule, 0o440)
    try:
        yield rule
    finally:
        rule.unlink(missing_ok=True)


@contextmanager
def installed_helper() -> Iterator[Installed]:
    """`disklab install-helper` into a root-owned test directory: the package copy and the
    launcher naming this machine's root-owned interpreter."""
    root = Path(tempfile.mkdtemp(prefix=f"disklab-{BRANCH}-helper-", dir="/var/tmp"))
    os.chmod(root, 0o755)
    libdir, launcher = root / "lib", root / "libexec" / "disklab-helper"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "disklab", "install-helper", "--libdir", str(libdir),
             "--launcher", str(launcher), "--python", os.path.realpath(sys.executable)],
            capture_output=True, text=True, cwd="/")
        assert done.returncode == 0, done.stderr
        yield Installed(root, libdir, launcher)
    finally:
        shutil.rmtree(root, ignore_errors=True)


class RawHelper:
    """A helper process spoken to in raw bytes: one line out, the answers read one by one."""

    def __init__(self, argv: list[str], env: dict[str, str], user: LocalUser | None = None
                 ) -> None:
        """`user`: started as that user (its uid and group, no other groups), as a user's
        DiskLab starts `sudo -n LAUNCHER`."""
        who = {"user": user.uid, "group": user.gid, "extra_groups": []} if user else {}
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env, cwd="/", **who)
        self._buf = b""
        self.hello = json.loads(self.read_line(60) or "null")

    def read_line(self, timeout: float) -> str | None:
        assert self.p.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.p.stdout], [], [], left)
            if ready:
                chunk = os.read(self.p.stdout.fileno(), 1 << 16)
                if not chunk:
                    return None
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def send(self, data: bytes, timeout: float = 120) -> list[dict]:
        """Send `data` (one line, newline added) and a ping after it: the answers before the
        ping's (the ping proves the helper is alive and nothing else was written)."""
        assert self.p.stdin is not None
        self.p.stdin.write(data + b"\n" + b'{"id": 999999, "op": "ping"}\n')
        self.p.stdin.flush()
        answers = []
        while True:
            line = self.read_line(timeout)
            assert line is not None, f"no answer (helper exit {self.p.poll()}): " \
                f"{self.p.stderr.read().decode()[-2000:] if self.p.poll() is not None else ''}"
            answer = json.loads(line)
            if answer.get("id") == 999999:
                assert answer["ok"], answer
                return answers
            answers.append(answer)

    def ask(self, op: str, timeout: float = 120, **args: object) -> dict:
        """One request, its one answer."""
        answers = self.send(json.dumps({"id": 1, "op": op, "args": args}).encode(), timeout)
        assert len(answers) == 1, answers
        return answers[0]

    def close(self) -> None:
        assert self.p.stdin is not None
        self.p.stdin.close()
        try:
            self.p.wait(60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def helper_env(**more: str) -> dict[str, str]:
    return {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LANG": "C.UTF-8", **more}


def venv_python() -> str:
    """This checkout's interpreter (its venv: the editable install of this worktree's app/)."""
    return os.path.abspath(sys.executable)
