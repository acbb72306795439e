"""A queue depth fio ignores is a warning of the plan check (issue 29): its synchronous
engines keep one I/O in flight whatever iodepth says, and Linux runs libaio's buffered I/O
synchronously. The check is the core's, so `disklab plan validate` and the Test matrix both
show it, at the test's iodepth key; the cases still run (a warning, not an error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from disklab.core.plan.parse import parse_plan

PLAN = """
name = "qd"
[target]
directory = "{d}"
[[test]]
tool = "fio"
rw = "randread"
bs = "4k"
size = "16m"
direct = {direct}
iodepth = {depth}
ioengine = "{engine}"
"""


def _warnings(tmp_path: Path, engine: str, depth: str, direct: str = "true") -> list:
    checked = parse_plan(PLAN.format(d=tmp_path, engine=engine, depth=depth, direct=direct))
    return [w for w in checked.warnings if w.key.endswith("iodepth")]


@pytest.mark.parametrize("engine", ["psync", "sync", "pvsync2", "mmap"])
def test_a_queue_depth_with_a_synchronous_engine_is_a_warning(tmp_path: Path,
                                                              engine: str) -> None:
    (warning,) = _warnings(tmp_path, engine, "[1, 16, 32]")  # once per test, not per case
    assert warning.key == "test[1].iodepth" and warning.severity == "warning"
    assert f"synchronous ioengine {engine}" in warning.message
    assert "fio ignores it" in warning.message


def test_libaio_buffered_is_a_warning_and_direct_is_not(tmp_path: Path) -> None:
    (warning,) = _warnings(tmp_path, "libaio", "16", direct="false")
    assert "direct = false" in warning.message
    assert _warnings(tmp_path, "libaio", "16") == []
    assert _warnings(tmp_path, "io_uring", "32") == []
    assert _warnings(tmp_path, "psync", "1") == []  # depth 1: nothing ignored
