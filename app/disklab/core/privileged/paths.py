"""Files as root without following a symbolic link a user planted: the served user, what that
user may write, and directories opened component by component with O_NOFOLLOW so that the
helper acts on descriptors, never on a path a user can swap between a check and its use.

A path from the client is resolved once (realpath), then opened from / one component at a time
with O_NOFOLLOW: a link put in between makes the open fail instead of leading elsewhere.
"""

from __future__ import annotations

import os
import pwd
import stat
from collections.abc import Mapping
from dataclasses import dataclass

from disklab.core.vocab.errors import SafetyError

DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class User:
    """The user the helper serves: who asked for root (pkexec's PKEXEC_UID, sudo's SUDO_UID),
    not what the client says; root itself when DiskLab runs as root."""

    uid: int
    gid: int
    groups: frozenset[int]

    @property
    def is_root(self) -> bool:
        return self.uid == 0


def served_user(environ: Mapping[str, str]) -> User:
    """From the variables pkexec and sudo set themselves (a client cannot choose them: sudo
    and pkexec overwrite what the caller had); root when neither is there."""
    uid = os.getuid()
    for key in ("PKEXEC_UID", "SUDO_UID"):
        value = environ.get(key, "")
        if value.isdigit():
            uid = int(value)
            break
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:  # a uid without a name: its own uid and gid only
        return User(uid, uid, frozenset({uid}))
    groups = frozenset(os.getgrouplist(entry.pw_name, entry.pw_gid))
    return User(uid, entry.pw_gid, groups | {entry.pw_gid})


def may_write(st: os.stat_result, user: User) -> bool:
    """`user` may write the file or directory of `st` by its mode bits (root: always)."""
    if user.is_root:
        return True
    if st.st_uid == user.uid:
        return bool(st.st_mode & stat.S_IWUSR)
    if st.st_gid in user.groups:
        return bool(st.st_mode & stat.S_IWGRP)
    return bool(st.st_mode & stat.S_IWOTH)


def may_create_in(st: os.stat_result, user: User) -> bool:
    """`user` may create a file in the directory of `st` (write and search permission)."""
    if user.is_root:
        return True
    if st.st_uid == user.uid:
        bits = stat.S_IWUSR | stat.S_IXUSR
    elif st.st_gid in user.groups:
        bits = stat.S_IWGRP | stat.S_IXGRP
    else:
        bits = stat.S_IWOTH | stat.S_IXOTH
    return st.st_mode & bits == bits


def open_dir(path: str) -> int:
    """A descriptor (O_PATH) of the directory `path`, opened from / one component at a time
    without following a symbolic link; SafetyError when a component is a link or not a
    directory. The caller closes it."""
    if not path.startswith("/"):
        raise SafetyError(f"{path} is not an absolute path")
    fd = os.open("/", DIR_FLAGS)
    try:
        for part in [p for p in path.split("/") if p]:
            if part in (".", ".."):
                raise SafetyError(f"{path}: '.' or '..' in a resolved path")
            try:
                following = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                raise SafetyError(f"{path}: {part} is a symbolic link, not a directory, or "
                                  f"missing ({e.strerror}); not following it") from None
            os.close(fd)
            fd = following
        return fd
    except BaseException:
        os.close(fd)
        raise


def resolved_parent(path: str) -> tuple[str, str]:
    """(the real path of `path`'s directory, resolved once, `path`'s last component)."""
    parent, name = os.path.split(path)
    if not name or name in (".", ".."):
        raise SafetyError(f"{path} names no file")
    return os.path.realpath(parent), name


def same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
