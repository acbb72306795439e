"""The exact argv of applying a filesystem configuration, built here and nowhere else.

`setup_commands(config, device, mountpoint)` is the ordered list of what applying one
configuration runs: wipefs, the external journal, mkfs, mount, read-ahead and the scheduler. The
privileged helper's mkfs and mount requests run these very commands (each is tagged with the
request that runs it; the setra and scheduler requests, which also restore the previous values
afterwards, build theirs with the same setra_argv and scheduler_argv), `disklab plan show`
prints them and the Configurations page previews them, so what a user reads before a run is
what runs. mkfs is forced once (-F, never -F -F: mke2fs still refuses a mounted
device), and inode tables and journals are zeroed at mkfs time, not lazily behind a measurement.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from dataclasses import dataclass

from disklab.core.fs.options import EXT, JOURNALED_EXT, MAX_READAHEAD, checked
from disklab.core.system.sysfs import queue_dir
from disklab.core.vocab.errors import ConfigError
from disklab.core.vocab.model import FsConfig
from disklab.core.vocab.units import MiB

MOUNT_PREFIX = "disklab-mnt-"  # a configuration is mounted on tempfile.mkdtemp(prefix=this)
# Every mount DiskLab makes: no set-user-ID file, device node or program on a test filesystem
# takes effect (its contents come from benchmarks and plans, never from a trusted source).
FORCED_MOUNT_OPTIONS = ("nosuid", "nodev", "noexec")
IMAGE_DEVICE = "/dev/loopN"  # an image target's loop device: known once the image is attached
UNKNOWN_DEVICE = "/dev/TARGET"  # shown while the target is not an image or a device yet


@dataclass(frozen=True)
class SetupCommand:
    """One command of applying a configuration, and the privileged helper's request that runs
    it ("mkfs": wipefs, external journal and mkfs; "mount"; "setra"; "scheduler")."""

    request: str
    argv: tuple[str, ...]


def setup_commands(config: FsConfig, device: str, mountpoint: str | None
                   ) -> list[SetupCommand]:
    """The commands of applying `config` to `device` and mounting it at `mountpoint`, in the
    order they run. mountpoint None leaves the mount out (formatting only: what the helper's
    mkfs request runs). ConfigError for a configuration that is invalid or formats nothing."""
    opts = checked(config)
    if config.fs is None:
        raise ConfigError([("fs", f"configuration {config.label!r} makes no filesystem (as is)")])
    out = [SetupCommand("mkfs", wipefs_argv(device))]
    journal = opts.get("journal_device") if config.fs in JOURNALED_EXT else None
    if journal:
        out += [SetupCommand("mkfs", wipefs_argv(journal)),
                SetupCommand("mkfs", journal_dev_argv(config, journal))]
    out.append(SetupCommand("mkfs", mkfs_argv(config, device)))
    if mountpoint is not None:
        out.append(SetupCommand("mount", mount_argv(config, device, mountpoint)))
    if config.readahead is not None:
        out.append(SetupCommand("setra", setra_argv(device, config.readahead)))
    if config.scheduler is not None:
        out.append(SetupCommand("scheduler", scheduler_argv(device, config.scheduler)))
    return out


PARTITION_RESERVE = 4 << 20  # GPT's tables at both ends and sgdisk's 1 MiB alignment


def partition_argvs(device: str, size: int | None, count: int) -> list[tuple[str, ...]]:
    """The commands that split `device` (of `size` bytes) into `count` equal GPT partitions
    named disklab1..N: wipefs, sgdisk zapping any table, then one sgdisk call making them all. Equal
    parts in MiB; the last takes the rest. Without a size (a device not read yet) the sizes
    show as '+?M'. ConfigError when the device is too small."""
    if size is None:
        each_text = "?"
    else:
        each = (size - PARTITION_RESERVE) // count >> 20
        if each < 1:
            raise ConfigError(f"{device} is too small for {count} partitions")
        each_text = str(each)
    argv = ["sgdisk"]
    for i in range(1, count + 1):
        part = f"+{each_text}M" if i < count else "0"
        argv += [f"--new={i}:0:{part}", f"--typecode={i}:8300", f"--change-name={i}:disklab{i}"]
    return [wipefs_argv(device), ("sgdisk", "--zap-all", device), (*argv, device)]


def partition_device(device: str, number: int) -> str:
    """The kernel's name for partition `number` of `device`: sdb1, but loop0p1 and nvme0n1p1
    (a 'p' after a name ending in a digit)."""
    digit = device[-1:].isdigit() or device == IMAGE_DEVICE  # loopN: a loop device's number
    return f"{device}{'p' if digit else ''}{number}"


def command_line(argv: tuple[str, ...] | list[str]) -> str:
    """One command as a user would type it (each argument quoted for a POSIX shell)."""
    return shlex.join(argv)


def preview_device(kind: str | None, path: str | None) -> str:
    """The device a target's configurations are shown applied to before a run: a format
    target's own device; an image target's loop device (IMAGE_DEVICE: its number is known
    once attached); UNKNOWN_DEVICE for any other target."""
    if kind == "format" and path:
        return path
    return IMAGE_DEVICE if kind == "image" else UNKNOWN_DEVICE


def preview_mountpoint() -> str:
    """Where a configuration is shown mounted before a run: the run mounts it on a new
    directory tempfile.mkdtemp(prefix=MOUNT_PREFIX) makes, whose last 8 characters are random."""
    return os.path.join(tempfile.gettempdir(), MOUNT_PREFIX + "X" * 8)


def wipefs_argv(device: str) -> tuple[str, ...]:
    """Erase every signature; --force because DiskLab's own checks have already passed."""
    return ("wipefs", "--all", "--force", device)


def journal_dev_argv(config: FsConfig, device: str) -> tuple[str, ...]:
    """Format the external journal device of an ext3/ext4 config (its block size must match)."""
    opts = checked(config)
    if config.fs not in JOURNALED_EXT or "journal_device" not in opts:
        raise ConfigError([("mkfs.journal_device", "this configuration has no external journal")])
    block = opts.get("block_size", 4096)
    return ("mke2fs", "-t", config.fs, "-F", "-O", "journal_dev", "-b", str(block), device)


def mkfs_argv(config: FsConfig, device: str) -> tuple[str, ...]:
    """mkfs of one configuration, non-interactive with explicit force (-F once, never -F -F,
    so mke2fs still refuses a mounted or busy device)."""
    opts = checked(config)
    fs = config.fs
    if fs in EXT:
        argv = ["mke2fs", "-t", fs, "-F"]
        block = opts.get("block_size")
        if "journal_device" in opts and block is None:
            block = 4096  # as journal_dev_argv formatted the journal
        if block:
            argv += ["-b", str(block)]
        if "bytes_per_inode" in opts:
            argv += ["-i", str(opts["bytes_per_inode"])]
        if "inode_size" in opts:
            argv += ["-I", str(opts["inode_size"])]
        if "reserved_percent" in opts:
            argv += ["-m", f"{opts['reserved_percent']:g}"]
        if "journal_size" in opts:
            argv += ["-J", f"size={opts['journal_size'] // MiB}"]
        if "journal_device" in opts:
            argv += ["-J", f"device={opts['journal_device']}"]
        features = []
        if opts.get("no_journal"):
            features.append("^has_journal")
        if opts.get("fast_commit"):
            features.append("fast_commit")
        if features:
            argv += ["-O", ",".join(features)]
        lazy = "1" if opts.get("lazy_init") else "0"
        extended = [f"lazy_itable_init={lazy}"]
        if fs != "ext2" and not opts.get("no_journal"):
            extended.append(f"lazy_journal_init={lazy}")
        if "stride" in opts:
            extended.append(f"stride={opts['stride']}")
        if "stripe_width" in opts:
            extended.append(f"stripe_width={opts['stripe_width']}")
        argv += ["-E", ",".join(extended), device]
        return tuple(argv)
    if fs == "xfs":
        argv = ["mkfs.xfs", "-f"]
        if "su" in opts:
            argv += ["-d", f"su={opts['su']},sw={opts['sw']}"]
        log = []
        if "log_size" in opts:
            log.append(f"size={opts['log_size']}")
        if "log_device" in opts:
            log.append(f"logdev={opts['log_device']}")
        if log:
            argv += ["-l", ",".join(log)]
        if "inode_size" in opts:
            argv += ["-i", f"size={opts['inode_size']}"]
        return (*argv, device)
    if fs == "btrfs":
        argv = ["mkfs.btrfs", "-f"]
        if "data" in opts:
            argv += ["-d", opts["data"]]
        if "metadata" in opts:
            argv += ["-m", opts["metadata"]]
        return (*argv, device)
    raise ConfigError([("fs", f"configuration {config.label!r} makes no filesystem (as is)")])


def mount_options(config: FsConfig) -> tuple[str, ...]:
    """The -o list of a config, with logdev= added for an external xfs log."""
    opts = checked(config)
    extra = (f"logdev={opts['log_device']}",) if "log_device" in opts else ()
    return (*config.mount, *extra)


def mount_argv(config: FsConfig, device: str, mountpoint: str) -> tuple[str, ...]:
    """mount with FORCED_MOUNT_OPTIONS first and the configuration's after them (options.py
    refuses suid, dev and exec, so nothing later turns them back on)."""
    if config.fs is None:
        raise ConfigError([("fs", f"configuration {config.label!r} mounts nothing (as is)")])
    options = (*FORCED_MOUNT_OPTIONS,
               *(o for o in mount_options(config) if o not in FORCED_MOUNT_OPTIONS))
    return ("mount", "-t", config.fs, "-o", ",".join(options), device, mountpoint)


def umount_argv(mountpoint: str, lazy: bool = False) -> tuple[str, ...]:
    return ("umount", "-l", mountpoint) if lazy else ("umount", mountpoint)


def setra_argv(device: str, sectors: int) -> tuple[str, ...]:
    """Read-ahead in 512-byte sectors, as blockdev counts it."""
    if isinstance(sectors, bool) or not isinstance(sectors, int) or not (
            0 <= sectors <= MAX_READAHEAD):
        raise ConfigError([("readahead", f"{sectors!r} is not a read-ahead in sectors")])
    return ("blockdev", "--setra", str(sectors), device)


def getra_argv(device: str) -> tuple[str, ...]:
    return ("blockdev", "--getra", device)


def scheduler_argv(device: str, name: str) -> tuple[str, ...]:
    """Set the I/O scheduler: a write to the queue's sysfs file, not a process. The helper
    records it in this form ('write', PATH, VALUE) among the commands it ran."""
    queue = queue_dir(device)
    path = queue / "scheduler" if queue is not None else (
        f"/sys/block/{os.path.basename(device)}/queue/scheduler")
    return ("write", str(path), name)
