"""core.vocab.units' one units choice (issue 49, point 6): SI (MB/s, GB) by default, as
KDiskMark labels its figures, or IEC (MiB/s, GiB); every rate and size written through it, the
plan's [report] `units` key checked like every other key."""

from __future__ import annotations

import pytest

from disklab.core.plan.parse import parse_plan
from disklab.core.results.charts import session_charts
from disklab.core.standard_set import standard_tiles
from disklab.core.vocab.errors import PlanError
from disklab.core.vocab.units import (
    GiB,
    MiB,
    check_units,
    human_bytes,
    human_rate,
    rate_unit,
    size_unit,
    unit_system,
    units_used,
    use_units,
)

PLAN = """\
name = "u"
[target]
directory = "/tmp"
[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "8m"
[report]
{report}
"""


def test_si_by_default_iec_when_chosen() -> None:
    assert unit_system() == "si"
    assert rate_unit() == ("MB/s", 1e6) and size_unit() == ("MB", 1e6)
    assert human_rate(1_701_838_848) == "1702 MB/s"  # the tile's 1662 and the table's 1623
    assert human_bytes(500 * 1000**3) == "500 GB" and human_bytes(4 * GiB) == "4.29 GB"
    assert human_bytes(999) == "999 B"
    with units_used("iec"):
        assert unit_system() == "iec"
        assert rate_unit() == ("MiB/s", MiB) and size_unit() == ("MiB", MiB)
        assert human_rate(1_701_838_848) == "1623 MiB/s"
        assert human_bytes(4 * GiB) == "4 GiB" and human_bytes(256 * MiB) == "256 MiB"
    assert unit_system() == "si"  # given back


def test_a_choice_is_si_or_iec_and_nothing_else() -> None:
    assert check_units(" IEC ") == "iec" and check_units("si") == "si"
    for bad in ("kib", "", None, 2, "MB/s"):
        with pytest.raises(ValueError, match="is not a units choice"):
            check_units(bad)
    with pytest.raises(ValueError):
        use_units("binary")
    assert unit_system() == "si"


def test_the_tiles_write_the_rate_as_every_table_does() -> None:
    """A tile of the standard set says the same figure and unit as the table's row: the
    SEQ1M Q8T1 read of 1,701,838,848 B/s is 1702 MB/s (KDiskMark's own division gave 1662
    beside the table's 1623 MiB/s), or 1623 MiB/s in IEC."""
    row = {"tool": "fio", "metric": "read", "unit": "B/s", "values": [1_701_838_848.0],
           "params": {"rw": "read", "bs": 1 << 20, "iodepth": 8, "numjobs": 1}}
    tile = standard_tiles([row])[0]
    assert (tile.test, tile.direction, tile.text) == ("SEQ1M Q8T1", "read", "1702")
    assert tile.detail.startswith("MB/s") and human_rate(1_701_838_848) == "1702 MB/s"
    with units_used("iec"):
        assert (tile.text, tile.detail.split()[0]) == ("1623", "MiB/s")


def test_a_chart_is_drawn_in_the_units_chosen() -> None:
    rows = [{"tool": "engine", "metric": "write", "unit": "B/s", "values": [v],
             "mean": v, "stddev": None, "n": 1, "config": "c",
             "params": {"mode": "write", "block_size": bs}}
            for bs, v in ((4096, 100e6), (65536, 200e6))]
    spec = session_charts(rows)[0]
    assert spec.y_label == "MB/s" and spec.series[0].y == (100.0, 200.0)
    with units_used("iec"):
        spec = session_charts(rows)[0]
        assert spec.y_label == "MiB/s"
        assert spec.series[0].y == pytest.approx((100e6 / MiB, 200e6 / MiB))


def test_the_reports_units_key() -> None:
    assert parse_plan(PLAN.format(report='units = "iec"')).plan.report.units == "iec"
    assert parse_plan(PLAN.format(report='units = "SI"')).plan.report.units == "si"
    assert parse_plan(PLAN.format(report='title = "t"')).plan.report.units == ""
    for bad in ('"furlongs"', "3", "[\"si\"]"):
        with pytest.raises(PlanError) as e:
            parse_plan(PLAN.format(report=f"units = {bad}"))
        problems = [str(p) for p in e.value.problems]
        assert len(problems) == 1 and "report.units: " in problems[0], problems
        assert "is not a units choice (si: MB/s, GB; iec: MiB/s, GiB)" in problems[0]
