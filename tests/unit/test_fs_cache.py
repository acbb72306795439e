"""The dm-cache config option (the data=journal study's SSD cache): the table is checked by key,
and `plan validate` says why this machine cannot build it: no device-mapper, no dm-cache target,
or (where the kernel has it) that this build does not set it up yet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core import proc
from disklab.core.fs.cache import table_problems

PLAN = """\
name = "cached"
[target]
image = {{ path = "{image}", size = "256m" }}
[[config]]
label = "ext4 over a dm-cache"
fs = "ext4"
cache = {{ device = "/dev/sdz", confirm = "/dev/sdz SERIAL 1000", mode = "{mode}" }}
[[test]]
tool = "tree"
dirs = 1
"""


@pytest.mark.parametrize(("table", "key"), [
    ({"device": "sdz", "confirm": "x", "mode": "writeback"}, "cache.device"),
    ({"device": "/dev/sdz", "mode": "writeback"}, "cache.confirm"),
    ({"device": "/dev/sdz", "confirm": "x", "mode": "readonly"}, "cache.mode"),
    ({"device": "/dev/sdz", "confirm": "x", "policy": "lru"}, "cache.policy"),
    ("/dev/sdz", "cache"),
])
def test_a_bad_cache_table_is_refused_by_key(table: object, key: str) -> None:
    assert [k for k, _ in table_problems(table)] == [key]


def test_plan_validate_says_why_this_machine_has_no_dm_cache(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(image=tmp_path / "i.img", mode="writeback"))
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "plan", "validate",
                           str(plan)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "line 7: config[1].cache: cannot put a dm-cache under this configuration" in (
        done.stderr)
    targets = proc.run(["dmsetup", "targets"], timeout=10) if proc.which("dmsetup") else None
    if targets is None:
        assert "dmsetup is not available" in done.stderr
    elif targets.returncode != 0:  # no device-mapper: the kernel's own words
        assert "this kernel has no device-mapper (dmsetup targets:" in done.stderr
    elif "cache" not in targets.stdout.split():
        assert "dm-cache" in done.stderr and "dmsetup targets lists" in done.stderr
    else:
        assert "does not set it up yet" in done.stderr and "lvmcache" in done.stderr
