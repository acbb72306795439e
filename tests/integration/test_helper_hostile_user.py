"""The helper's contract (docs/helper-contract.md), point by point, as a hostile user tries it
(issue 43): a real unprivileged user made for the module, allowed by the README's sudoers rule
to start the launcher `disklab install-helper` made (and nothing else), speaks the helper's
protocol through `sudo -n LAUNCHER`. Each test names the contract's point it checks.

  1  nothing the helper mounts carries a set-user-ID file or device node that takes effect
  2  no image the user can write (or holds open) is ever mounted
  3  no tool runs with a working directory, import path or output path the user can write
  4  no mount option that stops the kernel (or turns suid, dev, exec back on) is accepted
  5  a tampered copy of the helper runs none of its code before it refuses
  6  a SIGKILL during attach leaves nothing after the next start
  7  attach is no existence oracle; readback answers only for the helper's own mounts
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import py_compile
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from disklab.core.fs.apply import STATE_PREFIX, recover_leftovers
from disklab.core.helper_client import Privileged
from disklab.core.root_helper.state import RECORDS
from tests.integration.privhelper_fixtures import (
    CHECKOUT_APP,
    Installed,
    LocalUser,
    RawHelper,
    helper_env,
    installed_helper,
    made_user,
    sudoers_rule,
)

pytestmark = [pytest.mark.root]

USER = "dl-s8-hostile"
EXT4 = {"label": "x", "fs": "ext4"}
IMAGE_SIZE = 64 << 20
KILLS = 10
# after the image appears, before the kill: the first ones land before losetup, the middle
# ones in it, the last ones after it
DELAYS = (0, 0, 0, 0.001, 0.002, 0.004, 0.006, 0.009, 0.012, 0.02)  # 0 and 1: PINNED


@dataclass
class Setup:
    user: LocalUser
    helper: Installed


@pytest.fixture(scope="module")
def setup() -> Iterator[Setup]:
    with made_user(USER) as user, installed_helper() as inst, \
            sudoers_rule(user, inst.launcher):
        yield Setup(user, inst)


def start(s: Setup) -> RawHelper:
    """The helper as the user's DiskLab starts it: `sudo -n LAUNCHER`, as that user."""
    return RawHelper(["sudo", "-n", "--", str(s.helper.launcher)],
                     helper_env(HOME=str(s.user.home)), user=s.user)


@contextlib.contextmanager
def session(s: Setup) -> Iterator[RawHelper]:
    h = start(s)
    try:
        assert h.hello and h.hello["ready"], h.hello
        assert h.hello["served_uid"] == s.user.uid and h.hello["uid"] == 0
        yield h
    finally:
        h.close()


def as_user(s: Setup, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), user=s.user.uid, group=s.user.gid, extra_groups=[],
                          capture_output=True, text=True, timeout=60, cwd="/",
                          env=helper_env(HOME=str(s.user.home)))


def mounted(h: RawHelper, image: Path, name: str) -> tuple[str, str]:
    """attach, mkfs ext4, mount: (device, mountpoint)."""
    attached = h.ask("attach", image=str(image), size=IMAGE_SIZE)
    assert attached["ok"], attached
    device = attached["result"]["device"]
    made = h.ask("mkfs", config=EXT4, device=device)
    assert made["ok"], made
    mountpoint = f"{h.hello['workdir']}/disklab-mnt-{name}"
    done = h.ask("mount", config=EXT4, device=device, mountpoint=mountpoint)
    assert done["ok"], done
    return device, mountpoint


# --- 1 and 4: nosuid, nodev, noexec; no option that stops the kernel ------------------------

def test_1_no_setuid_file_or_device_node_on_a_helper_mount_takes_effect(setup: Setup) -> None:
    """Whatever gets onto a filesystem the helper mounted (here root puts it there, as a
    user could not): a setuid-root `id` does not run as root, a 0666 device node of another
    loop device does not open."""
    with session(setup) as h:
        device, mountpoint = mounted(h, setup.user.home / "suid.img", "suid")
        shell = Path(mountpoint) / "id"
        shutil.copy("/usr/bin/id", shell)
        os.chmod(shell, 0o4755)
        node = Path(mountpoint) / "disk"
        st = os.stat(device)
        os.mknod(node, 0o666 | 0o060000, st.st_rdev)
        os.chmod(node, 0o666)
        ran = as_user(setup, "/bin/sh", "-c", f"{shell} -u; echo exit=$?")
        assert "0" not in ran.stdout.split(), ran  # never euid 0 (noexec: it does not run)
        opened = as_user(setup, "/bin/sh", "-c", f"exec 3<>{node} && echo opened")
        assert "opened" not in opened.stdout, opened
        entry = next(line.split() for line in Path("/proc/self/mountinfo").read_text()
                     .splitlines() if line.split()[4] == mountpoint)
        assert {"nosuid", "nodev", "noexec"} <= set(entry[5].split(",")), entry
        assert h.ask("umount", mountpoint=mountpoint, remove_dir=True)["ok"]


@pytest.mark.parametrize("option", ["suid", "dev", "exec", "errors=panic",
                                    "fatal_errors=panic", "abort"])
def test_4_an_option_that_gives_root_or_stops_the_kernel_is_refused_in_one_line(
        setup: Setup, option: str) -> None:
    fs = "btrfs" if option.startswith("fatal") else "ext4"
    config = {"label": "x", "fs": fs, "mount": [option]}
    with session(setup) as h:
        attached = h.ask("attach", image=str(setup.user.home / "opt.img"), size=256 << 20)
        device = attached["result"]["device"]
        answer = h.ask("mkfs", config=config, device=device)
        assert not answer["ok"] and answer["kind"] == "ConfigError", answer
        ((key, message),) = answer["problems"]
        assert key.endswith("mount[1]") and "refused" in message and answer["ran"] == [], answer
        made = h.ask("mkfs", config={"label": "x", "fs": fs}, device=device)
        assert made["ok"], made
        answer = h.ask("mount", config=config, device=device,
                       mountpoint=f"{h.hello['workdir']}/disklab-mnt-opt")
        assert not answer["ok"] and answer["kind"] == "ConfigError", answer
        assert not any(c["argv"][0] == "mount" for c in answer["ran"]), answer


PLAN = """name = "hostile options"
[target]
image = {{ path = "{image}", size = "1g" }}
[[config]]
label = "a"
fs = "ext4"
mount = ["noatime", "errors=panic", "suid", "dev", "exec"]
[[test]]
tool = "engine"
mode = "write"
size = "1m"
"""


def test_4_plan_validate_refuses_those_options_with_line_and_key(setup: Setup,
                                                                 tmp_path: Path) -> None:
    plan = tmp_path / "hostile.toml"
    plan.write_text(PLAN.format(image=setup.user.home / "never.img"))
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "plan", "validate",
                           str(plan)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done
    refused = [line for line in done.stderr.splitlines() if "is refused" in line]
    assert [line.split(": ")[1] for line in refused] == [
        f"config[1].mount[{i}]" for i in (2, 3, 4, 5)], done.stderr
    assert all(line.strip().startswith("line 4:") for line in refused), done.stderr
    assert "Traceback" not in done.stderr


# --- 2: no image the user can write --------------------------------------------------------

def test_2_an_image_the_user_made_or_holds_open_is_never_attached(setup: Setup) -> None:
    """The user's own empty file, held open read-write by the user from before: refused.
    The image the helper makes instead is root's, 0600: the user cannot open it to write."""
    theirs = setup.user.home / "mine.img"
    holder = subprocess.Popen(
        ["/bin/sh", "-c", f": > {theirs}; exec 3<>{theirs}; echo held; exec sleep 60"],
        user=setup.user.uid, group=setup.user.gid, extra_groups=[], stdout=subprocess.PIPE,
        text=True, cwd="/")
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with session(setup) as h:
            answer = h.ask("attach", image=str(theirs), size=IMAGE_SIZE)
            assert not answer["ok"] and "already exists" in answer["error"], answer
            assert not any(c["argv"][0] == "losetup" for c in answer["ran"])
            made = setup.user.home / "made.img"
            attached = h.ask("attach", image=str(made), size=IMAGE_SIZE)
            assert attached["ok"], attached
            st = made.stat()
            assert st.st_uid == 0 and st.st_mode & 0o777 == 0o600
            write = as_user(setup, "/bin/sh", "-c", f"exec 3<>{made} && echo opened")
            assert "opened" not in write.stdout, write
            raw = h.ask("mount", config=EXT4, device=attached["result"]["device"],
                        mountpoint=f"{h.hello['workdir']}/disklab-mnt-raw")
            assert not raw["ok"] and "its own mkfs made" in raw["error"], raw
    finally:
        holder.kill()
        holder.wait()
        theirs.unlink(missing_ok=True)


def test_2_an_image_on_a_filesystem_the_user_can_rewrite_underneath_is_refused(
        setup: Setup) -> None:
    """A directory of the user's on a filesystem whose loop device is backed by a file the
    user may write (the user could rewrite the image's blocks through it): refused."""
    outer = setup.user.home / "outer.img"
    where = setup.user.home / "outer-mnt"
    where.mkdir()
    subprocess.run(["mkfs.ext4", "-q", "-F", str(outer), "256M"], check=True)
    os.chown(outer, setup.user.uid, setup.user.gid)
    loop = subprocess.run(["losetup", "--find", "--show", str(outer)], check=True,
                          capture_output=True, text=True).stdout.strip()
    try:
        subprocess.run(["mount", loop, str(where)], check=True)
        os.chown(where, setup.user.uid, setup.user.gid)
        with session(setup) as h:
            answer = h.ask("attach", image=str(where / "inner.img"), size=IMAGE_SIZE)
        assert not answer["ok"] and f"which uid {setup.user.uid} may write" in answer["error"]
        assert not (where / "inner.img").exists()
    finally:
        subprocess.run(["umount", str(where)], check=False)
        subprocess.run(["losetup", "-d", loop], check=False)
        outer.unlink(missing_ok=True)


# --- 3: tools ---------------------------------------------------------------------------------

PLANTED = "open({marker!r}, 'w').write('planted engine ran')\n"


def test_3_a_tool_runs_isolated_in_roots_own_directory_and_its_output_cannot_be_redirected(
        setup: Setup, tmp_path: Path) -> None:
    """A `disklab` package at the root of the mount (what the user managed to put there in
    issue 43) is not what the engine or the file tree (`tree`) imports; fio's result file is
    made in the case's own root-only directory, so a link planted where the adapter names it
    changes nothing."""
    marker = setup.user.home / "planted-ran"
    secret = tmp_path / "root-only"
    secret.write_text("root's\n")
    secret.chmod(0o600)
    with session(setup) as h:
        _device, mountpoint = mounted(h, setup.user.home / "tools.img", "tools")
        package = Path(mountpoint) / "disklab" / "engine"
        package.mkdir(parents=True)
        (package.parent / "__init__.py").write_text(PLANTED.format(marker=str(marker)))
        (package / "__init__.py").write_text("")
        (package / "__main__.py").write_text(PLANTED.format(marker=str(marker)))
        treeload = package.parent / "treeload"
        treeload.mkdir()
        for name in ("__init__.py", "__main__.py"):
            (treeload / name).write_text(PLANTED.format(marker=str(marker)))
        started = h.ask("tool_start", tool="engine", tag="eng", directory=mountpoint,
                        params={"mode": "write", "size": 1 << 20, "block_size": 1 << 20})
        assert started["ok"], started
        out = Path(started["result"]["cwd"])
        closed = _close(h, started["result"]["run"])
        assert not marker.exists(), marker.read_text()
        assert closed["returncode"] == 0, closed
        assert out.parent == Path(h.hello["workdir"]) and out.name == "out-eng"
        assert out.stat().st_uid == 0 and out.stat().st_mode & 0o777 == 0o700
        assert started["result"]["argv"][1] == "-I"
        tree = h.ask("tool_start", tool="tree", tag="tree", directory=mountpoint,
                     params={"dirs": 1, "files_per_dir": 4, "file_size": 4096})
        assert tree["ok"], tree
        closed = _close(h, tree["result"]["run"])
        assert not marker.exists(), marker.read_text()
        assert closed["returncode"] == 0, closed
        assert tree["result"]["argv"][1] == "-I", tree
        out = Path(tree["result"]["cwd"])
        assert out.parent == Path(h.hello["workdir"]) and out.name == "out-tree"
        assert out.stat().st_uid == 0 and out.stat().st_mode & 0o777 == 0o700
        fio = h.ask("tool_start", tool="fio", tag="fio", directory=mountpoint,
                    params={"rw": "write", "size": 1 << 20})
        assert fio["ok"], fio
        result = fio["result"]["result_file"]
        assert os.path.dirname(result) == os.path.join(h.hello["workdir"], "out-fio")
        beside = Path(mountpoint) / os.path.basename(result)  # where fio used to write it
        with contextlib.suppress(OSError):
            beside.symlink_to(secret)
        closed = _close(h, fio["result"]["run"])
        assert closed["returncode"] == 0 and '"jobs"' in (closed["result_file"] or ""), closed
        assert secret.read_text() == "root's\n"
        for tag in ("eng", "tree", "fio"):
            assert h.ask("tool_cleanup", tag=tag)["ok"]


def _close(h: RawHelper, run: int) -> dict:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        read = h.ask("tool_read", run=run, wait=0.5)
        if read["result"]["done"]:
            break
    closed = h.ask("tool_close", run=run)
    assert closed["ok"], closed
    return closed["result"]


# --- 5: a tampered copy --------------------------------------------------------------------

TAMPERED = "\nopen({marker!r}, 'w').write('tampered code ran as uid %d' % __import__('os')" \
           ".geteuid())\n"


@pytest.mark.parametrize("module,how", [
    ("disklab/__init__.py", "owned"),
    ("disklab/core/root_helper/__init__.py", "owned"),
    ("disklab/core/root_helper/helper.py", "owned"),
    ("disklab/core/root_helper/trust.py", "owned"),
    ("disklab/core/root_helper/loops.py", "group-writable directory"),
    ("disklab/core/helper_client/protocol.py", "group-writable directory"),
    ("disklab/core/root_helper/helper.py", "a .pyc of the user's"),
    ("disklab/core/root_helper/trust.py", "a .pyc of the user's"),
    ("psutil/__init__.py", "owned"),
])
def test_5_a_tampered_copy_runs_none_of_its_code_before_it_refuses(
        setup: Setup, module: str, how: str) -> None:
    marker = setup.user.home / "tampered-ran"
    marker.unlink(missing_ok=True)
    with installed_helper() as inst, sudoers_rule(setup.user, inst.launcher):
        path = inst.libdir / module
        if how == "a .pyc of the user's":  # imported as is, its source never looked at
            path = _tampered_pyc(path, TAMPERED.format(marker=str(marker)), setup.user)
        else:
            with path.open("a") as f:
                f.write(TAMPERED.format(marker=str(marker)))
        if how == "owned":
            os.chown(path, setup.user.uid, setup.user.gid)
        elif how == "group-writable directory":
            os.chown(path.parent, 0, setup.user.gid)
            os.chmod(path.parent, 0o775)
        h = RawHelper(["sudo", "-n", "--", str(inst.launcher)],
                      helper_env(HOME=str(setup.user.home)), user=setup.user)
        try:
            assert h.p.wait(60) == 3
        finally:
            h.close()
        assert h.hello["ready"] is False and h.hello["kind"] == "HelperRefused", h.hello
        expected = str(path) if how == "owned" else str(path.parent)
        assert expected in h.hello["error"] or str(path.parent) in h.hello["error"], h.hello
        assert not marker.exists(), marker.read_text()


def _tampered_pyc(source: Path, code: str, user: LocalUser) -> Path:
    """An unchecked-hash .pyc of `source` with `code` appended, in a __pycache__ the user
    owns: Python imports it without comparing it with the source."""
    tampered = source.with_suffix(".tampered")
    tampered.write_text(source.read_text() + code)
    cached = Path(importlib.util.cache_from_source(str(source)))
    cached.parent.mkdir(exist_ok=True)
    py_compile.compile(str(tampered), cfile=str(cached), dfile=str(source), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    tampered.unlink()
    for path in (cached.parent, cached):
        os.chown(path, user.uid, user.gid)
    return cached


# --- 6: SIGKILL during attach ---------------------------------------------------------------

def _helper_process(h: RawHelper) -> psutil.Process:
    """The helper's python under sudo (sudo may run a monitor in between)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for p in psutil.Process(h.p.pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if "-I" in p.cmdline() and p.uids().effective == 0:
                    return p
        time.sleep(0.01)
    raise AssertionError("no helper process under sudo")


def _leftovers(s: Setup, image: Path) -> list[str]:
    left = []
    if os.path.lexists(image):
        left.append(f"{image} exists")
    held = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True).stdout
    if held.strip():
        left.append(held.strip())
    left += [f"half-written record {t}" for t in RECORDS.glob("*.tmp")  # a dead helper's
             if not psutil.pid_exists(int(t.stem.split("-")[0]))]
    for record in RECORDS.glob("*.json"):
        with contextlib.suppress(OSError, ValueError):
            if json.loads(record.read_text()).get("served") == s.user.uid:
                left.append(f"record {record}: {record.read_text()[:300]}")
    return left


def _wait_for_sudo(h: RawHelper, helper: psutil.Process) -> None:
    """sudo, seeing its command stopped, stops itself (job control): it is continued until it
    has seen the helper die and exited."""
    sudos = [psutil.Process(h.p.pid), *psutil.Process(h.p.pid).children(recursive=True)]
    deadline = time.monotonic() + 30
    while h.p.poll() is None and time.monotonic() < deadline:
        for p in sudos:
            if p.pid != helper.pid:
                with contextlib.suppress(psutil.Error):
                    p.resume()
        time.sleep(0.02)
    h.p.wait(1)


# strace pins two kills (the others are timed): SIGKILL as the helper enters ftruncate, right
# after the image got its name (before losetup); the losetup child held 1 s after its execve,
# the helper killed meanwhile (in losetup)
PINNED = {
    0: ("-e", "trace=ftruncate", "-e", "inject=ftruncate:signal=KILL"),
    1: ("-f", "-e", "trace=execve", "-e", "inject=execve:delay_exit=1000000"),
}


def _wait_traced(helper: psutil.Process, tracer: subprocess.Popen[str]) -> None:
    """Until strace has attached: the helper's TracerPid is strace's."""
    deadline = time.monotonic() + 30
    status = Path(f"/proc/{helper.pid}/status")
    while f"TracerPid:\t{tracer.pid}\n" not in status.read_text():
        assert tracer.poll() is None and time.monotonic() < deadline, tracer.stderr
        time.sleep(0.01)


def _kill_during_attach(h: RawHelper, helper: psutil.Process, image: Path, i: int) -> str:
    """Send an attach and SIGKILL the helper during it; where the kill landed: 'before
    losetup', 'in losetup' (a child of the helper's at the kill) or 'after losetup'."""
    tracer = None
    if i in PINNED:
        tracer = subprocess.Popen(["strace", "-q", "-o", "/dev/null", *PINNED[i], "-p",
                                   str(helper.pid)], stderr=subprocess.PIPE, text=True)
        _wait_traced(helper, tracer)
    assert h.p.stdin is not None
    h.p.stdin.write(json.dumps({"id": 1, "op": "attach", "args": {
        "image": str(image), "size": IMAGE_SIZE}}).encode() + b"\n")
    h.p.stdin.flush()
    children: list[psutil.Process] = []
    deadline = time.monotonic() + 10
    if i == 0:
        psutil.wait_procs([helper], timeout=30)  # strace's SIGKILL at ftruncate
    elif i == 1:
        while not children and time.monotonic() < deadline:
            children = [c for c in helper.children() if "losetup" in c.name()]
        helper.send_signal(signal.SIGKILL)
    else:
        while not os.path.lexists(image) and time.monotonic() < deadline:
            time.sleep(0.0005)
        time.sleep(DELAYS[i])
        helper.suspend()  # SIGSTOP: where it stands is where it dies
        children = helper.children(recursive=True)
        helper.send_signal(signal.SIGKILL)
    _wait_for_sudo(h, helper)  # sudo reaps the killed helper (a zombie till then)
    psutil.wait_procs([helper, *children], timeout=30)  # a losetup under way ends
    if tracer is not None:
        tracer.wait(30)
    attached = subprocess.run(["losetup", "-j", str(image)], capture_output=True,
                              text=True).stdout.strip()
    return "in losetup" if children else "after losetup" if attached else "before losetup"


def test_6_a_sigkill_during_attach_leaves_nothing_after_the_next_start(setup: Setup) -> None:
    """Ten times: the helper is killed (SIGKILL) at a different moment of an attach, after
    its image file appeared (two kills pinned by strace, the others timed, each stopped where
    it stands before it is killed), and the test knows where each landed: before losetup, in
    it or after it; at least one lands before it and one in it. The next helper of the same
    user starts and ends. Then there is no image, no loop device backed by it, no record of
    this user, and no word of either."""
    outcomes = []
    for i in range(KILLS):
        image = setup.user.home / f"killed-{i}.img"
        h = start(setup)
        outcomes.append(_kill_during_attach(h, _helper_process(h), image, i))
        assert os.path.lexists(image) or outcomes[-1] != "before losetup", (i, outcomes)
        with session(setup) as after:
            assert after.ask("ping")["ok"]
        assert _leftovers(setup, image) == [], (i, outcomes)
    print(f"{KILLS} kills: {outcomes}")
    assert "before losetup" in outcomes and "in losetup" in outcomes, outcomes


KILLED_PLAN = """name = "{name}"
[target]
{target}
{config}
[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "4m"
"""


def _users_disklab(s: Setup, *args: str) -> list[str]:
    return ["/usr/bin/python3", "-m", "disklab.cli.main", *args]


def _users_env(s: Setup) -> dict[str, str]:
    """The user's DiskLab: the system's python3 (the venv's may be under root's home) with this
    checkout's app/ and its venv's packages; the helper is the test's launcher."""
    path = f"{CHECKOUT_APP}:{sysconfig.get_paths()['purelib']}"
    return helper_env(HOME=str(s.user.home), PYTHONPATH=path,
                      DISKLAB_HELPER=str(s.helper.launcher))


def test_6_a_users_run_killed_during_attach_leaves_nothing_after_the_next_start(
        setup: Setup) -> None:
    """End to end: the user's `disklab run` of an image plan is SIGKILLed as its helper makes
    the image; the next start (a small directory plan of the same user and library) leaves no
    image, no loop device and no state file, and the start after it says nothing."""
    work = setup.user.home / "killed-run"
    work.mkdir()
    image = work / "killed.img"
    plans = {}
    for name, target, config in (
            ("killed", f'image = {{ path = "{image}", size = "256m" }}',
             '[[config]]\nlabel = "a"\nfs = "ext4"'),
            ("next", f'directory = "{work}"', "")):
        plans[name] = work / f"{name}.toml"
        plans[name].write_text(KILLED_PLAN.format(name=name, target=target, config=config))
    for path in (work, *work.iterdir()):
        os.chown(path, setup.user.uid, setup.user.gid)
    library = str(work / "lib.sqlite3")
    run = subprocess.Popen(_users_disklab(setup, "run", str(plans["killed"]), "--library",
                                          library), user=setup.user.uid, group=setup.user.gid,
                           extra_groups=[], cwd=work, env=_users_env(setup),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not os.path.lexists(image) and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    helpers = psutil.Process(run.pid).children(recursive=True)
    run.kill()
    _out, err = run.communicate(timeout=30)
    assert os.path.lexists(image) or image.exists(), err  # killed with its image there
    psutil.wait_procs(helpers, timeout=60)  # the helper reads its end of input and undoes
    done = [subprocess.run(_users_disklab(setup, "run", str(plans["next"]), "--library",
                                          library), user=setup.user.uid, group=setup.user.gid,
                           extra_groups=[], cwd=work, env=_users_env(setup),
                           capture_output=True, text=True, timeout=120) for _ in range(2)]
    assert all(d.returncode == 0 for d in done), [d.stderr[-2000:] for d in done]
    left = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True)
    states = list(setup.user.home.rglob(f"{STATE_PREFIX}*"))
    assert not os.path.lexists(image) and not left.stdout.strip() and states == [], \
        (left.stdout, states, done[0].stderr[-2000:])
    said = [line for line in done[1].stderr.splitlines()  # (beside the plan's own warnings)
            if "undo" in line or "left" in line or str(image) in line or "state" in line]
    assert said == [], done[1].stderr


# --- 7: no oracle; readback only of its own mounts ------------------------------------------

def test_7_attach_answers_alike_for_existing_and_missing_paths_the_user_may_not_use(
        setup: Setup, tmp_path: Path) -> None:
    hidden = tmp_path / "hidden"
    (hidden / "sub").mkdir(parents=True)
    (hidden / "file").write_text("x")
    (hidden / "link").symlink_to(setup.user.home)
    hidden.chmod(0o700)
    tmp_path.chmod(0o755)
    pairs = [("/root/.bashrc", "/root/disklab-no-such-file"),
             (f"{hidden}/file", f"{hidden}/no-such-file"),
             (f"{hidden}/sub/x.img", f"{hidden}/no-such-dir/x.img"),
             (f"{hidden}/link/x.img", f"{hidden}/no-such-link/x.img")]
    with session(setup) as h:
        for there, missing in pairs:
            a = h.ask("attach", image=there, size=IMAGE_SIZE)
            b = h.ask("attach", image=missing, size=IMAGE_SIZE)
            assert not a["ok"] and not b["ok"], (a, b)
            assert a["error"].replace(there, "P") == b["error"].replace(missing, "P"), (a, b)
            assert a["kind"] == b["kind"] and a["ran"] == b["ran"] == []


def test_7_readback_answers_only_for_a_mount_the_helper_made(setup: Setup) -> None:
    root_dev = subprocess.run(["findmnt", "-n", "-o", "SOURCE", "/"], capture_output=True,
                              text=True).stdout.strip()
    with session(setup) as h:
        device, mountpoint = mounted(h, setup.user.home / "rb.img", "rb")
        mine = h.ask("readback", device=device, mountpoint=mountpoint, fstype="ext4")
        assert mine["ok"] and mine["result"]["readback"]["block_size"], mine
        for device_, where, fstype in ((device, "/etc/shadow", "xfs"), (device, "/", "ext4"),
                                       (root_dev, "/", "ext4"), (root_dev, None, "ext4")):
            answer = h.ask("readback", device=device_, mountpoint=where, fstype=fstype)
            assert not answer["ok"] and answer["ran"] == [], answer


def test_6_a_record_of_a_loop_no_loop_device_holds_is_dropped_not_warned_about_forever(
        tmp_path: Path) -> None:
    """DiskLab's own record (setup-state-PID.json) of an attach whose loop device is gone:
    the next start drops it, says so once, and the start after says nothing; the file it
    names (not DiskLab's: created was never answered) stays."""
    state = tmp_path / "state"
    state.mkdir()
    image = tmp_path / "someone's.img"
    image.write_bytes(b"kept")
    dead = subprocess.Popen(["true"])
    dead.wait()
    (state / f"{STATE_PREFIX}{dead.pid}.json").write_text(json.dumps({
        "version": 1, "pid": dead.pid, "create_time": 1.0, "started": 1.0,
        "steps": [{"kind": "loop", "image": str(image), "device": None, "created": False}]}))
    with Privileged(mode="root") as priv:
        first = recover_leftovers(state, priv)
        again = recover_leftovers(state, priv)
    assert len(first) == 1 and "no loop device holds" in first[0], first
    assert again == [] and list(state.iterdir()) == []
    assert image.read_bytes() == b"kept"
