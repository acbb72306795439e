"""Partitions: split a device into equal GPT partitions (several targets on one LUN, as the
RAID study did), after the destructive checks a mkfs makes, and make the kernel forget them."""

from __future__ import annotations

from pathlib import Path

from disklab.core.fs.commands import partition_argvs
from disklab.core.helper_client.protocol import Partition, Partitioned, Unpartition, Unpartitioned
from disklab.core.root_helper.filesystems import destructive_target
from disklab.core.root_helper.state import TIMEOUTS, Session, device_of
from disklab.core.system import devices
from disklab.core.vocab.errors import ConfigError, RequestError, SafetyError, ToolError


def partitions_of(kname: str) -> list[str]:
    """/dev paths of the partitions the kernel shows of a disk (sysfs), in number order."""
    base = Path("/sys/class/block") / kname
    found = []
    for entry in base.glob(f"{kname}*"):
        number = entry / "partition"
        if number.exists():
            found.append((int(number.read_text()), f"/dev/{entry.name}"))
    return [path for _n, path in sorted(found)]


def partition(s: Session, r: Partition) -> Partitioned:
    """sgdisk writes the table and partx tells the kernel; the partitions' paths and
    identities (for their mkfs's confirm) come back, and they are the helper's to format."""
    device, kname = destructive_target(s, r.device, r.confirm, r.library_path, "partitioning")
    sectors = int((Path("/sys/class/block") / kname / "size").read_text())
    try:  # the very commands `disklab plan show` prints (core.fs.commands.partition_argvs)
        wipe, zap, make = partition_argvs(device, sectors * 512, r.count)
    except ConfigError as e:
        raise RequestError(str(e)) from None
    s.run(wipe, timeout=TIMEOUTS["wipefs"])
    s.run(zap, check=False)  # no table yet: exit 2
    s.run(make)
    s.run(("partx", "--update", device), check=False)  # may already be known
    parts = partitions_of(kname)
    if len(parts) != r.count:
        s.run(("partx", "--add", device), check=False)
        parts = partitions_of(kname)
    if len(parts) != r.count:
        raise ToolError(f"{r.device}: the kernel shows {len(parts)} partitions after sgdisk, "
                        f"not {r.count}")
    s.held.owned |= {kname, *(p.removeprefix("/dev/") for p in parts)}
    s.save()
    return Partitioned(parts, {p: devices.identity(p) for p in parts})


def close(s: Session) -> None:
    """The end of the session: the kernel forgets the partitions of the loop devices it made
    (a detached loop device keeps partitions partx added)."""
    for kname, loop in list(s.held.loops.items()):
        if partitions_of(kname) and not any(devices.classify(p).mountpoints
                                            for p in partitions_of(kname)):
            s.run(("partx", "--delete", loop.device), check=False)


def unpartition(s: Session, r: Unpartition) -> Unpartitioned:
    """Make the kernel forget a device's partitions (after their filesystems are unmounted):
    the loop device of an image can then be detached."""
    device, kname = device_of(r.device)
    if not s.owns(kname):
        raise SafetyError(f"{r.device}: not a device this helper partitioned")
    for part in partitions_of(kname):
        if devices.classify(part).mountpoints:
            raise SafetyError(f"{part} is still mounted; unmount first")
    s.run(("partx", "--delete", device), check=False)
    return Unpartitioned(partitions_of(kname))
