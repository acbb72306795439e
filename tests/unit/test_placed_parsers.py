"""Per-target and aggregate figures of placed cases (several targets, `on`), read from real
outputs: iozone -C's Child lines (fio's one job per target: in test_fio.py, beside its other
fixtures)."""

from __future__ import annotations

import pytest

from disklab.core import tools
from disklab.core.tools.base import ToolOutput
from tests.helpers import fixture_text

KiB = 1024


def rows(metrics: list, name: str) -> dict[str, float]:
    return {m.params["target"]: m.value for m in metrics
            if m.name == name and "job" not in (m.params or {})}


def test_iozone_children_become_targets() -> None:
    text = fixture_text("iozone", "placed_a+b+a_r64k_s1m_C_x_excel.txt")
    params = {"tests": ("write", "read"), "record_size": 64 * KiB, "file_size": KiB * KiB,
              "threads": 1, "on": "a+b+a"}
    metrics = tools.get_adapter("iozone").parse_result(ToolOutput(stdout=text), params)
    # Child[0] and Child[2] ran on a, Child[1] on b (the -F files' order)
    write = rows(metrics, "write")
    assert set(write) == {"a", "b", "all"}
    children = {0: (1024.0, 4966395.50), 1: (1024.0, 4014717.25), 2: (1024.0, 4339202.50)}
    seconds = {i: x / r for i, (x, r) in children.items()}
    assert write["b"] == pytest.approx(1024 * KiB / seconds[1])
    assert write["a"] == pytest.approx(2 * 1024 * KiB / max(seconds[0], seconds[2]))
    assert write["all"] == pytest.approx(3 * 1024 * KiB / max(seconds.values()))
    assert rows(metrics, "write:bytes") == {"a": 2 * KiB * KiB, "b": KiB * KiB,
                                            "all": 3 * KiB * KiB}
    # iozone's own sum ("Children see") stays, as the aggregate's NAME:children
    assert rows(metrics, "write:children")["all"] == pytest.approx(13320315.25 * KiB)
    assert set(rows(metrics, "reread")) == {"a", "b", "all"}
    assert all(m.params.get("target") for m in metrics)  # every row says whose it is


def test_iozone_without_child_lines_is_a_parse_error() -> None:
    text = "\n".join(line for line in fixture_text(
        "iozone", "placed_a+b+a_r64k_s1m_C_x_excel.txt").splitlines() if "Child[" not in line)
    params = {"tests": ("write", "read"), "record_size": 64 * KiB, "file_size": KiB * KiB,
              "on": "a+b+a"}
    with pytest.raises(Exception, match="Child"):
        tools.get_adapter("iozone").parse_result(ToolOutput(stdout=text), params)
