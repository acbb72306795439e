"""What limited each result, judged from what a run records anyway, on real runs: a buffered
read of a cached file (the page cache), O_DIRECT reads at queue depth 8 of a loop device's
filesystem (the device, with the requests in flight), the engine on tmpfs (the CPU), a 0.2 s
run (too short), and an imported result (not known). `disklab show` says it in its "limited
by" column and `show --json` keeps each verdict's evidence."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.root, pytest.mark.slow]

PLAN = """\
name = "limits"
repeats = 1
[target]
directory = "{directory}"

[[test]]
tool = "engine"
{test}
"""


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=300)


def limited(tmp_path: Path, directory: Path, test: str) -> list[dict[str, Any]]:
    """Run one engine test in `directory`; its first result's `limited_by` from show --json,
    after checking that `show` prints the same words in its column."""
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(directory=directory, test=test))
    library = tmp_path / "lib.sqlite3"
    done = disklab("run", str(plan), "--library", str(library))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    shown = disklab("show", "1", "--json", "--library", str(library))
    doc = json.loads(shown.stdout)
    assert doc["version"] == 2
    first = doc["results"][0]["limited_by"]
    text = subprocess.run([sys.executable, "-m", "disklab.cli.main", "show", "1",
                           "--library", str(library)], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "400"}).stdout
    assert "limited by" in text and first[0]["words"] in text
    return first


def kinds(limits: list[dict[str, Any]]) -> set[str]:
    return {x["kind"] for x in limits}


def test_a_buffered_read_of_a_cached_file_is_the_page_cache(tmp_path: Path, workdir: Path
                                                            ) -> None:
    limits = limited(tmp_path, workdir, 'mode = "read"\nblock_size = "64k"\nsize = "64m"\n'
                     'runtime = "2s"\ndirect = false')
    (cache,) = [x for x in limits if x["kind"] == "page_cache_read"]
    assert cache["evidence"]["device_share"] < 0.10
    assert cache["words"].startswith("read from the page cache: the device read")
    # every export says it too: the HTML report's results table, CSV, Markdown, JSON
    library = str(tmp_path / "lib.sqlite3")
    for fmt in ("html", "csv", "md", "json"):
        out = tmp_path / f"s.{fmt}"
        done = disklab("export", "1", "--format", fmt, "-o", str(out), "--library", library)
        assert done.returncode == 0, done.stderr
        text = html.unescape(out.read_text())
        assert "limited" in text and cache["words"] in text, fmt


def test_direct_reads_at_queue_depth_8_are_the_device(tmp_path: Path, workdir: Path) -> None:
    limits = limited(tmp_path, workdir, 'mode = "randread"\nblock_size = "4k"\nsize = "256m"\n'
                     'runtime = "3s"\ndirect = true\nqueue_depth = 8')
    if "device" not in kinds(limits):  # a loaded machine: the engine got too little CPU to
        # keep 8 requests in flight, and the verdict says so with the machine's own figure
        (cpu,) = [x for x in limits if x["kind"] == "cpu"]
        assert cpu["evidence"]["machine_cpu_pct"] >= 90, limits
        pytest.skip(f"the machine was busy ({cpu['words']}): the device was not the limit")
    (device,) = [x for x in limits if x["kind"] == "device"]
    assert device["evidence"]["busy_pct"] >= 90
    assert device["evidence"]["asked"] == 8
    # Little's law from the kernel's own counters: about the queue asked for
    assert 5.0 <= device["evidence"]["in_flight"] <= 8.5, device
    assert "of 8 requests in flight" in device["words"]
    assert "page_cache_read" not in kinds(limits)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of its own, unmounted by name after the test."""
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300m", "disklab-limits", str(mnt)],
                   check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_the_engine_on_tmpfs_is_the_cpu(tmp_path: Path, tmpfs: Path) -> None:
    limits = limited(tmp_path, tmpfs, 'mode = "write"\nblock_size = "4k"\nsize = "200m"\n'
                     'runtime = "2s"\ndirect = false')
    (cpu,) = [x for x in limits if x["kind"] == "cpu"]
    # the engine's one thread at a core, or (a loaded machine) every CPU busy
    assert (cpu["evidence"]["per_thread_pct"] >= 90
            or cpu["evidence"].get("machine_cpu_pct", 0) >= 90), cpu
    assert cpu["words"].startswith("CPU: ")
    assert "device" not in kinds(limits)  # tmpfs has no device to be busy


def test_a_run_of_a_fifth_of_a_second_is_too_short(tmp_path: Path, workdir: Path) -> None:
    limits = limited(tmp_path, workdir, 'mode = "write"\nblock_size = "1m"\nsize = "8m"\n'
                     'direct = true')
    assert kinds(limits) == {"too_short"}
    assert limits[0]["evidence"]["seconds"] < 1.0


def test_an_imported_result_is_not_known(tmp_path: Path) -> None:
    fixture = Path(__file__).parents[1] / "fixtures" / "fio" / \
        "seqwrite_1m_qd1_libaio_direct_ext4_jsonplus.json"
    library = tmp_path / "lib.sqlite3"
    done = disklab("import", str(fixture), "--library", str(library))
    assert done.returncode == 0, done.stderr
    doc = json.loads(disklab("show", "1", "--json", "--library", str(library)).stdout)
    assert all(kinds(r["limited_by"]) == {"unknown"} for r in doc["results"])
