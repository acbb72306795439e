"""Issue 14, several targets on one machine: four scratch ext4 filesystems as targets a..d, the
RAID study's placements ("a", "a+b", "a+b+c+d", "a+a") with iozone, the built-in engine and dd
through `disklab run`, read back with `disklab show --json` as a user would; and a scratch
image split into four GPT partitions by DiskLab itself, undone afterwards by name."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from disklab.core import proc
from disklab.core.helper_client import Privileged
from disklab.core.library import Library
from disklab.core.plan.parse import parse_plan
from disklab.core.run.runner import run_plan
from disklab.core.vocab.errors import DisklabError, SafetyError
from disklab.core.vocab.events import CaseFailed, CaseFinished, LogLine
from tests.helpers import Loops, ask

pytestmark = [pytest.mark.root, pytest.mark.slow]

PLACEMENTS = ["a", "a+b", "a+b+c+d", "a+a"]
SIZE = 8 << 20

PLAN = """\
name = "four luns"

[targets.a]
directory = "{a}"
[targets.b]
directory = "{b}"
[targets.c]
directory = "{c}"
[targets.d]
directory = "{d}"

[[test]]
tool = "iozone"
tests = ["write", "read"]
record_size = "1m"
file_size = "8m"
on = {on}

[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "8m"
on = {on}

[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "8m"
on = {on}

[report]
rows = ["on"]
columns = ["test"]
"""


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=600)


def _needs(*tools: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (loop devices, mkfs, mount)")
    missing = [t for t in tools if proc.which(t) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")


@pytest.fixture
def four_luns(tmp_path: Path) -> Iterator[dict[str, Path]]:
    _needs("iozone", "mkfs.ext4", "losetup")
    loops = Loops(tmp_path)
    try:
        yield {name: loops.mount(loops.device(name, "96M"), f"lun-{name}")
               for name in "abcd"}
    finally:
        loops.cleanup()


def _rows(session: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, float]]:
    """(tool, on, target) -> metric -> mean."""
    out: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for r in session["results"]:
        p = r["params"]
        if "target" in p and "job" not in p and "stream" not in p:
            out[(r["tool"], p["on"], p["target"])][r["metric"]] = r["mean"]
    return out


def test_four_targets_iozone_engine_dd(four_luns: dict[str, Path], tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.replace("[report]\nrows = [\"on\"]\ncolumns = [\"test\"]\n", "")
                    .format(on=json.dumps(PLACEMENTS), **four_luns))
    library = tmp_path / "library.sqlite3"
    done = disklab("run", str(plan), "--library", str(library), "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    # live progress carries the target: the engine's interval lines give each target's bytes
    started = {e["case"]["id"]: e["case"] for e in events if e["event"] == "CaseStarted"}
    per_target = defaultdict(dict)
    for e in events:
        case = started.get(e.get("case_id", ""))
        if e["event"] == "Progress" and e.get("target") and case and case["tool"] == "engine":
            per_target[case["params"]["on"]][e["target"]] = e["done_bytes"]
    assert per_target["a+b+c+d"] == {t: SIZE for t in "abcd"}
    assert per_target["a+a"] == {"a": 2 * SIZE}
    shown = disklab("show", "1", "--json", "--library", str(library))
    assert shown.returncode == 0, shown.stderr
    rows = _rows(json.loads(shown.stdout))
    phases = {"iozone": ["write", "rewrite", "read", "reread"], "engine": ["write"],
              "dd": ["write"]}
    for tool, names in phases.items():
        for on in PLACEMENTS:
            streams = on.split("+")
            for phase in names:
                total = rows[(tool, on, "all")]
                # every target of the placement has its own row, with the bytes its streams
                # moved (one file of SIZE each)
                for target in set(streams):
                    mine = rows[(tool, on, target)]
                    assert mine[f"{phase}:bytes"] == pytest.approx(streams.count(target) * SIZE)
                    assert mine[phase] > 0
                # the aggregate: every byte over the wall time from first start to last end
                assert total[f"{phase}:bytes"] == pytest.approx(len(streams) * SIZE)
                assert total[phase] == pytest.approx(
                    total[f"{phase}:bytes"] / (total[f"{phase}:wall"] / 1e9), rel=1e-6)
                assert set(t for (tl, o, t) in rows if tl == tool and o == on) == {
                    *streams, "all"}
            if len(streams) > 1 and tool in ("engine", "dd"):
                # the streams' own start times (engine's per-stream start, dd's end less its
                # own seconds) lie within a small window: they were released together
                assert total["write:start_skew"] / 1e9 < 0.25, (tool, on, total)
            if len(streams) > 1 and tool == "iozone":
                # iozone's parent times all children from its own start barrier: its elapsed
                # time (every byte / "Parent sees") exceeds the slowest child's by little
                for phase in names:
                    parent = total[f"{phase}:bytes"] / total[f"{phase}:parent"]
                    assert parent - total[f"{phase}:wall"] / 1e9 < 0.5, (on, phase, total)
    for directory in four_luns.values():  # nothing of the runs is left on the targets
        assert not [p for p in directory.iterdir() if p.name.startswith("disklab-")]


PARTITIONED = """\
name = "one lun, four partitions"

[targets.a]
image = {{ path = "{image}", size = "512m" }}
partitions = 4

[[config]]
label = "ext4"
fs = "ext4"

[[config]]
label = "ext4 nodelalloc on a1 a2"
fs = "ext4"
mount = ["nodelalloc"]
targets = ["a1", "a2"]

[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "8m"
on = ["a1", "a1+a2", "a1+a2+a3+a4"]
"""


def test_partitions_of_one_image(tmp_path: Path) -> None:
    _needs("sgdisk", "partx", "mkfs.ext4", "losetup")
    image = tmp_path / "lun.img"
    plan = tmp_path / "plan.toml"
    plan.write_text(PARTITIONED.format(image=image))
    library = tmp_path / "library.sqlite3"
    try:
        done = disklab("run", str(plan), "--library", str(library), "--json")
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        events = [json.loads(line) for line in done.stdout.splitlines()
                  if line.startswith("{")]
        # each partition's own device rates come as a series per target (the live plots'
        # curve per target), and the partitions written to show writes
        written: dict[str, float] = defaultdict(float)
        for e in events:
            if e["event"] == "Sample" and e["series"].startswith("device_write_bps:"):
                written[e["series"].split(":")[1]] += e["value"]
        assert set(written) == {"a1", "a2", "a3", "a4", "all"}
        assert all(v > 0 for v in written.values()), written
        # the total: each partition is a device of its own, so all of them, each once
        parts = sum(v for k, v in written.items() if k != "all")
        assert written["all"] == pytest.approx(parts)
        session = json.loads(disklab("show", "1", "--json", "--library",
                                     str(library)).stdout)
        rows = defaultdict(dict)
        for r in session["results"]:
            p = r["params"]
            if "target" in p and "stream" not in p:
                rows[(r["config"], p["on"], p["target"])][r["metric"]] = r["mean"]
        assert rows[("ext4", "a1+a2+a3+a4", "a4")]["write:bytes"] == SIZE
        assert rows[("ext4", "a1+a2+a3+a4", "all")]["write:bytes"] == 4 * SIZE
        # the limited configuration runs only the placements on its targets
        limited = {on for (config, on, _t) in rows if config == "ext4 nodelalloc on a1 a2"}
        assert limited == {"a1", "a1+a2"}
        # each partition got its own filesystem, read back: four ext4 on a1..a4
        with Library.open(library) as lib:
            applied = [e for e in lib.events(1) if e["kind"] == "ConfigApplied"]
        first = applied[0]["readback"]["targets"]
        assert sorted(first) == ["a1", "a2", "a3", "a4"]
        assert {rb["device"] for rb in first.values()} == {
            f"{first['a1']['device'][:-1]}{i}" for i in range(1, 5)}
        assert all(rb["fs"] == "ext4" for rb in first.values())
    finally:
        leftover = subprocess.run(["losetup", "-j", str(image)], capture_output=True,
                                  text=True).stdout
        for line in leftover.splitlines():  # only on failure: undo by name
            device = line.split(":")[0]
            subprocess.run(["partx", "-d", device], check=False, capture_output=True)
            subprocess.run(["losetup", "-d", device], check=False)
    assert not leftover, f"loop devices left on {image}: {leftover}"
    assert not image.exists()
    mounts = Path("/proc/self/mountinfo").read_text()
    assert str(tmp_path) not in mounts


KILLED = """\
name = "killed"

[targets.a]
image = {{ path = "{a}", size = "256m" }}
[targets.p]
image = {{ path = "{p}", size = "256m" }}
partitions = 2

[[config]]
label = "ext4"
fs = "ext4"

[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "64m"
direct = true
sync = true
on = "a+p1+p2"

[[test]]
tool = "engine"
mode = "write"
size = "64m"
runtime = "60s"
on = "a+p1+p2"
"""


def test_a_killed_run_on_partitions_is_undone_by_the_next_start(tmp_path: Path) -> None:
    """SIGKILL while three streams run on an image and two partitions of another: the helper
    sees its client go and unmounts the three filesystems, detaches both loop devices and
    removes both images itself; the next start finds nothing left to undo but the record."""
    _needs("sgdisk", "partx", "mkfs.ext4", "losetup")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "XDG_STATE_HOME": str(tmp_path / "state")}
    images = {"a": tmp_path / "a.img", "p": tmp_path / "p.img"}
    plan = tmp_path / "plan.toml"
    plan.write_text(KILLED.format(**images))
    library = tmp_path / "library.sqlite3"
    run = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                            "--library", str(library), "--json"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=env)
    assert run.stdout is not None
    try:
        started = 0
        for line in run.stdout:  # the second case (the engine, 60 s) is running
            started += json.loads(line).get("event") == "CaseStarted"
            if started == 2:
                break
        time.sleep(1.0)
        loops = [subprocess.run(["losetup", "-j", str(i)], capture_output=True,
                                text=True).stdout.split(":")[0] for i in images.values()]
        mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text()
                  .splitlines() if any(line.split(" - ")[1].split()[1].startswith(dev)
                                       for dev in loops if dev)]
        assert len(mounts) == 3 and all("/disklab-mnt-" in m for m in mounts)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(30)
    deadline = time.monotonic() + 30
    while any("disklab.engine" in " ".join(p.info["cmdline"] or ())
              and str(tmp) in " ".join(p.info["cmdline"] or ())
              for p in psutil.process_iter(["cmdline"])):
        assert time.monotonic() < deadline, "the engine outlived DiskLab"
        time.sleep(0.1)
    deadline = time.monotonic() + 30
    while any(p.exists() for p in images.values()):  # the helper's own cleanup
        assert time.monotonic() < deadline, "the helper left its images"
        time.sleep(0.1)
    other = tmp_path / "next"
    other.mkdir()
    nxt = tmp_path / "next.toml"
    nxt.write_text(f'[target]\ndirectory = "{other}"\n[[test]]\ntool = "engine"\n'
                   'mode = "write"\nsize = "1m"\n')
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(nxt),
                           "--library", str(library)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "could not undo" not in done.stderr
    for image in images.values():
        assert not image.exists()
        assert subprocess.run(["losetup", "-j", str(image)], capture_output=True,
                              text=True).stdout == ""
    assert not [m for m in tmp.glob("disklab-mnt-*")]
    assert str(tmp) not in Path("/proc/self/mountinfo").read_text()


def test_a_single_target_takes_placements_by_its_name(tmp_path: Path) -> None:
    """`[target]` stays one target, named "target" for `on`: two streams on it land on the
    filesystem DiskLab made there."""
    _needs("mkfs.ext4", "losetup")
    image = tmp_path / "one.img"
    plan = tmp_path / "plan.toml"
    plan.write_text(f'[target]\nimage = {{ path = "{image}", size = "128m" }}\n'
                    '[[config]]\nlabel = "ext4"\nfs = "ext4"\n'
                    '[[test]]\ntool = "dd"\nmode = "write"\nsize = "8m"\n'
                    'on = "target+target"\n')
    library = tmp_path / "library.sqlite3"
    done = disklab("run", str(plan), "--library", str(library))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = {(r["params"]["target"], r["metric"]): r["mean"] for r in json.loads(
        disklab("show", "1", "--json", "--library", str(library)).stdout)["results"]}
    assert rows[("target", "write:bytes")] == rows[("all", "write:bytes")] == 2 * SIZE
    assert not image.exists()


def test_placed_tools_run_as_root_through_the_helper(tmp_path: Path) -> None:
    """What a user who is not root gets: the tools of root's targets run by the privileged
    helper, which re-checks every directory of a placement (a filesystem it mounted) and
    starts a dd group itself."""
    _needs("sgdisk", "partx", "mkfs.ext4", "losetup")
    text = f"""\
[targets.a]
image = {{ path = "{tmp_path / 'a.img'}", size = "128m" }}
[targets.p]
image = {{ path = "{tmp_path / 'p.img'}", size = "256m" }}
partitions = 2

[[config]]
label = "ext4"
fs = "ext4"

[[test]]
tool = "dd"
mode = "write"
size = "8m"
on = ["a+p1+p2", "p2+p2"]

[[test]]
tool = "engine"
mode = "write"
size = "8m"
on = "a+p1"
"""
    events = list(run_plan(parse_plan(text).plan, state_dir=str(tmp_path / "state"),
                           privileged_tools=True))
    failed = [e for e in events if isinstance(e, CaseFailed)]
    assert not failed, failed[0].error
    finished = [e for e in events if isinstance(e, CaseFinished)]
    assert len(finished) == 3
    by_target = [{m.params["target"]: m.value for m in e.metrics if m.name == "write:bytes"}
                 for e in finished]
    assert by_target == [{"a": SIZE, "p1": SIZE, "p2": SIZE, "all": 3 * SIZE},
                         {"p2": 2 * SIZE, "all": 2 * SIZE},
                         {"a": SIZE, "p1": SIZE, "all": 2 * SIZE}]
    helper = [e.text for e in events if isinstance(e, LogLine) and e.stream == "helper"]
    assert any("sgdisk" in line for line in helper)
    assert not list(tmp_path.glob("*.img"))
    assert str(tmp_path) not in subprocess.run(["losetup", "-a"], capture_output=True,
                                               text=True).stdout


def test_the_helper_refuses_placements_outside_its_mounts(tmp_path: Path) -> None:
    """The helper takes a placement's directories as intent: each must be a filesystem it
    mounted, the names plain, every name given a directory."""
    _needs("mkfs.ext4", "losetup")
    priv = Privileged(mode="root")
    priv.start()
    image, mountpoint = str(tmp_path / "h.img"), f"{priv.workdir}/disklab-mnt-placed"
    ext4 = {"label": "ext4", "fs": "ext4"}
    device = None
    try:
        device = ask(priv, "attach", image=image, size=128 << 20)["device"]
        ask(priv, "mkfs", config=ext4, device=device)
        ask(priv, "mount", config=ext4, device=device, mountpoint=mountpoint)
        dd = {"mode": "write", "size": 1 << 20, "on": "a+b"}

        def start(**kw: object) -> None:
            args = {"tool": "dd", "params": dd, "tag": "t1", "directory": mountpoint,
                    "directories": {"a": mountpoint, "b": mountpoint}, **kw}
            ask(priv, "tool_start", **args)

        with pytest.raises(SafetyError, match="only in a filesystem it mounted"):
            start(directories={"a": mountpoint, "b": str(tmp_path)})
        with pytest.raises(DisklabError, match="no directory for target 'b'"):
            start(directories={"a": mountpoint})
        with pytest.raises(DisklabError, match="not a placement"):
            start(params={**dd, "on": "a+../etc"})
        assert not [p for p in Path(mountpoint).iterdir() if p.name.startswith("disklab-")]
    finally:
        if os.path.ismount(mountpoint):
            subprocess.run(["umount", mountpoint], check=False)
        if device is not None:
            subprocess.run(["losetup", "-d", device], check=False)
        priv.close()
        Path(image).unlink(missing_ok=True)
