"""data=journal under a small page_cache_limit: the journal pins the written pages until it
commits, the memory cgroup cannot reclaim them and its OOM killer ends iozone. The case failure
must say that the cgroup's limit was reached (the group's own oom_kill counter), not only
"killed by signal 9", and `plan validate` warns before the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.system.cgroups import find_memory_controller

pytestmark = [pytest.mark.root, pytest.mark.slow]

PLAN = """\
name = "data=journal under a page-cache limit"
repeats = 1
page_cache_limit = "32m"

[target]
image = {{ path = "{image}", size = "1g" }}

[[config]]
label = "journal commit=300"
fs = "ext4"
mkfs = {{ journal_size = "256m" }}
mount = ["commit=300", "data=journal"]

[[test]]
tool = "iozone"
tests = ["write"]
record_size = "1m"
file_size = "256m"
threads = 2
"""


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=300)


def test_an_oom_kill_in_the_memory_cgroup_is_said_with_the_limit(tmp_path: Path) -> None:
    if os.geteuid() != 0 or find_memory_controller() is None:
        pytest.skip("needs root and a memory cgroup controller")
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(image=tmp_path / "oom.img"))
    library = tmp_path / "lib.sqlite3"

    valid = disklab("plan", "validate", str(plan), "--library", str(library))
    assert valid.returncode == 0, valid.stderr
    assert ("config[1].mount: 'journal commit=300': data=journal with commit=300 keeps up to "
            "300 s of written data in memory") in valid.stdout + valid.stderr
    assert "OOM killer may end the tool" in valid.stdout + valid.stderr

    run = subprocess.Popen([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                            "--library", str(library), "--json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = run.communicate(timeout=300)
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    failed = [e for e in events if e.get("event") == "CaseFailed"]
    assert len(failed) == 1, out[-2000:] + err[-2000:]
    assert failed[0]["signal"] == 9
    assert failed[0]["error"].startswith(
        "iozone was killed by the kernel's OOM killer: the memory cgroup's limit of 32m "
        "(page_cache_limit) was reached; data=journal with commit=300"), failed[0]["error"]
    # the group was read before it was removed, and removed
    controller = find_memory_controller()
    assert controller is not None
    assert not [p for p in controller.base.iterdir() if p.name.startswith(f"disklab-{run.pid}-")]


def test_without_a_limit_there_is_no_oom_warning(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(image=tmp_path / "oom.img").replace(
        'page_cache_limit = "32m"\n', ""))
    valid = disklab("plan", "validate", str(plan), "--library", str(tmp_path / "l.sqlite3"))
    assert valid.returncode == 0, valid.stderr
    assert "OOM" not in valid.stdout + valid.stderr
