"""Memory cgroups: where the memory controller is, and DiskLab's per-case groups in it.

A buffered test of a file smaller than the page cache measures RAM, not the disk. A tool run in a
memory cgroup with a limit cannot keep more than the limit in the page cache: its buffered writes
are flushed and its buffered reads come from the device at file sizes a workstation can afford.

Two kernels' worth of interfaces exist side by side. cgroup v2 (the unified hierarchy, memory.max
and memory.high) is used when its memory controller is enabled for this process's group; many
machines instead mount a cgroup2 without the memory controller next to the v1 hierarchy that has
it (memory.limit_in_bytes), and there v1 is used. Everything is read from /proc/self/mountinfo and
/proc/self/cgroup under `root` (so a test can point the finder at a directory that has no
controller and see the real "missing" answer).

Groups are made where this process's own group is (nested in it, so any limit of a parent still
applies, and a delegated subtree is enough): in it for v1 and for a v2 group that already hands the
controller to its children, else next to it (v2 allows no processes in a group whose children have
controllers, so a sibling under the parent is the place). They are named disklab-PID-TAG and only
such names are ever removed. No process is started here: placing one is core/proc/spawn.py's.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from disklab.core.system.mountinfo import parse_mountinfo
from disklab.core.vocab.errors import SafetyError, ToolError

GROUP_PREFIX = "disklab-"
GROUP_NAME = re.compile(r"disklab-[0-9]+-[A-Za-z0-9_.-]{1,200}")
REMOVE_WAIT = 5.0  # seconds to wait for a group's last (exiting) process to leave before rmdir
MIN_LIMIT = 32 << 20  # the tool's own memory counts against the limit too


@dataclass(frozen=True)
class MemoryController:
    """The memory controller this process can use: its hierarchy and where groups go."""

    version: int  # 1 or 2
    mountpoint: Path  # where the hierarchy is mounted (under `root` when one was given)
    base: Path  # the directory DiskLab's groups are made in

    @property
    def writable(self) -> bool:
        """True when this process may make groups in `base` (root, or a delegated subtree)."""
        return os.access(self.base, os.W_OK | os.X_OK)

    def describe(self) -> str:
        return f"cgroup v{self.version} memory controller (groups under {self.base})"

    def limit_files(self, limit: int) -> list[tuple[str, str]]:
        """The files that set a group's memory limit, in the order to write them. v2: memory.high
        (reclaim and throttle above it, never an OOM kill) and memory.max (the hard bound);
        v1: memory.limit_in_bytes (reclaim at the limit)."""
        if self.version == 2:
            return [("memory.high", str(limit)), ("memory.max", str(limit))]
        return [("memory.limit_in_bytes", str(limit))]

    def to_json(self) -> dict[str, object]:
        return {"version": self.version, "mountpoint": str(self.mountpoint),
                "base": str(self.base)}


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _own_paths(text: str) -> tuple[str | None, str | None]:
    """This process's group in the v2 hierarchy ("0::/path") and in the v1 memory hierarchy
    ("N:memory,...:/path"), from /proc/self/cgroup."""
    unified = memory = None
    for line in text.splitlines():
        hid, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hid == "0" and controllers == "":
            unified = path
        elif "memory" in controllers.split(","):
            memory = path
    return unified, memory


def _inside(mountpoint: Path, mount_root: str, path: str, root: Path) -> Path:
    """The directory of group `path` in a hierarchy mounted at `mountpoint` whose mount shows
    `mount_root` of it (a container sees its own group as "/")."""
    rel = os.path.relpath(path, mount_root) if path.startswith(mount_root) else path.lstrip("/")
    rel = "" if rel == "." else rel.lstrip("/")
    return root / str(mountpoint).lstrip("/") / rel


def _words(path: Path) -> set[str]:
    return set((_read(path) or "").split())


def find_memory_controller(root: str | os.PathLike[str] = "/") -> MemoryController | None:
    """The memory controller for this process's tools, or None when there is none (no cgroup
    mount with it, or this process's group cannot be found). v2 is preferred when its memory
    controller is on for this process's group; v1 otherwise."""
    top = Path(root)
    mounts = parse_mountinfo(_read(top / "proc/self/mountinfo") or "")
    unified, memory = _own_paths(_read(top / "proc/self/cgroup") or "")
    for m in mounts:
        if m.fstype != "cgroup2" or unified is None:
            continue
        own = _inside(Path(m.mountpoint), m.root, unified, top)
        if not own.is_dir() or "memory" not in _words(own / "cgroup.controllers"):
            continue
        at_top = own == top / m.mountpoint.lstrip("/")
        hands_down = "memory" in _words(own / "cgroup.subtree_control")
        base = own if at_top or hands_down else own.parent
        return MemoryController(2, top / m.mountpoint.lstrip("/"), base)
    for m in mounts:
        if m.fstype != "cgroup" or "memory" not in m.super_options.split(","):
            continue
        if memory is None:
            continue
        own = _inside(Path(m.mountpoint), m.root, memory, top)
        if own.is_dir() and (own / "memory.limit_in_bytes").exists():
            return MemoryController(1, top / m.mountpoint.lstrip("/"), own)
    return None


def group_name(tag: str, pid: int | None = None) -> str:
    """disklab-PID-TAG: whose group it is (the session's process) and which case it holds."""
    clean = re.sub(r"[^A-Za-z0-9_.-]", "_", tag)[:200] or "case"
    return f"{GROUP_PREFIX}{os.getpid() if pid is None else pid}-{clean}"


def create_group(controller: MemoryController, name: str, limit: int) -> Path:
    """Make the group `name` with a memory limit of `limit` bytes; its directory. ToolError when
    it cannot be made or limited (then nothing is left)."""
    if not GROUP_NAME.fullmatch(name):
        raise SafetyError(f"{name!r} is not a DiskLab cgroup name")
    path = controller.base / name
    if controller.version == 2 and controller.base == controller.mountpoint:
        _enable_memory(controller.base)
    try:
        path.mkdir()
    except FileExistsError:
        pass  # left by this very session (a retried step): its limit is set again below
    except OSError as e:
        raise ToolError(f"cannot make the memory cgroup {path}: {e.strerror}") from None
    try:
        for file, value in controller.limit_files(limit):
            (path / file).write_text(value)
    except OSError as e:
        with contextlib.suppress(OSError):
            path.rmdir()
        raise ToolError(f"cannot set the memory limit of {path}: {e.strerror}") from None
    return path


def _enable_memory(base: Path) -> None:
    """The v2 root group hands the memory controller to its children (no-op when it does)."""
    if "memory" in _words(base / "cgroup.subtree_control"):
        return
    try:
        (base / "cgroup.subtree_control").write_text("+memory")
    except OSError as e:
        raise ToolError(f"cannot enable the memory controller under {base}: {e.strerror}"
                        ) from None


def check_group(path: str | os.PathLike[str], root: str | os.PathLike[str] = "/") -> Path:
    """`path` if it is a DiskLab group inside a mounted cgroup hierarchy; SafetyError otherwise
    (the privileged helper removes only what this says is DiskLab's)."""
    p = Path(os.path.normpath(str(path)))
    if not p.is_absolute() or not GROUP_NAME.fullmatch(p.name):
        raise SafetyError(f"{path} is not a DiskLab cgroup (disklab-PID-TAG)")
    top = Path(root)
    for m in parse_mountinfo(_read(top / "proc/self/mountinfo") or ""):
        if m.fstype not in ("cgroup", "cgroup2"):
            continue
        mount = top / m.mountpoint.lstrip("/")
        if mount in p.parents:
            return p
    raise SafetyError(f"{path} is not inside a mounted cgroup hierarchy")


def remove_group(path: str | os.PathLike[str], root: str | os.PathLike[str] = "/") -> bool:
    """Remove a DiskLab group (its page cache charges go to the parent); False when it was not
    there. Waits a little for exiting processes to leave; ToolError when it still holds some."""
    p = check_group(path, root)
    deadline = time.monotonic() + REMOVE_WAIT
    while True:
        try:
            p.rmdir()
            return True
        except FileNotFoundError:
            return False
        except OSError as e:
            if e.errno != errno.EBUSY or time.monotonic() >= deadline:
                left = members(p)
                raise ToolError(f"cannot remove the memory cgroup {p}: {e.strerror}"
                                + (f" (processes {', '.join(map(str, left))} still in it)"
                                   if left else "")) from None
            time.sleep(0.05)


def members(path: str | os.PathLike[str]) -> list[int]:
    """The pids in a group (cgroup.procs); [] when it is gone."""
    text = _read(Path(path) / "cgroup.procs") or ""
    return [int(w) for w in text.split() if w.isdigit()]


def usage(path: str | os.PathLike[str]) -> int | None:
    """Bytes charged to a group now (v2 memory.current, v1 memory.usage_in_bytes)."""
    for file in ("memory.current", "memory.usage_in_bytes"):
        text = _read(Path(path) / file)
        if text is not None and text.strip().isdigit():
            return int(text)
    return None


def oom_kills(path: str | os.PathLike[str]) -> int:
    """How many processes the kernel's OOM killer ended in this group (v2 memory.events
    `oom_kill`, v1 memory.oom_control `oom_kill`, Linux >= 4.13); 0 when not said.

    Why: a tool the memory cgroup's OOM killer ended looks like any SIGKILL from outside; the
    group's own counter says it was the limit."""
    for file in ("memory.events", "memory.oom_control"):
        for line in (_read(Path(path) / file) or "").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
    return 0


# memory.stat's dirty and write-back page bytes of a group: v2's names, then v1's
_DIRTY_KEYS = {"file_dirty": "dirty", "file_writeback": "writeback",
               "dirty": "dirty", "writeback": "writeback"}


def group_stat_of(pid: int, root: str | os.PathLike[str] = "/") -> Path | None:
    """The memory.stat of the DiskLab group (page_cache_limit) a process runs in, from its
    /proc/PID/cgroup (the v1 memory hierarchy's, else the v2 one's); None outside one."""
    text = _read(Path(root) / f"proc/{pid}/cgroup")
    if text is None:
        return None
    unified, memory = _own_paths(text)
    for path, base in ((memory, "sys/fs/cgroup/memory"), (unified, "sys/fs/cgroup")):
        if path and Path(path).name.startswith(GROUP_PREFIX):
            stat = Path(root) / base / path.lstrip("/") / "memory.stat"
            if stat.exists():
                return stat
    return None


def group_dirty(stat: Path) -> dict[str, int]:
    """A group's own dirty and write-back bytes ({"dirty": N, "writeback": N}) from its
    memory.stat: what the kernel holds against the group's limit, not the machine's."""
    out: dict[str, int] = {}
    for line in (_read(stat) or "").splitlines():
        key, _, value = line.partition(" ")
        name = _DIRTY_KEYS.get(key)
        if name is not None and name not in out and value.strip().isdigit():
            out[name] = int(value)
    return out
