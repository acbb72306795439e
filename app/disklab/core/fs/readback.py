"""What the kernel and the filesystem report after a configuration was applied, and how that
differs from what was asked.

`readback` reads mountinfo, blockdev, sysfs and the filesystem's own tool (dumpe2fs, xfs_info,
btrfs) and never raises: a fact it cannot read is listed under "errors". `mismatches` compares it
with the configuration, one sentence per difference; defaults the kernel does not show
(commit=5, data=ordered) are not differences, and facts the read-back could not give are not
counted.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from disklab.core import proc
from disklab.core.fs.commands import getra_argv
from disklab.core.fs.options import (
    BTRFS_COMMIT_DEFAULT,
    EXT,
    EXT_JOURNAL_COMMIT_DEFAULT,
    MOUNT_OPTIONS,
    checked,
    split_mount_option,
)
from disklab.core.fs.parsers import (
    parse_btrfs_df,
    parse_btrfs_show,
    parse_dumpe2fs,
    parse_xfs_info,
)
from disklab.core.system import sysfs
from disklab.core.system.mountinfo import mount_at
from disklab.core.system.sysfs import read_readahead, read_scheduler
from disklab.core.vocab.errors import ConfigError, DisklabError, ParseError
from disklab.core.vocab.model import FsConfig
from disklab.core.vocab.units import format_size, parse_size


def readback(device: str, mountpoint: str | None, fstype: str | None,
             run: Callable[[Sequence[str]], Any] | None = None) -> dict[str, Any]:
    """What the kernel and the filesystem report now, as a JSON-able dict stored with the
    session. `run(argv) -> proc.Completed` runs the read-only tools (default proc.run; the
    privileged helper passes its own, which logs). Facts that cannot be read go to 'errors'."""
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
        entry = mount_at(mountpoint)
        if entry is None:
            out["errors"].append(f"{mountpoint} is not mounted")
        else:
            out["mount_options"] = entry.option_list()
            out["mount_source"] = entry.source
            if fstype is None:
                out["fs"] = fstype = entry.fstype
            elif entry.fstype != fstype:
                out["errors"].append(f"{mountpoint} holds {entry.fstype}, not {fstype}")
                out["fs"] = entry.fstype
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
            if mountpoint:
                fs_options = ext_options(device)
                if fs_options is not None:
                    out["fs_options"] = fs_options
            devno = out.get("journal_devno")
            if devno:
                name = sysfs.kernel_name(devno)
                jdev = f"/dev/{name}" if name else None
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


EXT_OPTIONS_DIR = "/proc/fs/ext4"


def ext_options(device: str, root: str = EXT_OPTIONS_DIR) -> list[str] | None:
    """The mount options ext4 itself says it runs with (/proc/fs/ext4/DEV/options), or None.

    Why: /proc/mounts shows only what differs from the defaults the VFS knows, so options the
    filesystem applies implicitly (journal_checksum, implied by journal_async_commit or by
    metadata_csum's v3 journal checksums) are missing there and were warned about falsely."""
    name = os.path.basename(os.path.realpath(device))
    try:
        with open(os.path.join(root, name, "options"), encoding="utf-8") as f:
            return [line.strip() for line in f if line.strip()]
    except OSError:
        return None


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
    # what the VFS shows first, then the filesystem's own list (ext4): each fills the other's gaps
    shown: list[str] = [*rb.get("mount_options", ()), *rb.get("fs_options", ())]
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
    if name not in MOUNT_OPTIONS:  # passed through: the kernel took it (the mount worked),
        # and does not show its defaults (user_xattr on ext4), so only a contrary value counts
        got = values.get(name)
        return None if got in (None, "", value) else f"read back {name}={got}"
    if value is not None:
        got = values.get(name)
        return None if got == value else (f"read back {name}={got}" if got else missing)
    return None if name in values else missing
