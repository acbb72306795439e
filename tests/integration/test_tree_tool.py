"""The file-tree tool (tool = "tree") on real filesystems: `disklab run` creates and deletes
D dirs x N files on ext4 and xfs scratch images, the tree is gone afterwards (also when the
run is cancelled in the middle of the create), and its figures are in `disklab show --json`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from disklab.core.library import Library
from tests.helpers import ScratchFs, make_scratch_fs, teardown

pytestmark = [pytest.mark.root]

PLAN = """\
name = "tree on {fs}"
[target]
directory = "{directory}"
[[test]]
tool = "tree"
dirs = {dirs}
files_per_dir = {files}
file_size = "{size}"
block_size = "128k"
"""


def disklab(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *argv],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(params=["ext4", "xfs"])
def fs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ScratchFs]:
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices)")
    made = make_scratch_fs(tmp_path, request.param, "512M")
    try:
        yield made
    finally:
        teardown(made)


def test_create_and_delete_are_timed_and_the_tree_is_gone(fs: ScratchFs, tmp_path: Path
                                                          ) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(fs=fs.fstype, directory=fs.mountpoint, dirs=3, files=40,
                                size="64k"))
    library = str(tmp_path / "lib.sqlite3")
    done = disklab("run", str(plan), "--library", library)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in fs.mountpoint.iterdir()) in ([], ["lost+found"])
    shown = disklab("show", "1", "--json", "--library", library)
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    text = json.dumps(doc)
    for name in ("create", "create:seconds", "create:user", "create:sys", "create:files_per_s",
                 "delete", "delete:seconds", "delete:user", "delete:sys", "delete:files_per_s"):
        assert f'"{name}"' in text, name
    rows = _rows(doc)
    by_name = {r["metric"]: r for r in rows}
    create_rate = by_name["create"]["mean"]
    seconds = by_name["create:seconds"]["mean"]
    # 3 x 40 files of 64 KiB in that many seconds: the rate is the bytes over the time
    assert seconds > 0 and create_rate == pytest.approx(3 * 40 * 65536 / seconds, rel=1e-6)
    assert by_name["create:files_per_s"]["mean"] == pytest.approx(120 / seconds, rel=1e-6)
    # what the flush before the delete did, as root, is in the case's transcript
    with Library.open(library) as lib:
        (case,) = lib.cases(1)
        lines = [text for _t, stream, text in lib.transcript(1, case["case_id"], 1)
                 if stream == "stdout" and '"flush"' in text]
    (flushed,) = [json.loads(line) for line in lines]
    assert flushed["done"][0] == "sync" and flushed["skipped"] == []
    assert any("drop_caches = 3" in d for d in flushed["done"])
    assert any(d.startswith(f"flushed the write cache of {fs.device}") for d in flushed["done"])


def _rows(doc: Any) -> list[dict[str, Any]]:
    """Every object in the document that has a metric name and a mean."""
    found: list[dict[str, Any]] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            if "metric" in x and "mean" in x:
                found.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc)
    return found


def test_a_cancel_in_the_middle_of_the_create_leaves_no_tree(fs: ScratchFs, tmp_path: Path
                                                             ) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(fs=fs.fstype, directory=fs.mountpoint, dirs=20, files=2000,
                                size="4k"))
    library = str(tmp_path / "lib.sqlite3")
    p = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                          "--library", library, "--json"], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    seen: list[dict[str, Any]] = []
    try:
        for line in p.stdout:
            seen.append(json.loads(line))
            event = seen[-1]
            if (event["event"] == "Progress" and event["phase"] == "create"
                    and 0 < event["done_bytes"] < event["total_bytes"]):
                # files done over files planned (as bytes: every file is 4 KiB)
                assert event["total_bytes"] == 40000 * 4096
                assert event["message"].endswith("of 40000 files")
                p.send_signal(signal.SIGTERM)
                break
        else:
            pytest.fail("the run ended before a progress line")
        p.stdout.read()
        assert p.wait(timeout=120) == 130
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert sorted(x.name for x in fs.mountpoint.iterdir()) in ([], ["lost+found"])


def test_a_killed_tree_tool_leaves_no_tree(fs: ScratchFs, tmp_path: Path) -> None:
    """SIGKILL of the tool itself (it cannot clean up): the runner removes the tree named in
    the case's files, and the case is failed with the signal."""
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(fs=fs.fstype, directory=fs.mountpoint, dirs=20, files=2000,
                                size="4k"))
    library = str(tmp_path / "lib.sqlite3")
    p = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                          "--library", library, "--json"], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    seen: list[dict[str, Any]] = []
    try:
        for line in p.stdout:
            seen.append(json.loads(line))
            event = seen[-1]
            if (event["event"] == "Progress" and event["phase"] == "create"
                    and 0 < event["done_bytes"] < event["total_bytes"]):
                (tool,) = [c for c in psutil.Process(p.pid).children(recursive=True)
                           if "disklab.treeload" in " ".join(c.cmdline())]
                tool.send_signal(signal.SIGKILL)
                break
        else:
            pytest.fail("the run ended before a progress line")
        seen += [json.loads(line) for line in p.stdout]
        assert p.wait(timeout=120) != 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    (failed,) = [e for e in seen if e["event"] == "CaseFailed"]
    assert "signal 9" in failed["error"]
    assert sorted(x.name for x in fs.mountpoint.iterdir()) in ([], ["lost+found"])


def test_a_killed_session_leaves_a_tree_the_next_start_removes(tmp_path: Path) -> None:
    """SIGKILL of `disklab run` itself: the tool dies with it (PDEATHSIG) and cannot clean; the
    crash record names the tree's root, and the next start removes it whole."""
    target = tmp_path / "target"
    target.mkdir()
    (target / "mine.txt").write_text("the user's file")
    state = tmp_path / "state"
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(fs="dir", directory=target, dirs=50, files=2000, size="4k"))
    library = str(tmp_path / "lib.sqlite3")
    p = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                          "--library", library, "--json"], stdout=subprocess.PIPE, text=True,
                         env=env)
    assert p.stdout is not None
    try:
        for line in p.stdout:
            event = json.loads(line)
            if (event["event"] == "Progress" and event["phase"] == "create"
                    and 0 < event["done_bytes"] < event["total_bytes"]):
                p.send_signal(signal.SIGKILL)
                break
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    for _ in range(100):  # the tool dies with DiskLab (PDEATHSIG); the kernel takes a moment
        if not [c for c in psutil.process_iter(["cmdline"])
                if str(target) in " ".join(c.info["cmdline"] or ())]:
            break
        time.sleep(0.1)
    (tree,) = [x for x in target.iterdir() if x.name.endswith("-tree")]
    assert any(tree.rglob("f*")), "the kill left no files in the tree: nothing to recover"
    other = tmp_path / "next"
    other.mkdir()
    again = tmp_path / "next.toml"
    again.write_text(PLAN.format(fs="dir", directory=other, dirs=1, files=1, size="4k"))
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(again),
                           "--library", library], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"cleaned up after an earlier run: removed {tree}" in done.stderr
    assert sorted(x.name for x in target.iterdir()) == ["mine.txt"]
