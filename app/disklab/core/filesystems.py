"""Filesystem configurations: checking, the exact argv of wipefs/mkfs/mount/blockdev, read-back.

A configuration is only worth comparing if it is what the kernel really applied, so every option is
checked before anything runs (unknown option, bad value, option of another filesystem), the argv
are built here and nowhere else, and after mounting the facts are read back from mountinfo,
dumpe2fs, xfs_info, btrfs and blockdev and compared with what was asked (`mismatches`).

Parsers (`parse_dumpe2fs`, `parse_xfs_info`, `parse_btrfs_df`, `parse_btrfs_show`) are pure and
raise ParseError on output that does not read as the tool's; `readback` does the I/O and never
raises (a fact it cannot read is listed under "errors").
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from disklab.core.errors import DisklabError, ParseError
from disklab.core.model import FsConfig
from disklab.core.units import KiB, MiB, format_size, parse_size

EXT = ("ext2", "ext3", "ext4")
JOURNALED_EXT = ("ext3", "ext4")
FILESYSTEMS = (*EXT, "xfs", "btrfs")
SCHEDULERS = ("none", "mq-deadline", "kyber", "bfq")
BTRFS_PROFILES = ("single", "dup", "raid0", "raid1", "raid1c3", "raid1c4", "raid10", "raid5",
                  "raid6")
CONFIG_KEYS = ("label", "fs", "mkfs", "mount", "readahead", "scheduler")
EXT_JOURNAL_COMMIT_DEFAULT = 5  # jbd2's default commit interval: mountinfo omits commit=5
BTRFS_COMMIT_DEFAULT = 30
MAX_READAHEAD = 1 << 21  # sectors (1 GiB): far above any useful value, catches unit mix-ups

Problems = list[tuple[str, str]]


class ConfigError(DisklabError):
    """A configuration that cannot be applied; `problems` holds (key, message) pairs."""

    def __init__(self, problems: Problems):
        self.problems = problems
        super().__init__("; ".join(f"{k}: {m}" for k, m in problems))


@dataclass(frozen=True)
class MkfsOption:
    """One mkfs option a [[config]] table may give: its kind and which filesystems take it."""

    kind: str  # "size" (bytes), "int", "float", "bool", "path", "choice"
    fs: tuple[str, ...]
    help: str
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    multiple: int | None = None  # sizes: must be a multiple of this
    power_of_two: bool = False


MKFS_OPTIONS: dict[str, MkfsOption] = {
    "block_size": MkfsOption("size", EXT, "mke2fs -b", choices=(1024, 2048, 4096)),
    "bytes_per_inode": MkfsOption("size", EXT, "mke2fs -i", minimum=1024, maximum=64 * MiB),
    "inode_size": MkfsOption("size", (*EXT, "xfs"), "mke2fs -I / mkfs.xfs -i size=",
                             minimum=128, maximum=4096, power_of_two=True),
    "reserved_percent": MkfsOption("float", EXT, "mke2fs -m", minimum=0, maximum=50),
    "journal_size": MkfsOption("size", JOURNALED_EXT, "mke2fs -J size= (whole MiB)",
                               minimum=MiB, maximum=40 * 1024 * MiB, multiple=MiB),
    "journal_device": MkfsOption("path", JOURNALED_EXT,
                                 "mke2fs -J device= (formatted with -O journal_dev first)"),
    "no_journal": MkfsOption("bool", JOURNALED_EXT, "mke2fs -O ^has_journal"),
    "stride": MkfsOption("int", EXT, "mke2fs -E stride= (filesystem blocks)", minimum=1),
    "stripe_width": MkfsOption("int", EXT, "mke2fs -E stripe_width= (filesystem blocks)",
                               minimum=1),
    "fast_commit": MkfsOption("bool", ("ext4",), "mke2fs -O fast_commit"),
    "lazy_init": MkfsOption("bool", EXT, "lazy inode table/journal init (off by default: the "
                            "background zeroing would disturb the measurement)"),
    "su": MkfsOption("size", ("xfs",), "mkfs.xfs -d su= (with sw)", minimum=4096,
                     multiple=4096),
    "sw": MkfsOption("int", ("xfs",), "mkfs.xfs -d sw= (with su)", minimum=1),
    "log_size": MkfsOption("size", ("xfs",), "mkfs.xfs -l size= (at least 64 MiB)",
                           minimum=64 * MiB, multiple=4096),
    "log_device": MkfsOption("path", ("xfs",), "mkfs.xfs -l logdev= (and mount -o logdev=)"),
    "data": MkfsOption("choice", ("btrfs",), "mkfs.btrfs -d", choices=BTRFS_PROFILES),
    "metadata": MkfsOption("choice", ("btrfs",), "mkfs.btrfs -m", choices=BTRFS_PROFILES),
}


@dataclass(frozen=True)
class MountOption:
    """A mount option: a flag, or name=value checked by `check` (returns an error or None)."""

    fs: tuple[str, ...]
    value: Callable[[str], str | None] | None = None  # None: a flag, no '=value'


def _choice(*allowed: str) -> Callable[[str], str | None]:
    def check(v: str) -> str | None:
        return None if v in allowed else f"must be one of {', '.join(allowed)}"

    return check


def _int_range(lo: int, hi: int) -> Callable[[str], str | None]:
    def check(v: str) -> str | None:
        if not v.isdigit() or not lo <= int(v) <= hi:
            return f"must be a whole number from {lo} to {hi}"
        return None

    return check


def _logbsize(v: str) -> str | None:
    try:
        n = parse_size(v)
    except ValueError:
        n = -1
    if n not in (16 * KiB, 32 * KiB, 64 * KiB, 128 * KiB, 256 * KiB):
        return "must be one of 16k, 32k, 64k, 128k, 256k"
    return None


def _compress(v: str) -> str | None:
    alg, _, level = v.partition(":")
    levels = {"zlib": (1, 9), "zstd": (-15, 15), "lzo": None, "no": None}
    if alg not in levels:
        return "must be zlib, lzo, zstd or no (zlib:N and zstd:N give a level)"
    if level:
        span = levels[alg]
        if span is None:
            return f"{alg} takes no level"
        if not re.fullmatch(r"-?\d+", level) or not span[0] <= int(level) <= span[1]:
            return f"{alg} level must be from {span[0]} to {span[1]}"
    return None


ANY = FILESYSTEMS
MOUNT_OPTIONS: dict[str, MountOption] = {
    "noatime": MountOption(ANY),
    "relatime": MountOption(ANY),
    "strictatime": MountOption(ANY),
    "nodiratime": MountOption(ANY),
    "lazytime": MountOption(ANY),
    "discard": MountOption(("ext4", "xfs", "btrfs")),
    "nodiscard": MountOption(("ext4", "xfs", "btrfs")),
    "data": MountOption(JOURNALED_EXT, _choice("journal", "ordered", "writeback")),
    "nodelalloc": MountOption(("ext4",)),
    "delalloc": MountOption(("ext4",)),
    "commit": MountOption((*JOURNALED_EXT, "btrfs"), _int_range(0, 86400)),
    "journal_checksum": MountOption(("ext4",)),
    "journal_async_commit": MountOption(("ext4",)),
    "barrier": MountOption((*JOURNALED_EXT, "btrfs")),
    "nobarrier": MountOption((*JOURNALED_EXT, "btrfs")),
    "errors": MountOption(EXT, _choice("continue", "remount-ro", "panic")),
    "logbsize": MountOption(("xfs",), _logbsize),
    "logbufs": MountOption(("xfs",), _int_range(2, 8)),
    "largeio": MountOption(("xfs",)),
    "compress": MountOption(("btrfs",), _compress),
    "compress-force": MountOption(("btrfs",), _compress),
    "nodatacow": MountOption(("btrfs",)),
    "nodatasum": MountOption(("btrfs",)),
    "ssd": MountOption(("btrfs",)),
    "nossd": MountOption(("btrfs",)),
    "space_cache": MountOption(("btrfs",), _choice("v1", "v2")),
    "nospace_cache": MountOption(("btrfs",)),
}


def _fs_list(fs: Sequence[str]) -> str:
    return "ext2/3/4" if tuple(fs) == EXT else ", ".join(fs)


def convert_mkfs_value(name: str, value: Any) -> Any:
    """One mkfs option's plan value -> canonical value (sizes in bytes); ValueError says why."""
    opt = MKFS_OPTIONS[name]
    if opt.kind == "size":
        n = parse_size(value)
        if opt.choices and n not in opt.choices:
            raise ValueError(f"{value!r} must be one of "
                             f"{', '.join(format_size(c) for c in opt.choices)}")
        if opt.power_of_two and (n <= 0 or n & (n - 1)):
            raise ValueError(f"{value!r} is not a power of two")
        if opt.multiple and n % opt.multiple:
            raise ValueError(f"{value!r} is not a multiple of {format_size(opt.multiple)}")
        _check_range(value, n, opt)
        return n
    if opt.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{value!r} is not a whole number")
        _check_range(value, value, opt)
        return value
    if opt.kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{value!r} is not a number")
        _check_range(value, value, opt)
        return float(value)
    if opt.kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{value!r} is not true or false")
        return value
    if opt.kind == "path":
        if not isinstance(value, str) or not value.startswith("/"):
            raise ValueError(f"{value!r} is not an absolute device path")
        return value
    if opt.kind == "choice":
        if value not in opt.choices:
            raise ValueError(f"{value!r} must be one of {', '.join(map(str, opt.choices))}")
        return value
    raise AssertionError(opt.kind)


def _check_range(raw: Any, n: float, opt: MkfsOption) -> None:
    show = format_size if opt.kind == "size" else str
    if opt.minimum is not None and n < opt.minimum:
        raise ValueError(f"{raw!r} is below the minimum {show(int(opt.minimum))}")
    if opt.maximum is not None and n > opt.maximum:
        raise ValueError(f"{raw!r} is above the maximum {show(int(opt.maximum))}")


def split_mount_option(option: str) -> tuple[str, str | None]:
    name, eq, value = option.partition("=")
    return name, (value if eq else None)


def _check_mount_option(fs: str, option: Any) -> str | None:
    if not isinstance(option, str) or not option.strip():
        return f"{option!r} is not a mount option (a string such as 'noatime' or 'commit=30')"
    name, value = split_mount_option(option.strip())
    spec = MOUNT_OPTIONS.get(name)
    if spec is None:
        if name == "logdev":
            return "logdev comes from mkfs.log_device; do not give it as a mount option"
        return f"unknown mount option {option!r} for {fs}"
    if fs not in spec.fs:
        return f"{name!r} is a mount option of {_fs_list(spec.fs)}, not of {fs}"
    if spec.value is None:
        if value is not None:
            return f"{name!r} takes no value"
        return None
    if value is None:
        return f"{name!r} needs a value ({name}=...)"
    error = spec.value(value)
    return f"{option!r}: {error}" if error else None


def validate(config: FsConfig) -> Problems:
    """Every problem of one configuration, as (key, message); keys are relative ('mkfs.su',
    'mount[2]', 'readahead'). An empty list means it can be applied."""
    problems: Problems = []
    if not isinstance(config.label, str) or not config.label.strip():
        problems.append(("label", "a configuration needs a non-empty label"))
    if config.fs is None:
        if config.mkfs:
            problems.append(("mkfs", "mkfs options need fs (ext2, ext3, ext4, xfs, btrfs)"))
        if config.mount:
            problems.append(("mount", "mount options need fs (ext2, ext3, ext4, xfs, btrfs)"))
    elif config.fs not in FILESYSTEMS:
        problems.append(("fs", f"unknown filesystem {config.fs!r} "
                               f"(one of {', '.join(FILESYSTEMS)})"))
        return problems + _check_tuning(config)
    fs = config.fs
    values: dict[str, Any] = {}
    for name, raw in dict(config.mkfs).items():
        key = f"mkfs.{name}"
        opt = MKFS_OPTIONS.get(name)
        if opt is None:
            problems.append((key, f"unknown mkfs option {name!r} "
                                  f"(known: {', '.join(sorted(MKFS_OPTIONS))})"))
            continue
        if fs is not None and fs not in opt.fs:
            if name in ("journal_size", "journal_device", "no_journal") and fs == "ext2":
                problems.append((key, "ext2 has no journal (use ext3 or ext4)"))
            else:
                problems.append((key, f"{name!r} is an mkfs option of {_fs_list(opt.fs)}, "
                                      f"not of {fs}"))
            continue
        try:
            values[name] = convert_mkfs_value(name, raw)
        except ValueError as e:
            problems.append((key, str(e)))
    if fs is not None:
        problems += _check_combinations(fs, values, set(config.mkfs))
    mount_names: dict[str, str | None] = {}
    for i, option in enumerate(config.mount, start=1):
        error = _check_mount_option(fs or "?", option) if fs else None
        if error:
            problems.append((f"mount[{i}]", error))
        elif isinstance(option, str):
            name, value = split_mount_option(option.strip())
            mount_names[name] = value
    if fs is not None:
        problems += _check_mount_combinations(fs, values, mount_names)
    return problems + _check_tuning(config)


def _check_tuning(config: FsConfig) -> Problems:
    problems: Problems = []
    ra = config.readahead
    if ra is not None and (isinstance(ra, bool) or not isinstance(ra, int)
                           or not 0 <= ra <= MAX_READAHEAD):
        problems.append(("readahead", f"{ra!r} must be a whole number of 512-byte sectors "
                                      f"from 0 to {MAX_READAHEAD} (blockdev --setra)"))
    if config.scheduler is not None and config.scheduler not in SCHEDULERS:
        problems.append(("scheduler", f"unknown I/O scheduler {config.scheduler!r} "
                                      f"(one of {', '.join(SCHEDULERS)})"))
    return problems


def _check_combinations(fs: str, v: Mapping[str, Any], given: set[str]) -> Problems:
    """Options that are fine alone but not together (v: the valid ones; given: all named)."""
    problems: Problems = []
    if v.get("no_journal") and ("journal_size" in v or "journal_device" in v):
        problems.append(("mkfs.no_journal", "no_journal contradicts journal_size/journal_device"))
    if "journal_size" in v and "journal_device" in v:
        problems.append(("mkfs.journal_size", "an external journal takes its whole device; "
                                              "give journal_size or journal_device, not both"))
    if v.get("no_journal") and v.get("fast_commit"):
        problems.append(("mkfs.fast_commit", "fast_commit needs a journal (no_journal is set)"))
    block = v.get("block_size")
    if block and "inode_size" in v and v["inode_size"] > block and fs in EXT:
        problems.append(("mkfs.inode_size", f"inode size {v['inode_size']} is larger than the "
                                            f"block size {block}"))
    if block and "journal_size" in v:
        blocks = v["journal_size"] // block
        if not 1024 <= blocks <= 10_240_000:
            problems.append(("mkfs.journal_size", f"{format_size(v['journal_size'])} is {blocks}"
                                                  f" blocks of {block}; mke2fs wants 1024 to "
                                                  "10240000 blocks"))
    if fs == "xfs":
        if ("su" in given) != ("sw" in given):
            problems.append(("mkfs.su" if "su" not in given else "mkfs.sw",
                             "xfs needs su and sw together"))
        if "inode_size" in v and not 512 <= v["inode_size"] <= 2048:
            problems.append(("mkfs.inode_size", "xfs (with CRCs, the default) takes inode_size "
                                                "512, 1024 or 2048"))
    return problems


def _check_mount_combinations(fs: str, mkfs: Mapping[str, Any],
                              mount: Mapping[str, str | None]) -> Problems:
    problems: Problems = []
    data = mount.get("data")
    if fs == "ext4" and data == "journal" and "delalloc" in mount:
        problems.append(("mount", "data=journal and delalloc cannot be combined (the kernel "
                                  "refuses the mount)"))
    if "journal_async_commit" in mount and data in (None, "ordered"):
        problems.append(("mount", "journal_async_commit needs data=journal or data=writeback "
                                  "(the kernel refuses it in data=ordered mode)"))
    if "nodelalloc" in mount and "delalloc" in mount:
        problems.append(("mount", "nodelalloc and delalloc contradict each other"))
    if "barrier" in mount and "nobarrier" in mount:
        problems.append(("mount", "barrier and nobarrier contradict each other"))
    atimes = [n for n in ("noatime", "relatime", "strictatime") if n in mount]
    if len(atimes) > 1:
        problems.append(("mount", f"{' and '.join(atimes)} contradict each other"))
    needs_journal = [n for n in ("journal_checksum", "journal_async_commit") if n in mount]
    if data == "journal":
        needs_journal.insert(0, "data=journal")
    if mkfs.get("no_journal") and needs_journal:
        problems.append(("mount", f"{', '.join(needs_journal)} need a journal "
                                  "(mkfs.no_journal is set)"))
    if fs == "btrfs" and "compress" in mount and "compress-force" in mount:
        problems.append(("mount", "give compress or compress-force, not both"))
    return problems


def config_from_toml(table: Any, index: int = 1) -> tuple[FsConfig | None, Problems]:
    """One [[config]] table -> (FsConfig with canonical values, problems). Keys of problems are
    'config[INDEX].mkfs.journal_size' (INDEX as the plan loader counts, 1-based). The config is
    None when there is any problem."""
    where = f"config[{index}]"
    if not isinstance(table, Mapping):
        return None, [(where, "a [[config]] entry must be a table")]
    problems: Problems = []
    for key in table:
        if key not in CONFIG_KEYS:
            problems.append((f"{where}.{key}", f"unknown key {key!r} "
                                               f"(known: {', '.join(CONFIG_KEYS)})"))
    label = table.get("label")
    fs = table.get("fs")
    if fs is not None and not isinstance(fs, str):
        problems.append((f"{where}.fs", f"{fs!r} is not a filesystem name"))
        fs = None
    mkfs_raw = table.get("mkfs", {})
    if not isinstance(mkfs_raw, Mapping):
        problems.append((f"{where}.mkfs", "mkfs must be a table, e.g. { journal_size = '16m' }"))
        mkfs_raw = {}
    mount_raw = table.get("mount", [])
    if isinstance(mount_raw, str):
        mount_raw = [o for o in mount_raw.split(",") if o.strip()]
    if not isinstance(mount_raw, list | tuple):
        problems.append((f"{where}.mount", "mount must be a list of options, e.g. ['noatime']"))
        mount_raw = []
    config = FsConfig(
        label=label if isinstance(label, str) else "",
        fs=fs,
        mkfs=dict(mkfs_raw),
        mount=tuple(o.strip() if isinstance(o, str) else o for o in mount_raw),
        readahead=table.get("readahead"),
        scheduler=table.get("scheduler"),
    )
    if label is not None and not isinstance(label, str):
        problems.append((f"{where}.label", f"{label!r} is not a string"))
    problems += [(f"{where}.{k}", m) for k, m in validate(config)]
    if problems:
        return None, problems
    mkfs = {k: convert_mkfs_value(k, v) for k, v in config.mkfs.items()}
    return FsConfig(config.label, config.fs, mkfs, config.mount, config.readahead,
                    config.scheduler), []


def config_to_dict(config: FsConfig) -> dict[str, Any]:
    """The JSON/TOML form of a configuration (what config_from_toml reads)."""
    out: dict[str, Any] = {"label": config.label}
    if config.fs is not None:
        out["fs"] = config.fs
    if config.mkfs:
        out["mkfs"] = dict(config.mkfs)
    if config.mount:
        out["mount"] = list(config.mount)
    if config.readahead is not None:
        out["readahead"] = config.readahead
    if config.scheduler is not None:
        out["scheduler"] = config.scheduler
    return out


def checked(config: FsConfig) -> dict[str, Any]:
    """The canonical mkfs values of a valid config; ConfigError listing every problem otherwise."""
    problems = validate(config)
    if problems:
        raise ConfigError(problems)
    return {k: convert_mkfs_value(k, v) for k, v in config.mkfs.items()}


# --- argv builders -------------------------------------------------------------------------

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
    if config.fs is None:
        raise ConfigError([("fs", f"configuration {config.label!r} mounts nothing (as is)")])
    options = mount_options(config)
    o = ("-o", ",".join(options)) if options else ()
    return ("mount", "-t", config.fs, *o, device, mountpoint)


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


# --- parsers (pure) ------------------------------------------------------------------------

_SIZE_SUFFIX = {"k": KiB, "M": MiB, "G": 1024 * MiB}
_ERRORS_BEHAVIOR = {"Continue": "continue", "Remount read-only": "remount-ro", "Panic": "panic"}


def _fields(text: str) -> dict[str, tuple[int, str]]:
    """'Name:   value' lines -> {name: (line number, value)}; the first occurrence wins."""
    out: dict[str, tuple[int, str]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        name, colon, value = line.partition(":")
        if colon and name.strip() and not name.startswith((" ", "\t")):
            out.setdefault(name.strip(), (n, value.strip()))
    return out


def parse_dumpe2fs(text: str) -> dict[str, Any]:
    """`dumpe2fs -h DEVICE` -> features, sizes, journal facts. Sizes in bytes."""
    f = _fields(text)

    def num(name: str, required: bool = False) -> int | None:
        if name not in f:
            if required:
                raise ParseError("dumpe2fs", None, f"a '{name}:' line")
            return None
        n, value = f[name]
        m = re.match(r"-?\d+", value)
        if not m:
            raise ParseError("dumpe2fs", n, f"a number after '{name}:'", value)
        return int(m.group())

    if "Filesystem features" not in f:
        raise ParseError("dumpe2fs", None, "a 'Filesystem features:' line")
    features = f["Filesystem features"][1].split()
    block_size = num("Block size", required=True)
    assert block_size is not None
    out: dict[str, Any] = {
        "features": features,
        "block_size": block_size,
        "block_count": num("Block count", required=True),
        "inode_count": num("Inode count", required=True),
        "reserved_blocks": num("Reserved block count"),
        "inode_size": num("Inode size"),
        "stride": num("RAID stride"),
        "stripe_width": num("RAID stripe width"),
        "has_journal": "has_journal" in features,
        "journal_dev": "journal_dev" in features,
        "fast_commit": "fast_commit" in features,
    }
    if "Errors behavior" in f:
        value = f["Errors behavior"][1]
        out["errors_behavior"] = _ERRORS_BEHAVIOR.get(value, value.lower())
    if "Journal features" in f:
        jf = f["Journal features"][1]
        out["journal_features"] = [] if jf == "(none)" else jf.split()
    blocks = num("Total journal blocks")
    if blocks is not None:
        out["journal_size"] = blocks * block_size
    elif "Total journal size" in f or "Journal size" in f:
        n, value = f.get("Total journal size") or f["Journal size"]
        m = re.fullmatch(r"(\d+)([kMG])", value)
        if not m:
            raise ParseError("dumpe2fs", n, "a journal size like '16M' or '1024k'", value)
        out["journal_size"] = int(m.group(1)) * _SIZE_SUFFIX[m.group(2)]
    if "Journal device" in f:
        n, value = f["Journal device"]
        try:
            devno = int(value, 16) if value.lower().startswith("0x") else int(value)
        except ValueError:
            raise ParseError("dumpe2fs", n, "a device number like 0x0700", value) from None
        out["journal_devno"] = f"{os.major(devno)}:{os.minor(devno)}"
    if "Journal UUID" in f:
        out["journal_uuid"] = f["Journal UUID"][1]
    if out["block_count"] and out["inode_count"]:
        out["bytes_per_inode"] = out["block_count"] * block_size // out["inode_count"]
    if out["block_count"] and out["reserved_blocks"] is not None:
        out["reserved_percent"] = round(100 * out["reserved_blocks"] / out["block_count"], 2)
    return out


_XFS_PAIR = re.compile(r"([a-z0-9-]+)=(\S+?),?(?=\s|$)")


def parse_xfs_info(text: str) -> dict[str, Any]:
    """`xfs_info` (or mkfs.xfs) geometry -> sizes in bytes: sunit/swidth, log, inode size."""
    sections: dict[str, dict[str, str]] = {}
    section = None
    log_where = None
    for n, line in enumerate(text.splitlines(), start=1):
        m = re.match(r"^(meta-data|data|naming|log|realtime)?\s*=\s*(.*)$", line)
        if not m:
            continue
        if m.group(1):
            section = m.group(1)
            sections.setdefault(section, {})
            rest = m.group(2)
            if section == "log":
                log_where = rest.split("bsize=")[0].strip() or None
        elif section is None:
            raise ParseError("xfs_info", n, "a 'meta-data=' line first", line)
        else:
            rest = m.group(2)
        for key, value in _XFS_PAIR.findall(rest):
            sections[section].setdefault(key, value)
    for needed in ("meta-data", "data", "log"):
        if needed not in sections:
            raise ParseError("xfs_info", None, f"a '{needed}' section")

    def num(section: str, key: str) -> int:
        value = sections[section].get(key)
        if value is None or not value.isdigit():
            raise ParseError("xfs_info", None, f"{section} {key}=N", value)
        return int(value)

    bsize = num("data", "bsize")
    sunit = num("data", "sunit")
    swidth = num("data", "swidth")
    log_blocks = num("log", "blocks")
    log_bsize = num("log", "bsize")
    where = (log_where or "").strip()
    return {
        "block_size": bsize,
        "blocks": num("data", "blocks"),
        "inode_size": num("meta-data", "isize"),
        "agcount": num("meta-data", "agcount"),
        "sector_size": num("meta-data", "sectsz"),
        "sunit": sunit * bsize,
        "swidth": swidth * bsize,
        "sw": swidth // sunit if sunit else 0,
        "log_size": log_blocks * log_bsize,
        "log_device": "internal" if where.startswith("internal") else where or None,
        "crc": sections["meta-data"].get("crc") == "1",
        "reflink": sections["meta-data"].get("reflink") == "1",
    }


_DF_LINE = re.compile(r"^(Data|Metadata|System|GlobalReserve), (\S+): total=(\S+), used=(\S+)$")


def parse_btrfs_df(text: str) -> dict[str, Any]:
    """`btrfs filesystem df -b` -> profiles (lower case) and totals in bytes."""
    out: dict[str, Any] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _DF_LINE.match(line.strip())
        if not m:
            raise ParseError("btrfs filesystem df", n, "'Kind, profile: total=N, used=N'", line)
        kind, profile, total, used = m.groups()
        if kind == "GlobalReserve":
            continue
        key = kind.lower()
        out[f"{key}_profile"] = profile.lower()
        out[f"{key}_total"] = _btrfs_bytes(total, n)
        out[f"{key}_used"] = _btrfs_bytes(used, n)
    if "data_profile" not in out:
        raise ParseError("btrfs filesystem df", None, "a 'Data, PROFILE:' line")
    return out


def _btrfs_bytes(value: str, line: int) -> int:
    if value.isdigit():
        return int(value)
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(B|KiB|MiB|GiB|TiB)", value)
    if not m:
        raise ParseError("btrfs filesystem df", line, "a byte count", value)
    scale = {"B": 1, "KiB": KiB, "MiB": MiB, "GiB": 1024 * MiB, "TiB": 1024**4}[m.group(2)]
    return round(float(m.group(1)) * scale)


def parse_btrfs_show(text: str) -> dict[str, Any]:
    """`btrfs filesystem show` -> uuid, label, devices (paths)."""
    m = re.search(r"Label:\s*(.*?)\s+uuid:\s*(\S+)", text)
    if not m:
        raise ParseError("btrfs filesystem show", 1, "'Label: ... uuid: ...'", text[:80])
    label = m.group(1).strip("'")
    devices = re.findall(r"^\s*devid\s+\d+\s+size\s+\S+\s+used\s+\S+\s+path\s+(\S+)", text,
                         re.MULTILINE)
    total = re.search(r"Total devices (\d+)", text)
    return {"uuid": m.group(2), "label": None if label == "none" else label,
            "devices": devices, "total_devices": int(total.group(1)) if total else len(devices)}


def parse_scheduler(text: str) -> str | None:
    """'none [mq-deadline] kyber' -> 'mq-deadline'."""
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else (text.strip() or None)


def mount_entry(mountpoint: str, mountinfo: str | None = None) -> dict[str, Any] | None:
    """The mountinfo entry of a mountpoint (the last one: it is the visible one)."""
    from disklab.core.hostinfo import mounts

    real = os.path.realpath(mountpoint)
    rows = mounts() if mountinfo is None else parse_mountinfo(mountinfo)
    found = None
    for row in rows:
        if row["mountpoint"] == real:
            found = row
    return found


def parse_mountinfo(text: str) -> list[dict[str, str]]:
    """/proc/self/mountinfo text -> rows (mountpoint, options, fstype, source, super)."""
    rows = []
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        a, b = left.split(), right.split()
        if len(a) >= 6 and len(b) >= 2:
            rows.append({"devno": a[2], "mountpoint": a[4], "options": a[5], "fstype": b[0],
                         "source": b[1], "super": b[2] if len(b) > 2 else ""})
    return rows


def entry_options(entry: Mapping[str, str]) -> list[str]:
    """A mount's options as one list: per-mount (noatime) then superblock (data=journal)."""
    vfs = [o for o in entry["options"].split(",") if o]
    sup = [o for o in entry.get("super", "").split(",") if o]
    return list(dict.fromkeys(vfs + sup))


# --- read-back (I/O; never raises) ------------------------------------------------------------

def _queue_dir(device: str) -> Path | None:
    """/sys/block/<disk>/queue of a device (a partition's disk holds the queue)."""
    try:
        st = os.stat(device)
    except OSError:
        return None
    sys_dev = Path(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    try:
        real = sys_dev.resolve()
    except OSError:
        return None
    if (real / "partition").exists():
        real = real.parent
    queue = real / "queue"
    return queue if queue.is_dir() else None


def read_scheduler(device: str) -> tuple[str | None, tuple[str, ...]]:
    """(current scheduler, available ones) from sysfs; (None, ()) when the device has none."""
    queue = _queue_dir(device)
    try:
        text = (queue / "scheduler").read_text() if queue else ""
    except OSError:
        text = ""
    available = tuple(s.strip("[]") for s in text.split())
    return parse_scheduler(text) if text.strip() else None, available


def read_readahead(device: str) -> int | None:
    """Read-ahead in 512-byte sectors from sysfs (what blockdev --getra reports)."""
    queue = _queue_dir(device)
    try:
        return int((queue / "read_ahead_kb").read_text()) * 2 if queue else None
    except (OSError, ValueError):
        return None


def devno_path(devno: str) -> str | None:
    """'7:0' -> '/dev/loop0' through sysfs."""
    try:
        return "/dev/" + Path(f"/sys/dev/block/{devno}").resolve().name
    except OSError:
        return None


def readback(device: str, mountpoint: str | None, fstype: str | None,
             run: Callable[[Sequence[str]], Any] | None = None) -> dict[str, Any]:
    """What the kernel and the filesystem report now, as a JSON-able dict stored with the
    session. `run(argv) -> proc.Completed` runs the read-only tools (default proc.run; the
    privileged helper passes its own, which logs). Facts that cannot be read go to 'errors'."""
    from disklab.core import proc

    runner = run or (lambda argv: proc.run(argv, timeout=60))
    out: dict[str, Any] = {"device": device, "mountpoint": mountpoint, "fs": fstype,
                           "errors": [], "raw": {}}

    def tool(argv: Sequence[str]) -> str | None:
        try:
            done = runner(argv)
        except DisklabError as e:
            out["errors"].append(f"{' '.join(argv)}: {e}")
            return None
        if done.returncode != 0:
            out["errors"].append(f"{' '.join(argv)}: exit {done.returncode}: "
                                 f"{done.stderr.strip()[-200:]}")
            return None
        out["raw"][" ".join(argv)] = done.stdout
        return str(done.stdout)

    if mountpoint:
        entry = mount_entry(mountpoint)
        if entry is None:
            out["errors"].append(f"{mountpoint} is not mounted")
        else:
            out["mount_options"] = entry_options(entry)
            out["mount_source"] = entry["source"]
            if fstype is None:
                out["fs"] = fstype = entry["fstype"]
            elif entry["fstype"] != fstype:
                out["errors"].append(f"{mountpoint} holds {entry['fstype']}, not {fstype}")
                out["fs"] = entry["fstype"]
    text = tool(getra_argv(device))
    if text is not None and text.strip().isdigit():
        out["readahead"] = int(text.strip())
    else:
        out["readahead"] = read_readahead(device)
    out["scheduler"], _ = read_scheduler(device)
    _readback_fs(out, device, mountpoint, out["fs"], tool)
    return out


def _readback_fs(out: dict[str, Any], device: str, mountpoint: str | None, fstype: str | None,
                 tool: Callable[[Sequence[str]], str | None]) -> None:
    try:
        if fstype in EXT:
            text = tool(("dumpe2fs", "-h", device))
            if text is not None:
                out.update(parse_dumpe2fs(text))
            devno = out.get("journal_devno")
            if devno:
                jdev = devno_path(devno)
                out["journal_device"] = jdev
                jtext = tool(("dumpe2fs", "-h", jdev)) if jdev else None
                if jtext is not None:
                    out["journal_size"] = parse_dumpe2fs(jtext).get("journal_size")
        elif fstype == "xfs":
            text = tool(("xfs_info", mountpoint or device))
            if text is not None:
                out.update(parse_xfs_info(text))
        elif fstype == "btrfs":
            target = mountpoint or device
            text = tool(("btrfs", "filesystem", "show", target))
            if text is not None:
                out.update(parse_btrfs_show(text))
            if mountpoint:
                text = tool(("btrfs", "filesystem", "df", "-b", mountpoint))
                if text is not None:
                    out.update(parse_btrfs_df(text))
    except ParseError as e:
        out["errors"].append(str(e))


# --- asked vs applied ------------------------------------------------------------------------

def mismatches(config: FsConfig, rb: Mapping[str, Any]) -> list[str]:
    """What the read-back shows differently from what the config asked, one sentence each.
    Facts the read-back could not give are not counted as mismatches (they are in 'errors')."""
    out: list[str] = []
    if config.fs is None:
        return out
    try:
        opts = checked(config)
    except ConfigError as e:
        return [str(e)]

    def differ(key: str, asked: Any, got: Any, show: Callable[[Any], str] = str) -> None:
        if got is not None and asked != got:
            out.append(f"{key}: asked {show(asked)}, read back {show(got)}")

    if rb.get("fs") and rb["fs"] != config.fs:
        out.append(f"fs: asked {config.fs}, read back {rb['fs']}")
        return out
    size = format_size
    if config.fs in EXT:
        for key in ("block_size", "inode_size"):
            if key in opts:
                differ(f"mkfs.{key}", opts[key], rb.get(key))
        for key in ("stride", "stripe_width"):
            if key in opts:
                differ(f"mkfs.{key}", opts[key], rb.get(key))
        if "journal_size" in opts:
            differ("mkfs.journal_size", opts["journal_size"], rb.get("journal_size"), size)
        if opts.get("no_journal") and rb.get("has_journal"):
            out.append("mkfs.no_journal: asked no journal, read back has_journal")
        if opts.get("fast_commit") and "features" in rb and not rb.get("fast_commit"):
            out.append("mkfs.fast_commit: asked fast_commit, not among the features read back")
        if "journal_device" in opts and "journal_devno" in rb:
            asked_dev = os.path.realpath(opts["journal_device"])
            differ("mkfs.journal_device", asked_dev, rb.get("journal_device"))
        if "reserved_percent" in opts and rb.get("reserved_percent") is not None and abs(
                rb["reserved_percent"] - opts["reserved_percent"]) > 0.05:
            differ("mkfs.reserved_percent", opts["reserved_percent"], rb["reserved_percent"])
        if "bytes_per_inode" in opts and rb.get("bytes_per_inode") and abs(
                rb["bytes_per_inode"] - opts["bytes_per_inode"]) > opts["bytes_per_inode"] * 0.05:
            differ("mkfs.bytes_per_inode", opts["bytes_per_inode"], rb["bytes_per_inode"])
    elif config.fs == "xfs":
        if "su" in opts:
            differ("mkfs.su", opts["su"], rb.get("sunit"), size)
            differ("mkfs.sw", opts["sw"], rb.get("sw"))
        if "log_size" in opts:
            differ("mkfs.log_size", opts["log_size"], rb.get("log_size"), size)
        if "inode_size" in opts:
            differ("mkfs.inode_size", opts["inode_size"], rb.get("inode_size"))
        if "log_device" in opts and rb.get("log_device") == "internal":
            out.append(f"mkfs.log_device: asked {opts['log_device']}, read back an internal log")
    elif config.fs == "btrfs":
        for key in ("data", "metadata"):
            if key in opts:
                differ(f"mkfs.{key}", opts[key], rb.get(f"{key}_profile"))
    if "mount_options" in rb:
        for i, option in enumerate(config.mount, start=1):
            problem = _mount_mismatch(config.fs, option, rb)
            if problem:
                out.append(f"mount[{i}] {option}: {problem}")
    if config.readahead is not None:
        differ("readahead", config.readahead, rb.get("readahead"))
    if config.scheduler is not None:
        differ("scheduler", config.scheduler, rb.get("scheduler"))
    return out


def _mount_mismatch(fs: str, option: str, rb: Mapping[str, Any]) -> str | None:
    shown: list[str] = list(rb.get("mount_options", ()))
    values: dict[str, str] = {}
    for o in shown:
        name, value = split_mount_option(o)
        values.setdefault(name, value or "")
    name, value = split_mount_option(option)
    missing = "not among the mount options read back"

    def absent(*flags: str) -> str | None:
        bad = [f for f in flags if f in values]
        return f"read back {', '.join(bad)}" if bad else None

    if name == "relatime":
        return absent("noatime", "strictatime") or (None if "relatime" in values else missing)
    if name == "strictatime":
        return absent("noatime", "relatime")
    if name == "delalloc":
        return absent("nodelalloc")
    if name == "barrier":
        return absent("nobarrier")
    if name == "data":
        got = values.get("data", "ordered")
        return None if got == value else f"read back data={got}"
    if name == "commit":
        default = BTRFS_COMMIT_DEFAULT if fs == "btrfs" else EXT_JOURNAL_COMMIT_DEFAULT
        got = values.get("commit", str(default))
        return None if got == value else f"read back commit={got}"
    if name == "errors":
        got = values.get("errors") or rb.get("errors_behavior")
        return None if got is None or got == value else f"read back errors={got}"
    if name == "journal_checksum":
        jf = rb.get("journal_features") or []
        ok = ("journal_checksum" in values or "journal_async_commit" in values
              or any(f.startswith("journal_checksum") for f in jf))
        return None if ok else missing
    if name == "logbsize":
        got = values.get("logbsize")
        try:
            same = got is not None and parse_size(got) == parse_size(value or "")
        except ValueError:
            same = False
        return None if same else f"read back logbsize={got}"
    if name in ("compress", "compress-force"):
        got = values.get(name)
        if got is None:
            return missing
        alg, _, level = (value or "").partition(":")
        galg, _, glevel = got.partition(":")
        if alg != galg or (level and level != glevel):
            return f"read back {name}={got}"
        return None
    if name == "ssd":
        return None if "ssd" in values or "ssd_spread" in values else missing
    if name == "nodiscard":
        return absent("discard")
    if name == "discard":
        return None if "discard" in values else missing
    if value is not None:
        got = values.get(name)
        return None if got == value else (f"read back {name}={got}" if got else missing)
    return None if name in values else missing
