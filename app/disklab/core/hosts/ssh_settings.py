"""The user's own choice of ssh configuration for the hosts DiskLab starts over SSH: one file,
kept in DiskLab's settings ($XDG_CONFIG_HOME/disklab/hosts.toml, key `ssh_config`), set on the
Hosts page or by hand. Without it ssh reads the user's ~/.ssh/config, as it always does.

A plan never chooses it: an ssh_config runs commands (ProxyCommand, LocalCommand, Match exec,
KnownHostsCommand) and makes ssh read and quote other files, and a plan is data that travels
(shared, imported with a session, run again), so core.hosts.config refuses the key. The file
named here must be the user's own: owned by them (or root) and writable by nobody else, as ssh
asks of ~/.ssh/config.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path

import platformdirs

from disklab.core.vocab.errors import DisklabError

SETTINGS_NAME = "hosts.toml"
KEY = "ssh_config"


class SshSettingsError(DisklabError):
    """The settings file or the file it names cannot be used; the message names both."""


def settings_file() -> Path:
    """Where the choice is kept: DiskLab's XDG configuration directory."""
    return Path(platformdirs.user_config_dir("disklab")) / SETTINGS_NAME


def config_problem(value: object) -> str | None:
    """Why `value` cannot be the ssh_config DiskLab hands ssh (-F), or None: an absolute path
    to a regular file owned by this user or root and writable by no one else."""
    if (not isinstance(value, str) or not value.startswith("/")
            or any(ord(c) < 32 or c == "\x7f" for c in value)):
        return "an absolute path to an ssh_config file"
    try:
        st = os.stat(value)
    except OSError as e:
        return f"{value}: {e.strerror}"
    if not stat.S_ISREG(st.st_mode):
        return f"{value} is not a file"
    if st.st_uid not in (os.getuid(), 0):
        return f"{value} belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"{value} is writable by its group or others"
    return None


def chosen_ssh_config(file: Path | None = None) -> str | None:
    """The ssh_config the user chose for DiskLab's hosts, or None (ssh's own ~/.ssh/config).
    SshSettingsError when the settings file or the file it names cannot be used."""
    file = file or settings_file()
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise SshSettingsError(f"{file}: cannot be read ({e})") from e
    try:
        value = tomllib.loads(text).get(KEY)
    except tomllib.TOMLDecodeError as e:
        raise SshSettingsError(f"{file}: not TOML ({e})") from e
    if value is None:
        return None
    problem = config_problem(value)
    if problem is not None:
        raise SshSettingsError(f"{file}: {KEY}: {problem}")
    assert isinstance(value, str)
    return value


def save_ssh_config(value: str | None, file: Path | None = None) -> None:
    """Keep `value` as the user's ssh_config (None or "": ssh's own default again).
    SshSettingsError when it cannot be used or kept."""
    file = file or settings_file()
    if value:
        problem = config_problem(value)
        if problem is not None:
            raise SshSettingsError(f"{KEY}: {problem}")
    try:
        if not value:
            file.unlink(missing_ok=True)
            return
        file.parent.mkdir(parents=True, exist_ok=True)
        part = file.with_name(file.name + ".part")
        # a JSON string without ASCII escapes is a TOML basic string (no control characters)
        part.write_text(f"{KEY} = {json.dumps(value, ensure_ascii=False)}\n", encoding="utf-8")
        part.replace(file)
    except OSError as e:
        raise SshSettingsError(f"{file}: cannot be written ({e.strerror})") from e
