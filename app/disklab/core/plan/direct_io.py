"""The plan check's question "does the target's filesystem accept O_DIRECT?", asked once per
mounted filesystem and leaving the filesystem nothing to write afterwards.

Why not simply call the probe (core/system/fsprobe.direct_io_refusal) on every check: the probe
creates an unnamed file in the target directory and writes one block, and on ext4 that is a
journal transaction (superblock, group descriptors, a block and an inode bitmap, an inode table
block) that jbd2 commits up to 5 s later (`commit=5`). The GUI checks the plan again while a run
goes (the Test matrix page 300 ms after each change of the draft, the Run page at its start),
and the bench traced that commit, 28 KiB written by jbd2, inside the measured window of a
read-only case with the library on another device (bench/README.md, figure 1a). So:

- the answer is kept per mounted filesystem (the mount's entry: device, mountpoint, type and
  options; it cannot change while that mount stands), so a check during a run does not probe;
- after a probe the filesystem is synced (syncfs), so the probe's own transaction is committed
  inside the check and not 5 s into a case started right after it.
"""

from __future__ import annotations

import contextlib
import threading

from disklab.core.system.fsprobe import direct_io_refusal
from disklab.core.system.mountinfo import MountEntry, mount_of
from disklab.core.system.syncfs import syncfs

_answers: dict[MountEntry, str | None] = {}
_lock = threading.Lock()  # the GUI checks in a thread pool: two checks at once probe once


def direct_io_refusal_once(directory: str) -> str | None:
    """None when O_DIRECT works in `directory`, else why not (direct_io_refusal's answer), the
    filesystem probed at most once per mount in this process and synced after the probe."""
    with _lock:
        mount = mount_of(directory)
        if mount is not None and mount in _answers:
            return _answers[mount]
        answer = direct_io_refusal(directory)
        with contextlib.suppress(OSError):  # a directory gone or unreadable: nothing to sync
            syncfs(directory)
        if mount is not None:
            _answers[mount] = answer
        return answer


def forget() -> None:
    """Drop the kept answers (a test that remounts a filesystem under the same name)."""
    with _lock:
        _answers.clear()
