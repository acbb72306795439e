"""Block devices and loop devices: classify and identify a device, attach an image file to a
free loop device, detach it again.

attach makes the image itself (root's, mode 0600, an unnamed O_TMPFILE linked to its name, or
O_EXCL where the filesystem has no O_TMPFILE: no one else holds a descriptor of it), in a
directory the served user may write and search, found as that user would find it
(paths.resolve_as: the answer is the same for a missing and an existing path the user may not
use); losetup is handed the file by descriptor (/proc/PID/fd/N), so a link planted between the
check and losetup changes nothing. It never takes a file someone else made: a file a user
could write, or had open, would let that user change a filesystem root mounts. The image is in
the helper's record before losetup runs, so that a helper killed in between is undone by the
next one (undo_dead). detach acts only on loop devices this helper attached (or a dead
helper of this user recorded), still backed by the very file it attached, and removes only a
file it made itself.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from pathlib import Path

from disklab.core.helper_client.protocol import (
    Attach,
    Attached,
    Classified,
    Classify,
    Detach,
    Detached,
    Identified,
    Identity,
)
from disklab.core.root_helper import paths
from disklab.core.root_helper.state import Loop, Session, backing, device_of, loop_names
from disklab.core.system import devices, mountinfo
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


def _image_fd(s: Session, image: str, library_path: str | None) -> tuple[int, str]:
    """(a read-write descriptor of a new image file the helper made, its real path). The
    file is made here (_new_file: mode 0600, root's, a new inode) in a directory the served
    user may write and search, found as that user would find it: no one else holds a
    descriptor of it or may open it for writing (see _check_made for what else is checked)."""
    given_parent, name = os.path.split(image)
    if not name or name in (".", ".."):
        raise SafetyError(f"{image} names no file")
    parent = paths.resolve_as(given_parent or "/", s.user, image)
    real = os.path.join(parent, name)
    if any(real == p or real.startswith(p + "/") for p in FORBIDDEN):
        raise SafetyError(f"{image}: an image cannot live under {', '.join(FORBIDDEN)}")
    if library_path and os.path.realpath(library_path) == real:
        raise SafetyError(f"{image} is DiskLab's library")
    dirfd = paths.open_dir(parent, s.user)
    try:
        if not paths.may_create_in(os.fstat(dirfd), s.user):
            raise paths.not_the_users(image, s.user)
        if _exists(name, dirfd):
            raise SafetyError(f"{image} already exists: DiskLab makes (and removes) its own "
                              "image file; remove it or choose another path")
        fd = _new_file(s, dirfd, name, real, image)
        s.builtin("create", real)
        return fd, real
    finally:
        os.close(dirfd)


def _new_file(s: Session, dirfd: int, name: str, real: str, image: str) -> int:
    """A read-write descriptor of a new file named `name` in `dirfd`, made so that the record
    always knows it: an unnamed file (O_TMPFILE) is checked and recorded pending (its device
    and inode), then linked to its name (which fails if the name exists); a helper killed
    before the link leaves nothing, after it a record its inheritor undoes. Where the
    filesystem has no O_TMPFILE, the file is made by name (O_EXCL) and recorded at once."""
    try:
        fd = os.open(".", os.O_TMPFILE | os.O_RDWR | os.O_CLOEXEC, 0o600, dir_fd=dirfd)
    except OSError as e:
        if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            raise SafetyError(f"{image}: cannot make it ({e.strerror})") from None
        return _named_file(s, dirfd, name, real, image)
    try:
        _check_made(s, fd, image, os.path.dirname(real))
        st = os.fstat(fd)
        s.pending_image(real, st.st_dev, st.st_ino)  # in the record before it has a name
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dirfd, follow_symlinks=True)
    except BaseException as e:
        os.close(fd)
        s.pending_image(None)
        if isinstance(e, FileExistsError):
            raise SafetyError(f"{image} already exists: DiskLab makes (and removes) its own "
                              "image file; remove it or choose another path") from None
        if isinstance(e, OSError) and not isinstance(e, SafetyError):
            raise SafetyError(f"{image}: cannot make it ({e.strerror})") from None
        raise
    return fd


def _named_file(s: Session, dirfd: int, name: str, real: str, image: str) -> int:
    """The new file made by name (a filesystem without O_TMPFILE): O_EXCL, then recorded."""
    try:
        fd = os.open(name, CREATE_FLAGS, 0o600, dir_fd=dirfd)
    except FileExistsError:
        raise SafetyError(f"{image} already exists: DiskLab makes (and removes) its own "
                          "image file; remove it or choose another path") from None
    except OSError as e:
        raise SafetyError(f"{image}: cannot make it ({e.strerror})") from None
    st = os.fstat(fd)
    s.pending_image(real, st.st_dev, st.st_ino)
    try:
        _check_made(s, fd, image, os.path.dirname(real))
    except BaseException:
        os.close(fd)
        _remove_if_same(s, real, st)
        s.pending_image(None)
        raise
    return fd


def _exists(name: str, dirfd: int) -> bool:
    try:
        os.stat(name, dir_fd=dirfd, follow_symlinks=False)
        return True
    except OSError:
        return False


def _check_made(s: Session, fd: int, image: str, directory: str) -> None:
    """The new file is root's alone as the kernel sees it, on a filesystem whose contents only
    the kernel serves: not FUSE (a user's daemon answers every read), not on a block device
    (or a loop device's backing file) the served user may write. A filesystem that maps every
    file to its user (vfat uid=) shows here as a file that is not root's."""
    st = os.fstat(fd)
    why = None
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
        why = "is not a new regular file"
    elif st.st_uid != os.geteuid() or st.st_mode & 0o077:
        why = (f"is owned by uid {st.st_uid}, mode {stat.S_IMODE(st.st_mode):o} on its "
               "filesystem, not root's alone")
    else:
        why = _writable_under(s, st.st_dev, directory)
    if why:
        raise SafetyError(f"{image} {why}: DiskLab mounts only an image no one but root can "
                          "write; choose a directory on a local filesystem")


def _writable_under(s: Session, devno: int, directory: str) -> str | None:
    """Why the filesystem of the new file (device number `devno`, in `directory`) is one the
    served user can change under the kernel (FUSE, a device node the user may write, a loop
    device over a file the user may write), or None. The mount is found by its device number,
    else (a btrfs subvolume's own number) as the mount holding the directory."""
    if s.user.is_root:
        return None  # root may write every device anyway: nothing to gain
    major, minor = os.major(devno), os.minor(devno)
    entry = next((m for m in mountinfo.mounts() if m.devno == f"{major}:{minor}"), None)
    entry = entry or mountinfo.mount_of(directory)
    if entry is None or entry.fstype.startswith("fuse"):
        return f"is on a {entry.fstype if entry else 'unknown'} filesystem"
    nodes = [f"/dev/block/{major}:{minor}"] + ([entry.source] if
                                                entry.source.startswith("/dev/") else [])
    for node in nodes:
        with contextlib.suppress(OSError, SafetyError):
            st = os.stat(node)
            if not stat.S_ISBLK(st.st_mode):
                continue
            if paths.may_write(st, s.user):
                return f"is on {entry.source}, a device uid {s.user.uid} may write"
            kname = devices.kernel_name(node)
            backing_file = Path("/sys/block") / kname / "loop" / "backing_file"
            if backing_file.exists():
                under = backing_file.read_text().strip()
                if paths.may_write(os.stat(under), s.user):
                    return (f"is on {entry.source}, a loop device over {under}, which uid "
                            f"{s.user.uid} may write")
    return None


def attach(s: Session, r: Attach) -> Attached:
    """A new sparse image file, made here, on a free loop device with direct I/O on. The file
    is in the record (a pending image) before losetup runs: a helper killed in between leaves
    what its inheritor finds and undoes (state.still_there, close)."""
    fd, real = _image_fd(s, r.image, r.library_path)
    created = True
    try:
        os.ftruncate(fd, r.size)
        st = os.fstat(fd)
        by_fd = f"/proc/{os.getpid()}/fd/{fd}"
        try:
            done = s.run(("losetup", "--find", "--show", "--direct-io=on", by_fd))
        except DisklabError:
            _remove_if_same(s, real, st)
            s.pending_image(None)
            raise
    finally:
        os.close(fd)
    device, kname = device_of(done.stdout.strip().splitlines()[-1])
    s.held.loops[kname] = Loop(device, real, st.st_dev, st.st_ino, created)
    s.held.owned.add(kname)
    s.pending_image(None)  # saves: the loop device now stands for it
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
    dead = set(s.inherited.loops)  # a dead helper's: it made the file, no one else wants it
    for kname, loop in mine.items():
        if backing(kname) == (loop.dev, loop.ino):  # else gone, or reused by someone else
            dev = devices.classify(loop.device)
            if dev.mountpoints or dev.safety in ("system", "mounted"):
                raise SafetyError(f"{loop.device} is still in use ({'; '.join(dev.reasons)}); "
                                  "unmount first")
            s.run(("losetup", "--detach", loop.device))
            detached.append(loop.device)
            ours[kname] = loop
        if loop.created and (r.remove_image or kname in dead):
            removable.append(loop)
        s.forget_loop(kname)
    pending = _wait_detached(ours)
    removed = False
    if removable and not pending:
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


def undo_dead(s: Session) -> None:
    """At the start: what a helper of this user killed before its end left attached and not in
    use. A pending image (made, perhaps attached, not yet answered) and a loop device it made
    that nothing is mounted on or built over are detached and their files removed; a mounted
    one waits for DiskLab's recovery, which unmounts it first. What cannot be undone stays in
    the record."""
    for path, (dev, ino) in list(s.inherited.pending.items()):
        with contextlib.suppress(Exception):
            made = Loop("", path, dev, ino, True)
            for kname in loop_names():
                if backing(kname) == (dev, ino):
                    s.run(("losetup", "--detach", f"/dev/{kname}"), check=False)
                    _wait_detached({kname: made})
            if not any(backing(k) == (dev, ino) for k in loop_names()):
                _remove_if_same(s, path, None, made)
                del s.inherited.pending[path]
    for kname, loop in list(s.inherited.loops.items()):
        with contextlib.suppress(Exception):
            if not loop.created or _in_use(kname) or backing(kname) != (loop.dev, loop.ino):
                continue
            s.run(("losetup", "--detach", loop.device), check=False)
            if not _wait_detached({kname: loop}):
                _remove_if_same(s, loop.image, None, loop)
                s.forget_loop(kname)
    s.save()


def _in_use(kname: str) -> bool:
    """Something is mounted from the loop device `kname` or a partition of it, or a device is
    built over it (holders)."""
    for entry in mountinfo.mounts():
        name = os.path.basename(entry.source)
        if name == kname or name.startswith(kname + "p"):
            return True
    return any(Path("/sys/block", kname, "holders").glob("*"))


def close(s: Session) -> None:
    """The client has gone: detach what this session attached and remove the images it made."""
    for kname, loop in list(s.held.loops.items()):
        with contextlib.suppress(Exception):
            if backing(kname) == (loop.dev, loop.ino):
                s.run(("losetup", "--detach", loop.device), check=False)
            if loop.created and not _wait_detached({kname: loop}):
                _remove_if_same(s, loop.image, None, loop)
            s.forget_loop(kname)
