"""The privileged helper: `python -m disklab.core.privhelper`, run as root once per session.

It speaks JSON lines on stdin/stdout. A request is {"id": N, "op": NAME, "args": {...}}; the
answer is {"id": N, "ok": true, "result": {...}, "ran": [...]} or {"id": N, "ok": false,
"error": TEXT, "kind": ERROR CLASS, "ran": [...]}. "ran" lists every command the request ran
(argv, exit status, the tail of its output), so that the session keeps them.

Only the operations in OPS exist, and they take intent, not argv: "format this device with this
configuration", "mount it there", "set read-ahead", "run this tool with these parameters on this
target". Each re-checks its target itself (the client's checks are not trusted: the client is not
root), builds the argv with disklab.core.fs.commands or the tool's adapter, and runs it through
disklab.core.proc. The first line written is {"ready": true, ...}; end of input ends the helper,
and with it every tool it still runs.

Tools (tool_start, tool_read, tool_stop, tool_close, tool_cleanup) run in the background of the
helper, so that the session stays one request/answer conversation: the client asks for what a
tool printed (and its process tree's counters, which only root can read) a few times a second,
and can stop it at any moment. A tool runs only in a filesystem this helper mounted in this
session, or on a raw device that passes the destructive checks (its result file then goes to the
helper's own work directory): never in a directory a user could plant a symbolic link in.

A case with a page-cache limit gets a memory cgroup (cgroup_create, by the case's tag) before its
first step; each of its steps joins it before exec (core/proc.py), tool_cleanup removes it, and
so does the helper's end. cgroup_remove removes a group a killed session left (DiskLab's names
only, inside a mounted cgroup hierarchy).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import psutil

from disklab.core import proc, tools
from disklab.core.cleanup import remove_files
from disklab.core.errors import (
    ConfigError,
    DisklabError,
    PlanError,
    RequestError,
    SafetyError,
    ToolError,
)
from disklab.core.fs.commands import (
    scheduler_argv,
    setra_argv,
    setup_commands,
    umount_argv,
    wipefs_argv,
)
from disklab.core.fs.options import (
    config_from_toml,
    device_options,
    mount_refusal,
    passthrough_options,
)
from disklab.core.fs.readback import readback
from disklab.core.model import FsConfig
from disklab.core.plan import case_params
from disklab.core.system import cgroups, devices
from disklab.core.system.mountinfo import mount_at
from disklab.core.system.sysfs import read_scheduler
from disklab.core.targets import NAME
from disklab.core.tools.base import PLACEMENT_KEY, Command, RunTarget

PROTOCOL = 1
TAIL = 4000  # characters of each command's output kept in "ran"
FORBIDDEN_PREFIXES = ("/proc", "/sys", "/dev", "/run", "/etc", "/bin", "/sbin", "/lib", "/usr",
                      "/boot")
DETACH_WAIT = 5.0  # seconds for a deferred loop detach to complete
# How long a busy filesystem is retried before the lazy unmount (or the error): a ring of a tool
# that used io_uring with registered files (fio --registerfiles) is torn down by a kernel worker
# after the tool has exited, and holds its files open until then (tens of milliseconds).
UMOUNT_SETTLE = 3.0
TIMEOUTS = {"mkfs": 4 * 3600.0, "wipefs": 300.0, "mount": 600.0, "umount": 1800.0,
            "default": 300.0}
TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")  # a case's file-name tag: no path in it
READ_WAIT_MAX = 2.0  # seconds a tool_read may wait for output (the helper serves one at a time)
STOP_GRACE_MAX = 60.0
RESULT_MAX = 64 << 20  # bytes of a tool's result file returned (fio JSON is far smaller)


def _arg(args: dict[str, Any], name: str, kind: type | tuple[type, ...],
         required: bool = True, default: Any = None) -> Any:
    if name not in args or args[name] is None:
        if required:
            raise RequestError(f"missing argument {name!r}")
        return default
    value = args[name]
    if (isinstance(value, bool) and kind is int) or not isinstance(value, kind):
        raise RequestError(f"argument {name!r}: {value!r} has the wrong type")
    return value


def _abs_path(value: str, what: str) -> str:
    if not value.startswith("/") or "\0" in value:
        raise RequestError(f"{what} {value!r} is not an absolute path")
    return os.path.normpath(value)


def _under(path: str, prefixes: Sequence[str]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in prefixes)


@dataclass
class _ToolRun:
    """A tool the helper started for its client: one step (a prepare step or the measured one)
    of one case."""

    process: proc.ToolProcess | proc.ToolGroup
    command: Command
    tag: str


@dataclass
class _Case:
    """The files of one case (by tag), kept until tool_cleanup or the helper's end."""

    files: tuple[str, ...]
    started: set[int] = field(default_factory=set)  # steps started (-1: the measured one)


def _counters(c: proc.ProcCounters) -> list[float]:
    return [c.read_bytes, c.write_bytes, c.read_chars, c.write_chars, c.cpu_seconds]


class Helper:
    """One session's helper: handles requests, remembers what each one ran."""

    def __init__(self, workdir: str | None = None) -> None:
        self.ran: list[dict[str, Any]] = []
        self.mounts: dict[str, str] = {}  # mountpoint (real path) -> device, mounted here
        self.attached: set[str] = set()  # kernel names of the loop devices attached here
        self.runs: dict[int, _ToolRun] = {}
        self.cases: dict[str, _Case] = {}
        self.groups: dict[str, Path] = {}  # case tag -> the memory cgroup made for it here
        self._next_run = 0
        # Result files of raw-device runs: root's own directory, out of any user's reach.
        self.workdir = workdir or tempfile.mkdtemp(prefix="disklab-helper-")
        self.ops: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "ping": self.op_ping,
            "classify": self.op_classify,
            "identity": self.op_identity,
            "attach": self.op_attach,
            "detach": self.op_detach,
            "wipefs": self.op_wipefs,
            "mkfs": self.op_mkfs,
            "mount": self.op_mount,
            "umount": self.op_umount,
            "setra": self.op_setra,
            "scheduler": self.op_scheduler,
            "drop_caches": self.op_drop_caches,
            "readback": self.op_readback,
            "partition": self.op_partition,
            "unpartition": self.op_unpartition,
            "tool_start": self.op_tool_start,
            "tool_read": self.op_tool_read,
            "tool_tree": self.op_tool_tree,
            "tool_stop": self.op_tool_stop,
            "tool_close": self.op_tool_close,
            "tool_cleanup": self.op_tool_cleanup,
            "cgroup_create": self.op_cgroup_create,
            "cgroup_remove": self.op_cgroup_remove,
        }

    # --- running commands ----------------------------------------------------------------
    def run(self, argv: Sequence[str], timeout: float = TIMEOUTS["default"],
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

    def write_file(self, path: str, value: str) -> None:
        """A sysfs/procfs write, recorded like a command (builtin: no process was started)."""
        entry: dict[str, Any] = {"argv": ["write", path, value], "builtin": True}
        self.ran.append(entry)
        try:
            Path(path).write_text(value)
        except OSError as e:
            entry["error"] = e.strerror
            raise ToolError(f"cannot write {value!r} to {path}: {e.strerror}") from None
        entry["returncode"] = 0

    # --- operations ---------------------------------------------------------------------
    def op_ping(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"pid": os.getpid(), "uid": os.geteuid(), "protocol": PROTOCOL,
                "workdir": self.workdir}

    def op_classify(self, args: dict[str, Any]) -> dict[str, Any]:
        path = _arg(args, "path", str)
        lib = _arg(args, "library_path", str, required=False)
        return {"device": devices.classify(path, lib).to_json()}

    def op_identity(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"identity": devices.identity(_arg(args, "path", str))}

    def op_attach(self, args: dict[str, Any]) -> dict[str, Any]:
        """A new sparse image file on a free loop device with direct I/O on."""
        image = _abs_path(_arg(args, "image", str), "image")
        size = _arg(args, "size", int)
        lib = _arg(args, "library_path", str, required=False)
        real = os.path.realpath(image)
        if size <= 0:
            raise RequestError(f"image size {size} must be positive")
        if _under(real, ("/proc", "/sys", "/dev")):
            raise SafetyError(f"{image}: an image cannot live under /proc, /sys or /dev")
        if lib and os.path.realpath(lib) == real:
            raise SafetyError(f"{image} is DiskLab's library")
        if os.path.lexists(image):
            st = os.lstat(image)
            if not stat.S_ISREG(st.st_mode) or st.st_size > 0:
                raise SafetyError(f"{image} already exists: DiskLab makes (and removes) its own "
                                  "image file; remove it or choose another path")
        if not os.path.isdir(os.path.dirname(real)):
            raise RequestError(f"{os.path.dirname(real)} does not exist")
        self.run(("truncate", "-s", str(size), image))
        try:
            done = self.run(("losetup", "--find", "--show", "--direct-io=on", image))
        except DisklabError:
            with contextlib.suppress(OSError):
                os.unlink(image)
            raise
        device = done.stdout.strip().splitlines()[-1]
        kname = devices.kernel_name(device)
        self.attached.add(kname)
        dio = (Path("/sys/block") / kname / "loop" / "dio")
        direct = dio.exists() and dio.read_text().strip() == "1"
        return {"device": device, "image": image, "created": True, "direct_io": direct,
                "inode": os.stat(image).st_ino, "identity": devices.identity(device)}

    def _loops_of(self, image: str, log: bool = True) -> list[str]:
        argv = ("losetup", "--associated", image, "--json", "--output", "NAME")
        done = self.run(argv, check=False) if log else proc.run(argv, timeout=30)
        try:
            rows = json.loads(done.stdout or "{}").get("loopdevices", [])
        except ValueError:
            rows = []
        return [r["name"] for r in rows if r.get("name")]

    def op_detach(self, args: dict[str, Any]) -> dict[str, Any]:
        """Detach the loop device(s) backed by `image` (only those); optionally remove it."""
        image = _abs_path(_arg(args, "image", str), "image")
        device = _arg(args, "device", str, required=False)
        remove = _arg(args, "remove_image", bool, required=False, default=False)
        loops = self._loops_of(image)
        if device is not None:
            kname = devices.kernel_name(device)
            if f"/dev/{kname}" not in loops:
                raise SafetyError(f"{device} is not backed by {image}; not detaching it")
            loops = [f"/dev/{kname}"]
        detached = []
        for loop in loops:
            dev = devices.classify(loop)
            if dev.mountpoints or dev.safety in ("system", "mounted"):
                raise SafetyError(f"{loop} is still in use ({'; '.join(dev.reasons)}); "
                                  "unmount first")
            self.run(("losetup", "--detach", loop))
            detached.append(loop)
        # A device still open elsewhere (a udev or blkid probe) is detached by the kernel at its
        # last close: wait a little for that, so that what is reported detached is gone.
        pending = self._loops_of(image, log=False)
        deadline = time.monotonic() + DETACH_WAIT
        while pending and set(pending) <= set(detached) and time.monotonic() < deadline:
            time.sleep(0.1)
            pending = self._loops_of(image, log=False)
        removed = False
        if remove and os.path.isfile(image) and set(pending) <= set(detached):
            entry: dict[str, Any] = {"argv": ["unlink", image], "builtin": True, "returncode": 0}
            self.ran.append(entry)
            os.unlink(image)
            removed = True
        return {"detached": detached, "removed": removed, "pending": pending}

    def _checked_config(self, args: dict[str, Any]) -> FsConfig:
        table = _arg(args, "config", dict)
        config, problems = config_from_toml(table)
        if config is None:
            raise ConfigError(problems)
        if config.fs is None:
            raise ConfigError([("fs", "this configuration makes no filesystem (as is)")])
        return config

    def op_wipefs(self, args: dict[str, Any]) -> dict[str, Any]:
        device = _arg(args, "device", str)
        confirm = _arg(args, "confirm", str, required=False)
        lib = _arg(args, "library_path", str, required=False)
        devices.check_destructive(device, confirm, lib)
        self.run(wipefs_argv(device), timeout=TIMEOUTS["wipefs"])
        return {}

    def op_mkfs(self, args: dict[str, Any]) -> dict[str, Any]:
        """Format per a validated config: the "mkfs" commands of setup_commands (wipefs, the
        external journal, mkfs), after the target and any journal/log device pass the
        destructive checks."""
        config = self._checked_config(args)
        device = _arg(args, "device", str)
        confirm = _arg(args, "confirm", str, required=False)
        lib = _arg(args, "library_path", str, required=False)
        extra = device_options(config)
        if len(extra) > 1:
            raise RequestError(f"one external journal/log device per configuration, not "
                               f"{', '.join(extra)}")
        for name, path in extra.items():
            # A device the helper did not attach is a user's: it is wiped only with the confirm
            # the plan gave for it, matched against the device as read now.
            journal_confirm = _arg(args, "journal_confirm", str, required=False)
            if journal_confirm is None:
                raise SafetyError(f"{name} {path}: wiping a second device needs the plan's "
                                  "confirm for it (journal_confirm)")
            if devices.kernel_name(path) == devices.kernel_name(device):
                raise SafetyError(f"the external journal/log {path} is the target itself")
            devices.check_destructive(path, journal_confirm, lib)
        devices.check_destructive(device, confirm, lib)
        for command in setup_commands(config, device, None):
            if command.request == "mkfs":
                kind = "wipefs" if command.argv[0] == "wipefs" else "mkfs"
                self.run(command.argv, timeout=TIMEOUTS[kind])
        return {}

    def op_partition(self, args: dict[str, Any]) -> dict[str, Any]:
        """Split a device into `count` equal GPT partitions (several targets on one LUN, as
        the RAID study did): the device passes the destructive checks a mkfs does, then
        sgdisk writes the table and partx tells the kernel. The partitions' paths and
        identities (for their mkfs's confirm) come back."""
        device = _arg(args, "device", str)
        count = _arg(args, "count", int)
        confirm = _arg(args, "confirm", str, required=False)
        lib = _arg(args, "library_path", str, required=False)
        if not 1 <= count <= MAX_PARTITIONS:
            raise RequestError(f"{count} partitions: from 1 to {MAX_PARTITIONS}")
        kname = devices.kernel_name(device)
        if confirm is None and kname not in self.attached:
            raise SafetyError(f"{device}: partitioning a device DiskLab did not attach needs "
                              "the plan's confirm")
        devices.check_destructive(device, confirm, lib)
        self.run(wipefs_argv(device), timeout=TIMEOUTS["wipefs"])
        self.run(("sgdisk", "--zap-all", device), check=False)  # no table yet: exit 2
        argv = ["sgdisk"]
        sectors = int((Path("/sys/class/block") / kname / "size").read_text())
        # equal parts in MiB, aligned (sgdisk aligns to 2048 sectors); the last takes the rest
        each = (sectors * 512 - (4 << 20)) // count >> 20
        if each < 1:
            raise RequestError(f"{device} is too small for {count} partitions")
        for i in range(1, count + 1):
            size = f"+{each}M" if i < count else "0"
            argv += [f"--new={i}:0:{size}", f"--typecode={i}:8300",
                     f"--change-name={i}:disklab{i}"]
        self.run((*argv, device))
        self.run(("partx", "--update", device), check=False)  # may already be known
        parts = _partitions_of(kname)
        if len(parts) != count:
            self.run(("partx", "--add", device), check=False)
            parts = _partitions_of(kname)
        if len(parts) != count:
            raise ToolError(f"{device}: the kernel shows {len(parts)} partitions after sgdisk, "
                            f"not {count}")
        return {"partitions": parts, "identities": {p: devices.identity(p) for p in parts}}

    def op_unpartition(self, args: dict[str, Any]) -> dict[str, Any]:
        """Make the kernel forget a device's partitions (after their filesystems are
        unmounted): the loop device of an image can then be detached."""
        device = _arg(args, "device", str)
        kname = devices.kernel_name(device)
        for part in _partitions_of(kname):
            dev = devices.classify(part)
            if dev.mountpoints:
                raise SafetyError(f"{part} is still mounted; unmount first")
        self.run(("partx", "--delete", device), check=False)
        return {"left": _partitions_of(kname)}

    def _check_mountpoint(self, mountpoint: str, lib: str | None) -> str:
        real = os.path.realpath(_abs_path(mountpoint, "mountpoint"))
        if real in devices.SYSTEM_MOUNTPOINTS or _under(real, FORBIDDEN_PREFIXES):
            raise SafetyError(f"{mountpoint}: DiskLab does not mount or unmount there")
        if lib:
            _, lib_mount = devices.library_device(lib)
            if lib_mount and os.path.realpath(lib_mount) == real:
                raise SafetyError(f"{mountpoint} holds DiskLab's library")
        return real

    def op_mount(self, args: dict[str, Any]) -> dict[str, Any]:
        config = self._checked_config(args)
        device = _arg(args, "device", str)
        lib = _arg(args, "library_path", str, required=False)
        mountpoint = self._check_mountpoint(_arg(args, "mountpoint", str), lib)
        dev = devices.classify(device, lib)
        if dev.refused:
            raise SafetyError(f"{device} refused: class {dev.safety}: {'; '.join(dev.reasons)}")
        created = False
        if not os.path.lexists(mountpoint):
            os.mkdir(mountpoint, 0o755)
            self.ran.append({"argv": ["mkdir", mountpoint], "builtin": True, "returncode": 0})
            created = True
        elif not os.path.isdir(mountpoint) or os.path.ismount(mountpoint):
            raise SafetyError(f"{mountpoint} is not a free directory (already a mountpoint?)")
        elif os.listdir(mountpoint):
            raise SafetyError(f"{mountpoint} is not empty: mounting would hide its files")
        try:
            for command in setup_commands(config, device, mountpoint):
                if command.request == "mount":
                    self._mount(config, command.argv)
        except DisklabError:
            if created:
                with contextlib.suppress(OSError):
                    os.rmdir(mountpoint)
            raise
        self.mounts[mountpoint] = device
        return {"mountpoint": mountpoint, "created": created}

    def _kernel_log(self) -> list[str]:
        """The kernel's log lines (dmesg --notime); [] when it cannot be read."""
        try:
            return self.run(["dmesg", "--notime"], check=False).stdout.splitlines()
        except DisklabError:
            return []

    def _mount(self, config: FsConfig, argv: Sequence[str]) -> None:
        """Run mount; when it fails on a configuration with options passed through to the
        kernel, the failure is the configuration's, with the kernel's words from its log."""
        passed = bool(passthrough_options(config))
        # the log's last line before the mount: what follows it is the mount's (the ring
        # buffer of a busy machine is full, so its length says nothing)
        marker = (self._kernel_log() or [None])[-1] if passed else None
        try:
            self.run(argv, timeout=TIMEOUTS["mount"])
        except ToolError as e:
            if not passed:
                raise
            log = self._kernel_log()
            if marker in log:
                log = log[len(log) - log[::-1].index(marker):]
            refusal = mount_refusal(config, str(e), log[-20:])
            if refusal is None:
                raise
            raise refusal from e

    def op_umount(self, args: dict[str, Any]) -> dict[str, Any]:
        lib = _arg(args, "library_path", str, required=False)
        mountpoint = self._check_mountpoint(_arg(args, "mountpoint", str), lib)
        lazy = _arg(args, "lazy", bool, required=False, default=False)
        remove_dir = _arg(args, "remove_dir", bool, required=False, default=False)
        source = _arg(args, "device", str, required=False)
        if not os.path.ismount(mountpoint):
            raise RequestError(f"{mountpoint} is not mounted")
        if source is not None:
            entry = mount_at(mountpoint)
            got = entry.source if entry else None
            try:
                same = got is not None and devices.kernel_name(got) == devices.kernel_name(source)
            except SafetyError:
                same = False
            if not same:
                raise SafetyError(f"{mountpoint} holds {got}, not {source}; not unmounting it")
        done = self.run(umount_argv(mountpoint), timeout=TIMEOUTS["umount"], check=False)
        settle = time.monotonic() + UMOUNT_SETTLE
        while done.returncode != 0 and os.path.ismount(mountpoint) and time.monotonic() < settle:
            time.sleep(0.2)  # "target is busy" for a moment after a tool's io_uring went away
            done = self.run(umount_argv(mountpoint), timeout=TIMEOUTS["umount"], check=False)
        if done.returncode != 0 and os.path.ismount(mountpoint):
            if not lazy:
                self.run(umount_argv(mountpoint), timeout=TIMEOUTS["umount"])  # raises, says why
            self.run(umount_argv(mountpoint, lazy=True))
        self.mounts.pop(mountpoint, None)
        removed = False
        if remove_dir and not os.path.ismount(mountpoint):
            with contextlib.suppress(OSError):
                os.rmdir(mountpoint)
                self.ran.append({"argv": ["rmdir", mountpoint], "builtin": True,
                                 "returncode": 0})
                removed = True
        return {"removed_dir": removed}

    def op_setra(self, args: dict[str, Any]) -> dict[str, Any]:
        device = _arg(args, "device", str)
        sectors = _arg(args, "sectors", int)
        devices.kernel_name(device)
        self.run(setra_argv(device, sectors))
        return {}

    def op_scheduler(self, args: dict[str, Any]) -> dict[str, Any]:
        device = _arg(args, "device", str)
        name = _arg(args, "name", str)
        devices.kernel_name(device)
        current, available = read_scheduler(device)
        if name not in available:
            raise RequestError(f"{device} offers no scheduler {name!r} "
                               f"(available: {', '.join(available) or 'none'})")
        if current != name:
            _write, path, value = scheduler_argv(device, name)
            self.write_file(path, value)
        return {"previous": current}

    def op_drop_caches(self, args: dict[str, Any]) -> dict[str, Any]:
        """sync, then drop clean page cache, dentries and inodes (drop_caches keeps dirty data)."""
        self.run(("sync",), timeout=TIMEOUTS["umount"])
        self.write_file("/proc/sys/vm/drop_caches", "3")
        return {}

    def op_readback(self, args: dict[str, Any]) -> dict[str, Any]:
        device = _arg(args, "device", str)
        devices.kernel_name(device)
        mountpoint = _arg(args, "mountpoint", str, required=False)
        fstype = _arg(args, "fstype", str, required=False)
        rb = readback(device, mountpoint, fstype, run=lambda argv: self.run(argv, check=False))
        return {"readback": rb}

    # --- tools ------------------------------------------------------------------------------
    def _tool_directory(self, directory: str, device: str | None) -> str:
        """Where a tool may run as root: a filesystem mounted here (still holding the device
        mounted on it), or, for a raw device, the helper's own work directory."""
        real = os.path.realpath(_abs_path(directory, "directory"))
        if device is not None and real == os.path.realpath(self.workdir):
            return real
        mounted = self.mounts.get(real)
        if mounted is None:
            raise SafetyError(f"{directory}: the helper runs tools only in a filesystem it "
                              "mounted in this session, or on a raw device")
        entry = mount_at(real)
        try:
            same = entry is not None and (devices.kernel_name(entry.source)
                                          == devices.kernel_name(mounted))
        except SafetyError:
            same = False
        if not same:
            raise SafetyError(f"{directory} no longer holds {mounted}; not running a tool there")
        return real

    def _placed_directories(self, on: Any, args: dict[str, Any], device: str | None
                            ) -> dict[str, str]:
        """A placed case's stream targets -> their directories, each one a filesystem this
        helper mounted (checked as the case's own directory is)."""
        if not isinstance(on, str) or not PLACEMENT.fullmatch(on):
            raise RequestError(f"on {on!r} is not a placement (names joined by '+')")
        if device is not None:
            raise RequestError("a raw device case is one stream: no placement")
        raw = _arg(args, "directories", dict)
        names = list(dict.fromkeys(on.split("+")))
        missing = [n for n in names if not isinstance(raw.get(n), str)]
        if missing:
            raise RequestError(f"no directory for target {missing[0]!r} of {on!r}")
        return {n: self._tool_directory(str(raw[n]), None) for n in names}

    def op_tool_start(self, args: dict[str, Any]) -> dict[str, Any]:
        """Start one step of a case (a prepare step, or -1: the measured run) in the background.
        The argv is the adapter's, built here from re-checked parameters."""
        tool = _arg(args, "tool", str)
        raw_params = _arg(args, "params", dict)
        tag = _arg(args, "tag", str)
        step = _arg(args, "step", int, required=False, default=-1)
        device = _arg(args, "device", str, required=False)
        confirm = _arg(args, "confirm", str, required=False)
        lib = _arg(args, "library_path", str, required=False)
        if not TAG.fullmatch(tag):
            raise RequestError(f"tag {tag!r} is not a plain file-name part")
        raw_params = dict(raw_params)
        on = raw_params.pop(PLACEMENT_KEY, None)
        params = case_params(tool, raw_params, device=device is not None)
        directory = self._tool_directory(_arg(args, "directory", str), device)
        placed = self._placed_directories(on, args, device) if on is not None else {}
        if on is not None:
            params[PLACEMENT_KEY] = on
        if device is not None:
            if confirm is None and devices.kernel_name(device) not in self.attached:
                raise SafetyError(f"{device}: raw I/O on a device DiskLab did not attach needs "
                                  "the plan's confirm")
            devices.check_destructive(device, confirm, lib)
        target = RunTarget(directory=directory, tag=tag, device=device,
                           ram_bytes=psutil.virtual_memory().total, is_root=True,
                           python=sys.executable, directories=placed)
        command = tools.get_adapter(tool).build_command(params, target)
        if not -1 <= step < len(command.prepare):
            raise RequestError(f"{tool} has {len(command.prepare)} prepare step(s), no step "
                               f"{step}")
        case = self.cases.get(tag)
        if case is None or case.files != command.files:
            clobbered = [f for f in command.files if os.path.lexists(f)]
            if clobbered:
                raise SafetyError(f"{', '.join(clobbered)} already exist(s): a case's files are "
                                  "its own, made and removed by DiskLab")
            case = self.cases[tag] = _Case(command.files)
        if step in case.started:
            raise RequestError(f"step {step} of {tag} was already run")
        case.started.add(step)
        argv = command.argv if step < 0 else command.prepare[step]
        group = self.groups.get(tag)
        process: proc.ToolProcess | proc.ToolGroup
        if step < 0 and command.group:  # several processes released together (dd on targets)
            process = proc.ToolGroup(command.group, cwd=command.cwd,
                                     env=dict(command.env) or None,
                                     cgroup=str(group) if group is not None else None,
                                     timing_file=command.result_file)
        else:
            process = proc.ToolProcess(argv, cwd=command.cwd, env=dict(command.env) or None,
                                       pty=command.needs_pty,
                                       cgroup=str(group) if group is not None else None)
        entry: dict[str, Any] = {"argv": list(argv), "cwd": command.cwd, "background": True}
        if command.group and step < 0:
            entry["group"] = [list(a) for _n, a in command.group]
        if group is not None:
            entry["cgroup"] = str(group)
        self.ran.append(entry)
        try:
            process.start()
        except ToolError as e:
            entry["error"] = str(e)
            raise
        entry["pid"] = process.pid
        self._next_run += 1
        self.runs[self._next_run] = _ToolRun(process, command, tag)
        return {"run": self._next_run, "pid": process.pid, "argv": list(argv),
                "cwd": command.cwd, "result_file": command.result_file,
                "files": list(command.files)}

    def _tool_run(self, args: dict[str, Any]) -> _ToolRun:
        run = self.runs.get(_arg(args, "run", int))
        if run is None:
            raise RequestError(f"no tool run {args.get('run')!r} (closed, or never started)")
        return run

    def op_tool_read(self, args: dict[str, Any]) -> dict[str, Any]:
        """What the tool printed since the last read (waiting up to `wait` s for it), and
        whether it is done (exited, output ended, everything handed out)."""
        run = self._tool_run(args)
        wait = min(float(_arg(args, "wait", (int, float), required=False, default=0.0)),
                      READ_WAIT_MAX)
        p = run.process
        lines = p.read(max(0.0, wait))
        done = p.poll()
        return {
            "lines": [[line.t, line.stream, line.text, line.terminator] for line in lines],
            "done": done, "returncode": p.returncode, "signal": p.signal,
            "dropped": p.lines_dropped,
        }

    def op_tool_tree(self, args: dict[str, Any]) -> dict[str, Any]:
        """The counters of the tool's live tree and the final ones of what it reaped (only
        root can read a root process's): asked when the client's monitor samples, not with
        every read, so that the /proc scan costs what it costs for a local tool."""
        p = self._tool_run(args).process
        return {"tree": {str(pid): [e.create_time, e.ppid, *_counters(e.counters)]
                         for pid, e in p.tree_counters().items()},
                "finals": {str(pid): _counters(c) for pid, c in p.exit_counters().items()}}

    def op_tool_stop(self, args: dict[str, Any]) -> dict[str, Any]:
        """SIGTERM to the tool's whole tree, SIGKILL after `grace` s (proc.terminate)."""
        run = self._tool_run(args)
        grace = float(_arg(args, "grace", (int, float), required=False, default=5.0))
        run.process.terminate(min(max(0.0, grace), STOP_GRACE_MAX))
        return {"survivors": run.process.survivors}

    def op_tool_close(self, args: dict[str, Any]) -> dict[str, Any]:
        """End a tool run (killing what is left of it): its whole output, exit status and result
        file. Lines not yet read are in the output, not handed out again."""
        run = self._tool_run(args)
        p = run.process
        p.close()
        del self.runs[_arg(args, "run", int)]
        result = None
        path = run.command.result_file
        if path and os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as f:
                result = f.read(RESULT_MAX).decode("utf-8", errors="replace")
        self.ran.append({"argv": list(p.argv), "returncode": p.returncode,
                         "signal": p.signal, "ended": True})
        return {"stdout": p.output("stdout"), "stderr": p.output("stderr"), "tail": p.tail(),
                "returncode": p.returncode, "signal": p.signal, "survivors": p.survivors,
                "result_file": result}

    def op_tool_cleanup(self, args: dict[str, Any]) -> dict[str, Any]:
        """Remove the files of the case `tag` (after its last step, whatever happened)."""
        tag = _arg(args, "tag", str)
        for number, run in list(self.runs.items()):
            if run.tag == tag:
                run.process.close()
                del self.runs[number]
        case = self.cases.pop(tag, None)
        left = remove_files(case.files) if case else []
        group = self.groups.pop(tag, None)
        if group is not None:
            try:
                cgroups.remove_group(group)
                self.ran.append({"argv": ["rmdir", str(group)], "builtin": True,
                                 "returncode": 0})
            except DisklabError:
                left.append(str(group))
        return {"left": left}

    def op_cgroup_create(self, args: dict[str, Any]) -> dict[str, Any]:
        """A memory cgroup limited to `limit` bytes for the case `tag`: its steps run in it."""
        tag = _arg(args, "tag", str)
        limit = _arg(args, "limit", int)
        if not TAG.fullmatch(tag):
            raise RequestError(f"tag {tag!r} is not a plain file-name part")
        if limit < cgroups.MIN_LIMIT:
            raise RequestError(f"a page-cache limit of {limit} bytes is below the minimum "
                               f"{cgroups.MIN_LIMIT}")
        controller = cgroups.find_memory_controller()
        if controller is None:
            raise ToolError("no memory cgroup controller is available: the page cache cannot "
                            "be limited")
        name = cgroups.group_name(tag)
        entry: dict[str, Any] = {"argv": ["mkdir", str(controller.base / name)],
                                 "builtin": True}
        self.ran.append(entry)
        try:
            path = cgroups.create_group(controller, name, limit)
        except DisklabError as e:
            entry["error"] = str(e)
            raise
        entry["returncode"] = 0
        for file, value in controller.limit_files(limit):
            self.ran.append({"argv": ["write", str(path / file), value], "builtin": True,
                             "returncode": 0})
        self.groups[tag] = path
        return {"path": str(path), "controller": controller.to_json()}

    def op_cgroup_remove(self, args: dict[str, Any]) -> dict[str, Any]:
        """Remove a DiskLab memory cgroup a killed session left (by its recorded path)."""
        path = cgroups.check_group(_arg(args, "path", str))
        removed = cgroups.remove_group(path)
        if removed:
            self.ran.append({"argv": ["rmdir", str(path)], "builtin": True, "returncode": 0})
        return {"removed": removed}

    def close(self) -> None:
        """The end of the session: stop every tool, remove every case's files and the work
        directory. Never raises."""
        for run in self.runs.values():
            with contextlib.suppress(Exception):
                run.process.close()
        self.runs.clear()
        for case in self.cases.values():
            remove_files(case.files)
        self.cases.clear()
        for group in self.groups.values():
            with contextlib.suppress(Exception):
                cgroups.remove_group(group)
        self.groups.clear()
        shutil.rmtree(self.workdir, ignore_errors=True)

    # --- protocol -----------------------------------------------------------------------
    def handle(self, request: Any) -> dict[str, Any]:
        self.ran = []
        rid = request.get("id") if isinstance(request, dict) else None
        try:
            if not isinstance(request, dict):
                raise RequestError("a request is a JSON object")
            op = request.get("op")
            args = request.get("args") or {}
            if op not in self.ops:
                raise RequestError(f"unknown operation {op!r} (allowed: {', '.join(self.ops)})")
            if not isinstance(args, dict):
                raise RequestError("args must be an object")
            result = self.ops[op](args)
            return {"id": rid, "ok": True, "result": result, "ran": self.ran}
        except ConfigError as e:
            return {"id": rid, "ok": False, "kind": "ConfigError", "error": str(e),
                    "problems": e.problems, "ran": self.ran}
        except PlanError as e:
            return {"id": rid, "ok": False, "kind": "PlanError", "error": str(e),
                    "problems": [[p.key, p.message] for p in e.problems], "ran": self.ran}
        except (DisklabError, OSError) as e:
            return {"id": rid, "ok": False, "kind": type(e).__name__, "error": str(e),
                    "ran": self.ran}
        except Exception as e:  # a bug must not kill the session's only root process
            return {"id": rid, "ok": False, "kind": "InternalError",
                    "error": f"{type(e).__name__}: {e}", "ran": self.ran}


MAX_PARTITIONS = 16
PLACEMENT = re.compile(rf"{NAME.pattern}(?:\+{NAME.pattern}){{0,63}}")  # "a+b+a"


def _partitions_of(kname: str) -> list[str]:
    """/dev paths of the partitions the kernel shows of a disk (sysfs), in number order."""
    base = Path("/sys/class/block") / kname
    found = []
    for entry in base.glob(f"{kname}*"):
        number = entry / "partition"
        if number.exists():
            found.append((int(number.read_text()), f"/dev/{entry.name}"))
    return [path for _n, path in sorted(found)]


def serve(inp: TextIO, out: TextIO) -> None:
    helper = Helper()
    try:
        out.write(json.dumps({"ready": True, "pid": os.getpid(), "uid": os.geteuid(),
                              "protocol": PROTOCOL, "workdir": helper.workdir}) + "\n")
        out.flush()
        for line in inp:
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except ValueError:
                answer = {"id": None, "ok": False, "kind": "RequestError",
                          "error": "a request is one JSON object per line"}
            else:
                answer = helper.handle(request)
            out.write(json.dumps(answer, default=str) + "\n")
            out.flush()
    finally:  # the client has gone (or SIGTERM): nothing it started may run on as root
        _close_for_good(helper)


def _close_for_good(helper: Helper) -> None:
    """A killed client both ends our input and sends its death signal (SIGTERM), in either
    order: the signal must not cut the cleanup short and leave the work directory behind.
    SIGTERM is ignored from here on; one that lands before that is caught and the cleanup
    starts again. The disposition it had is given back afterwards: `serve` also runs inside
    other processes (tests), whose children would otherwise inherit an ignored SIGTERM."""
    before = signal.getsignal(signal.SIGTERM)
    try:
        for _attempt in range(3):
            try:
                _ignore_sigterm()
                helper.close()
                return
            except SystemExit:
                continue
    finally:
        with contextlib.suppress(ValueError, TypeError):  # not the main thread, or not ours
            signal.signal(signal.SIGTERM, before)


def _ignore_sigterm(*_args: object) -> None:
    with contextlib.suppress(ValueError):  # not the main thread: no handler to change
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _exit_on_sigterm(*_args: object) -> None:
    """SIGTERM (the client's death signal, or a stop): leave the loop once; a second one
    must not interrupt the cleanup that follows."""
    _ignore_sigterm()
    sys.exit(143)


def main() -> int:
    # Die with the client (a killed DiskLab must not leave a root process behind).
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the client; it tears down
    # The protocol owns the real stdout; anything printed by accident goes to stderr.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    serve(sys.stdin, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
