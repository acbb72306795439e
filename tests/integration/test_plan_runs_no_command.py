"""A plan is data: it never runs a command of its own (issue 43, point 7). A host's `ssh_config`
in a plan (a file whose ProxyCommand ran) is refused by `plan validate`, by `run` (as a real
unprivileged user made for the test) and by `rerun` of an imported session whose plan holds one,
with one line naming the plan line and key, and nothing runs; the ssh_config the user chose
(DiskLab's settings, core.hosts.ssh_settings) is what ssh reads, and what ssh quotes of a file's
lines when it complains is not kept in the session's errors and events (nor so in a bundle)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from disklab.core.hosts.leftovers import remove_over_ssh
from disklab.core.hosts.ssh_settings import save_ssh_config
from disklab.core.vocab.errors import DisklabError
from tests.helpers import SSH_ADDRESSES, free_port
from tests.integration.privhelper_fixtures import CHECKOUT_APP, LocalUser, helper_env, made_user

pytestmark = [pytest.mark.slow]

SECRETS = ("root:$y$j9T$SECRETHASH0:19000:0:99999:7:::", "bob:SECRETHASH1:19000",
           "secretword2")


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def plan_text(tmp_path: Path, host_extra: str = "") -> str:
    return (f'name = "ssh host"\n[target]\ndirectory = "{tmp_path}"\n'
            f'[hosts.s1]\naddress = "{SSH_ADDRESSES[0]}"\nport = {free_port()}\n'
            f'start = "ssh"\ndirectory = "{tmp_path}"\n{host_extra}'
            '[[test]]\ntool = "fio"\nrw = "write"\nbs = "64k"\nsize = "4m"\nhosts = "s1"\n')


@pytest.fixture
def users_ssh_config(tmp_path: Path) -> Iterator[Path]:
    """A file of the user's, 0600, that is not an ssh_config (a stand-in for /etc/shadow),
    kept as their ssh_config in DiskLab's settings (the session's temporary XDG directory)."""
    secret = tmp_path / "shadow-like"
    secret.write_text("".join(f"{line}\n" for line in SECRETS))
    secret.chmod(0o600)
    save_ssh_config(str(secret))
    try:
        yield secret
    finally:
        save_ssh_config(None)


@pytest.fixture(scope="module")
def user() -> Iterator[LocalUser]:
    """A real unprivileged user made for the module (removed after it)."""
    with made_user("dl-s8-plan") as made:
        yield made


def as_user(user: LocalUser, *args: str) -> subprocess.CompletedProcess[str]:
    """`disklab ARGS` run by `user`, in its home: the system's python3 (the venv's may be
    under root's home) with this checkout's app/ and its venv's packages on the path."""
    path = f"{CHECKOUT_APP}:{sysconfig.get_paths()['purelib']}"
    return subprocess.run(["/usr/bin/python3", "-m", "disklab.cli.main", *args], user=user.uid,
                          group=user.gid, extra_groups=[], cwd=user.home,
                          env=helper_env(HOME=str(user.home), PYTHONPATH=path),
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def evil_config(where: Path, marker: Path) -> Path:
    evil = where / "evil_config"
    evil.write_text(f"Host *\n  ProxyCommand touch {marker}\n")
    return evil


@pytest.mark.root
def test_a_plans_ssh_config_is_refused_and_its_proxycommand_never_runs(
        user: LocalUser) -> None:
    """Checked by root's `plan validate`, run by a real unprivileged user: its own file would
    run its own command as itself, but a plan it was handed must not either."""
    work = user.home / "plan-ssh-config"
    work.mkdir()
    marker = work / "proxycommand-ran"
    plan = work / "plan.toml"
    plan.write_text(plan_text(work, f'ssh_config = "{evil_config(work, marker)}"\n'))
    for path in (work, *work.iterdir()):
        os.chown(path, user.uid, user.gid)
    checked = disklab("plan", "validate", str(plan))
    assert checked.returncode == 2, checked.stdout + checked.stderr
    said = [line for line in (checked.stdout + checked.stderr).splitlines() if "ssh_config" in line]
    assert len(said) == 1 and "line 9" in said[0] and "hosts.s1.ssh_config" in said[0], said
    assert "Traceback" not in checked.stderr
    ran = as_user(user, "run", str(plan), "--library", str(work / "lib.sqlite3"))
    assert ran.returncode == 2, ran.stdout + ran.stderr
    said = [line for line in (ran.stdout + ran.stderr).splitlines() if "ssh_config" in line]
    assert len(said) == 1 and "line 9" in said[0] and "hosts.s1.ssh_config" in said[0], said
    assert "Traceback" not in ran.stderr
    assert not marker.exists()


def test_the_rerun_of_an_imported_sessions_plan_with_an_ssh_config_is_refused(
        tmp_path: Path) -> None:
    """A bundle from elsewhere whose session holds a plan with a host's ssh_config (a
    ProxyCommand): imported, then `disklab rerun` of it is refused with the key (the stored
    plan goes through parse_plan again), and the command never runs."""
    marker = tmp_path / "proxycommand-ran"
    mine = tmp_path / "mine.toml"
    mine.write_text(f'name = "far plan"\n[target]\ndirectory = "{tmp_path}"\n[[test]]\n'
                    'tool = "engine"\nmode = "write"\nblock_size = "1m"\nsize = "4m"\n')
    theirs_lib, bundle = tmp_path / "theirs.sqlite3", tmp_path / "theirs.disklab"
    done = disklab("run", str(mine), "--library", str(theirs_lib))
    assert done.returncode == 0, done.stderr
    done = disklab("export", "1", "--format", "bundle", "-o", str(bundle), "--library",
                   str(theirs_lib))
    assert done.returncode == 0, done.stderr
    db = sqlite3.connect(bundle)  # the plan its author recorded
    db.execute("UPDATE session SET name = 'ssh host', plan_text = ?", (plan_text(
        tmp_path, f'ssh_config = "{evil_config(tmp_path, marker)}"\n'),))
    db.commit()
    db.close()
    library = tmp_path / "lib.sqlite3"
    done = disklab("import", str(bundle), "--library", str(library))
    assert done.returncode == 0, done.stderr
    rerun = disklab("rerun", "ssh host", "--library", str(library))
    said = [line for line in (rerun.stdout + rerun.stderr).splitlines() if "ssh_config" in line]
    assert rerun.returncode == 2, rerun.stdout + rerun.stderr
    assert len(said) == 1 and "hosts.s1.ssh_config" in said[0], said
    assert "Traceback" not in rerun.stderr
    assert not marker.exists()


def test_what_ssh_quotes_of_a_files_lines_is_not_stored(tmp_path: Path,
                                                        users_ssh_config: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(tmp_path))
    library = tmp_path / "lib.sqlite3"
    ran = disklab("run", str(plan), "--library", str(library))
    assert ran.returncode != 0 and "Traceback" not in ran.stderr, ran.stderr
    shown = disklab("show", "1", "--library", str(library), "--json")
    doc = json.loads(shown.stdout)
    error = doc["session"]["host"]["hosts"]["s1"]["error"]
    # ssh read the user's chosen file (not the plan's, not ~/.ssh/config) and said which line
    assert f"{users_ssh_config} line 3: no argument after keyword" in error, error
    everything = ran.stdout + ran.stderr + shown.stdout + b"".join(
        p.read_bytes() for p in tmp_path.glob("lib.sqlite3*")).decode("latin-1")
    for secret in SECRETS:
        for part in secret.split(":"):
            if "SECRET" in part.upper():
                assert part not in everything and part.lower() not in everything


def test_the_next_starts_removal_over_ssh_rechecks_the_config_and_keeps_no_quoted_line(
        tmp_path: Path) -> None:
    """A killed session's crash record names the ssh_config it logged in with; the next start
    (core.hosts.leftovers.remove_over_ssh) checks it again and says what ssh said without the
    lines ssh quotes."""
    loose = tmp_path / "loose_config"
    loose.write_text("Host *\n")
    loose.chmod(0o666)
    login = {"address": SSH_ADDRESSES[0], "user": None, "ssh_port": None}
    with pytest.raises(DisklabError, match="writable by its group or others"):
        remove_over_ssh({**login, "ssh_config": str(loose)}, ["/tmp/x"])
    secret = tmp_path / "shadow-like"
    secret.write_text("".join(f"{line}\n" for line in SECRETS))
    secret.chmod(0o600)
    with pytest.raises(DisklabError) as e:
        remove_over_ssh({**login, "ssh_config": str(secret)}, ["/tmp/x"])
    assert "line 3: no argument after keyword" in str(e.value)
    assert "SECRET" not in str(e.value).upper().replace(str(secret).upper(), "")
