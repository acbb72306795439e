"""Issue 4, done-when: four filesystem configurations on a scratch image through `disklab run`,
read back per config, results grouped by config, nothing left mounted or attached."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core import proc, tools

pytestmark = [pytest.mark.root, pytest.mark.slow]

PLAN = """\
name = "four configs"
repeats = 1

[target]
image = {{ path = "{image}", size = "1g" }}

[[config]]
label = "ext4 default"
fs = "ext4"

[[config]]
label = "ext4 nodelalloc"
fs = "ext4"
mount = ["nodelalloc"]

[[config]]
label = "ext4 data=journal 16m"
fs = "ext4"
mkfs = {{ journal_size = "16m" }}
mount = ["data=journal"]

[[config]]
label = "xfs su=128k sw=10"
fs = "xfs"
mkfs = {{ su = "128k", sw = 10 }}

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = "1m"
size = "32m"
direct = true
{iozone}
"""

IOZONE = """
[[test]]
tool = "iozone"
tests = ["write", "read"]
record_size = "1m"
file_size = "32m"
threads = 1
"""


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=900)


def loops_of(image: Path) -> list[str]:
    out = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True).stdout
    return [line.split(":")[0] for line in out.splitlines() if line]


def test_four_configs_on_a_scratch_image(tmp_path: Path) -> None:
    image = tmp_path / "scratch.img"
    with_iozone = proc.which("iozone") is not None and "iozone" in tools.tool_names()
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(image=image, iozone=IOZONE if with_iozone else ""))
    library = tmp_path / "lib" / "library.sqlite3"
    try:
        done = disklab("run", str(plan), "--library", str(library), "--json")
        assert done.returncode == 0, done.stderr + done.stdout[-3000:]
        events = [json.loads(x) for x in done.stdout.splitlines()]
        applied = {e["config"]: e for e in events if e["event"] == "ConfigApplied"}
        assert list(applied) == ["ext4 default", "ext4 nodelalloc", "ext4 data=journal 16m",
                                 "xfs su=128k sw=10"]
        # what the kernel and the filesystem report (mountinfo, dumpe2fs), not what was asked
        journal = applied["ext4 data=journal 16m"]["readback"]
        assert "data=journal" in journal["mount_options"]
        assert journal["journal_size"] == 16 << 20
        assert "nodelalloc" in applied["ext4 nodelalloc"]["readback"]["mount_options"]
        assert applied["xfs su=128k sw=10"]["readback"]["fs"] == "xfs"
        assert all(e["mismatches"] == [] for e in applied.values())
        torn = [e["config"] for e in events if e["event"] == "ConfigTornDown"]
        assert torn == list(applied)

        shown = json.loads(disklab("show", "four configs", "--library", str(library),
                                   "--json").stdout)
        by_config: dict[str, set[tuple[str, str]]] = {}
        for r in shown["results"]:
            if ":" not in r["metric"] and r["metric"] in ("write", "read"):
                by_config.setdefault(r["config"], set()).add((r["tool"], r["metric"]))
                assert r["mean"] > 0
        expected = {("engine", "write"), ("engine", "read")}
        if with_iozone:
            expected |= {("iozone", "write"), ("iozone", "read")}
        assert by_config == dict.fromkeys(applied, expected)
        text = disklab("show", "four configs", "--library", str(library)).stdout
        assert "xfs su=128k sw=10" in text and "ext4 nodelalloc" in text
    finally:
        mounts = Path("/proc/self/mountinfo").read_text()
        leftover_loops = loops_of(image)
        for dev in leftover_loops:  # never leave the machine changed, even when failing
            subprocess.run(["umount", dev], check=False, capture_output=True)
            subprocess.run(["losetup", "-d", dev], check=False)
    assert leftover_loops == []  # nothing attached, so nothing of ours can be mounted
    assert not any(str(image) in line for line in mounts.splitlines())
    assert not image.exists()


def test_sigkill_mid_case_then_the_next_start_cleans_up(tmp_path: Path) -> None:
    """Kill `disklab run` of an image plan in the middle of a case; the next `disklab run`
    reports and undoes what was left mounted or attached, and the session is interrupted."""
    import os
    import signal

    image = tmp_path / "killed.img"
    plan = tmp_path / "plan.toml"
    plan.write_text(f"""\
name = "killed"
[target]
image = {{ path = "{image}", size = "1g" }}
[[config]]
label = "ext4"
fs = "ext4"
[[test]]
tool = "engine"
mode = "randread"
block_size = "4k"
size = "64m"
runtime = "60s"
direct = true
""")
    library = tmp_path / "lib" / "library.sqlite3"
    p = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                          "--library", str(library), "--json"], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    try:
        for line in p.stdout:
            if json.loads(line)["event"] == "Sample":
                break
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        quick = tmp_path / "quick"
        quick.mkdir()
        small = tmp_path / "small.toml"
        small.write_text(f'name = "next"\n[target]\ndirectory = "{quick}"\n[[test]]\n'
                         'tool = "engine"\nmode = "write"\nsize = "4m"\n')
        done = disklab("run", str(small), "--library", str(library))
        assert done.returncode == 0, done.stderr
        assert loops_of(image) == []  # nothing attached, so nothing of ours is mounted
        listed = json.loads(disklab("sessions", "--library", str(library), "--json").stdout)
        sessions = listed["sessions"]
        assert {s["name"]: s["status"] for s in sessions} == {"killed": "interrupted",
                                                              "next": "finished"}
    finally:
        if p.poll() is None:
            p.kill()
        for dev in loops_of(image):
            subprocess.run(["umount", dev], check=False, capture_output=True)
            subprocess.run(["losetup", "-d", dev], check=False)
