"""What several test files need: recorded fixtures, sessions in a real library, hostile input,
scratch filesystems and small plans.

Test files import from here, never from a conftest: a conftest is pytest's (it holds fixtures and
is imported by pytest under a name of its own choosing), so importing it as a module loads it
twice. The conftests take their helpers from here too.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from disklab.core.helper_client import protocol
from disklab.core.hosts.ssh_settings import save_ssh_config
from disklab.core.library import Library
from disklab.core.vocab.events import (
    CaseFinished,
    CaseStarted,
    LogLine,
    Notice,
    Sample,
    SessionFinished,
    SessionStarted,
)
from disklab.core.vocab.model import Case, Metric

FIXTURES = Path(__file__).resolve().parent / "fixtures"
IS_ROOT = os.geteuid() == 0

# ---------------------------------------------------------------------------------------------
# recorded outputs


def fixture_bytes(*parts: str) -> bytes:
    """A recorded file under tests/fixtures: fixture_bytes("fio", NAME) or ("fio/NAME")."""
    return FIXTURES.joinpath(*parts).read_bytes()


def fixture_text(*parts: str) -> str:
    """A recorded output as the runner reads a tool's: UTF-8, bad bytes replaced (U+FFFD)."""
    return fixture_bytes(*parts).decode("utf-8", errors="replace")


# Lines as the runner splits and logs a tool's output: '\r' ends a line as '\n' does (progress
# redraws are lines).
EOL = re.compile(r"\r\n|\r|\n")


def lines_of(text: str) -> int:
    """How many lines `text` has as the runner logs it.

    This is the count a ParseError's line may reach: dd, iozone and bonnie number lines split on
    '\\r' as well as '\\n', fio numbers them as an editor does ('\\n' only). Counting '\\r' too
    is never smaller than an editor's count, so it bounds both; counting '\\n' alone would call a
    correct bonnie line number out of range once a '\\r' is in the text.
    """
    return len(EOL.split(text))


# ---------------------------------------------------------------------------------------------
# hostile input (hypothesis)

# characters that matter to the tools' formats, plus the replacement character of bad UTF-8
FLIPS = ('0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '.', ',', ':', ';', '{', '}', '[',
         ']', '"', '+', '-', 'e', 'E', ' ', 'k', 'K', 'm', 'M', 'g', 'G', '%', '=', '\ufffd',
         '\r', '\n', '\t', "", "  ", "nan", "inf", "1e999", "kB", "MB/s", "9" * 25)
BAD_BYTES = (b"\xff", b"\xfe\xff", b"\xc3", b"\xe2\x82", b"\x00", b"\xed\xa0\x80")
MUTATIONS = ("delete", "duplicate", "truncate", "flip", "swap", "bytes", "cut_json")

# derandomized so a failure reproduces, and long enough per example for the slow parsers; how
# many examples: examples(), at the test session's profile
HOSTILE = settings(deadline=timedelta(seconds=3), derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LONG_EXAMPLES = 1000  # the "long" profile's (tests/conftest.py): the big fuzz runs


def examples(full: int) -> int:
    """A fuzz test's examples: `full` at the long profile (make test-long), the same share of
    the profile's count at the CI profile of make test and make check. Called where a test is
    decorated, after pytest loaded the profile (--hypothesis-profile)."""
    return max(10, full * settings.default.max_examples // LONG_EXAMPLES)


@st.composite
def mutated(draw: st.DrawFn, texts: Mapping[str, str],
            kinds: Sequence[str] = MUTATIONS) -> str:
    """One of `texts` damaged one to four times: a line deleted, duplicated or swapped, the
    text cut short, a character replaced, invalid UTF-8 inserted (and decoded with
    errors="replace" as the runner does), or a JSON document cut at a bracket."""
    s = texts[draw(st.sampled_from(sorted(texts)))]
    for _ in range(draw(st.integers(1, 4))):
        lines = s.split("\n")
        kind = draw(st.sampled_from(list(kinds)))
        if kind == "delete" and len(lines) > 1:
            i = draw(st.integers(0, len(lines) - 1))
            s = "\n".join(lines[:i] + lines[i + 1:])
        elif kind == "duplicate":
            i = draw(st.integers(0, len(lines) - 1))
            s = "\n".join(lines[:i + 1] + lines[i:])
        elif kind == "truncate":
            s = s[: draw(st.integers(0, len(s)))]
        elif kind == "flip" and s:
            i = draw(st.integers(0, len(s) - 1))
            s = s[:i] + draw(st.sampled_from(FLIPS)) + s[i + 1:]
        elif kind == "swap" and len(lines) > 1:
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            s = "\n".join(lines)
        elif kind == "bytes":
            data = s.encode()
            i = draw(st.integers(0, len(data)))
            s = (data[:i] + draw(st.sampled_from(BAD_BYTES)) + data[i:]).decode(
                "utf-8", errors="replace")
        elif kind == "cut_json":
            brackets = [m.start() for m in re.finditer(r"[{}\[\]]", s)]
            if brackets:
                s = s[: draw(st.sampled_from(brackets)) + draw(st.integers(0, 1))]
    return s


# ---------------------------------------------------------------------------------------------
# sessions in a real library


def record_session(
    lib: Library,
    runs: Sequence[tuple[Case, Sequence[Sequence[Metric]]]],
    *,
    name: str = "s",
    status: str | None = "finished",
    host: Mapping[str, Any] | None = None,
    plan_text: str | None = None,
    warnings: Sequence[str] = (),
    argv: Sequence[str] = ("tool",),
    sample_series: str | None = None,
    log: str | None = None,
    notices: Iterable[str] = (),
    start: float = 1.0,
) -> int:
    """Record a session through the real recorder, from real events; its id.

    `runs` gives, per case, the metrics of each repeat (every case has as many repeats).
    Each run starts at start+1, logs `log` on stdout at start+1.6, samples `sample_series` (the
    value of the run's first metric) at start+1.5 and finishes at start+2; `notices` are warnings
    at start+2.5; the session finishes at start+3 with `status`. status=None leaves the session
    open and the recorder unclosed, as a killed run does.
    """
    repeats = {len(per_repeat) for _case, per_repeat in runs}
    assert len(repeats) == 1, "every case needs as many repeats"
    (n,) = repeats
    rec = lib.recorder()
    rec.handle(SessionStarted(name=name, cases=tuple(case for case, _ in runs), repeats=n,
                              host=dict(host or {}), warnings=tuple(warnings), t=start,
                              plan_text=f"name = '{name}'\n" if plan_text is None else plan_text))
    for repeat in range(1, n + 1):
        for case, per_repeat in runs:
            metrics = tuple(per_repeat[repeat - 1])
            rec.handle(CaseStarted(case=case, repeat=repeat, argv=tuple(argv), t=start + 1))
            if sample_series is not None and metrics:
                rec.handle(Sample(case_id=case.id, series=sample_series, repeat=repeat,
                                  value=metrics[0].value or 0.0, t=start + 1.5))
            if log is not None:
                rec.handle(LogLine(case_id=case.id, stream="stdout", text=log, repeat=repeat,
                                   t=start + 1.6))
            rec.handle(CaseFinished(case_id=case.id, repeat=repeat, metrics=metrics,
                                    exit_status=0, duration=1.0, t=start + 2))
    for message in notices:
        rec.handle(Notice(level="warning", message=message, t=start + 2.5))
    if status is not None:
        rec.handle(SessionFinished(status=status, t=start + 3))
        rec.close()
    assert rec.session_id is not None
    return rec.session_id


# ---------------------------------------------------------------------------------------------
# plans


ENGINE_PLAN = """\
name = "{name}"
repeats = {repeats}

[target]
directory = "{directory}"

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = "1m"
size = "16m"
runtime = "{runtime}"
direct = false
"""


def run_and_record(library: Path, plan_text: str) -> int:
    """A plan run for real through run_plan into `library`: the new session's id."""
    from disklab.core.plan.parse import parse_plan
    from disklab.core.run.runner import run_plan

    lib = Library.open(library)
    rec = lib.recorder()
    try:
        for ev in run_plan(parse_plan(plan_text).plan):
            rec.handle(ev)
    finally:
        rec.close()
        lib.close()
    return int(rec.session_id)


def engine_plan(directory: Path, name: str = "gui test", repeats: int = 1,
                runtime: str = "1s") -> str:
    """A small real plan for the built-in engine: two cases that last about `runtime` each,
    long enough for the live samplers (every 0.5 s) to report."""
    return ENGINE_PLAN.format(name=name, repeats=repeats, directory=directory, runtime=runtime)


# ---------------------------------------------------------------------------------------------
# scratch filesystems on loop devices (the fixtures are in tests/conftest.py)


@dataclass
class ScratchFs:
    image: Path
    device: str
    mountpoint: Path
    fstype: str


def _run(argv: list[str]) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


def make_scratch_fs(base: Path, fstype: str = "ext4", size: str = "1G") -> ScratchFs:
    """Make an image, attach it, mkfs it and mount it under `base`. Caller must teardown()."""
    image = base / f"scratch-{fstype}.img"
    mountpoint = base / f"mnt-{fstype}"
    mountpoint.mkdir()
    _run(["truncate", "-s", size, str(image)])
    device = _run(["losetup", "--find", "--show", "--direct-io=on", str(image)])
    fs = ScratchFs(image, device, mountpoint, fstype)
    try:
        mkfs = {
            "ext4": ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
            "xfs": ["mkfs.xfs", "-q", "-f"],
            "btrfs": ["mkfs.btrfs", "-q", "-f"],
        }[fstype]
        _run([*mkfs, device])
        _run(["mount", device, str(mountpoint)])
    except BaseException:
        teardown(fs)
        raise
    return fs


def teardown(fs: ScratchFs) -> None:
    """Unmount and detach exactly what make_scratch_fs attached; never raises."""
    if os.path.ismount(fs.mountpoint):
        subprocess.run(["umount", str(fs.mountpoint)], check=False)
        if os.path.ismount(fs.mountpoint):
            subprocess.run(["umount", "-l", str(fs.mountpoint)], check=False)
    subprocess.run(["losetup", "-d", fs.device], check=False, capture_output=True)
    fs.image.unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------
# loop devices of one test, undone by name


def sh(*argv: str, check: bool = True) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: {done.stderr}")
    return done.stdout.strip()


class Loops:
    """Images, loop devices, mounts, swaps and processes of one test, all undone by cleanup()."""

    def __init__(self, base: Path):
        self.base = base
        self.images: list[Path] = []
        self.mounts: list[Path] = []
        self.swaps: list[str] = []
        self.procs: list[subprocess.Popen[str]] = []

    def image(self, name: str, size: str = "64M") -> Path:
        path = self.base / f"{name}.img"
        sh("truncate", "-s", size, str(path))
        self.images.append(path)
        return path

    def attach(self, image: Path, partscan: bool = False) -> str:
        argv = ["losetup", "--find", "--show", "--direct-io=on"]
        return sh(*argv, *(["--partscan"] if partscan else []), str(image))

    def device(self, name: str, size: str = "64M") -> str:
        return self.attach(self.image(name, size))

    def mount(self, device: str, name: str, fs: str = "ext4") -> Path:
        sh(f"mkfs.{fs}", "-q", "-F" if fs.startswith("ext") else "-f", device)
        mnt = self.base / name
        mnt.mkdir()
        sh("mount", device, str(mnt))
        self.mounts.append(mnt)
        return mnt

    def start(self, argv: list[str], **kw: object) -> subprocess.Popen[str]:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, **kw)  # type: ignore[call-overload]
        self.procs.append(p)
        return p

    def cleanup(self) -> None:
        for p in self.procs:
            p.kill()
            p.wait()
        for dev in self.swaps:
            sh("swapoff", dev, check=False)
        for mnt in reversed(self.mounts):
            if os.path.ismount(mnt):
                sh("umount", str(mnt), check=False)
            if os.path.ismount(mnt):
                sh("umount", "-l", str(mnt), check=False)
        for image in self.images:
            for dev in sh("losetup", "-n", "-O", "NAME", "-j", str(image), check=False).split():
                if any(p.name.startswith(Path(dev).name + "p")
                       for p in Path(f"/sys/block/{Path(dev).name}").iterdir()):
                    sh("partx", "-d", dev, check=False)
                sh("losetup", "-d", dev, check=False)
            image.unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------
# memory of a command

_MEASURED = (
    "import json, resource, subprocess, sys\n"
    "argv, timeout = json.loads(sys.argv[1]), float(sys.argv[2])\n"
    "p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(json.dumps([p.returncode, p.stdout, p.stderr, peak]))\n"
)


def run_measured(argv: Sequence[str], timeout: float = 120.0
                 ) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run `argv` and return it with its peak RSS in bytes. The child runs under a fresh
    interpreter of its own, whose getrusage(RUSAGE_CHILDREN) sees that one child only (the
    test process's figure is the largest of every child it ever waited for)."""
    outer = subprocess.run([sys.executable, "-c", _MEASURED, json.dumps(list(argv)),
                            str(timeout)], capture_output=True, text=True, timeout=timeout + 30)
    assert outer.returncode == 0, outer.stderr
    code, out, err, peak_kib = json.loads(outer.stdout)
    return subprocess.CompletedProcess(list(argv), code, out, err), int(peak_kib) * 1024


# --- loopback addresses of this test process's own

# pytest-xdist's worker of this process ("gw0", "gw1", ...), "" when pytest runs alone
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


def loopback(host: int) -> str:
    """The loopback address `host` of this test process: 127.0.0.HOST when pytest runs alone,
    127.N+1.0.HOST in pytest-xdist's worker gwN. Tests that run at once (make test runs two at
    a time) then never bind the same address and port: the fio servers at 8765 and the sshd at
    2222 are each a worker's own (all of 127.0.0.0/8 is the loopback interface's)."""
    number = int(WORKER.removeprefix("gw")) + 1 if WORKER.startswith("gw") else 0
    return f"127.{number}.0.{host}"


# --- an sshd of the tests' own, for hosts started over SSH (core/hosts/ssh.py)

SSH_PORT = 2222
SSH_ADDRESSES = (loopback(5), loopback(6))


@dataclass
class Sshd:
    dir: Path
    config: Path  # the client's ssh_config
    known_hosts: Path
    host_key_line: str  # 'ssh-ed25519 AAAA...' of the server


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _open(address: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=1):
        return True
    return False


@contextlib.contextmanager
def own_sshd(tmp_path: Path) -> Iterator[Sshd]:
    """An sshd of the test's own on loopback(5) and loopback(6) (127.0.0.5 and .6 when pytest
    runs alone), port 2222: throwaway host and user keys in `tmp_path/ssh`, root by key only;
    `Sshd.config` is an ssh_config for the client (IdentityFile, UserKnownHostsFile there),
    kept as the user's ssh_config in DiskLab's settings (the session's temporary XDG config
    directory; a plan names none) while the daemon runs, so nothing of the real user's SSH is
    touched. Stopped (and /run/sshd removed when it made it) at the end."""
    taken = [a for a in SSH_ADDRESSES if _open(a, SSH_PORT)]
    assert not taken, f"{taken[0]}:{SSH_PORT} is taken by another sshd: this test needs its own"
    d = tmp_path / "ssh"
    d.mkdir()
    for key in ("host_key", "id_ed25519"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / key)],
                       check=True)
    (d / "authorized_keys").write_text((d / "id_ed25519.pub").read_text())
    listen = "".join(f"ListenAddress {a}\n" for a in SSH_ADDRESSES)
    (d / "sshd_config").write_text(
        f"Port {SSH_PORT}\n{listen}HostKey {d}/host_key\nPidFile {d}/sshd.pid\n"
        f"AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "StrictModes no\n")
    config = d / "ssh_config"
    config.write_text(
        f"Host *\n  User root\n  Port {SSH_PORT}\n  IdentityFile {d}/id_ed25519\n"
        f"  IdentitiesOnly yes\n  UserKnownHostsFile {d}/known_hosts\n"
        "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking ask\n")
    save_ssh_config(str(config))
    try:
        with _sshd_run_dir(), _sshd(d) as sshd:
            yield sshd
    finally:
        save_ssh_config(None)


@contextlib.contextmanager
def _sshd(d: Path) -> Iterator[Sshd]:
    """The daemon of own_sshd, started on its files in `d` and stopped."""
    config = d / "ssh_config"
    daemon = subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", str(d / "sshd_config"),
                               "-E", str(d / "sshd.log")], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not all(_open(a, SSH_PORT) for a in SSH_ADDRESSES):
            assert daemon.poll() is None, (d / "sshd.log").read_text()
            assert time.monotonic() < deadline, "sshd does not listen"
            time.sleep(0.05)
        key = " ".join((d / "host_key.pub").read_text().split()[:2])
        yield Sshd(d, config, d / "known_hosts", key)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(daemon.pid, signal.SIGTERM)
        daemon.wait(10)


@contextlib.contextmanager
def machine_turn(directory: Path, alone: bool) -> Iterator[None]:
    """A test's turn on the machine among the tests of one session that run at once (make test
    runs two at a time, pytest-xdist): every test holds a shared flock on `directory`/turn while
    it runs; a test that changes a setting every process sees (vm.dirty_bytes,
    kernel.io_uring_disabled), or counts what any process may do (every read of a device,
    which another test's lsblk probes) is marked `alone` and holds it exclusively: it runs
    while no other test does. It first closes `directory`/gate, which the others pass on their
    way in: their next tests wait for it rather than keep it waiting."""
    gate = os.open(directory / "gate", os.O_RDWR | os.O_CREAT, 0o600)
    turn = os.open(directory / "turn", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if alone:
            fcntl.flock(gate, fcntl.LOCK_EX)
            fcntl.flock(turn, fcntl.LOCK_EX)
        else:
            fcntl.flock(gate, fcntl.LOCK_SH)
            fcntl.flock(turn, fcntl.LOCK_SH)
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield
    finally:
        os.close(turn)
        os.close(gate)


# One test session at a time on this machine: its tests bind loopback addresses by worker
# number (loopback), attach loop devices and change settings every process sees (`alone`), so
# two sessions at once (make test in two terminals, or beside make test-gui-hog) fail each other.
SESSION_LOCK = Path(os.environ.get("DISKLAB_TESTS_SESSION_LOCK", "/run/lock/disklab-tests-session"))


def hold_the_machine(path: Path = SESSION_LOCK,
                     say: Callable[[str], None] | None = None) -> int | None:
    """The machine for this test session, against every other DiskLab test session: an
    exclusive flock on `path`, which holds the holder's pid and command line. A session that
    finds it held says whose it is and waits for its end (two sessions at once would fail on
    each other's addresses and devices, not on DiskLab). A session started by a test of the
    holding session (its holder is an ancestor process) is part of that session's turn: it goes
    on without the lock (None). Otherwise the descriptor, to be closed at the session's end."""
    try:
        fd, writable = os.open(path, os.O_RDWR | os.O_CREAT, 0o644), True
    except PermissionError:  # another user's session made it: flock needs no write access
        fd, writable = os.open(path, os.O_RDONLY), False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 4096, 0).decode(errors="replace").strip()
        pid = int(holder.split()[0]) if holder[:1].isdigit() else 0
        if pid in _ancestors():
            os.close(fd)
            return None
        (say or _say)(f"another DiskLab test session holds this machine (pid {holder or '?'}): "
                      f"waiting for it to end")
        fcntl.flock(fd, fcntl.LOCK_EX)
    if writable:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {' '.join(sys.argv)[:1000]}\n".encode(), 0)
    return fd


def inner_session(tmp_path: Path, name: str, text: str) -> tuple[Path, dict[str, str]]:
    """A pytest session of a test's own, to run with this suite's conftest as its plugin
    (`-p tests.conftest`): a directory holding `name` (the test file's `text`) and a
    pytest.ini, and its environment, with a home of its own (no XDG variable set: the defaults
    under HOME). Returns (the directory to run in, the environment)."""
    home, inner = tmp_path / "home", tmp_path / "inner"
    home.mkdir()
    inner.mkdir()
    (inner / "pytest.ini").write_text("[pytest]\n")
    (inner / name).write_text(text)
    root = Path(__file__).resolve().parents[1]
    return inner, {"PATH": os.environ["PATH"], "HOME": str(home), "PYTHONPATH": str(root),
                   "QT_QPA_PLATFORM": "offscreen"}


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _ancestors() -> set[int]:
    """The pids of this process's parent, its parent's parent, ... up to init (/proc)."""
    found, pid = set(), os.getpid()
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state: ppid
        found.add(pid)
    return found


RUN_DIR = Path("/run/sshd")  # sshd's privilege separation directory
RUN_DIR_LOCK = Path("/run/lock/disklab-tests-sshd")


@contextlib.contextmanager
def _sshd_run_dir() -> Iterator[None]:
    """/run/sshd while a test's sshd runs. Tests run two at a time (make test), and two own_sshd
    may overlap: the directory is made by the first when missing, and removed by the last to
    stop when one of them made it. RUN_DIR_LOCK counts the daemons running and says whether
    the directory was made for them ("COUNT MADE"), under an exclusive flock."""
    fd = _lock(RUN_DIR_LOCK, fcntl.LOCK_EX)
    try:
        count, made = (int(x) for x in (os.pread(fd, 64, 0).decode().split() or ["0", "0"]))
        if not RUN_DIR.is_dir():
            RUN_DIR.mkdir(mode=0o755)
            made = 1
        _rewrite(fd, f"{count + 1} {made}")
    finally:
        os.close(fd)
    try:
        yield
    finally:
        fd = _lock(RUN_DIR_LOCK, fcntl.LOCK_EX)
        try:
            count, made = (int(x) for x in os.pread(fd, 64, 0).decode().split())
            if count > 1:
                _rewrite(fd, f"{count - 1} {made}")
            else:  # the last: the machine as it was
                if made:
                    with contextlib.suppress(OSError):
                        RUN_DIR.rmdir()
                RUN_DIR_LOCK.unlink()
        finally:
            os.close(fd)


def _rewrite(fd: int, text: str) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, text.encode(), 0)


def _lock(path: Path, how: int) -> int:
    """A descriptor of `path` (made when missing) locked with flock(how); the lock is taken again
    when the file was removed and made anew meanwhile, so that it is always the file's own."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, how)
        with contextlib.suppress(FileNotFoundError):
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return fd
        os.close(fd)
# ---------------------------------------------------------------------------------------------
# a session of two configurations x two tests, for pivot tables

MiB_ = 1 << 20
# per configuration and test, the throughput of each of three repeats (MiB/s)
PIVOT_FIGURES = {("a", "write"): (100, 104, 96), ("a", "read"): (300, 310, 290),
                 ("b", "write"): (150, 152, 148), ("b", "read"): (305, 295, 300)}
# a plan whose [report] table asks for tests as rows and configurations as columns
REPORT_PLAN = """name = "pivot"
[report]
rows = ["test"]
columns = ["config"]
[[test]]
tool = "engine"
"""


def record_two_configs(lib: Library, plan_text: str | None = None) -> int:
    """Record (real recorder) configurations a and b x engine tests write and read, three
    repeats each of PIVOT_FIGURES, with IOPS and mean latency beside each throughput."""
    runs = []
    for index, ((config, mode), values) in enumerate(PIVOT_FIGURES.items()):
        case = Case(f"c{index}", index, config, "engine", 1,
                    {"mode": mode, "block_size": MiB_, "size": 64 * MiB_})
        runs.append((case, [[Metric(mode, v * MiB_, "B/s"), Metric(f"{mode}:iops", v * 1.0,
                                                                    "op/s"),
                             Metric(f"{mode}:lat_mean", 1e6 / v, "ns")] for v in values]))
    return record_session(lib, runs, name="two configs", plan_text=plan_text)


def child_pids(pid: int) -> set[int]:
    """The children of every thread of process `pid` (/proc/PID/task/TID/children): the
    engine's forked workers, to check none outlives it."""
    found: set[int] = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as f:
            found |= {int(c) for c in f.read().split()}
    return found


# ---------------------------------------------------------------------------------------------
# the user's own DiskLab directories (tests/conftest.py keeps the session out of them)

XDG = {"XDG_CONFIG_HOME": (".config", "DiskLab"), "XDG_DATA_HOME": (".local/share", "disklab"),
       "XDG_STATE_HOME": (".local/state", "disklab")}


def real_dirs(env: Mapping[str, str]) -> dict[str, Path]:
    """DiskLab's own directories in the user's settings, data and state, as `env` places them
    (QSettings' DiskLab/DiskLab.conf, the default library, the log and crash records)."""
    home = Path(env.get("HOME") or Path.home())
    return {var: Path(env.get(var) or home / default) / name
            for var, (default, name) in XDG.items()}


def snapshot(dirs: Mapping[str, Path]) -> dict[str, dict[str, tuple[int, str]]]:
    """Every file under each directory: its size and SHA-256 (nothing when it does not
    exist)."""
    found: dict[str, dict[str, tuple[int, str]]] = {}
    for top in dirs.values():
        files: dict[str, tuple[int, str]] = {}
        for path in sorted(top.rglob("*")) if top.is_dir() else []:
            if path.is_symlink() or not path.is_file():
                continue
            digest = hashlib.sha256()
            try:
                with path.open("rb") as f:
                    for block in iter(lambda f=f: f.read(1 << 20), b""):
                        digest.update(block)
                    size = os.fstat(f.fileno()).st_size
            except FileNotFoundError:  # removed meanwhile (another DiskLab's crash record)
                continue
            files[str(path.relative_to(top))] = (size, digest.hexdigest())
        found[str(top)] = files
    return found


def user_env(saved: Mapping[str, str | None]) -> dict[str, str]:
    """os.environ with the user's own values of the `saved` variables (None: unset), as the
    session found them before it put its temporary XDG directories in their place."""
    env = {**os.environ, **{k: v for k, v in saved.items() if v is not None}}
    for var, value in saved.items():
        if value is None:
            env.pop(var, None)
    return env


def changes_of(session_paths: tuple[str, ...], real: Mapping[str, Path], before: Mapping
               ) -> tuple[list[str], list[str]]:
    """The files of the user's directories added, changed or removed since `before`: those that
    the session wrote, and the others. On a machine of its own every change is the session's.
    Where other DiskLab processes use the same account meanwhile (a shared machine: other
    checkouts' tests and windows leave their start in the real log and their crash records in
    the real state directory), a change is the session's when it names one of
    `session_paths` (a test's plan, library, target or command line names its temporary
    paths), and the others are theirs."""
    now = snapshot(real)
    ours, others = [], []
    for top, files in now.items():
        old = before.get(top, {})
        for name in sorted(set(files) | set(old)):
            if files.get(name) == old.get(name):
                continue
            path = Path(top) / name
            text = path.read_bytes().decode(errors="replace") if path.is_file() else ""
            (ours if any(p in text for p in session_paths) else others).append(str(path))
    if not any(Path(p).is_relative_to(real["XDG_STATE_HOME"]) for p in others):
        return ours + others, []  # nothing else wrote the state directory: no other DiskLab
    return ours, others


# the line the session's end prints for each file of the user's it changed (tests/conftest.py)
ISOLATION_FAILED = "this test session changed the user's own DiskLab file"


def ask(helper: Any, op: str, timeout: float | None = None, **args: Any) -> dict[str, Any]:
    """One request to the root helper in the keyword form the tests write (`op` and its
    fields), answered as a dict with the commands it ran under "ran": what a test reads of
    an answer, through the client's own typed call."""
    result = asdict(helper.call(protocol.request_of(op, args), timeout))
    result["ran"] = helper.last_ran
    return result
