"""Parsers of what the filesystem tools report: dumpe2fs, xfs_info (and mkfs.xfs), btrfs.

Pure functions of the tool's text, so that each is tested on stored outputs (tests/fixtures);
each raises ParseError naming the line and what was expected when the text does not read as the
tool's. Sizes come out in bytes. (mountinfo and the scheduler file are the kernel's formats:
core.system reads them.)
"""

from __future__ import annotations

import re
from typing import Any

from disklab.core.system import sysfs
from disklab.core.vocab.errors import ParseError
from disklab.core.vocab.units import KiB, MiB

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
        out["journal_devno"] = sysfs.devno(devno)
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
