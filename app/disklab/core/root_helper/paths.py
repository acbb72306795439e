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


def may_search(st: os.stat_result, user: User) -> bool:
    """`user` may look up names in the directory of `st` (search permission)."""
    if user.is_root:
        return True
    if st.st_uid == user.uid:
        bit = stat.S_IXUSR
    elif st.st_gid in user.groups:
        bit = stat.S_IXGRP
    else:
        bit = stat.S_IXOTH
    return bool(st.st_mode & bit)


def not_the_users(path: str, user: User) -> SafetyError:
    """The refusal of a path the served user may not use: the same words whether or not the
    path exists, so that the helper is no way to learn what is in a directory the user cannot
    search."""
    return SafetyError(f"{path}: uid {user.uid} may not make files there (DiskLab makes an "
                       "image only in a directory its user may write and search)")


def resolve_as(path: str, user: User, shown: str | None = None, limit: int = 40) -> str:
    """The real path of the directory `path`, resolved as `user` would resolve it: a name is
    looked up (and a symbolic link read) only in a directory that user may search, so the
    answer says nothing about what the user could not see (not_the_users: the same words for a
    missing and an existing name; `shown`: the path its words name). Root resolves it;
    open_dir then opens the result."""
    shown = shown or path
    if not path.startswith("/"):
        raise SafetyError(f"{path} is not an absolute path")
    todo = [p for p in path.split("/") if p]
    real: list[str] = []
    while todo:
        part = todo.pop(0)
        if part == ".":
            continue
        here = "/" + "/".join(real)
        try:
            if not may_search(os.stat(here), user):
                raise not_the_users(shown, user)
            if part == "..":
                real = real[:-1]
                continue
            st = os.lstat(os.path.join(here, part))
        except FileNotFoundError:
            raise SafetyError(f"{path}: {os.path.join(here, part)} does not exist") from None
        except OSError:
            raise not_the_users(shown, user) from None
        if stat.S_ISLNK(st.st_mode):
            limit -= 1
            target = os.readlink(os.path.join(here, part))
            if limit < 0:
                raise SafetyError(f"{path}: too many symbolic links")
            real = [] if target.startswith("/") else real
            todo = [p for p in target.split("/") if p] + todo
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise SafetyError(f"{path}: {os.path.join(here, part)} is not a directory")
        real.append(part)
    return "/" + "/".join(real)


def open_dir(path: str, user: User | None = None) -> int:
    """A descriptor (O_PATH) of the directory `path`, opened from / one component at a time
    without following a symbolic link; SafetyError when a component is a link or not a
    directory. With `user`, every directory passed through must be one that user may search
    (not_the_users otherwise). The caller closes it."""
    if not path.startswith("/"):
        raise SafetyError(f"{path} is not an absolute path")
    fd = os.open("/", DIR_FLAGS)
    try:
        for part in [p for p in path.split("/") if p]:
            if part in (".", ".."):
                raise SafetyError(f"{path}: '.' or '..' in a resolved path")
            if user is not None and not may_search(os.fstat(fd), user):
                raise not_the_users(path, user)
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
