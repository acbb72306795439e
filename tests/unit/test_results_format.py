"""core.results.format: the one text of a figure, for every surface."""

from __future__ import annotations

import pytest

from disklab.core.results.format import (
    MISSING,
    figure_label,
    format_cv,
    format_delta,
    format_direction,
    format_excluded,
    format_interval,
    format_left_out,
    format_mean_std,
    format_p,
    format_params,
    format_ratio_interval,
    format_signed,
    format_spread,
    format_value,
    number,
)
from disklab.core.vocab.units import GiB, MiB, units_used


@pytest.mark.parametrize(("value", "text"), [
    (0.0, "0"), (0.0123, "0.0123"), (0.5, "0.500"), (2.5, "2.50"), (13.54, "13.5"),
    (95.37, "95.4"), (104.9, "105"), (1380.2, "1380"), (11403.7, "11404"), (1e-7, "0.000000100"),
    (-4.25, "-4.25"),
])
def test_number_has_three_significant_digits_and_no_exponent(value: float, text: str) -> None:
    assert number(value) == text


def test_format_value_per_unit() -> None:
    assert format_value(None, "B/s") == MISSING == "–"
    assert format_value(float("nan"), "B/s") == MISSING
    assert format_value(1e6, "B/s") == "1.00 MB/s"  # SI, KDiskMark's, by default
    assert format_value(850.0, "ns") == "0.850 µs"
    assert format_value(2.5e6, "ns") == "2500 µs"
    assert format_value(12500.0, "op/s") == "12500 op/s"
    assert format_value(42.25, "%") == "42.2 %"
    assert format_value(256e6, "B") == "256 MB"
    assert format_value(3.0, "") == "3.00"
    with units_used("iec"):
        assert format_value(1048576.0, "B/s") == "1.00 MiB/s"
        assert format_value(256 * MiB, "B") == "256 MiB"
        assert format_value(850.0, "ns") == "0.850 µs"  # not a rate or a size: as it was


def test_rates_stay_in_one_unit_so_a_column_reads_in_one_unit() -> None:
    """The disagreement this module ended: one place wrote 1380 MiB/s, another 1.3 GiB/s."""
    assert format_value(1380e6, "B/s") == "1380 MB/s"
    assert format_value(1.35e9, "B/s") == "1350 MB/s"
    with units_used("iec"):
        assert format_value(1380 * MiB, "B/s") == "1380 MiB/s"
        assert format_value(1.35 * GiB, "B/s") == "1382 MiB/s"


def test_mean_std_and_delta() -> None:
    assert format_mean_std(110e6, 14142135.6, 2, "B/s") == "110 MB/s ± 14.1 MB/s"
    assert format_mean_std(110e6, None, 1, "B/s") == "110 MB/s"
    assert format_mean_std(110e6, 0.0, 1, "B/s") == "110 MB/s"  # one repeat: no spread
    with units_used("iec"):
        assert format_mean_std(110e6, 14142135.6, 2, "B/s") == "105 MiB/s ± 13.5 MiB/s"
    assert format_mean_std(None, 3.0, 2, "B/s") == MISSING
    assert format_delta(4.25) == "+4.2 %" and format_delta(-20.0) == "-20.0 %"
    assert format_delta(None) == MISSING


def test_params_and_labels() -> None:
    params = {"mode": "write", "block_size": 1 << 20, "tests": ["write", "read"], "x": None}
    assert format_params(params) == "mode=write block_size=1m tests=write,read"
    assert format_params(params, skip=("mode",)) == "block_size=1m tests=write,read"
    row = {"tool": "engine", "metric": "write", "params": params}
    assert figure_label(row) == "engine write block_size=1m tests=write,read"  # not write twice
    assert figure_label({"tool": "fio", "metric": "read:iops", "params": '{"bs": 4096}'}) == \
        "fio read:iops bs=4k"


def test_the_figures_of_a_test() -> None:
    assert format_spread(3, 0.0412) == "n=3, CV 4.1 %" and format_spread(1, None) == "n=1"
    assert format_cv(0.129) == "12.9 %" and format_cv(None) == ""
    assert format_p(0.78) == "p = 0.78" and format_p(0.0036) == "p = 0.0036"
    assert format_p(0.0497) == "p = 0.0497"  # never rounded to the 0.05 it is compared with
    assert format_p(0.0002) == "p < 0.001" and format_p(None) == MISSING
    assert format_signed(5.47e6, "B/s") == "+5.47 MB/s"
    assert format_signed(-183e6, "B/s") == "-183 MB/s"
    assert format_interval(-183e6, 281e6, "B/s", 0.05) == "95 % CI -183 … +281 MB/s"
    with units_used("iec"):
        assert format_signed(5.47 * MiB, "B/s") == "+5.47 MiB/s"
        assert format_signed(-183 * MiB, "B/s") == "-183 MiB/s"
        assert format_interval(-183 * MiB, 281 * MiB, "B/s", 0.05) == \
            "95 % CI -183 … +281 MiB/s"
    assert format_interval(1000.0, 2000.0, "ns", 0.1) == "90 % CI +1.00 … +2.00 µs"
    assert format_ratio_interval(1.05, 1.149) == "×1.05 … ×1.15"
    assert format_ratio_interval(None, None) == "ratio unbounded"
    assert format_ratio_interval(-39.2, 162.0) == "ratio not bounded below, at most ×162"
    assert format_direction(True) == "higher is better"
    assert format_direction(False) == "lower is better"


def test_runs_left_out() -> None:
    assert format_left_out([]) == ""
    assert format_left_out(["cancelled"]) == "1 run excluded (cancelled)"
    assert format_left_out(["failed", "cancelled", "failed"]) == \
        "3 runs excluded (1 cancelled, 2 failed)"
    assert format_excluded({}, False) == ""
    assert format_excluded({"cancelled": 1}, False).startswith(
        "1 run excluded from the means, comparisons and charts (1 cancelled)")
    assert "included in the means" in format_excluded({"failed": 2}, True)
