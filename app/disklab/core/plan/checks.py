"""The plan checks that look at the machine: the target (its filesystem, whether it accepts
O_DIRECT, its free room, the devices a run would wipe), the memory cgroup a page cache limit
needs, the tools on the PATH, and the warnings a plan earns where it would run.

Every other check (types, ranges, combinations) reads the plan alone (core.plan.parse). These
start no process: what they ask the kernel goes through core.system and core.proc.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import psutil

from disklab.core import tools
from disklab.core.fs.commands import PARTITION_RESERVE
from disklab.core.fs.options import device_options, journalled_data_seconds
from disklab.core.plan.direct_io import direct_io_refusal_once
from disklab.core.plan.keylines import Checker, KeyLines
from disklab.core.plan.matrix import points
from disklab.core.plan.targets import (
    check_placements,
    config_targets,
    named_targets,
    read_partitions,
    stream_targets,
)
from disklab.core.proc import which
from disklab.core.system.cgroups import find_memory_controller
from disklab.core.system.devices import check_destructive, kernel_name
from disklab.core.system.mountinfo import mount_of, same_filesystem
from disklab.core.tools.base import PLACEMENT_KEY, ToolAdapter
from disklab.core.tools.bonnie import user_place_problem
from disklab.core.vocab.errors import DisklabError
from disklab.core.vocab.model import FsConfig, Plan, Target
from disklab.core.vocab.units import MiB, format_size, human_bytes, parse_size

# Filesystems that are the kernel's interfaces, not storage: a target directory there measures
# nothing and writes into /sys or /proc (as root, settings)
PSEUDO_FILESYSTEMS = frozenset({
    "sysfs", "proc", "devtmpfs", "devpts", "cgroup", "cgroup2", "debugfs", "tracefs",
    "securityfs", "configfs", "bpf", "pstore", "efivarfs", "fusectl", "mqueue", "binfmt_misc",
    "autofs", "rpc_pipefs", "nsfs"})


TARGET_KINDS = ("directory", "image", "format", "device")
TARGET_KEYS = {*TARGET_KINDS, "confirm", "partitions"}
MIN_IMAGE = 64 << 20
# the least sizes mkfs refuses to go below: mkfs.xfs (xfsprogs 5.19 on) "must be larger than
# 300MB"; mkfs.btrfs "minimum size for each btrfs device is 114294784"
MIN_FS_BYTES = {"xfs": 300 << 20, "btrfs": 114294784}
CACHE_LIMIT = "page_cache_limit"  # plan-level, and per [[test]] (not a tool parameter)


def on_path(executable: str) -> bool:
    """Whether a tool's program is installed (on the PATH, or DiskLab's sbin directories)."""
    return which(executable) is not None


def read_target(doc: Mapping[str, Any], check: Checker, base_dir: Path,
                library: str | None) -> Target | None:
    """The plan's `[target]`, checked where it is (target_table); None after an error."""
    table = doc.get("target")
    if table is None:
        check.error("target", "missing: add a [target] table with directory = \"...\"")
        return None
    return target_table(table, "target", check, base_dir, library)


def target_table(table: Any, base: str, check: Checker, base_dir: Path,
                 library: str | None) -> Target | None:
    """One target table ([target], or [targets.NAME] with `base` its key), every check."""
    if not isinstance(table, dict):
        check.error(base, "must be a table")
        return None
    for key in table:
        if key not in TARGET_KEYS:
            check.error(f"{base}.{key}", f"unknown key (known: {', '.join(sorted(TARGET_KEYS))})")
    kinds = [k for k in TARGET_KINDS if k in table]
    if len(kinds) != 1:
        check.error(base, "give exactly one of directory, image, format or device"
                    + (f" (found {', '.join(kinds)})" if kinds else ""))
        return None
    kind = kinds[0]
    if kind == "directory":
        target = _directory_target(table["directory"], check, base_dir, base)
    elif kind == "image":
        target = _image_target(table["image"], check, base_dir, base)
    else:
        target = _format_target(table[kind], table.get("confirm"), check, library, kind, base)
    partitions = read_partitions(table, base, kind, check)
    if target is not None and partitions:
        target = replace(target, partitions=partitions)
    return target


def control_character(path: str) -> str | None:
    """Why a path given in the plan names no file (a NUL, a line break, any control character:
    printed raw, it would break the message's line too), or None."""
    if any(ord(c) < 32 or c == "\x7f" for c in path):
        return (f"path {path[:80]!r} holds a control character (a NUL, a line break): no "
                "file or directory DiskLab uses has one in its name")
    return None


def _directory_target(directory: Any, check: Checker, base_dir: Path,
                      base: str = "target") -> Target | None:
    if not isinstance(directory, str) or not directory:
        check.error(f"{base}.directory", "must be a path")
        return None
    if (why := control_character(directory)) is not None:
        check.error(f"{base}.directory", why)
        return None
    path = Path(directory).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    if not path.exists():
        check.error(f"{base}.directory", f"{path} does not exist")
    elif not path.is_dir():
        check.error(f"{base}.directory", f"{path} is not a directory")
    elif (pseudo := mount_of(str(path))) is not None and pseudo.fstype in PSEUDO_FILESYSTEMS:
        check.error(f"{base}.directory", f"{path} is on {pseudo.fstype} (mounted on "
                    f"{pseudo.mountpoint}), the kernel's view of itself, not storage: give a "
                    "directory on a disk's filesystem")
    elif not os.access(path, os.W_OK | os.X_OK):
        check.error(f"{base}.directory", f"{path} is not writable")
    return Target(kind="directory", path=str(path))


def _image_target(image: Any, check: Checker, base_dir: Path,
                  base: str = "target") -> Target | None:
    """A scratch image DiskLab makes, attaches with direct I/O, formats per config, removes."""
    if not isinstance(image, dict) or set(image) - {"path", "size"}:
        check.error(f"{base}.image", 'must be { path = "/var/tmp/disklab.img", size = "8g" }')
        return None
    raw_path, raw_size = image.get("path"), image.get("size")
    if not isinstance(raw_path, str) or not raw_path:
        check.error(f"{base}.image", "needs path = \"...\" (a file DiskLab creates)")
        return None
    if (why := control_character(raw_path)) is not None:
        check.error(f"{base}.image", why)
        return None
    path = Path(raw_path).expanduser()
    path = path if path.is_absolute() else base_dir / path
    if path.exists():
        check.error(f"{base}.image", f"{path} exists: DiskLab makes a new image there and "
                    "removes it afterwards; choose a path that does not exist")
    if not path.parent.is_dir():
        check.error(f"{base}.image", f"{path.parent} is not a directory")
    try:
        size = parse_size(raw_size if raw_size is not None else "")
    except ValueError as e:
        check.error(f"{base}.image", f"size: {e}")
        return None
    if size < MIN_IMAGE:
        check.error(f"{base}.image", f"size {format_size(size)} is below {format_size(MIN_IMAGE)}")
    elif path.parent.is_dir() and (too_large := _file_too_large(path.parent, size)):
        check.error(f"{base}.image", f"size {format_size(size)}: {too_large}")
    elif path.parent.is_dir() and size > shutil.disk_usage(path.parent).free:
        check.warn(f"{base}.image", f"the image ({human_bytes(size)}) is larger than the free "
                   f"space under {path.parent}; it is sparse, but filling it will fail")
    if os.geteuid() != 0 and not on_path("pkexec") and not on_path("sudo"):
        check.error(f"{base}.image", "attaching an image needs root, pkexec or sudo")
    return Target(kind="image", path=str(path), size=size)


def _file_too_large(directory: Path, size: int) -> str | None:
    """Why the filesystem under `directory` cannot hold a file of `size` bytes (ext4 with 4 KiB
    blocks: 16 TiB; ext3: 2 TiB), or None. Asked of the filesystem itself: an unnamed sparse
    file (O_TMPFILE) is set to that size and dropped, nothing allocated, nothing left behind.
    None too when it cannot be asked (no write access here: the helper makes the image)."""
    try:
        fd = os.open(directory, os.O_TMPFILE | os.O_WRONLY, 0o600)
    except OSError:
        return None
    try:
        os.ftruncate(fd, size)
    except OSError as e:
        if e.errno not in (errno.EFBIG, errno.EINVAL):
            return None
        fs = mount_of(str(directory))
        return (f"{fs.fstype if fs else 'the filesystem'} under {directory} cannot hold a file "
                f"that large ({e.strerror})")
    finally:
        os.close(fd)
    return None


def _format_target(device: Any, confirm: Any, check: Checker, library: str | None,
                   kind: str = "format", base: str = "target") -> Target | None:
    """A device DiskLab formats per config (format) or writes raw (device): every safety check
    of disklab.core.system.devices, and the plan's confirm must match the device as read now."""
    if not isinstance(device, str) or not device.startswith("/dev/"):
        check.error(f"{base}.{kind}", "must be a block device path such as /dev/sdb1")
        return None
    if not isinstance(confirm, str) or not confirm:
        verb = "formatting" if kind == "format" else "raw I/O on"
        check.error(f"{base}.confirm", f"{verb} {device} destroys its data: add confirm = "
                    "\"PATH SERIAL SIZE\" as `disklab devices` shows it")
        confirm = None
    size = None
    try:
        size = check_destructive(device, confirm, library).size
    except DisklabError as e:
        check.error(f"{base}.{kind}", str(e))
    return Target(kind=kind, path=device, confirm=confirm, size=size)


def check_devices(config: FsConfig, index: int, target: Target | None, check: Checker,
                  library: str | None) -> None:
    """An external journal or log device is wiped and formatted like the target: the same
    safety classes, its own confirm, and never the target itself."""
    for name, path in device_options(config).items():
        key = f"config[{index}].mkfs.{name}"
        confirm = config.confirms.get(name)
        if not path.startswith("/dev/"):
            check.error(key, f"{path} must be a block device path such as /dev/sdc1")
            continue
        if confirm is None:
            check.error(key, f"{name} {path} is wiped and formatted, destroying its data: write "
                        f'{name} = {{ path = "{path}", confirm = "PATH SERIAL SIZE" }} with the '
                        "confirm as `disklab devices` shows it")
        try:
            if (target is not None and target.kind == "format"
                    and kernel_name(path) == kernel_name(target.path)):
                check.error(key, f"{path} is the target itself: an external {name} needs a "
                            "device of its own")
                continue
            check_destructive(path, confirm, library)
        except DisklabError as e:
            check.error(key, str(e))


@dataclass(frozen=True)
class Destroyed:
    """A device a run wipes: the format or raw device target, or an external journal or log
    device of a configuration. Each is confirmed in the plan and typed back (--yes-destroy)."""

    path: str
    confirm: str | None
    key: str  # the TOML key that names it ('target.format', 'config[2].mkfs.journal_device')
    line: int | None
    role: str  # what is done to it, for the question asked before the run


def destroyed_devices(plan: Plan) -> list[Destroyed]:
    """Every device a run of `plan` destroys, the target first, each once."""
    where = KeyLines(plan.source)
    out: list[Destroyed] = []
    target = plan.target
    for name, each in (plan.targets or {"": target}).items():
        if not each.destructive:
            continue
        key = f"targets.{name}.{each.kind}" if name else f"target.{each.kind}"
        role = ("formatted once per configuration" if each.kind == "format"
                else "written to directly")
        out.append(Destroyed(each.path, each.confirm, key, where.get(key), role))
    if target.kind in ("image", "format"):
        for i, config in enumerate(plan.configs, start=1):
            for name, path in device_options(config).items():
                if any(d.path == path for d in out):
                    continue
                key = f"config[{i}].mkfs.{name}"
                out.append(Destroyed(path, config.confirms.get(name), key, where.get(key),
                                     f"formatted as the external {name.replace('_', ' ')} of "
                                     f"{config.label!r}"))
    return out


def check_targets(plan: Plan, check: Checker) -> None:
    """Several targets: every placement runnable by some configuration, and each target able
    to hold the files placed on it; every filesystem a configuration makes fits its place."""
    check_placements(plan, check)
    _check_placed_room(plan, check)
    _check_fs_minimums(plan, check)
    _check_bonnie_users(plan, check)


def _check_bonnie_users(plan: Plan, check: Checker) -> None:
    """bonnie++'s `user` (-u, given when it runs as root) must be able to make its files
    where the test runs: in a directory target, by its owner and mode; in a filesystem DiskLab
    makes, only root can (its top directory is root's)."""
    targets = named_targets(plan).values()
    for spec in plan.tests:
        if spec.tool != "bonnie":
            continue
        raw = spec.params.get("user")
        for user in raw if isinstance(raw, tuple) else (raw,):
            problems = [user_place_problem(user, t.path if t.kind == "directory" else None)
                        for t in targets if t.kind != "directory" or os.geteuid() == 0]
            problem = next((p for p in problems if p), None)
            if problem:
                check.error(f"test[{spec.index + 1}].user", problem)
                break


def _check_fs_minimums(plan: Plan, check: Checker) -> None:
    """A filesystem with a least size (mkfs.xfs: "must be larger than 300MB") on an image,
    a device or a partition of one that is smaller: mkfs would refuse it mid-run."""
    targets = named_targets(plan)
    streams = stream_targets(targets)
    for i, config in enumerate(plan.configs, start=1):
        least = MIN_FS_BYTES.get(config.fs or "")
        if least is None:
            continue
        for name in config_targets(config, targets):
            target = targets[streams[name][0]]
            if target.kind not in ("image", "format", "device") or not target.size:
                continue
            room = (target.size if not target.partitions else
                    (target.size - PARTITION_RESERVE) // target.partitions >> 20 << 20)
            if room < least:
                place = f"partition {name} ({_in_mib(room)})" if target.partitions else \
                    f"{target.path} ({_in_mib(target.size)})"
                check.error(f"config[{i}].fs", f"{config.fs} needs at least "
                            f"{format_size(least)} (mkfs.{config.fs}'s least size): "
                            f"{place} is smaller")
                break


def _in_mib(n: int) -> str:
    """A size in the unit of the least sizes (MiB, the plan's 'm'): 299m beside 300m, not
    314 MB beside 300m."""
    return f"{n / MiB:.6g}m"


def _check_placed_room(plan: Plan, check: Checker) -> None:
    """Each target of a placement takes one file per stream placed on it ("a+a+a" is three
    files on a): against that target's room (a partition: its share of the image or device)."""
    targets = named_targets(plan)
    streams = stream_targets(targets)
    rooms: dict[str, tuple[int | None, str]] = {}
    for name, (parent, _n) in streams.items():
        room, where = _room(replace(plan, target=targets[parent]))
        parts = targets[parent].partitions
        if room is not None and parts:
            room, where = room // parts, f"{where} / {parts} partitions"
        rooms[name] = (room, where)
    for spec in plan.tests:
        if PLACEMENT_KEY not in spec.params:
            continue
        adapter = tools.get_adapter(spec.tool)
        for params in points(spec):
            names = str(params[PLACEMENT_KEY]).split("+")
            size = adapter.file_size({k: v for k, v in params.items() if k != PLACEMENT_KEY})
            over = [(n, size * names.count(n)) for n in dict.fromkeys(names)
                    if size and rooms[n][0] is not None
                    and size * names.count(n) > (rooms[n][0] or 0)]
            if over:
                name, need = over[0]
                room, where = rooms[name]
                check.error(f"test[{spec.index + 1}].{PLACEMENT_KEY}",
                            f"{params[PLACEMENT_KEY]!r} puts {human_bytes(need)} of test files "
                            f"on {name}, more than {where} ({human_bytes(room or 0)})")
                break



def check_cache_limit(plan: Plan, check: Checker, cgroup_root: str) -> None:
    """A page-cache limit needs a memory cgroup controller, and a place to make groups in: as
    root or in a delegated subtree here, or as root through the privileged helper (the tools of
    image, format and device targets run there when DiskLab is not root)."""
    keys = ([CACHE_LIMIT] if plan.page_cache_limit is not None else []) + [
        f"test[{s.index + 1}].{CACHE_LIMIT}" for s in plan.tests if s.page_cache_limit]
    if not keys:
        return
    controller = find_memory_controller(cgroup_root)
    if controller is None:
        check.error(keys[0], "no memory cgroup controller is available (neither cgroup v2 with "
                    "the memory controller on for this process's group nor a cgroup v1 memory "
                    "hierarchy is mounted): the page cache cannot be limited")
    elif (plan.target.kind == "directory" and os.geteuid() != 0
          and not controller.writable):
        check.error(keys[0], f"limiting the page cache of a directory target needs root or a "
                    f"delegated cgroup: {controller.base} is not writable for this user "
                    "(run as root, or use an image or format target: its tools run as root)")


def _written(check: Checker, base: str, keys: tuple[str, ...]) -> str:
    """The first of `keys` the plan wrote in table `base` (for the line), else the table."""
    return next((f"{base}.{k}" for k in keys if f"{base}.{k}" in check.where.lines), base)


def check_resources(plan: Plan, check: Checker) -> None:
    """What one case needs at once against what the machine has: its test files against the
    target's free space (or the image's or device's size), its I/O buffers against the RAM."""
    room, where = _room(plan)
    ram = psutil.virtual_memory().total
    for spec in plan.tests:
        adapter = tools.get_adapter(spec.tool)
        base = f"test[{spec.index + 1}]"
        need = max((adapter.space_bytes(p) or 0 for p in points(spec)), default=0)
        if room is not None and need > room:
            check.error(_written(check, base, ("size", "file_size", "max_file_size")),
                        f"a case of this test needs {human_bytes(need)} of test files, more "
                        f"than {where} ({human_bytes(room)})")
        buffers = max((adapter.buffer_bytes(p) or 0 for p in points(spec)), default=0)
        if buffers > ram:
            check.error(_written(check, base, ("bs", "block_size", "record_size", "iodepth",
                                               "queue_depth", "numjobs", "streams", "threads")),
                        f"a case of this test needs {human_bytes(buffers)} of I/O buffers, more "
                        f"than this machine's RAM ({human_bytes(ram)})")


def _room(plan: Plan) -> tuple[int | None, str]:
    """Bytes of test files the target can take, and how to say where; None: not known."""
    target = plan.target
    if target.kind == "directory" and os.path.isdir(target.path):
        usage = shutil.disk_usage(target.path)
        if usage.total == 0:  # ramfs and the like report no size: their limit is the RAM
            return None, ""
        return usage.free, f"the space free under {target.path}"
    if target.kind in ("image", "format") and target.size:
        return int(target.size), f"the size of {target.path}"
    if target.kind == "device" and target.size:
        return int(target.size), f"the size of {target.path}"
    return None, ""


def warn_plan(plan: Plan, check: Checker, library: str | None) -> None:
    """What will make the figures misleading: page-cache reads, the library on the target,
    a filesystem that refuses O_DIRECT (that one is an error), caches not dropped."""
    ram = psutil.virtual_memory().total
    refusal_checked = False
    for spec in plan.tests:
        adapter = tools.get_adapter(spec.tool)
        base = f"test[{spec.index + 1}]"
        limit = plan.page_cache_limit_of(spec.index)
        # with a limit, the tool's page cache is at most the limit, not the machine's RAM
        what = (f"page_cache_limit ({format_size(2 * limit)})" if limit
                else f"RAM ({human_bytes(2 * ram)})")
        cache = limit or ram
        advised: set[tuple[str, str]] = set()
        for params in points(spec):
            for key, message in adapter.advice(params):
                if (key, message) not in advised:  # once per test, not once per case
                    advised.add((key, message))
                    check.warn(f"{base}.{key}", message)
        for params in points(spec):
            touched, how = _data_touched(adapter, params)
            if (adapter.is_buffered(params) and adapter.reads(params) and touched is not None
                    and touched < 2 * cache):
                check.warn(
                    base,
                    f"buffered test (direct = false) on {how}, below 2 x "
                    f"{what}: its read figures will come from the page cache",
                )
                break
        if plan.target.kind != "directory":
            continue  # a filesystem DiskLab makes: ext4, xfs and btrfs accept O_DIRECT
        if not refusal_checked and any(adapter.uses_direct_io(p) for p in points(spec)):
            refusal_checked = True
            message = direct_io_refusal_once(plan.target.path)
            if message:
                check.error(f"{base}.direct", message)
    _warn_journal_oom(plan, check)
    _warn_journal_direct(plan, check)
    under_test = {"directory": plan.target.path,
                  "image": str(Path(plan.target.path).parent)}.get(plan.target.kind)
    if library and under_test and same_filesystem(library, under_test):
        check.warn(  # the key of the target's own table: targets.a.image in a [targets] plan
            f"targets.{next(iter(plan.targets))}.{plan.target.kind}" if plan.targets
            else f"target.{plan.target.kind}",
            f"the library ({library}) is on the filesystem under test: its commits add a little "
            "I/O to the measurement; point it elsewhere with --library PATH or DISKLAB_LIBRARY",
        )
    if plan.drop_caches and os.geteuid() != 0:
        check.warn("drop_caches", "not root: caches cannot be dropped, reads may come from memory")


def _warn_journal_oom(plan: Plan, check: Checker) -> None:
    """A data=journal configuration whose cases write more than their page_cache_limit: the
    journal pins written pages until it commits, the memory cgroup cannot reclaim them, and
    its OOM killer ends the tool (the data=journal study's commit=300 lost 2 of 3 repeats)."""
    for i, config in enumerate(plan.configs, start=1):
        held = journalled_data_seconds(config.fs, config.mount)
        if held is None:
            continue
        for spec in plan.tests:
            limit = plan.page_cache_limit_of(spec.index)
            if limit is None:
                continue
            adapter = tools.get_adapter(spec.tool)
            most = max((_data_written(adapter, p) for p in points(spec)),
                       key=lambda t: t[0] or 0, default=(None, ""))
            if most[0] is not None and most[0] > limit:
                check.warn(f"config[{i}].mount",
                           f"{config.label!r}: data=journal with commit={held} keeps up to "
                           f"{held} s of written data in memory until the journal commits (or "
                           "fills); "
                           f"test[{spec.index + 1}] writes {most[1]} under a page_cache_limit "
                           f"of {format_size(limit)}: the memory cgroup's OOM killer may end "
                           "the tool (raise page_cache_limit, lower commit or make the journal "
                           "smaller)")
                break


def _data_written(adapter: ToolAdapter,
                  params: Mapping[str, Any]) -> tuple[int | None, str]:
    """The bytes one case writes, with the words: its files, or more when the tool goes over
    them again (fio's io_size or loops: 256 GiB through a 16 GiB file)."""
    touched = _data_touched(adapter, params)
    moved = adapter.moved_bytes({k: v for k, v in params.items() if k != PLACEMENT_KEY})
    if moved is not None and moved > (touched[0] or 0):
        return moved, f"{format_size(moved)} (io_size or loops over its files)"
    return touched


JOURNAL_DIRECT = ("ext4 data=journal does not do O_DIRECT: the kernel quietly buffers the "
                  "I/O of direct = true through the page cache, so its figures are the page "
                  "cache's, not the device's (measure direct I/O under data=ordered)")


def _warn_journal_direct(plan: Plan, check: Checker) -> None:
    """A test asking for direct I/O where the data is journalled (a data=journal
    configuration, or a directory target on a data=journal mount): its figures would be
    compared as the device's while they are the page cache's (issue 44: +934 % 'better')."""
    where = [f"{config.label!r}" for config in plan.configs
             if journalled_data_seconds(config.fs, config.mount) is not None]
    if plan.target.kind == "directory":
        mount = mount_of(plan.target.path)
        if mount is not None and mount.fstype in ("ext3", "ext4") and \
                "data=journal" in mount.option_list():
            where.append(f"the target's mount ({mount.mountpoint})")
    if not where:
        return
    for spec in plan.tests:
        adapter = tools.get_adapter(spec.tool)
        if any(adapter.uses_direct_io(p) for p in points(spec)):
            check.warn(f"test[{spec.index + 1}].direct", f"{', '.join(where)}: {JOURNAL_DIRECT}")


def _data_touched(adapter: ToolAdapter,
                  params: Mapping[str, Any]) -> tuple[int | None, str]:
    """The bytes one case reads back, with the words saying how they add up.

    Why all of them: a case's processes (iozone's threads, fio's jobs, the engine's streams, a
    placement's streams on each target) share one page cache and, with page_cache_limit, one
    memory cgroup; 4 threads on 256m files fill 1 GiB of it, not 256m."""
    own = {k: v for k, v in params.items() if k != PLACEMENT_KEY}
    size = adapter.file_size(own)
    if size is None:
        return None, ""
    if PLACEMENT_KEY in params:  # one file per stream of `on` (as _check_placed_room counts)
        every = size * len(str(params[PLACEMENT_KEY]).split("+"))
    else:
        every = adapter.space_bytes(own) or size
    if every <= size:
        return size, f"a {format_size(size)} file"
    files = every // size
    return every, f"{files} files of {format_size(size)} ({format_size(every)})"
