"""The helper's end when its client dies: the end of its input and then, microseconds later,
its death signal (SIGTERM), as a SIGKILL of `disklab run` gives it. Whatever moment the signal
lands, the helper tears down what it made (here: an image it created and the loop device it
attached) and exits 0. Before the fix (core/root_helper/ending.py) the signal, landing while the
helper left its loop for the teardown, made it exit 143, often with both left: 29 of 40 ends
here, and most whole `make test` runs on a quiet machine (test_kill_leftovers' image run)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import IS_ROOT
from tests.integration.privhelper_fixtures import RawHelper, helper_env, venv_python

pytestmark = [pytest.mark.root]

TRIES = 40
DELAYS_US = 200  # the signal lands 0, 10, ... 190 microseconds after the end of the input


def loops_of(image: Path) -> list[str]:
    out = subprocess.run(["losetup", "-j", str(image)], capture_output=True, text=True).stdout
    return [line.split(":")[0] for line in out.splitlines() if line]


def end_like_a_killed_client(helper: RawHelper, delay: float) -> int:
    """Close the helper's input, send SIGTERM `delay` seconds later; its exit status."""
    assert helper.p.stdin is not None
    helper.p.stdin.close()
    started = time.perf_counter()
    while time.perf_counter() - started < delay:
        pass  # a busy wait: a sleep this short is not kept
    os.kill(helper.p.pid, signal.SIGTERM)
    return helper.p.wait(60)


def test_the_helper_tears_down_whenever_the_death_signal_lands(tmp_path: Path) -> None:
    if not IS_ROOT:
        pytest.skip("the helper attaches loop devices: root")
    ends: list[tuple[int, int, bool]] = []  # (delay in us, exit status, anything left)
    for i in range(TRIES):
        image = tmp_path / f"end-{i}.img"
        helper = RawHelper([venv_python(), "-I", "-m", "disklab.core.root_helper"], helper_env())
        (attached,) = helper.send(json.dumps({"id": 1, "op": "attach", "args": {
            "image": str(image), "size": 1 << 20}}).encode())
        assert attached["ok"], attached
        delay_us = (i * 10) % DELAYS_US
        try:
            status = end_like_a_killed_client(helper, delay_us / 1e6)
        finally:
            left = loops_of(image)
            for device in left:  # a failing end must not leave the machine changed
                subprocess.run(["losetup", "--detach", device], check=False)
        ends.append((delay_us, status, bool(left) or image.exists()))
    bad = [end for end in ends if end[1] != 0 or end[2]]
    assert bad == [], f"{len(bad)} of {TRIES} ends (delay us, exit status, left) went wrong: {bad}"
