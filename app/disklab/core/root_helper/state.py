"""What one helper holds for its session: the user it serves, its own work directory, what it
attached, mounted, formatted and created (the only things it may detach, unmount, tune or
remove), and the commands each request ran (returned with the answer for the session's log).

What it holds is also written to its root-owned record (RECORDS/<pid>-<start>.json, a
directory only root can enter): a helper killed before its cleanup leaves the record, and the
next helper of the same user may undo what it lists (and only that), as DiskLab's recovery
asks. A helper that ends normally undoes everything and removes its record.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import struct
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

from disklab.core import proc
from disklab.core.root_helper.paths import User
from disklab.core.system import devices
from disklab.core.vocab.errors import SafetyError, ToolError

TAIL = 4000  # characters of each command's output kept in "ran"
RECORDS = Path("/var/lib/disklab/helper")
LOOP_GET_STATUS64 = 0x4C05
LOOP_INFO64_SIZE = 232
TIMEOUTS = {"mkfs": 4 * 3600.0, "wipefs": 300.0, "mount": 600.0, "umount": 1800.0,
            "default": 300.0}


@dataclass
class Loop:
    """A loop device this helper attached, and the image file behind it (device, inode)."""

    device: str  # /dev/loopN
    image: str  # the image's real path
    dev: int
    ino: int
    created: bool  # the helper made the file (it may remove it)


@dataclass
class Holdings:
    """Everything a helper may undo: what it made in its session (or a dead helper recorded)."""

    loops: dict[str, Loop] = field(default_factory=dict)  # kernel name -> loop
    mounts: dict[str, str] = field(default_factory=dict)  # mountpoint -> kernel name
    owned: set[str] = field(default_factory=set)  # kernel names formatted, partitioned, attached
    groups: dict[str, str] = field(default_factory=dict)  # case tag -> cgroup path
    tuned: dict[str, dict[str, str]] = field(default_factory=dict)  # device -> first values
    workdirs: set[str] = field(default_factory=set)  # the helpers' own directories
    # an image made by an attach not finished yet: real path -> [st_dev, st_ino] (a loop
    # device may or may not be attached to it yet)
    pending: dict[str, list[int]] = field(default_factory=dict)

    @property
    def undoable(self) -> bool:
        return bool(self.loops or self.mounts or self.groups or self.pending)

    def to_json(self) -> dict[str, Any]:
        return {"loops": {k: asdict(v) for k, v in self.loops.items()}, "mounts": self.mounts,
                "owned": sorted(self.owned), "groups": self.groups, "tuned": self.tuned,
                "workdirs": sorted(self.workdirs), "pending": self.pending}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Holdings:
        return cls({k: Loop(**v) for k, v in (data.get("loops") or {}).items()},
                   dict(data.get("mounts") or {}), set(data.get("owned") or ()),
                   dict(data.get("groups") or {}), dict(data.get("tuned") or {}),
                   set(data.get("workdirs") or ()),
                   {str(k): [int(v[0]), int(v[1])] for k, v in
                    (data.get("pending") or {}).items()})

    def merge(self, other: Holdings) -> None:
        self.pending.update(other.pending)
        self.loops.update(other.loops)
        self.mounts.update(other.mounts)
        self.owned |= other.owned
        self.groups.update(other.groups)
        self.workdirs |= other.workdirs
        for device, values in other.tuned.items():
            self.tuned.setdefault(device, {}).update(values)


class Session:
    """One helper's state and its command log; the handler modules act through it."""

    def __init__(self, user: User, workdir: str | None = None,
                 records: Path | None = RECORDS) -> None:
        self.user = user
        self.ran: list[dict[str, Any]] = []
        self.held = Holdings()
        self.inherited = Holdings()  # what dead helpers of this user recorded
        self.records = records
        self.record_file: Path | None = None
        self.tools: Any = None  # the tools and cases it runs (toolruns.Runs)
        # devices whose filesystem this helper's mkfs made and no raw tool has written since:
        # the only ones it mounts (a filesystem is never one whose bytes a client chose)
        self.formatted: set[str] = set()
        # The step of the end of the session under way ({"step", "since"}), in the record: a
        # helper that dies or hangs while tearing down says where (read by its inheritor, or
        # by a person looking at /var/lib/disklab/helper).
        self.closing: dict[str, Any] | None = None
        # Mountpoints and raw-device result files: root's own directory; others may pass
        # through it (a user's monitor stats a mountpoint) but not list or change it.
        self.workdir = workdir or tempfile.mkdtemp(prefix="disklab-helper-")
        os.chmod(self.workdir, 0o711)
        self.held.workdirs.add(self.workdir)
        if records is not None:
            self._open_records(records)

    # --- the root-owned record ----------------------------------------------------------------
    def _open_records(self, records: Path) -> None:
        with contextlib.suppress(OSError):
            records.mkdir(parents=True, mode=0o700, exist_ok=True)
            st = records.lstat()
            if st.st_uid != os.geteuid() or st.st_mode & 0o077 or records.is_symlink():
                return  # not root's alone: neither written nor believed
            me = psutil.Process()
            self.record_file = records / f"{me.pid}-{int(me.create_time() * 100)}.json"
            for path in records.glob("*.json"):
                self._inherit(path)
            for path in records.glob("*.tmp"):  # a record being written when it was killed
                if not _alive(path.stem):
                    path.unlink(missing_ok=True)

    def _inherit(self, path: Path) -> None:
        """A dead helper's record of the same user: what it lists may be undone here."""
        with contextlib.suppress(OSError, ValueError, TypeError, psutil.Error):
            if _alive(path.stem):
                return  # still serving
            data = json.loads(path.read_text())
            if data.get("served") != self.user.uid:
                return
            left = still_there(Holdings.from_json(data))
            if left.undoable:
                self.inherited.merge(left)
            else:
                self.inherited.workdirs |= left.workdirs
                path.unlink()  # nothing of it is left to undo

    def save(self) -> None:
        """Write what is held (and what is inherited and not yet undone) to the record."""
        if self.record_file is None:
            return
        both = Holdings()
        both.merge(self.inherited)
        both.merge(self.held)
        data = {"served": self.user.uid, **both.to_json()}
        if self.closing is not None:
            data["closing"] = self.closing
        tmp = self.record_file.with_suffix(".tmp")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(data))
            os.replace(tmp, self.record_file)

    def forget_records(self) -> None:
        """The end of a clean session: this record, and the dead ones it took over."""
        if self.record_file is None or self.records is None:
            return
        with contextlib.suppress(OSError):
            self.record_file.unlink()
        if not self.inherited.undoable:
            for path in self.records.glob("*.json"):
                with contextlib.suppress(OSError, ValueError):
                    if json.loads(path.read_text()).get("served") == self.user.uid and \
                            not _alive(path.stem):
                        path.unlink()

    def closing_step(self, step: str) -> None:
        """Record that the end of the session is at `step` (saved at once)."""
        self.closing = {"step": step, "since": round(time.time(), 3)}
        self.save()

    def pending_image(self, path: str | None, dev: int = 0, ino: int = 0) -> None:
        """Record (saved at once) the image an attach under way made, before its next step;
        None: the attach is over (its loop device stands for it, or it was undone)."""
        self.held.pending = {path: [dev, ino]} if path is not None else {}
        self.save()

    # --- what may be touched --------------------------------------------------------------------
    def loop(self, kname: str) -> Loop | None:
        return self.held.loops.get(kname) or self.inherited.loops.get(kname)

    def owns(self, kname: str) -> bool:
        """`kname` is a device this helper (or a dead one of this user) attached, formatted with
        a confirm, or partitioned."""
        return kname in self.held.owned or kname in self.inherited.owned

    def written_raw(self, kname: str) -> None:
        """`kname` (and its partitions) no longer hold the filesystem this helper made."""
        self.formatted -= {k for k in self.formatted if k == kname or k.startswith(kname + "p")}

    def mounted_here(self, mountpoint: str) -> str | None:
        return self.held.mounts.get(mountpoint) or self.inherited.mounts.get(mountpoint)

    def forget_mount(self, mountpoint: str) -> None:
        self.held.mounts.pop(mountpoint, None)
        self.inherited.mounts.pop(mountpoint, None)
        self.save()

    def forget_loop(self, kname: str) -> None:
        for holdings in (self.held, self.inherited):
            holdings.loops.pop(kname, None)
            holdings.owned -= {k for k in holdings.owned if k == kname or
                               k.startswith(kname + "p")}
        self.save()

    # --- running commands ---------------------------------------------------------------------
    def run(self, argv: Any, timeout: float = TIMEOUTS["default"],
            check: bool = True) -> proc.Completed:
        """Run one command through proc, record it; ToolError on a non-zero exit if check."""
        try:
            done = proc.run(argv, timeout=timeout)
        except ToolError as e:
            self.ran.append({"argv": list(argv), "returncode": None, "error": str(e)})
            raise
        self.ran.append({"argv": list(argv), "returncode": done.returncode,
                         "stdout": done.stdout[-TAIL:], "stderr": done.stderr[-TAIL:]})
        if check and done.returncode != 0:
            raise ToolError(f"{' '.join(argv)} failed (exit {done.returncode}): "
                            f"{done.stderr.strip()[-500:] or done.stdout.strip()[-500:]}")
        return done

    def builtin(self, *argv: str, **more: Any) -> dict[str, Any]:
        """Record an action done without a process (a write, mkdir, rmdir, unlink)."""
        entry: dict[str, Any] = {"argv": list(argv), "builtin": True, "returncode": 0, **more}
        self.ran.append(entry)
        return entry

    def write_file(self, path: str, value: str) -> None:
        """A sysfs/procfs write, recorded like a command."""
        entry = self.builtin("write", path, value)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                os.write(fd, value.encode())
            finally:
                os.close(fd)
        except OSError as e:
            entry.update(returncode=None, error=e.strerror)
            raise ToolError(f"cannot write {value!r} to {path}: {e.strerror}") from None


def _alive(stem: str) -> bool:
    """The helper of a record (PID-START) still runs (a zombie does not)."""
    with contextlib.suppress(ValueError, psutil.Error):
        pid, start = (int(x) for x in stem.split("-"))
        p = psutil.Process(pid)
        return int(p.create_time() * 100) == start and p.status() != psutil.STATUS_ZOMBIE
    return False


def still_there(held: Holdings) -> Holdings:
    """What of a dead helper's record is still as it left it: loop devices backed by the very
    file it attached (and their partitions), mounts still mounted, groups still there. A kernel
    name reused by someone else since is not the helper's any more."""
    loops = {k: v for k, v in held.loops.items() if backing(k) == (v.dev, v.ino)}
    pending = {p: v for p, v in held.pending.items()
               if same_inode(p, v) or any(backing(k) == tuple(v) for k in loop_names())}
    owned = {k for k in held.owned if any(k == n or k.startswith(n + "p") for n in loops)}
    mounts = {m: k for m, k in held.mounts.items() if os.path.ismount(m)}
    groups = {t: p for t, p in held.groups.items() if os.path.isdir(p)}
    tuned = {d: v for d, v in held.tuned.items() if os.path.basename(d) in owned}
    return Holdings(loops, mounts, owned, groups, tuned, held.workdirs, pending)


def same_inode(path: str, dev_ino: list[int]) -> bool:
    """`path` is (still) the regular file with this (st_dev, st_ino); the last component is
    not followed."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and [st.st_dev, st.st_ino] == list(dev_ino)


def loop_names() -> list[str]:
    """The kernel names of the loop devices there are now."""
    with contextlib.suppress(OSError):
        return sorted(n for n in os.listdir("/sys/block") if n.startswith("loop"))
    return []


def device_of(path: str) -> tuple[str, str]:
    """(the canonical /dev/KNAME of a device path, KNAME): resolved once through its device
    number, so that every later step names the device, not a link a user could change."""
    kname = devices.kernel_name(path)
    canonical = f"/dev/{kname}"
    try:
        same = os.stat(canonical).st_rdev == os.stat(path).st_rdev
    except OSError:
        same = False
    if not same:
        raise SafetyError(f"{path}: /dev/{kname} is not the same device")
    return canonical, kname


def backing(kname: str) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the file behind a loop device now, or None (not attached)."""
    base = Path("/sys/block") / kname / "loop"
    try:
        major, minor = (int(x) for x in (base.parent / "dev").read_text().split(":"))
    except (OSError, ValueError):
        return None
    try:
        fd = os.open(f"/dev/{kname}", os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISBLK(st.st_mode) or st.st_rdev != os.makedev(major, minor):
            return None
        buf = fcntl.ioctl(fd, LOOP_GET_STATUS64, bytes(LOOP_INFO64_SIZE))
    except OSError:
        return None
    finally:
        os.close(fd)
    lo_device, lo_inode = struct.unpack_from("=QQ", buf, 0)
    return os.makedev(os.major(lo_device), os.minor(lo_device)), lo_inode
