"""system.host: facts of this machine and of the filesystem under a directory, from /proc and
/sys; mountinfo's lookups of the filesystem under a path.

Expected values come from the same kernel through another door (os.uname, os.cpu_count,
os.statvfs, psutil, the sysfs files themselves), never from the module's own helpers.
"""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

import psutil

from disklab.core.system.host import host_facts
from disklab.core.system.mountinfo import filesystem_of, mounts, same_filesystem


def test_machine_facts() -> None:
    facts = host_facts(None)
    assert facts["kernel"] == os.uname().release
    assert facts["cpu_count"] == os.cpu_count()
    assert facts["memory_bytes"] == psutil.virtual_memory().total
    assert facts["hostname"] == socket.gethostname()
    assert facts["python"] == platform.python_version()
    if Path("/etc/os-release").exists():
        assert facts["distribution"]
    assert "filesystem" not in facts and "device" not in facts


def test_facts_for_root_name_its_filesystem_and_device() -> None:
    facts = host_facts("/")
    root = [m for m in mounts() if m.mountpoint == "/"][-1]
    assert facts["filesystem"]["fstype"] == root.fstype
    assert facts["filesystem"]["source"] == root.source
    assert facts["filesystem"]["mountpoint"] == "/"
    assert facts["kernel"] == os.uname().release
    assert facts["cpu_count"] == os.cpu_count()
    st = os.statvfs("/")
    assert 0 <= facts["free_bytes"] <= facts["fs_size_bytes"] == st.f_blocks * st.f_frsize
    device = facts.get("device")
    if device is not None:  # / on a block device (not overlay/tmpfs, as in some containers)
        disk = Path("/sys/class/block") / device.get("disk", device["name"])
        size = int((Path("/sys/class/block") / device["name"] / "size").read_text())
        assert device["size"] == size * 512
        sched = (disk / "queue" / "scheduler").read_text().split()
        if "scheduler" in device:
            assert f"[{device['scheduler']}]" in sched
        assert device["read_ahead_kb"] == int((disk / "queue/read_ahead_kb").read_text())
        assert device["rotational"] in (0, 1)


def test_a_directory_not_yet_made_is_on_its_parents_filesystem(tmp_path: Path) -> None:
    assert filesystem_of(str(tmp_path / "a" / "b")) == filesystem_of(str(tmp_path))
    facts = host_facts(str(tmp_path / "a" / "b"))
    assert facts["filesystem"] == filesystem_of(str(tmp_path))


def test_proc_is_its_own_filesystem() -> None:
    fs = filesystem_of("/proc/self")
    assert fs["fstype"] == "proc" and fs["mountpoint"] == "/proc"
    assert "device" not in host_facts("/proc")


def test_same_filesystem(tmp_path: Path) -> None:
    assert same_filesystem(str(tmp_path), str(tmp_path / "library.sqlite3"))
    assert not same_filesystem("/", "/proc")
    assert same_filesystem("/proc/self", "/proc/1") or not Path("/proc/1").exists()
