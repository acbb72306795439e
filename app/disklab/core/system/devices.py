"""Block devices and their safety class: what DiskLab may destroy, and what it must never touch.

Facts come from lsblk (-J -b with explicit columns: its default output may change), after
`udevadm settle` where udev runs, completed from /sys/class/block (holders, partitions, loop
backing files), /proc/self/mountinfo, /proc/swaps and `blkid -p` (authoritative for signatures;
lsblk without a udev database reports no FSTYPE at all).

Classes, most severe first (a device gets the most severe that applies to it or to anything
built on it: its partitions and holders):
  system   holds /, /boot, /usr, /var, /home, swap or DiskLab's library, or is built on one
  mounted  a filesystem on it is mounted
  member   LVM PV, md RAID, LUKS/dm-crypt or ZFS member, or has holders
  has-data a filesystem or partition-table signature, or partitions
  free     nothing found
system, mounted and member are refused for every destructive use with no override; so is a
device whose exclusive open (O_EXCL) fails, since the kernel knows of users lsblk cannot see.

`device_for_path` answers a lighter question, asked at every session start and by the live
monitor: which device (and which disk under a loop device's image) holds a path. It reads sysfs
only, so its Device carries no lsblk facts and no safety class.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from disklab.core import proc
from disklab.core.system import sysfs
from disklab.core.system.mountinfo import existing, filesystem_of, mounts, unescape
from disklab.core.vocab.errors import DisklabError, SafetyError, ToolError
from disklab.core.vocab.units import human_bytes

SAFETY_ORDER = ("system", "mounted", "member", "has-data", "free")
REFUSED = frozenset({"system", "mounted", "member"})
SYSTEM_MOUNTPOINTS = ("/", "/boot", "/boot/efi", "/efi", "/usr", "/var", "/home")
MEMBER_TYPES = {
    "LVM2_member": "LVM physical volume",
    "linux_raid_member": "md RAID member",
    "crypto_LUKS": "LUKS/dm-crypt container",
    "zfs_member": "ZFS pool member",
    "ceph": "Ceph OSD",
    "bcache": "bcache backing device",
    "drbd": "DRBD device",
    "isw_raid_member": "Intel RAID member",
    "ddf_raid_member": "DDF RAID member",
    "VMFS_volume_member": "VMFS volume member",
}
LSBLK_COLUMNS = ("NAME,KNAME,PATH,TYPE,PKNAME,MAJ:MIN,MODEL,SERIAL,WWN,SIZE,ROTA,TRAN,RM,RO,"
                 "LOG-SEC,FSTYPE,PTTYPE,MOUNTPOINTS,SCHED,RA")
SYS_BLOCK = sysfs.SYS_CLASS_BLOCK
_MAX_DEPTH = 8  # loop device on a file on a loop device ... stop somewhere


@dataclass(frozen=True)
class Device:
    """One block device as read now.

    list_devices() and classify() fill every field, with the safety class and its reasons;
    device_for_path() fills path, name, devno, parent and backing from sysfs (safety "": not
    classified)."""

    path: str  # "/dev/vda1"
    name: str  # kernel name (loop0, sda1, dm-0): the name in /proc/diskstats and /sys/class/block
    devno: str = ""  # "major:minor"
    parent: str | None = None  # kernel name of the disk of a partition ("vda" for vda1)
    backing: Device | None = None  # a loop device: the device under its backing file
    type: str = ""  # disk, part, loop, lvm, crypt, raid1, rom, ...
    model: str | None = None
    serial: str | None = None
    wwn: str | None = None
    size: int = 0
    rotational: bool | None = None
    transport: str | None = None
    removable: bool = False
    readonly: bool = False
    log_sec: int | None = None
    partitions: tuple[str, ...] = ()
    fstype: str | None = None
    mountpoints: tuple[str, ...] = ()
    holders: tuple[str, ...] = ()
    scheduler: str | None = None
    readahead_kib: int | None = None
    safety: str = ""  # one of SAFETY_ORDER; "" when not classified
    reasons: tuple[str, ...] = ()
    pttype: str | None = None
    backing_file: str | None = None  # loop devices
    slaves: tuple[str, ...] = field(default=())

    @property
    def refused(self) -> bool:
        return self.safety in REFUSED

    @property
    def unusable(self) -> str | None:
        """Why this device cannot be a destructive target (None: it can, once confirmed).

        More than `refused`: a device of size 0 (an unconfigured zram, a loop device with no
        backing file, a reader with no medium) or a read-only one has nothing to format, so
        it is not offered as usable either; check_destructive refuses them the same way."""
        if self.refused:
            return f"refused: class {self.safety}: {'; '.join(self.reasons)}"
        if self.size == 0 and self.name.startswith("zram"):
            return "size 0: zram not set up (its disksize is 0): nothing to format"
        if self.size == 0:
            return "size 0: nothing to format (no medium, an empty loop device, zram not set up)"
        if self.readonly:
            return "the device is read-only"
        return None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# --- reading the facts -------------------------------------------------------------------------

def _settle() -> None:
    """Let udev finish (partitions just made, a loop just attached) before reading lsblk."""
    if proc.which("udevadm"):
        with contextlib.suppress(DisklabError):
            proc.run(["udevadm", "settle", "--timeout=10"], timeout=15)


def _lsblk() -> list[dict[str, Any]]:
    done = proc.run(["lsblk", "-J", "-b", "-o", LSBLK_COLUMNS], timeout=30)
    if done.returncode != 0:
        raise ToolError(f"lsblk failed: {done.stderr.strip()}")
    rows: dict[str, dict[str, Any]] = {}

    def walk(nodes: list[dict[str, Any]], parent: str | None) -> None:
        for node in nodes:
            kname = node.get("kname") or node.get("name")
            row = rows.setdefault(kname, dict(node, _tree_parents=[]))
            if parent:
                row["_tree_parents"].append(parent)
            walk(node.get("children") or [], kname)

    walk(json.loads(done.stdout).get("blockdevices", []), None)
    return list(rows.values())


def _blkid(path: str) -> dict[str, str]:
    """Signatures as libblkid probes them now (low-level probe, no cache)."""
    try:
        done = proc.run(["blkid", "-p", "-o", "export", path], timeout=20)
    except DisklabError:
        return {}
    out = {}
    for line in done.stdout.splitlines():
        key, eq, value = line.partition("=")
        if eq:
            out[key] = value.replace("\\ ", " ")
    return out


def _swaps() -> set[str]:
    """Kernel names of block devices in use as swap (/proc/swaps)."""
    names = set()
    for line in (sysfs.read(Path("/proc/swaps")) or "").splitlines()[1:]:
        parts = line.split()
        if parts and parts[1:2] == ["partition"]:
            with contextlib.suppress(OSError, SafetyError):
                names.add(kernel_name(unescape(parts[0])))
    return names


def _mounts_by_devno() -> dict[str, list[str]]:
    """mountinfo: 'major:minor' of the source device -> mountpoints (btrfs: through source)."""
    out: dict[str, list[str]] = {}
    for m in mounts():
        keys = {m.devno}
        source = sysfs.node_number(m.source) if m.source.startswith("/dev/") else None
        if source is not None:
            keys.add(source)
        for key in keys:
            out.setdefault(key, []).append(m.mountpoint)
    return out


def kernel_name(path: str) -> str:
    """Any alias of a block device (by-id symlink, /dev/mapper name, a node made elsewhere with
    mknod) -> its kernel name, through the device number. SafetyError if it is not a device."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise SafetyError(f"{path}: {e.strerror}") from None
    if not stat.S_ISBLK(st.st_mode):
        raise SafetyError(f"{path} is not a block device")
    number = sysfs.devno(st.st_rdev)
    name = sysfs.kernel_name(number)
    if name is None:
        raise SafetyError(f"{path}: no block device {number} in /sys")
    return name


def library_device(library_path: str | None) -> tuple[str | None, str | None]:
    """(devno of the filesystem holding the library, its mountpoint): that device is `system`,
    and that mountpoint is never mounted over or unmounted."""
    if not library_path:
        return None, None
    path = Path(library_path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    fs = filesystem_of(str(path))
    src = fs.get("source", "")
    devno = sysfs.node_number(src) if src.startswith("/dev/") else None
    if devno is None:
        with contextlib.suppress(OSError):
            devno = sysfs.devno(os.stat(path).st_dev)
    return devno, fs.get("mountpoint")


@dataclass
class _Raw:
    kname: str
    row: dict[str, Any]
    children: list[str] = field(default_factory=list)  # partitions + holders
    partitions: list[str] = field(default_factory=list)
    holders: list[str] = field(default_factory=list)
    slaves: list[str] = field(default_factory=list)
    mountpoints: list[str] = field(default_factory=list)
    fstype: str | None = None
    pttype: str | None = None
    own: dict[str, list[str]] = field(default_factory=dict)  # class -> reasons of its own


def list_devices(library_path: str | None = None) -> list[Device]:
    """Every block device with its facts and safety class, in lsblk order."""
    return _scan(library_path, None)


def _scan(library_path: str | None, only: str | None) -> list[Device]:
    """All devices; signatures are probed (blkid -p, root only) for every device, or with
    `only` for that device and what is built on it: a probe opens the device, and opening
    other people's devices for nothing delays their loop detaches."""
    _settle()
    rows = _lsblk()
    raws: dict[str, _Raw] = {}
    for row in rows:
        k = row.get("kname") or row["name"]
        raws[k] = _Raw(k, row)
    swaps = _swaps()
    mounts = _mounts_by_devno()
    lib_devno, lib_mount = library_device(library_path)
    for k, r in raws.items():
        sys_dir = SYS_BLOCK / k
        r.holders = sorted(os.listdir(sys_dir / "holders")) if (sys_dir / "holders").is_dir() \
            else []
        r.slaves = sorted(os.listdir(sys_dir / "slaves")) if (sys_dir / "slaves").is_dir() else []
        r.partitions = sorted(p.name for p in sys_dir.iterdir()
                              if (p / "partition").exists()) if sys_dir.is_dir() else []
        r.children = r.partitions + [h for h in r.holders if h not in r.partitions]
        mps = [m for m in (r.row.get("mountpoints") or []) if m]
        mps += mounts.get(r.row.get("maj:min") or "", [])
        r.mountpoints = list(dict.fromkeys(mps))
        r.fstype = r.row.get("fstype")
        r.pttype = r.row.get("pttype")
    probe = set(raws) if only is None else _built_on(only, raws)
    for k, r in raws.items():
        if os.geteuid() == 0 and k in probe and int(r.row.get("size") or 0) > 0:
            probed = _blkid("/dev/" + k)
            r.fstype = probed.get("TYPE") or r.fstype
            r.pttype = probed.get("PTTYPE") or r.pttype
        _own_reasons(r, swaps, lib_devno, lib_mount)
    return [_device(raws[k], raws) for k in raws]


def _built_on(name: str, raws: dict[str, _Raw]) -> set[str]:
    """`name` and everything on it (partitions, holders), recursively."""
    found: set[str] = set()
    stack = [name]
    while stack:
        k = stack.pop()
        if k in found or k not in raws:
            continue
        found.add(k)
        stack += raws[k].children
    return found


def _own_reasons(r: _Raw, swaps: set[str], lib_devno: str | None, lib_mount: str | None) -> None:
    own: dict[str, list[str]] = {c: [] for c in SAFETY_ORDER}
    for mp in r.mountpoints:
        if mp in SYSTEM_MOUNTPOINTS:
            own["system"].append(f"holds {mp}")
        elif mp == "[SWAP]":
            pass  # from /proc/swaps below
        else:
            own["mounted"].append(f"mounted at {mp}")
    if r.kname in swaps or "[SWAP]" in r.mountpoints:
        own["system"].append("active swap")
    if lib_devno and r.row.get("maj:min") == lib_devno:
        own["system"].append(f"holds DiskLab's library ({lib_mount or 'its filesystem'})")
    if r.fstype in MEMBER_TYPES:
        own["member"].append(f"{MEMBER_TYPES[r.fstype]} ({r.fstype} signature)")
    if r.holders:
        own["member"].append(f"has holders: {', '.join(r.holders)}")
    if r.fstype and r.fstype not in MEMBER_TYPES and r.fstype != "swap":
        own["has-data"].append(f"{r.fstype} filesystem signature")
    elif r.fstype == "swap":
        own["has-data"].append("swap signature (not active)")
    if r.pttype:
        own["has-data"].append(f"{r.pttype} partition table")
    if r.partitions:
        own["has-data"].append(f"partitions: {', '.join(r.partitions)}")
    r.own = own


def _device(r: _Raw, raws: dict[str, _Raw]) -> Device:
    reasons: dict[str, list[str]] = {c: list(v) for c, v in r.own.items()}
    # What is built on this device (partitions, holders, recursively) makes it as unsafe.
    seen: set[str] = set()
    stack = list(r.children)
    while stack:
        name = stack.pop()
        if name in seen or name not in raws:
            continue
        seen.add(name)
        child = raws[name]
        kind = "partition" if name in r.partitions or raws[name].row.get("type") == "part" \
            else "holder"
        for cls in ("system", "mounted", "member"):
            for reason in child.own.get(cls, []):
                reasons[cls].append(f"its {kind} {name}: {reason}")
        stack += child.children
    # A holder built on a system device writes to it.
    for s in r.slaves:
        for reason in raws[s].own.get("system", []) if s in raws else []:
            reasons["system"].append(f"built on {s}: {reason}")
    safety = next((c for c in SAFETY_ORDER[:-1] if reasons[c]), "free")
    ordered = tuple(x for c in SAFETY_ORDER[:-1] for x in dict.fromkeys(reasons[c]))
    row = r.row
    kname = r.kname
    backing = sysfs.read(SYS_BLOCK / kname / "loop" / "backing_file")
    parents = row.get("_tree_parents") or []
    return Device(
        path=row.get("path") or f"/dev/{kname}",
        name=kname,
        type=row.get("type") or "",
        model=(row.get("model") or "").strip() or None,
        serial=(row.get("serial") or "").strip() or _sys_serial(kname),
        wwn=row.get("wwn"),
        size=int(row.get("size") or 0),
        rotational=row.get("rota"),
        transport=row.get("tran"),
        removable=bool(row.get("rm")),
        readonly=bool(row.get("ro")),
        log_sec=row.get("log-sec"),
        partitions=tuple(r.partitions),
        fstype=r.fstype,
        mountpoints=tuple(r.mountpoints),
        holders=tuple(r.holders),
        scheduler=row.get("sched"),
        readahead_kib=row.get("ra"),
        safety=safety,
        reasons=ordered,
        parent=row.get("pkname") or (parents[0] if parents and row.get("type") == "part"
                                     else None),
        pttype=r.pttype,
        devno=row.get("maj:min") or "",
        backing_file=backing,
        slaves=tuple(r.slaves),
    )


def _sys_serial(kname: str) -> str | None:
    """Serial from sysfs when lsblk has none (no udev database): virtio, nvme, scsi."""
    for rel in ("serial", "device/serial", "device/vpd_pg80"):
        text = sysfs.read(SYS_BLOCK / kname / rel)
        if text:
            return "".join(ch for ch in text if ch.isprintable()).strip() or None
    return None


# --- classify, identity, the destructive check -----------------------------------------------

def classify(path: str, library_path: str | None = None) -> Device:
    """The device behind any alias of `path`, read now. SafetyError if it is not a device."""
    kname = kernel_name(path)
    for dev in _scan(library_path, kname):
        if dev.name == kname:
            return dev
    raise SafetyError(f"{path} ({kname}) is not listed by lsblk")


def _loop_backing(kname: str) -> tuple[str, int] | None:
    """(backing file, inode) of a loop device, as the kernel holds it (losetup reads the ioctl)."""
    try:
        done = proc.run(["losetup", "--list", "--json", "--output",
                         "NAME,BACK-FILE,BACK-INO", f"/dev/{kname}"], timeout=20)
        rows = json.loads(done.stdout or "{}").get("loopdevices", [])
    except (DisklabError, ValueError):
        rows = []
    back: str | None = None
    ino = 0
    for row in rows:
        if row.get("back-file"):
            back, ino = str(row["back-file"]), int(row.get("back-ino") or 0)
    back = back or sysfs.read(SYS_BLOCK / kname / "loop" / "backing_file")
    if not back:
        return None
    if not ino:  # not root: losetup cannot ask the device; the file's inode is the same one
        with contextlib.suppress(OSError):
            ino = os.stat(back).st_ino
    return back.removesuffix(" (deleted)"), ino


def _serial_of(dev: Device) -> str:
    """The identity's serial: the disk's serial (partitions add their own name), WWN, or for a
    loop device its backing file and inode, so that another image on the same number differs."""
    base = dev.name
    if dev.type == "part" and dev.parent:
        base = dev.parent
    if base.startswith("loop"):
        back = _loop_backing(base)
        if back:
            serial = f"{back[0]}#{back[1]}"
            if base != dev.name:
                serial += f"#{dev.name}"
            return serial.replace(" ", "\\040")
    serial = dev.serial or dev.wwn
    if serial is None and dev.type == "part" and dev.parent:
        serial = _sys_serial(dev.parent)
    if serial and base != dev.name:
        serial = f"{serial}#{dev.name}"
    return (serial or "-").replace(" ", "\\040")


def describe(dev: Device) -> str:
    """How a confirmation names a device for a person: its path, then only the facts known
    (model, serial, size), never "None" for one that is missing."""
    facts = [dev.model or "", f"serial {dev.serial}" if dev.serial else "",
             f"backing file {dev.backing_file}" if dev.backing_file else "",
             human_bytes(dev.size)]
    return f"{dev.path} ({', '.join(f for f in facts if f)})"


def device_note(dev: Device) -> str:
    """What a device list says of a device beside its safety: why it cannot be used, or the
    reasons of its safety class, and for a loop device the file it shows (another program's
    image is data of someone's: "free" alone hid it)."""
    why = dev.unusable
    notes = list(dev.reasons) if dev.refused or why is None else [why]
    if dev.backing_file:
        notes.append(f"loop device of {dev.backing_file}")
    return "; ".join(notes)


def identity_of(dev: Device) -> str:
    return f"{dev.path} {_serial_of(dev)} {dev.size}"


def identity(path: str) -> str:
    """'PATH SERIAL SIZE' of the device as read now: what a plan's `confirm` must say."""
    return identity_of(classify(path))


def _same_identity(confirm: str, now: Device) -> bool:
    parts = confirm.split()
    if len(parts) != 3:
        return False
    path, serial, size = parts
    try:
        same_device = kernel_name(path) == now.name
    except SafetyError:
        same_device = path == now.path
    return same_device and serial == _serial_of(now) and size == str(now.size)


def exclusive_open_error(path: str) -> str | None:
    """Why an O_EXCL open of the device fails (the kernel's own 'in use' test), or None."""
    try:
        fd = os.open(os.path.realpath(path), os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as e:
        if e.errno in (errno.EACCES, errno.EPERM) and os.geteuid() != 0:
            return None  # checked again by the privileged helper, which is root
        why = "in use (mounted, swap, held open exclusively or by a holder)" \
            if e.errno == errno.EBUSY else e.strerror
        return f"exclusive open failed: {why}"
    os.close(fd)
    return None


def check_destructive(path: str, confirm: str | None, library_path: str | None) -> Device:
    """Raise SafetyError unless `path` may be destroyed now; return the device as read.

    Refused with no override: system, mounted, member; a failing O_EXCL open; read-only or empty
    devices. With `confirm`, the device must also match it (path, serial, size) as read now.
    confirm None is for a loop device DiskLab attached itself to its own image; any other
    destructive target needs one (the plan loader and the CLI require it).
    """
    dev = classify(path, library_path)
    where = path if path == dev.path else f"{path} ({dev.path})"
    if dev.safety in REFUSED:
        raise SafetyError(f"{where} refused: class {dev.safety}: {'; '.join(dev.reasons)}")
    if dev.readonly:
        raise SafetyError(f"{where} refused: the device is read-only")
    if dev.size == 0:
        raise SafetyError(f"{where} refused: size 0 (no medium?)")
    busy = exclusive_open_error(dev.path)
    if busy:
        raise SafetyError(f"{where} refused: {busy}")
    if confirm is not None and not _same_identity(confirm, dev):
        raise SafetyError(f"{where} refused: the plan's confirm {confirm!r} does not match the "
                          f"device as read now {identity_of(dev)!r}")
    return dev


# --- the device under a path (sysfs only) ------------------------------------------------------

def device_for_path(path: str) -> Device | None:
    """The block device under a path, or the device itself for a block special file (a raw
    device target): st_dev -> /sys/dev/block/M:m; for an anonymous st_dev (btrfs, 0:xx) the
    mount's source device from mountinfo; a partition names its disk; a loop device names the
    device under its backing file (recursively). None for tmpfs, overlay, NFS and other
    filesystems without a block device of their own. Never raises."""
    try:
        return _device_for_path(path, 0)
    except OSError:
        return None


def _device_for_path(path: str, depth: int) -> Device | None:
    real = existing(path)
    if real is None:
        return None
    st = os.stat(real)
    if stat.S_ISBLK(st.st_mode):  # a raw device target: the device itself
        return _sys_device(sysfs.devno(st.st_rdev), depth)
    number = sysfs.devno(st.st_dev)
    if os.major(st.st_dev) == 0 or sysfs.device_dir(number) is None:
        source = filesystem_of(real).get("source", "")
        if not source.startswith("/"):
            return None  # tmpfs, overlay, proc, a network share...
        found = sysfs.node_number(source)
        if found is None:
            return None
        number = found
    return _sys_device(number, depth)


def _sys_device(number: str, depth: int) -> Device | None:
    real = sysfs.device_dir(number)
    if real is None:
        return None
    name = real.name
    devname = name
    for line in (sysfs.read(real / "uevent") or "").splitlines():
        if line.startswith("DEVNAME="):
            devname = line.split("=", 1)[1]
    disk = real.parent.name if (real / "partition").exists() else None
    backing = None
    target = (sysfs.read(SYS_BLOCK / (disk or name) / "loop" / "backing_file") or "")
    target = target.removesuffix(" (deleted)")
    if target and depth < _MAX_DEPTH:
        with contextlib.suppress(OSError):
            backing = _device_for_path(target, depth + 1)
    return Device(path=f"/dev/{devname}", name=name, devno=number, parent=disk, backing=backing)
