"""The helper runs only its own code (issue 27, item 1).

A user who is not root plants a fake `disklab` package in the working directory and in
PYTHONPATH, then starts a session through the real sudo path (a sudoers rule naming only the
root-owned launcher `disklab install-helper` made): the helper that answers is DiskLab's own,
serving that user, and the planted code never ran. The pkexec path's argv names only the same
launcher (pkexec itself is not installed on the test machines: polkitd cannot authorise without
it, so its argv is checked and the sudo path run). A helper whose package directory a user can
change refuses to serve as root and says why, and the client says it once in words.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

import disklab
from disklab.core.helper_client import HELPER_LAUNCHER, HelperRefused, Privileged, helper_argv
from disklab.core.resources import resource
from disklab.core.root_helper import trust
from tests.helpers import ask
from tests.integration.privhelper_fixtures import (
    Installed,
    LocalUser,
    helper_env,
    installed_helper,
    made_user,
)

pytestmark = [pytest.mark.root]

SUDOERS = Path("/etc/sudoers.d/disklab-s7-root")
PLANTED = '''
import json, os, sys
open({canary!r}, "w").write("planted code ran as uid %d" % os.geteuid())
print(json.dumps({{"ready": True, "pid": os.getpid(), "uid": 0, "protocol": 2,
                  "workdir": "/", "served_uid": 0, "planted": True}}), flush=True)
for line in sys.stdin:
    print(json.dumps({{"id": json.loads(line).get("id"), "ok": True, "result": {{}}}}),
          flush=True)
'''


@pytest.fixture(scope="module")
def user() -> Iterator[LocalUser]:
    with made_user("dl-s7-own") as u:
        yield u


@pytest.fixture(scope="module")
def helper(user: LocalUser) -> Iterator[Installed]:
    with installed_helper() as inst:
        SUDOERS.write_text(f"{user.name} ALL=(root) NOPASSWD: {inst.launcher}\n")
        os.chmod(SUDOERS, 0o440)
        try:
            yield inst
        finally:
            SUDOERS.unlink(missing_ok=True)


def _plant(where: Path, canary: Path) -> None:
    """A fake disklab whose helper would write `canary` and claim to be ready."""
    for module in ("disklab.core.root_helper", "disklab.core.privhelper"):
        package = where.joinpath(*module.split("."))
        package.mkdir(parents=True, exist_ok=True)
        for parent in [package, *package.parents]:
            if parent == where:
                break
            (parent / "__init__.py").touch()
        (package / "__main__.py").write_text(PLANTED.format(canary=str(canary)))
        (package / "helper.py").write_text(PLANTED.format(canary=str(canary)))
    (where / "disklab" / "core" / "privhelper.py").write_text(PLANTED.format(canary=str(canary)))


def _owned_by(user: LocalUser, top: Path) -> None:
    for path in [top, *top.rglob("*")]:
        os.chown(path, user.uid, user.gid, follow_symlinks=False)


CLIENT = '''
import json, sys
sys.path.insert(0, sys.argv[1])
from dataclasses import asdict
from disklab.core.helper_client import Privileged
from disklab.core.helper_client.protocol import Ping
with Privileged(mode="sudo") as priv:
    answer = asdict(priv.call(Ping()))
    print(json.dumps({"ping": answer, "argv": list(priv._proc.argv)}))
'''


def test_a_planted_package_in_the_cwd_and_pythonpath_never_runs_as_root(
        user: LocalUser, helper: Installed) -> None:
    cwd, elsewhere = user.home / "downloads", user.home / "pythonpath"
    canary = user.home / "planted-ran"
    for where in (cwd, elsewhere):
        where.mkdir()
        _plant(where, canary)
    # the user's own DiskLab client: a copy of this checkout the user can read
    client = user.home / "client"
    shutil.copytree(Path(disklab.__file__).resolve().parent, client / "disklab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(Path(psutil.__file__).resolve().parent, client / "psutil",
                    ignore=shutil.ignore_patterns("__pycache__"))
    _owned_by(user, user.home)
    env = helper_env(HOME=str(user.home), PYTHONPATH=f"{cwd}:{elsewhere}",
                     PYTHONSTARTUP=str(cwd / "disklab" / "__init__.py"),
                     DISKLAB_HELPER=str(helper.launcher))
    done = subprocess.run(["/usr/bin/python3", "-I", "-c", CLIENT, str(client)], cwd=cwd,
                          env=env, user=user.uid, group=user.gid, extra_groups=[],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["argv"] == ["sudo", "-n", "-p", "[disklab] password for %u: ", "--",
                           str(helper.launcher)]
    ping = out["ping"]
    assert "planted" not in ping and ping["uid"] == 0
    assert ping["served_uid"] == user.uid  # from SUDO_UID, which sudo set itself
    assert ping["protocol"] == 2
    assert not canary.exists(), canary.read_text()


def test_the_pkexec_path_starts_only_the_root_owned_launcher(helper: Installed) -> None:
    """polkit's exec.path and the argv name the launcher, and the launcher runs only root's
    interpreter on root's copy, isolated, from /, with a fixed environment."""
    assert helper_argv("pkexec", launcher_path=HELPER_LAUNCHER) == ("pkexec", HELPER_LAUNCHER)
    policy = resource("polkit", "org.disklab.helper.policy").read_text()
    assert f'"org.freedesktop.policykit.exec.path">{HELPER_LAUNCHER}<' in policy
    assert "<allow_active>auth_admin_keep</allow_active>" in policy
    assert "<allow_inactive>no</allow_inactive>" in policy
    assert "<allow_any>no</allow_any>" in policy
    text = helper.launcher.read_text()
    assert f"{os.path.realpath(sys.executable)} -I -c" in text
    assert f'sys.path.insert(0, "{helper.libdir}")' in text
    assert "cd /" in text and "env -i PATH=/usr/local/sbin" in text
    for path in [helper.launcher, helper.libdir, *helper.libdir.rglob("*")]:
        st = path.lstat()
        assert st.st_uid == 0 and not st.st_mode & 0o022, path
    if shutil.which("pkexec"):  # where polkit is complete, pkexec refuses to run it unasked
        done = subprocess.run(["pkexec", "--disable-internal-agent", str(helper.launcher)],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode != 0


def test_a_user_writable_venv_is_refused_as_root_and_said_once(user: LocalUser, tmp_path: Path
                                                               ) -> None:
    """A venv in a user's directory (the user could edit the code root would run): the helper
    refuses to serve and says which directory and what to do; the client says it in words
    once, then briefly, without starting it again."""
    venv = user.home / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    for package in (disklab, psutil):
        source = Path(package.__file__).resolve().parent
        shutil.copytree(source, site / source.name, ignore=shutil.ignore_patterns("__pycache__"))
    _owned_by(user, user.home)
    priv = Privileged(mode="root", python=str(venv / "bin" / "python"))
    with pytest.raises(HelperRefused) as first:
        priv.start()
    words = str(first.value)
    assert "refused to run as root" in words
    assert str(user.home) in words and f"uid {user.uid}" in words
    assert "sudo disklab install-helper" in words
    with pytest.raises(HelperRefused) as again:
        priv.start()
    assert str(again.value) == HelperRefused.again and priv._proc is None
    # the same refusal for a root-owned package directory others may write
    shared = tmp_path / "shared"
    shutil.copytree(Path(disklab.__file__).resolve().parent, shared / "disklab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    os.chmod(shared / "disklab" / "core", 0o777)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from disklab.core.root_helper.helper import main; sys.exit(main())")
    done = subprocess.run([sys.executable, "-I", "-c", code, str(shared)], cwd="/",
                          env=helper_env(), capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 3
    hello = json.loads(done.stdout.splitlines()[0])
    assert hello["ready"] is False and hello["kind"] == "HelperRefused"
    assert f"{shared}/disklab/core is writable by others" in hello["error"]
    # and a package whose lazily imported adapter a user could edit
    os.chmod(shared / "disklab" / "core", 0o755)
    adapter = shared / "disklab" / "core" / "tools" / "iozone" / "__init__.py"
    os.chown(adapter, 65534, 65534)
    done = subprocess.run([sys.executable, "-I", "-c", code, str(shared)], cwd="/",
                          env=helper_env(), capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 3 and f"{adapter} is owned by uid 65534" in done.stdout
    # and one not started isolated (python -m without -I: the cwd would be on its path)
    done = subprocess.run([sys.executable, "-m", "disklab.core.root_helper"], cwd="/",
                          env=helper_env(), capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 3 and "not started isolated" in done.stdout


def test_the_root_owned_checkout_serves(tmp_path: Path) -> None:
    """This checkout (root's, in root's directories) passes the check: root mode serves."""
    assert trust.refusal() is None or not sys.flags.isolated
    with Privileged(mode="root") as priv:
        assert ask(priv, "ping")["served_uid"] == 0
    assert stat.S_IMODE(os.stat(os.path.dirname(os.path.abspath(sys.executable))).st_mode) \
        & 0o022 == 0


PLAN = """name = "refused helper"
repeats = 3
drop_caches = true
[target]
directory = "{work}"
[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "1m"
"""


def test_the_cli_says_once_in_words_why_the_helper_was_refused(user: LocalUser) -> None:
    """A sudoers rule for the user's own venv (what the README used to suggest): the helper
    it starts refuses to serve as root, and `disklab run` says so once, in words, with what to
    do; the later cases say it briefly; the run itself goes on."""
    venv = user.home / "cli-venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    import pexpect
    import platformdirs
    import ptyprocess
    import tomli_w
    for package in (disklab, psutil, platformdirs, tomli_w, pexpect, ptyprocess):
        source = Path(package.__file__).resolve().parent
        shutil.copytree(source, site / source.name, ignore=shutil.ignore_patterns("__pycache__"))
    work = user.home / "work"
    work.mkdir()
    plan = user.home / "refused.toml"
    plan.write_text(PLAN.format(work=work))
    _owned_by(user, user.home)
    python = str(venv / "bin" / "python")
    SUDOERS.write_text(f"{user.name} ALL=(root) NOPASSWD: {python} -I -m "
                       "disklab.core.root_helper\n")
    os.chmod(SUDOERS, 0o440)
    try:
        done = subprocess.run(
            [python, "-m", "disklab.cli.main", "run", str(plan), "--library",
             str(user.home / "lib.sqlite3")], cwd=user.home, user=user.uid, group=user.gid,
            extra_groups=[], capture_output=True, text=True, timeout=300,
            env=helper_env(HOME=str(user.home), DISKLAB_HELPER="/nonexistent"),
            stdin=subprocess.DEVNULL)
    finally:
        SUDOERS.unlink(missing_ok=True)
    assert done.returncode == 0, done.stderr[-3000:]
    warnings = [line for line in done.stderr.splitlines() if "caches not dropped" in line]
    assert len(warnings) == 3, done.stderr[-3000:]
    first, *later = warnings
    assert "refused to run as root" in first and "sudo disklab install-helper" in first
    assert str(venv) in first or str(user.home) in first  # which directory, in words
    assert all(HelperRefused.again in w and "refused to run as root" not in w for w in later)
