"""ssh's configuration is the user's own, never a plan's (issue 43, point 7): a plan's
`ssh_config` (and a host named "all", the name of fio's total row) is refused by key and line;
the user's choice is kept in DiskLab's settings, and only a file of theirs that nobody else can
write is handed to ssh."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from disklab.core.hosts.ssh import scrubbed
from disklab.core.hosts.ssh_settings import (
    SshSettingsError,
    chosen_ssh_config,
    config_problem,
    save_ssh_config,
)
from disklab.core.plan.parse import parse_plan
from disklab.core.vocab.errors import PlanError

PLAN = """\
name = "hosts"
[target]
directory = "{dir}"
[hosts.{name}]
address = "node1"
{extra}
[[test]]
tool = "fio"
rw = "write"
size = "8m"
hosts = "{name}"
"""


def problems(tmp_path: Path, name: str = "h1", extra: str = "") -> list[str]:
    with pytest.raises(PlanError) as e:
        parse_plan(PLAN.format(dir=tmp_path, name=name, extra=extra))
    return [str(p) for p in e.value.problems]


def test_a_plans_ssh_config_is_refused_with_its_line_and_key(tmp_path: Path) -> None:
    config = tmp_path / "evil_config"
    config.write_text(f"Host *\n  ProxyCommand touch {tmp_path}/ran\n")
    found = problems(tmp_path, extra=f'ssh_config = "{config}"')
    assert len(found) == 1, found
    assert found[0].startswith("line 6: hosts.h1.ssh_config: a plan does not choose ssh's "
                               "configuration"), found
    assert "\n" not in found[0]


def test_a_host_named_all_is_refused_it_is_the_total_rows_name(tmp_path: Path) -> None:
    """One line: the test's `hosts = "all"` adds no "unknown host 'all'" after it."""
    found = problems(tmp_path, name="all")
    assert len(found) == 1 and found[0].startswith("line 4: hosts.all: 'all' is reserved"), \
        found
    assert "\n" not in found[0]


def test_a_host_no_table_declares_is_still_unknown(tmp_path: Path) -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(PLAN.format(dir=tmp_path, name="h1", extra="").replace(
            'hosts = "h1"', 'hosts = "all"'))
    assert [str(p) for p in e.value.problems] == [
        "line 11: test[1].hosts: unknown host 'all' (the plan's [hosts.*]: h1)"]


def test_the_users_choice_is_kept_and_read_back(tmp_path: Path) -> None:
    settings = tmp_path / "disklab" / "hosts.toml"
    config = tmp_path / 'my "odd" ssh_config ü'
    config.write_text("Host *\n  User me\n")
    config.chmod(0o644)
    assert chosen_ssh_config(settings) is None  # none kept: ssh's own ~/.ssh/config
    save_ssh_config(str(config), settings)
    assert chosen_ssh_config(settings) == str(config)
    save_ssh_config(None, settings)
    assert not settings.exists() and chosen_ssh_config(settings) is None


def _file(path: Path, mode: int) -> str:
    path.write_text("Host *\n")
    path.chmod(mode)
    return str(path)


@pytest.mark.parametrize(("make", "says"), [
    (lambda p: _file(p, 0o664), "writable by its group or others"),
    (lambda p: _file(p, 0o646), "writable by its group or others"),
    (lambda p: p.mkdir() or str(p), "is not a file"),
    (lambda p: "relative/ssh_config", "an absolute path"),
    (lambda p: _file(p, 0o644) + "\nProxyCommand x", "an absolute path"),
    (lambda p: str(p), "No such file"),
])
def test_a_file_others_can_write_or_not_a_file_is_refused(tmp_path: Path, make, says) -> None:
    value = make(tmp_path / "ssh_config")
    assert says in (config_problem(value) or "")
    settings = tmp_path / "hosts.toml"
    with pytest.raises(SshSettingsError):
        save_ssh_config(value, settings)
    assert not settings.exists()
    settings.write_text(f"ssh_config = {json.dumps(value)}\n")  # kept by hand
    with pytest.raises(SshSettingsError) as e:
        chosen_ssh_config(settings)
    assert str(e.value).startswith(f"{settings}: ssh_config: ") and says in str(e.value)


@pytest.mark.skipif(os.getuid() != 0, reason="a file of another user needs root to make")
def test_another_users_file_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n")
    os.chown(config, 65534, 65534)
    assert "belongs to another user" in (config_problem(str(config)) or "")


def test_what_ssh_quotes_of_a_configuration_line_is_not_kept() -> None:
    # ssh 9.2's own words about a file that is not an ssh_config (here, /etc/shadow's lines)
    said = ('/etc/shadow line 1: no argument after keyword "root:$y$j9t$secrethash:19000::"\r\n'
            "/etc/shadow line 2: no argument after keyword \"secretword\"\r\n"
            "/etc/shadow: line 3: Bad configuration option: daemon:*:19000:0:99999:7:::\r\n"
            "/etc/shadow: terminating, 3 bad configuration options\r\n").replace("\r", "\n")
    kept = scrubbed(said)
    assert "secret" not in kept and "root" not in kept and "daemon" not in kept
    assert "/etc/shadow line 2: no argument after keyword" in kept
    assert "/etc/shadow: line 3: Bad configuration option" in kept
