"""The options a filesystem configuration may give, and their checks.

A configuration is only worth comparing if it is what the kernel really applied, so every option
is checked before anything runs: an unknown option, a bad value, an option of another
filesystem, options that contradict each other or that the kernel would refuse together. Every
problem is reported at once, keyed as the plan names it ('config[2].mkfs.journal_size'), so the
plan loader, the privileged helper and the Configurations page show the same words at the same
place. The options are declared (kind, filesystems, valid values or range, a plain name), not
checked by code the window cannot read: the Configurations page builds its form from these
tables. To offer a new option: add it to MKFS_OPTIONS or MOUNT_OPTIONS, its argv to
fs.commands, and its read-back comparison to fs.readback.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from disklab.core.fs import cache
from disklab.core.vocab.errors import ConfigError
from disklab.core.vocab.model import FsConfig
from disklab.core.vocab.units import KiB, MiB, format_size, parse_size

EXT = ("ext2", "ext3", "ext4")
JOURNALED_EXT = ("ext3", "ext4")
FILESYSTEMS = (*EXT, "xfs", "btrfs")
SCHEDULERS = ("none", "mq-deadline", "kyber", "bfq")
BTRFS_PROFILES = ("single", "dup", "raid0", "raid1", "raid1c3", "raid1c4", "raid10", "raid5",
                  "raid6")
CONFIG_KEYS = ("label", "fs", "mkfs", "mount", "readahead", "scheduler", "cache")
EXT_JOURNAL_COMMIT_DEFAULT = 5  # jbd2's default commit interval: mountinfo omits commit=5
BTRFS_COMMIT_DEFAULT = 30
MAX_READAHEAD = 1 << 21  # sectors (1 GiB): far above any useful value, catches unit mix-ups

Problems = list[tuple[str, str]]


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
    # the superblock holds the stride in 16 bits and the stripe width in 32
    "stride": MkfsOption("int", EXT, "mke2fs -E stride= (filesystem blocks)", minimum=1,
                         maximum=2**16 - 1),
    "stripe_width": MkfsOption("int", EXT, "mke2fs -E stripe_width= (filesystem blocks)",
                               minimum=1, maximum=2**32 - 1),
    "fast_commit": MkfsOption("bool", ("ext4",), "mke2fs -O fast_commit"),
    "lazy_init": MkfsOption("bool", EXT, "lazy inode table/journal init (off by default: the "
                            "background zeroing would disturb the measurement)"),
    "su": MkfsOption("size", ("xfs",), "mkfs.xfs -d su= (with sw)", minimum=4096,
                     maximum=2**31 - 4096, multiple=4096),
    "sw": MkfsOption("int", ("xfs",), "mkfs.xfs -d sw= (with su)", minimum=1,
                     maximum=2**31 - 1),
    # XFS_MAX_LOG_BYTES: mkfs.xfs refuses a larger log
    "log_size": MkfsOption("size", ("xfs",), "mkfs.xfs -l size= (at least 64 MiB)",
                           minimum=64 * MiB, maximum=2136997888, multiple=4096),
    "log_device": MkfsOption("path", ("xfs",), "mkfs.xfs -l logdev= (and mount -o logdev=)"),
    "data": MkfsOption("choice", ("btrfs",), "mkfs.btrfs -d", choices=BTRFS_PROFILES),
    "metadata": MkfsOption("choice", ("btrfs",), "mkfs.btrfs -m", choices=BTRFS_PROFILES),
}
# The mkfs options naming a second device that applying the configuration writes to (wipefs and
# mke2fs -O journal_dev, mkfs.xfs -l logdev=): each is destroyed like the target, so each needs
# its own confirm, given as `journal_device = { path = "/dev/sdc1", confirm = "PATH SERIAL SIZE" }`.
DEVICE_OPTIONS = tuple(name for name, opt in MKFS_OPTIONS.items() if opt.kind == "path")
DEVICE_KEYS = ("path", "confirm")


@dataclass(frozen=True)
class MountOption:
    """A mount option, declared so that the plan check, the helper and the Configurations page
    read the same table: which filesystems take it, what kind of value it has and which values
    are valid, and, for the options the page gives a field of their own, a plain name.

    kind: "flag" (no '=value'), "choice" (one of `choices`), "int" (minimum..maximum), or
    "text" (checked by `custom`; `choices` are then the values offered, not the only ones)."""

    fs: tuple[str, ...]
    kind: str = "flag"
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    label: str = ""  # a plain name: the Configurations page gives the option its own field
    custom: Callable[[str], str | None] | None = None  # kind "text": an error, or None

    def problem(self, v: str) -> str | None:
        """Why `v` is not a valid value of this option; None when it is."""
        if self.kind == "choice":
            return None if v in self.choices else f"must be one of {', '.join(self.choices)}"
        if self.kind == "int":
            lo, hi = self.minimum, self.maximum
            # the length first: int() of a 5000-digit string raises, and no bound is that long
            if not v.isdigit() or len(v) > 18 or not lo <= int(v) <= hi:  # type: ignore[operator]
                return f"must be a whole number from {lo} to {hi}"
            return None
        return self.custom(v) if self.custom is not None else None


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
        if not re.fullmatch(r"-?\d{1,4}", level) or not span[0] <= int(level) <= span[1]:
            return f"{alg} level must be from {span[0]} to {span[1]}"
    return None


ANY = FILESYSTEMS
COMPRESSIONS = ("zstd", "zstd:1", "zstd:3", "zlib", "lzo", "no")  # offered; zstd:N, zlib:N too
MOUNT_OPTIONS: dict[str, MountOption] = {
    "data": MountOption(JOURNALED_EXT, "choice", ("journal", "ordered", "writeback"),
                        label="journal mode (data=)"),
    "noatime": MountOption(ANY, label="noatime (no access-time writes)"),
    "relatime": MountOption(ANY),
    "strictatime": MountOption(ANY),
    "nodiratime": MountOption(ANY),
    "lazytime": MountOption(ANY),
    "discard": MountOption(("ext4", "xfs", "btrfs")),
    "nodiscard": MountOption(("ext4", "xfs", "btrfs")),
    "nodelalloc": MountOption(("ext4",), label="nodelalloc (no delayed allocation)"),
    "delalloc": MountOption(("ext4",)),
    "commit": MountOption((*JOURNALED_EXT, "btrfs"), "int", minimum=0, maximum=86400,
                          label="commit interval (s)"),
    "journal_checksum": MountOption(("ext4",)),
    "journal_async_commit": MountOption(("ext4",)),
    "barrier": MountOption((*JOURNALED_EXT, "btrfs")),
    "nobarrier": MountOption((*JOURNALED_EXT, "btrfs")),
    "errors": MountOption(EXT, "choice", ("continue", "remount-ro")),
    "logbsize": MountOption(("xfs",), "text", ("16k", "32k", "64k", "128k", "256k"),
                            custom=_logbsize),
    "logbufs": MountOption(("xfs",), "int", minimum=2, maximum=8),
    "largeio": MountOption(("xfs",)),
    "compress": MountOption(("btrfs",), "text", COMPRESSIONS, custom=_compress,
                            label="compression"),
    "compress-force": MountOption(("btrfs",), "text", COMPRESSIONS, custom=_compress),
    "nodatacow": MountOption(("btrfs",)),
    "nodatasum": MountOption(("btrfs",)),
    "ssd": MountOption(("btrfs",)),
    "nossd": MountOption(("btrfs",)),
    "space_cache": MountOption(("btrfs",), "choice", ("v1", "v2")),
    "nospace_cache": MountOption(("btrfs",)),
}
# the options the Configurations page gives a field of their own, in this order
MOUNT_FIELDS = tuple(name for name, opt in MOUNT_OPTIONS.items() if opt.label)


# Options DiskLab's table does not know are passed through to the kernel, which checks them at
# mount time (the data=journal study's user_xattr, say); only a plain token goes through, and
# never one of mount(8)'s own options (they change what is mounted, not how) nor one that names
# a device or a file (those would make the kernel open something DiskLab did not check).
_PASSTHROUGH = re.compile(r"^[A-Za-z][A-Za-z0-9_.+-]{0,63}(?:=[A-Za-z0-9_.:+-]{1,128})?$")
MOUNT8_OPTIONS = frozenset({
    "remount", "bind", "rbind", "move", "loop", "offset", "sizelimit", "helper", "defaults",
    "user", "users", "owner", "group", "nouser", "nofail", "auto", "noauto", "_netdev", "ro",
    "rw", "comment", "encryption", "no-canonicalize", "fstab", "uhelper", "context",
    "fscontext", "defcontext", "rootcontext", "verity.hashdevice", "verity.roothash",
})
DEVICE_MOUNT_OPTIONS = frozenset({"journal_path", "journal_dev", "logdev", "rtdev", "device",
                                  "usrjquota", "grpjquota", "prjjquota", "journal_ioprio"})


# What no mount DiskLab makes may carry, whoever asks: its root helper mounts with nosuid,
# nodev and noexec (fs.commands.FORCED_MOUNT_OPTIONS), so that no set-user-ID file, device node
# or program on a filesystem it mounts takes effect, and with no error behaviour that stops the
# kernel (a filesystem error must never be a panic on demand).
REFUSED_MOUNT_OPTIONS: dict[str, str] = {
    "suid": "set-user-ID files on a mounted test filesystem would give root; DiskLab mounts "
            "with nosuid",
    "dev": "device nodes on a mounted test filesystem would open any device; DiskLab mounts "
           "with nodev",
    "exec": "programs on a mounted test filesystem never run; DiskLab mounts with noexec",
    "errors=panic": "a filesystem error would stop the kernel; use errors=remount-ro or "
                    "errors=continue",
    "fatal_errors": "btrfs fatal_errors=panic/bug stops the kernel on an error",
    "abort": "ext4's abort is a debugging option that shuts the filesystem down",
}


def refused_mount_option(option: str) -> str | None:
    """Why a mount option is never accepted (REFUSED_MOUNT_OPTIONS), or None."""
    name, value = split_mount_option(option)
    why = REFUSED_MOUNT_OPTIONS.get(option) or REFUSED_MOUNT_OPTIONS.get(name)
    if why is None and name == "errors" and value == "panic":
        why = REFUSED_MOUNT_OPTIONS["errors=panic"]
    return f"{option!r} is refused: {why}" if why else None


def passthrough_problem(option: str) -> str | None:
    """Why an option the table does not know cannot be passed through; None when it can."""
    name, _value = split_mount_option(option)
    if name in MOUNT8_OPTIONS or name.lower().startswith("x-"):
        return (f"{name!r} is an option of mount(8) itself, not of the filesystem: DiskLab "
                "mounts read-write, once, on the device it made")
    if name in DEVICE_MOUNT_OPTIONS:
        return (f"{name!r} names a device or file, which DiskLab passes only through the "
                "options it checks (mkfs.journal_device, mkfs.log_device)")
    if not _PASSTHROUGH.match(option):
        return (f"{option!r} is not a plain mount option (letters, digits, _ . + - and one "
                "'=value' without commas, spaces or slashes): it cannot be passed through")
    return None


def passthrough_options(config: FsConfig) -> list[str]:
    """The mount options of `config` that DiskLab's table does not know: passed to the kernel
    as they are, and checked by it at mount time."""
    return [o for o in config.mount if isinstance(o, str)
            and split_mount_option(o.strip())[0] not in MOUNT_OPTIONS]


def mount_refusal(config: FsConfig, error: str, kernel_log: Sequence[str]) -> ConfigError | None:
    """A failed mount of a configuration with pass-through options, as the configuration
    error it is: the options named, with the kernel's own words (its log lines from the mount,
    else mount's message). None when the configuration has no pass-through option (the
    failure is then something else, reported as it is)."""
    given = passthrough_options(config)
    if not given:
        return None
    names = [split_mount_option(o)[0] for o in given]
    said = [line.strip() for line in kernel_log
            if any(n in line for n in names) or "mount option" in line.lower()]
    why = "; ".join(said[-3:]) if said else error.strip()[-300:]
    index = {o: i for i, o in enumerate(config.mount, start=1)}
    return ConfigError([(f"mount[{index[o]}]", f"the kernel refused the mount with {o!r}, "
                         f"which DiskLab passed through unchecked: {why}") for o in given])


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
        if not math.isfinite(value):  # TOML has nan and inf: no range check catches nan
            raise ValueError(f"{value!r} is not a finite number")
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


def journalled_data_seconds(fs: str | None, mount: tuple[str, ...]) -> int | None:
    """Seconds of written data an ext3/ext4 mount with data=journal may hold in memory before
    its journal commits (its commit interval), or None for any other data mode.

    Why: with data=journal every written page goes through the journal and stays pinned in the
    page cache until the transaction commits; with commit=300 that is up to five minutes of
    writes, which a memory cgroup (page_cache_limit) cannot reclaim, so the kernel's OOM killer
    ends the tool instead of the kernel writing back."""
    if fs not in ("ext3", "ext4"):
        return None
    values = dict(split_mount_option(o) for o in mount)
    if values.get("data") != "journal":
        return None
    commit = values.get("commit")
    return int(commit) if commit and commit.isdigit() else EXT_JOURNAL_COMMIT_DEFAULT


def _check_mount_option(fs: str, option: Any) -> str | None:
    if not isinstance(option, str) or not option.strip():
        return f"{option!r} is not a mount option (a string such as 'noatime' or 'commit=30')"
    refused = refused_mount_option(option.strip())
    if refused:
        return refused
    name, value = split_mount_option(option.strip())
    spec = MOUNT_OPTIONS.get(name)
    if spec is None:
        if name == "logdev":
            return "logdev comes from mkfs.log_device; do not give it as a mount option"
        near = difflib.get_close_matches(name, MOUNT_OPTIONS, n=1, cutoff=0.85)
        if near:  # a misspelt known option would reach the kernel as something else
            return (f"unknown mount option {option!r} for {fs}: did you mean {near[0]!r}? "
                    "(options DiskLab does not know are passed to the kernel, but not one "
                    "that looks like a misspelling of one it knows)")
        return passthrough_problem(option.strip())  # the kernel checks it at mount time
    if fs not in spec.fs:
        return f"{name!r} is a mount option of {_fs_list(spec.fs)}, not of {fs}"
    if spec.kind == "flag":
        if value is not None:
            return f"{name!r} takes no value"
        return None
    if value is None:
        return f"{name!r} needs a value ({name}=...)"
    error = spec.problem(value)
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
    if "cache" in table:  # dm-cache under the filesystem (the data=journal study's SSD cache)
        found = cache.table_problems(table["cache"])
        problems += [(f"{where}.{k}", m) for k, m in found]
        if not found:
            problems.append((f"{where}.cache", f"cannot put a dm-cache under this "
                                               f"configuration: {cache.unavailable()}"))
    label = table.get("label")
    fs = table.get("fs")
    if fs is not None and not isinstance(fs, str):
        problems.append((f"{where}.fs", f"{fs!r} is not a filesystem name"))
        fs = None
    mkfs_raw = table.get("mkfs", {})
    if not isinstance(mkfs_raw, Mapping):
        problems.append((f"{where}.mkfs", "mkfs must be a table, e.g. { journal_size = '16m' }"))
        mkfs_raw = {}
    mkfs_raw, confirms, device_problems = _split_devices(mkfs_raw, f"{where}.mkfs")
    problems += device_problems
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
        confirms=confirms,
    )
    if label is not None and not isinstance(label, str):
        problems.append((f"{where}.label", f"{label!r} is not a string"))
    problems += [(f"{where}.{k}", m) for k, m in validate(config)]
    if problems:
        return None, problems
    mkfs = {k: convert_mkfs_value(k, v) for k, v in config.mkfs.items()}
    return FsConfig(config.label, config.fs, mkfs, config.mount, config.readahead,
                    config.scheduler, confirms), []


def _split_devices(mkfs: Mapping[str, Any], where: str
                   ) -> tuple[dict[str, Any], dict[str, str], Problems]:
    """A device-valued option may be a table { path, confirm }: (mkfs with its path, the
    confirms by option name, problems). A bare path stays as it is; the plan loader and the
    privileged helper refuse it without a confirm."""
    out: dict[str, Any] = dict(mkfs)
    confirms: dict[str, str] = {}
    problems: Problems = []
    for name in DEVICE_OPTIONS:
        value = mkfs.get(name)
        if not isinstance(value, Mapping):
            continue
        key = f"{where}.{name}"
        unknown = [k for k in value if k not in DEVICE_KEYS]
        if unknown:
            problems.append((key, f"unknown key {unknown[0]!r} (known: path, confirm)"))
        path, confirm = value.get("path"), value.get("confirm")
        out[name] = path
        if path is None:
            problems.append((key, f'needs path = "/dev/..." ({name} = {{ path = "/dev/sdc1", '
                                  'confirm = "PATH SERIAL SIZE" }})'))
            del out[name]
        if confirm is not None:
            if isinstance(confirm, str) and confirm.strip():
                confirms[name] = confirm.strip()
            else:
                problems.append((key, f"confirm {confirm!r} is not a 'PATH SERIAL SIZE' string"))
    return out, confirms, problems


def device_options(config: FsConfig) -> dict[str, str]:
    """The second devices applying `config` writes to, by mkfs option name (journal_device of
    ext3/ext4, log_device of xfs): each is wiped and formatted like the target."""
    return {name: str(config.mkfs[name]) for name in DEVICE_OPTIONS
            if config.mkfs.get(name) and config.fs in MKFS_OPTIONS[name].fs}


def config_to_dict(config: FsConfig) -> dict[str, Any]:
    """The JSON/TOML form of a configuration (what config_from_toml reads)."""
    out: dict[str, Any] = {"label": config.label}
    if config.fs is not None:
        out["fs"] = config.fs
    if config.mkfs:
        out["mkfs"] = dict(config.mkfs)
        for name, confirm in config.confirms.items():
            if name in out["mkfs"]:
                out["mkfs"][name] = {"path": out["mkfs"][name], "confirm": confirm}
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
