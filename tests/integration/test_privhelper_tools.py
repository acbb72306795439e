"""The privileged helper's tool operations, spoken to as the runner does: it runs a tool only
with parameters it checked itself, only in a filesystem it mounted (or on a confirmed device),
never over an existing file, and it hands back output, counters and the result file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from disklab.core.helper_client import Privileged, PrivilegedTool
from disklab.core.run.monitor import Monitor
from disklab.core.tools.base import ToolOutput
from disklab.core.tools.engine import EngineAdapter
from disklab.core.vocab.errors import DisklabError, PlanError, SafetyError
from tests.helpers import ask

pytestmark = [pytest.mark.root]

EXT4 = {"label": "ext4", "fs": "ext4"}
WRITE = {"mode": "write", "block_size": 1 << 20, "size": 8 << 20, "direct": True}


@pytest.fixture
def mounted(tmp_path: Path) -> Iterator[tuple[Privileged, str, str]]:
    """A helper that attached an image, made ext4 on it and mounted it; all undone after."""
    priv = Privileged(mode="root")
    priv.start()
    image = str(tmp_path / "helper.img")
    mountpoint = f"{priv.workdir}/disklab-mnt-tools"
    device = None
    try:
        device = ask(priv, "attach", image=image, size=256 << 20)["device"]
        ask(priv, "mkfs", config=EXT4, device=device)
        ask(priv, "mount", config=EXT4, device=device, mountpoint=mountpoint)
        yield priv, device, mountpoint
    finally:
        if os.path.ismount(mountpoint):
            subprocess.run(["umount", mountpoint], check=False)
        if device is not None:
            subprocess.run(["losetup", "-d", device], check=False)
        priv.close()


def run_to_end(tool: PrivilegedTool, monitor: Monitor) -> list[str]:
    """As the runner does: read the output, sample the monitor between reads."""
    lines = []
    with tool:
        monitor.sample()
        tool.start()
        deadline = time.monotonic() + 120
        while not tool.poll() and time.monotonic() < deadline:
            lines += [line.text for line in tool.read(0.2)]
            monitor.sample()
        tool.wait()
        monitor.sample()
    return lines


def test_a_tool_runs_in_the_helpers_mount_and_its_files_are_removed(mounted) -> None:
    priv, _device, mountpoint = mounted
    tool = PrivilegedTool(priv, "engine", WRITE, tag="case1-r1", directory=mountpoint)
    monitor = Monitor(mountpoint, pids=tool.descendants)
    lines = run_to_end(tool, monitor)
    assert tool.returncode == 0
    assert tool.argv[1:3] == ("-I", "-c") and "disklab.engine" in tool.argv[3]
    data = Path(mountpoint) / "disklab-case1-r1-0"
    assert data.stat().st_size == 8 << 20  # root wrote it in root's filesystem
    output = ToolOutput(stdout=tool.output("stdout"), stderr=tool.output("stderr"))
    metrics = {m.name: m.value for m in EngineAdapter().parse_result(output, WRITE)}
    assert metrics["write"] > 0
    assert any('"type": "summary"' in line or '"summary"' in line for line in lines)
    # the counters of the tree, read by root, reached this side's monitor
    assert monitor.totals()["app_write_bytes"] >= 8 << 20
    assert ask(priv, "tool_cleanup", tag="case1-r1")["left"] == []
    assert not data.exists()


def test_the_helper_refuses_what_it_should_not_run(mounted, tmp_path: Path) -> None:
    priv, device, mountpoint = mounted

    def start(**kw: object) -> None:
        args = {"tool": "engine", "params": WRITE, "tag": "t1", "directory": mountpoint, **kw}
        ask(priv, "tool_start", **args)

    with pytest.raises(SafetyError, match="only in a filesystem it mounted"):
        start(directory=str(tmp_path))  # a directory a user could plant a link in
    with pytest.raises(DisklabError, match="not a plain file-name part"):
        start(tag="../../etc/x")
    with pytest.raises(PlanError) as bad:
        start(params={**WRITE, "size": "lots", "colour": "red"})
    assert {p.key for p in bad.value.problems} == {"size", "colour"}
    with pytest.raises(PlanError, match="needs a filesystem"):
        start(tool="iozone", params={"tests": ["write"], "record_size": 1 << 20,
                                     "file_size": 8 << 20}, device=device)
    # a file that is there already is never written over
    (Path(mountpoint) / "disklab-t2-0").write_bytes(b"keep me")
    with pytest.raises(SafetyError, match="already exist"):
        start(tag="t2")
    assert (Path(mountpoint) / "disklab-t2-0").read_bytes() == b"keep me"
    # the filesystem it mounted was swapped for another one under the same path
    subprocess.run(["umount", mountpoint], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mountpoint], check=True)
    try:
        with pytest.raises(SafetyError, match="no longer holds"):
            start(tag="t3")
    finally:
        subprocess.run(["umount", mountpoint], check=False)


def test_raw_io_needs_a_confirm_unless_the_helper_attached_the_device(tmp_path: Path) -> None:
    image = tmp_path / "other.img"
    image.write_bytes(b"\xab" * (4 << 20))
    os.truncate(image, 128 << 20)
    other = subprocess.run(["losetup", "--find", "--show", str(image)], check=True,
                           capture_output=True, text=True).stdout.strip()
    try:
        with Privileged(mode="root") as priv:
            raw = {"tool": "dd", "params": {"mode": "write", "block_size": 1 << 20,
                                            "size": 4 << 20, "direct": True},
                   "tag": "raw1", "directory": priv.workdir, "device": other}
            with pytest.raises(SafetyError, match="needs the plan's confirm"):
                ask(priv, "tool_start", **raw)
            with pytest.raises(SafetyError, match="does not match"):
                ask(priv, "tool_start", **raw, confirm=f"{other} not-this-one 1")
    finally:
        subprocess.run(["losetup", "-d", other], check=False)
    with open(image, "rb") as f:
        assert f.read(4 << 20) == b"\xab" * (4 << 20)  # never written


HOLD = """
import sys, time
f = open(sys.argv[1], "w")  # the filesystem is busy while this is open
print("open", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_unmount_waits_out_a_file_held_open_for_a_moment(mounted: tuple[Privileged, str, str]
                                                         ) -> None:
    """fio's io_uring with registered files leaves its ring, and the files in it, to a kernel
    worker after fio exits: an unmount right after says "target is busy" for a moment. The
    helper's unmount retries for that moment instead of failing (or of the lazy unmount, which
    would leave the loop device attached until the ring is gone). The ring's moment is won or
    lost by the kernel's timing; here a process holds a file open for one second, so the first
    unmount is refused every time and the helper must wait it out."""
    priv, device, mountpoint = mounted
    holder = subprocess.Popen([sys.executable, "-c", HOLD, f"{mountpoint}/disklab-held", "1.0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        ran = ask(priv, "umount", mountpoint=mountpoint, lazy=True)["ran"]
    finally:
        holder.kill()
        holder.wait()
    assert not os.path.ismount(mountpoint)
    attempts = [r for r in ran if r["argv"][0] == "umount"]
    assert ["umount", "-l", mountpoint] not in [r["argv"] for r in attempts]  # a real unmount
    assert attempts[0]["returncode"] != 0 and "busy" in attempts[0]["stderr"], attempts[0]
    assert len(attempts) >= 2 and attempts[-1]["returncode"] == 0
    ask(priv, "mount", config=EXT4, device=device, mountpoint=mountpoint)


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
def test_unmount_after_a_tools_io_uring_ring_is_a_real_one(mounted: tuple[Privileged, str, str]
                                                           ) -> None:
    """The case itself, fio's registered files in its ring: whether the first unmount meets the
    ring or not, the filesystem is unmounted for real (not lazily) each time."""
    priv, device, mountpoint = mounted
    path = Path(mountpoint) / "disklab-ring"
    for _ in range(3):
        subprocess.run(["fio", "--name=ring", f"--filename={path}", "--rw=randread", "--bs=4k",
                        "--size=8m", "--direct=1", "--ioengine=io_uring", "--iodepth=8",
                        "--fixedbufs", "--registerfiles", "--thread"],
                       check=True, capture_output=True)
        path.unlink()
        ran = ask(priv, "umount", mountpoint=mountpoint, lazy=True)["ran"]
        assert not os.path.ismount(mountpoint)
        assert ["umount", "-l", mountpoint] not in [r["argv"] for r in ran]  # a real unmount
        ask(priv, "mount", config=EXT4, device=device, mountpoint=mountpoint)
