"""Which library the real `disklab` uses: --library beats $DISKLAB_LIBRARY beats the XDG data
directory (core.system.directories.library_path), for a command that writes and one that reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from disklab.core.library import Library

DD_OUTPUT = (Path(__file__).resolve().parents[1] / "fixtures" / "dd"
             / "read_1m_iflag-direct_progress_ext4-j16m.stderr.txt")


def disklab(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def names_in(path: Path) -> list[str]:
    with Library.open(path) as lib:
        return [s["name"] for s in lib.list_sessions()]


def test_flag_beats_env_beats_xdg_through_the_real_cli(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DISKLAB_LIBRARY"}
    env.update(HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "xdg"))
    xdg = tmp_path / "xdg" / "disklab" / "library.sqlite3"
    in_env = tmp_path / "env" / "library.sqlite3"
    flag = tmp_path / "flag" / "library.sqlite3"

    # nothing set: the XDG data directory
    done = disklab(env, "import", str(DD_OUTPUT), "--session", "to xdg")
    assert done.returncode == 0, done.stderr
    assert xdg.exists() and not in_env.exists() and not flag.exists()

    # $DISKLAB_LIBRARY beats the XDG default
    env["DISKLAB_LIBRARY"] = str(in_env)
    done = disklab(env, "import", str(DD_OUTPUT), "--session", "to env")
    assert done.returncode == 0, done.stderr
    assert in_env.exists() and not flag.exists()

    # --library beats both
    done = disklab(env, "import", str(DD_OUTPUT), "--session", "to flag", "--library", str(flag))
    assert done.returncode == 0, done.stderr

    assert names_in(xdg) == ["to xdg"]
    assert names_in(in_env) == ["to env"]
    assert names_in(flag) == ["to flag"]

    # reading follows the same rule
    listed = disklab(env, "sessions", "--json")
    assert [s["name"] for s in json.loads(listed.stdout)["sessions"]] == ["to env"]
    listed = disklab(env, "sessions", "--json", "--library", str(flag))
    assert [s["name"] for s in json.loads(listed.stdout)["sessions"]] == ["to flag"]
    del env["DISKLAB_LIBRARY"]
    listed = disklab(env, "sessions", "--json")
    assert [s["name"] for s in json.loads(listed.stdout)["sessions"]] == ["to xdg"]
