"""The refusal matrix of core.system.devices, on real loop devices: every in-use device is
refused for any destructive use, by the library and by the privileged helper, and a clean one
is accepted.

Each test builds its own images and attaches them with `losetup --find`; teardown kills what it
started, swaps off, unmounts, and detaches only the loop devices backed by its own images
(`losetup -j IMAGE`), whatever the test did. The machine's root disk is only classified.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from disklab.core import proc
from disklab.core.helper_client import Privileged
from disklab.core.system import devices
from disklab.core.system.mountinfo import filesystem_of
from disklab.core.vocab.errors import SafetyError
from tests.helpers import Loops, ask, sh

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for loop devices and mount"),
]


@pytest.fixture
def loops(tmp_path: Path) -> Iterator[Loops]:
    for tool in ("losetup", "mkfs.ext4", "blkid", "lsblk"):
        if proc.which(tool) is None:
            pytest.fail(f"{tool} is not installed")
    box = Loops(tmp_path)
    try:
        yield box
    finally:
        box.cleanup()


def refused(path: str, library: str | None = None, confirm: str | None = None) -> str:
    with pytest.raises(SafetyError) as e:
        devices.check_destructive(path, confirm, library)
    return str(e.value)


def write_at(image: Path, offset: int, data: bytes) -> None:
    with image.open("r+b") as f:
        f.seek(offset)
        f.write(data)


# --- refused ---------------------------------------------------------------------------------

def test_mounted_filesystem_is_refused(loops: Loops) -> None:
    dev = loops.device("mounted")
    mnt = loops.mount(dev, "mnt")
    info = devices.classify(dev)
    assert info.safety == "mounted"
    assert f"mounted at {mnt}" in info.reasons
    assert "class mounted" in refused(dev)


def test_disk_with_a_mounted_partition_is_refused(loops: Loops) -> None:
    image = loops.image("parted")
    mbr = bytearray(512)  # one Linux partition from sector 2048 to the end (no sfdisk here)
    mbr[446:462] = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048,
                               (64 << 20) // 512 - 2048)
    mbr[510:512] = b"\x55\xaa"
    write_at(image, 0, bytes(mbr))
    dev = loops.attach(image, partscan=True)
    part = f"{dev}p1"
    if not os.path.exists(part):  # a kernel without partition parsers: partx adds it
        sh("partx", "-a", dev)
    mnt = loops.mount(part, "mnt")
    disk = devices.classify(dev)
    assert disk.safety == "mounted"
    assert disk.partitions == (Path(part).name,)
    assert f"its partition {Path(part).name}: mounted at {mnt}" in disk.reasons
    assert disk.pttype == "dos"
    assert "class mounted" in refused(dev)
    assert "class mounted" in refused(part)


def test_active_swap_is_refused_as_system(loops: Loops) -> None:
    dev = loops.device("swap")
    sh("mkswap", dev)
    sh("swapon", dev)
    loops.swaps.append(dev)
    info = devices.classify(dev)
    assert info.safety == "system"
    assert "active swap" in info.reasons
    assert "class system" in refused(dev)


def test_lvm_pv_made_by_pvcreate_is_refused(loops: Loops) -> None:
    if proc.which("pvcreate") is None:
        pytest.skip("lvm2 is not installed (pvcreate)")
    dev = loops.device("pv")
    sh("pvcreate", "-ff", "-y", dev)
    try:
        assert devices.classify(dev).safety == "member"
        assert "class member" in refused(dev)
    finally:
        sh("pvremove", "-ff", "-y", dev, check=False)


def test_md_member_made_by_mdadm_is_refused(loops: Loops) -> None:
    if proc.which("mdadm") is None:
        pytest.skip("mdadm is not installed")
    if not Path("/proc/mdstat").exists():
        pytest.skip("this kernel has no md (software RAID) driver: /proc/mdstat is missing")
    a, b = loops.device("md-a"), loops.device("md-b")
    md = "/dev/md/disklab-test"
    sh("mdadm", "--create", md, "--run", "--level=1", "--raid-devices=2", "--metadata=1.2", a, b)
    try:
        info = devices.classify(a)
        assert info.safety == "member"
        assert "class member" in refused(a)
    finally:
        sh("mdadm", "--stop", md, check=False)
        sh("mdadm", "--zero-superblock", a, b, check=False)


def test_lvm_signature_is_refused_as_member(loops: Loops) -> None:
    """An LVM2 physical volume label as pvcreate writes it (sector 1, CRC as libblkid checks):
    the member class comes from the signature, whether or not lvm2 is installed."""
    image = loops.image("lvm-label", "16M")
    label = bytearray(512)
    label[0:8] = b"LABELONE"
    struct.pack_into("<QII", label, 8, 1, 0, 32)  # sector, crc (below), offset of the PV header
    label[24:32] = b"LVM2 001"
    label[32:64] = b"DiskLabTestPVuuid0123456789abcde"
    struct.pack_into("<Q", label, 64, 16 << 20)
    init = 0xF597A6CF  # LVM's CRC32: no final inversion, this initial value
    crc = ~zlib.crc32(bytes(label[20:]), ~init & 0xFFFFFFFF) & 0xFFFFFFFF
    struct.pack_into("<I", label, 16, crc)
    write_at(image, 512, bytes(label))
    dev = loops.attach(image)
    info = devices.classify(dev)
    assert info.fstype == "LVM2_member"
    assert info.safety == "member"
    assert "LVM physical volume (LVM2_member signature)" in info.reasons
    assert "class member" in refused(dev)


def test_luks_container_is_refused_as_member(loops: Loops) -> None:
    image = loops.image("luks", "16M")
    header = bytearray(592)  # a LUKS1 header: magic, version 1, cipher, mode, hash, UUID
    header[0:6] = b"LUKS\xba\xbe"
    struct.pack_into(">H", header, 6, 1)
    header[8:11] = b"aes"
    header[40:51] = b"xts-plain64"
    header[72:78] = b"sha256"
    header[168:204] = b"12345678-1234-1234-1234-123456789abc"
    write_at(image, 0, bytes(header))
    dev = loops.attach(image)
    info = devices.classify(dev)
    assert info.fstype == "crypto_LUKS" and info.safety == "member"
    assert "class member" in refused(dev)


def test_the_librarys_filesystem_is_refused_as_system(loops: Loops) -> None:
    dev = loops.device("library")
    mnt = loops.mount(dev, "lib")
    library = str(mnt / "disklab" / "library.sqlite3")  # not even created yet
    info = devices.classify(dev, library_path=library)
    assert info.safety == "system"
    assert f"holds DiskLab's library ({mnt})" in info.reasons
    assert "DiskLab's library" in refused(dev, library)


def test_aliases_of_a_refused_device_are_refused(loops: Loops, tmp_path: Path) -> None:
    dev = loops.device("aliased")
    loops.mount(dev, "mnt")
    link = tmp_path / "by-id-usb-DiskLab_Test_0001"  # as udev names it in /dev/disk/by-id
    link.symlink_to(dev)
    node = tmp_path / "mapper-alias"  # a second node of the same device, like /dev/mapper names
    st = os.stat(dev)
    os.mknod(node, 0o600 | 0o060000, st.st_rdev)
    for alias in (str(link), str(node)):
        assert devices.kernel_name(alias) == Path(dev).name
        info = devices.classify(alias)
        assert info.path == dev and info.safety == "mounted"
        message = refused(alias)
        assert "class mounted" in message and dev in message


def test_exclusive_open_held_by_another_process_is_refused(loops: Loops) -> None:
    dev = loops.device("held")
    holder = loops.start([sys.executable, "-c",
                          "import os, sys, time\n"
                          "fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)\n"
                          "print('held', flush=True)\n"
                          "time.sleep(120)\n", dev])
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    assert devices.classify(dev).safety == "free"  # lsblk cannot see it; the kernel can
    assert "exclusive open failed: in use" in refused(dev)


def test_lazily_unmounted_busy_filesystem_is_refused(loops: Loops) -> None:
    dev = loops.device("lazy")
    mnt = loops.mount(dev, "mnt")
    loops.start(["sleep", "120"], cwd=str(mnt))  # keeps the filesystem busy
    sh("umount", "-l", str(mnt))
    info = devices.classify(dev)
    assert not info.mountpoints and info.safety == "has-data"  # gone from mountinfo
    assert "exclusive open failed" in refused(dev)


def test_the_root_disk_is_system(loops: Loops) -> None:
    """Classified only: no destructive call is ever made on the machine's own disk."""
    source = filesystem_of("/").get("source", "")
    try:
        kname = devices.kernel_name(source)
    except SafetyError:
        pytest.skip(f"/ is on {source!r}, not a block device (a container?)")
    info = devices.classify(source)
    assert info.name == kname and info.safety == "system"
    assert "holds /" in info.reasons
    listed = {d.name: d for d in devices.list_devices()}
    assert listed[kname].safety == "system"


def test_devices_cli_lists_classes_as_json(loops: Loops, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    import argparse

    from disklab.cli.devices import devices as devices_cmd

    dev = loops.device("listed")
    assert devices_cmd(argparse.Namespace(json=True, library=None)) == 0
    rows = {row["path"]: row for row in json.loads(capsys.readouterr().out)["devices"]}
    assert rows[dev]["safety"] == "free" and rows[dev]["size"] == 64 << 20
    assert rows[dev]["confirm"] == devices.identity(dev)  # exactly what a plan's confirm says
    root = filesystem_of("/").get("source", "")
    if root in rows:
        assert rows[root]["safety"] == "system"
    assert devices_cmd(argparse.Namespace(json=False, library=None)) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].split() == ["PATH", "SIZE", "MODEL", "FSTYPE", "MOUNTPOINTS",
                                             "SAFETY", "REASONS"]
    assert any(line.startswith(dev + " ") and " free " in line for line in table.splitlines())
    assert f'  {dev}: confirm = "{devices.identity(dev)}"' in table.splitlines()


def test_not_a_block_device_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain.img"
    plain.write_bytes(b"\0" * 4096)
    assert "not a block device" in refused(str(plain))
    assert "not a block device" in refused(str(tmp_path))


def test_the_helper_rechecks_every_target_itself(loops: Loops, tmp_path: Path) -> None:
    dev = loops.device("helper")
    mnt = loops.mount(dev, "mnt")
    link = tmp_path / "alias"
    link.symlink_to(dev)
    confirm = devices.identity(dev)
    with Privileged() as helper:
        for op, args, why in (
            ("wipefs", {"device": dev}, "needs the plan's confirm"),
            ("wipefs", {"device": dev, "confirm": confirm}, "class mounted"),
            ("mkfs", {"device": dev, "confirm": confirm,
                      "config": {"label": "x", "fs": "ext4"}}, "class mounted"),
            ("mount", {"device": dev, "mountpoint": f"{helper.workdir}/disklab-mnt-again",
                       "config": {"label": "x", "fs": "ext4"}}, "its own mkfs made"),
        ):
            with pytest.raises(SafetyError) as e:
                ask(helper, op, **args)
            assert why in str(e.value)
            assert e.value.ran == []  # type: ignore[attr-defined] - nothing ran
        with pytest.raises(Exception, match="not a /dev path"):  # a link a user could change
            ask(helper, "mkfs", device=str(link), config={"label": "x", "fs": "ext4"})
        with pytest.raises(SafetyError, match="not a mount this helper made"):
            ask(helper, "umount", mountpoint="/")
        with pytest.raises(Exception, match="unknown operation"):
            ask(helper, "run_shell", command="rm -rf /")
    assert os.path.ismount(mnt)


# --- accepted, and the identity ---------------------------------------------------------------

def test_clean_loop_device_is_accepted(loops: Loops) -> None:
    dev = loops.device("clean")
    info = devices.check_destructive(dev, devices.identity(dev), None)
    assert info.safety == "free" and info.reasons == ()
    with Privileged() as helper:
        ran = ask(helper, "wipefs", device=dev, confirm=devices.identity(dev))["ran"]
    assert ran[0]["argv"] == ["wipefs", "--all", "--force", dev]
    assert ran[0]["returncode"] == 0


def test_has_data_differs_from_free_and_is_accepted_with_confirm(loops: Loops) -> None:
    dev = loops.device("data")
    assert devices.classify(dev).safety == "free"
    sh("mkfs.ext4", "-q", "-F", dev)
    info = devices.classify(dev)
    assert info.safety == "has-data" and info.fstype == "ext4"
    assert info.reasons == ("ext4 filesystem signature",)
    assert devices.check_destructive(dev, devices.identity(dev), None).safety == "has-data"


def test_identity_of_a_loop_names_its_image_and_inode(loops: Loops) -> None:
    image = loops.image("ident", "32M")
    dev = loops.attach(image)
    path, serial, size = devices.identity(dev).split()
    assert path == dev and size == str(32 << 20)
    assert serial == f"{image}#{os.stat(image).st_ino}"


def test_confirm_mismatch_after_swapping_the_image_is_refused(loops: Loops) -> None:
    """Detach and attach another image on the same loop number between the confirmation and
    the destructive step: the identity no longer matches and the step is refused."""
    first, second = loops.image("first"), loops.image("second")
    for _attempt in range(5):  # another test may take the freed number; then try again
        dev = loops.attach(first)
        confirmed = devices.identity(dev)
        sh("losetup", "-d", dev)
        if subprocess.run(["losetup", "--direct-io=on", dev, str(second)],
                          capture_output=True).returncode == 0:
            break
    else:
        pytest.skip("could not re-attach on the same loop number")
    message = refused(dev, confirm=confirmed)
    now = devices.identity(dev)
    assert now != confirmed and str(second) in now
    assert "does not match" in message and now in message
    assert devices.check_destructive(dev, now, None).path == dev
    wrong_size = confirmed.rsplit(" ", 1)[0] + " 1000"
    assert "does not match" in refused(dev, confirm=wrong_size)
    with Privileged() as helper, pytest.raises(SafetyError, match="does not match"):
        ask(helper, "mkfs", device=dev, confirm=confirmed,
                       config={"label": "x", "fs": "ext4"})


# --- the helper's protocol and start ---------------------------------------------------------

def test_helper_argv_per_mode() -> None:
    from disklab.core.helper_client import helper_argv

    module = ("/usr/bin/python3", "-I", "-m", "disklab.core.root_helper")
    launcher = "/usr/libexec/disklab/disklab-helper"
    assert helper_argv("root", "/usr/bin/python3") == module
    assert helper_argv("pkexec", "/usr/bin/python3", launcher_path=launcher) == (
        "pkexec", launcher)
    assert helper_argv("sudo", "/usr/bin/python3") == (
        "sudo", "-n", "-p", "[disklab] password for %u: ", "--", *module)
    assert helper_argv("sudo", "/usr/bin/python3", launcher_path=launcher) == (
        "sudo", "-n", "-p", "[disklab] password for %u: ", "--", launcher)
    assert helper_argv("sudo", "/usr/bin/python3", sudo_password=True)[1] == "-S"


def test_helper_protocol_answers_every_line() -> None:
    import io

    from disklab.core.root_helper.helper import serve

    out = io.StringIO()
    sigterm = signal.getsignal(signal.SIGTERM)
    serve(io.BytesIO(b'not json\n\n[1, 2]\n{"id": 7, "op": "ping"}\n'
                     b'{"id": 8, "op": "setra", "args": {"device": 5}}\n'), out)
    # the helper's end leaves the process's SIGTERM as it was (children inherit an ignored one)
    assert signal.getsignal(signal.SIGTERM) == sigterm
    ready, garbage, not_object, ping, bad_arg = (json.loads(x) for x in out.getvalue().split("\n")
                                                 if x)
    assert ready["ready"] and ready["uid"] == os.geteuid()
    assert not garbage["ok"] and "one JSON object per line" in garbage["error"]
    assert not not_object["ok"] and not_object["kind"] == "RequestError"
    assert ping == {"id": 7, "ok": True, "ran": [],
                    "result": {"pid": os.getpid(), "uid": os.geteuid(), "protocol": 2,
                               "workdir": ready["workdir"], "served_uid": os.getuid()}}
    assert not os.path.exists(ready["workdir"])  # the end of input ended the helper's work
    assert not bad_arg["ok"] and "wrong type" in bad_arg["error"]


def test_a_stuck_or_dead_helper_is_reported_and_restarted() -> None:
    import signal
    import time

    from disklab.core.vocab.errors import PrivilegeError

    with Privileged() as helper:
        first = helper.helper_pid
        os.kill(first, signal.SIGSTOP)
        with pytest.raises(PrivilegeError, match="no answer to ping within 1 s"):
            ask(helper, "ping", timeout=1)
        os.kill(first, signal.SIGKILL)
        for _ in range(100):
            if not helper.alive:
                break
            time.sleep(0.05)
        assert not helper.alive
        assert ask(helper, "ping")["pid"] != first  # a new helper for the rest
