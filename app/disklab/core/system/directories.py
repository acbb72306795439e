"""Where DiskLab keeps its files on this machine: the library (--library, then
$DISKLAB_LIBRARY, then library.sqlite3 in the XDG data directory) and the state directory
(crash-recovery records and the log file, in the XDG state directory). One home, read by the
CLI, the window, the runner's records and the log file, which all sit above it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import platformdirs

LIBRARY_ENV = "DISKLAB_LIBRARY"


def library_path(flag: str | os.PathLike[str] | None = None,
                 env: Mapping[str, str] = os.environ) -> Path:
    """The library file to use: the --library flag, else $DISKLAB_LIBRARY, else
    library.sqlite3 in the XDG data directory. One rule for every command and the window, so
    `disklab sessions` shows what the window recorded."""
    if flag:  # absolute: the root helper, started from /, is told where the library is
        return Path(os.path.abspath(Path(flag).expanduser()))
    if env.get(LIBRARY_ENV):
        return Path(os.path.abspath(Path(env[LIBRARY_ENV]).expanduser()))
    return Path(platformdirs.user_data_dir("disklab")) / "library.sqlite3"


def state_dir() -> Path:
    """Where DiskLab keeps what must outlive a crash: the records of the mounts and loop devices
    a run set up (cleaned at the next start, whichever library that run used) and the log file.
    The XDG state directory ($XDG_STATE_HOME/disklab, else ~/.local/state/disklab): state, not
    data, so it is not beside a library the user copies or shares. Created on first use."""
    path = Path(platformdirs.user_state_dir("disklab"))
    path.mkdir(parents=True, exist_ok=True)
    return path
