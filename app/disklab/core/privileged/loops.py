"""Block devices and loop devices: classify and identify a device, attach an image file to a
free loop device, detach it again.

attach makes the image where the served user could make it (a directory that user may write,
opened without following a link), or takes an empty file that user owns; losetup is handed the
file by descriptor (/proc/PID/fd/N), so a link planted between the check and losetup changes
nothing. detach acts only on loop devices this helper attached (or a dead helper of this user
recorded), still backed by the very file it attached, and removes only a file it made itself.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

from disklab.core.privilege.protocol import (
    Attach,
    Attached,
    Classified,
    Classify,
    Detach,
    Detached,
    Identified,
    Identity,
)
from disklab.core.privileged import paths
from disklab.core.privileged.state import Loop, Session, backing, device_of
from disklab.core.system import devices
from disklab.core.vocab.errors import DisklabError, SafetyError

DETACH_WAIT = 5.0  # seconds for a deferred loop detach to complete
CREATE_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
FORBIDDEN = ("/proc", "/sys", "/dev", "/run")


def classify(s: Session, r: Classify) -> Classified:
    path, _ = device_of(r.path)
    return Classified(devices.classify(path, r.library_path).to_json())


def identity(s: Session, r: Identity) -> Identified:
    path, _ = device_of(r.path)
    return Identified(devices.identity(path))


def _image_fd(s: Session, image: str, library_path: str | None) -> tuple[int, str, bool]:
    """(a read-write descriptor of the image, its real path, created): a new file in a
    directory the served user may write, or an empty regular file that user owns."""
    parent, name = paths.resolved_parent(image)
    real = os.path.join(parent, name)
    if any(real == p or real.startswith(p + "/") for p in FORBIDDEN):
        raise SafetyError(f"{image}: an image cannot live under {', '.join(FORBIDDEN)}")
    if library_path and os.path.realpath(library_path) == real:
        raise SafetyError(f"{image} is DiskLab's library")
    dirfd = paths.open_dir(parent)
    try:
        st = os.fstat(dirfd)
        if not paths.may_create_in(st, s.user) and not _exists(name, dirfd):
            raise SafetyError(f"{image}: uid {s.user.uid} may not create files in {parent}")
        try:
            fd = os.open(name, CREATE_FLAGS, 0o644, dir_fd=dirfd)
        except FileExistsError:
            fd = os.open(name, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                         dir_fd=dirfd)
            _check_existing(s, fd, image)
            return fd, real, False
        except OSError as e:
            raise SafetyError(f"{image}: cannot make it ({e.strerror})") from None
        s.builtin("create", real)
        return fd, real, True
    finally:
        os.close(dirfd)


def _exists(name: str, dirfd: int) -> bool:
    try:
        os.stat(name, dir_fd=dirfd, follow_symlinks=False)
        return True
    except OSError:
        return False


def _check_existing(s: Session, fd: int, image: str) -> None:
    st = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(st.st_mode) or st.st_size > 0:
        problem = ("already exists: DiskLab makes (and removes) its own image file; remove it "
                   "or choose another path")
    elif st.st_nlink != 1 or (st.st_uid != s.user.uid and not s.user.is_root):
        problem = f"is not an empty file of uid {s.user.uid}'s own"
    if problem:
        os.close(fd)
        raise SafetyError(f"{image} {problem}")


def attach(s: Session, r: Attach) -> Attached:
    """A new sparse image file on a free loop device with direct I/O on."""
    fd, real, created = _image_fd(s, r.image, r.library_path)
    try:
        os.ftruncate(fd, r.size)
        st = os.fstat(fd)
        by_fd = f"/proc/{os.getpid()}/fd/{fd}"
        try:
            done = s.run(("losetup", "--find", "--show", "--direct-io=on", by_fd))
        except DisklabError:
            if created:
                _remove_if_same(s, real, st)
            raise
    finally:
        os.close(fd)
    device, kname = device_of(done.stdout.strip().splitlines()[-1])
    s.held.loops[kname] = Loop(device, real, st.st_dev, st.st_ino, created)
    s.held.owned.add(kname)
    s.save()
    dio = Path("/sys/block") / kname / "loop" / "dio"
    direct = dio.exists() and dio.read_text().strip() == "1"
    return Attached(device, r.image, created, direct, st.st_ino, devices.identity(device))


def detach(s: Session, r: Detach) -> Detached:
    """Detach the loop device(s) this helper attached to `image` (only those); optionally
    remove the image, when the helper made it."""
    real = os.path.join(*paths.resolved_parent(r.image))
    mine = {k: loop for k in _knames(s) if (loop := s.loop(k)) and loop.image == real}
    if r.device is not None:
        _, kname = device_of(r.device)
        if kname not in mine:
            raise SafetyError(f"{r.device} is not a loop device this helper attached to "
                              f"{r.image}; not detaching it")
        mine = {kname: mine[kname]}
    if not mine:
        raise SafetyError(f"{r.image}: no loop device this helper attached is backed by it")
    detached, removable, ours = [], [], {}
    for kname, loop in mine.items():
        if backing(kname) == (loop.dev, loop.ino):  # else gone, or reused by someone else
            dev = devices.classify(loop.device)
            if dev.mountpoints or dev.safety in ("system", "mounted"):
                raise SafetyError(f"{loop.device} is still in use ({'; '.join(dev.reasons)}); "
                                  "unmount first")
            s.run(("losetup", "--detach", loop.device))
            detached.append(loop.device)
            ours[kname] = loop
        if loop.created:
            removable.append(loop)
        s.forget_loop(kname)
    pending = _wait_detached(ours)
    removed = False
    if r.remove_image and removable and not pending:
        removed = all(_remove_if_same(s, loop.image, None, loop) for loop in removable)
    return Detached(detached, removed, pending)


def _knames(s: Session) -> list[str]:
    return list(dict.fromkeys([*s.held.loops, *s.inherited.loops]))


def _wait_detached(loops: dict[str, Loop]) -> list[str]:
    """A device still open elsewhere (a udev or blkid probe) is detached by the kernel at its
    last close: wait a little for that, so that what is reported detached is gone."""
    deadline = time.monotonic() + DETACH_WAIT
    while True:
        pending = [loop.device for k, loop in loops.items()
                   if backing(k) == (loop.dev, loop.ino)]
        if not pending or time.monotonic() >= deadline:
            return pending
        time.sleep(0.1)


def _remove_if_same(s: Session, real: str, st: os.stat_result | None,
                    loop: Loop | None = None) -> bool:
    """Unlink the image at `real` only if it is still the very file (device, inode) the helper
    made; the directory is opened without following links."""
    want = (st.st_dev, st.st_ino) if st is not None else (loop.dev, loop.ino)  # type: ignore
    parent, name = os.path.split(real)
    try:
        dirfd = paths.open_dir(parent)
    except SafetyError:
        return False
    try:
        now = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != want:
            return False
        os.unlink(name, dir_fd=dirfd)
        s.builtin("unlink", real)
        return True
    except OSError:
        return False
    finally:
        os.close(dirfd)


def close(s: Session) -> None:
    """The client has gone: detach what this session attached and remove the images it made."""
    for kname, loop in list(s.held.loops.items()):
        with contextlib.suppress(Exception):
            if backing(kname) == (loop.dev, loop.ino):
                s.run(("losetup", "--detach", loop.device), check=False)
            if loop.created and not _wait_detached({kname: loop}):
                _remove_if_same(s, loop.image, None, loop)
            s.forget_loop(kname)
