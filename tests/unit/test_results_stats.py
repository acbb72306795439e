"""core.results.stats: Student's t distribution against published tables, and Welch's test
against a textbook example and the comparison the issue reported (+12.2 % called better)."""

from __future__ import annotations

import math
import statistics

import pytest

from disklab.core.results import stats
from disklab.core.results.stats import (
    betainc,
    cv,
    is_noisy,
    t_cdf,
    t_quantile,
    t_sf2,
    welch,
)

# two-sided 95 % critical values t_{0.975, df}, as every t table prints them
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 8: 2.306, 10: 2.228,
         15: 2.131, 20: 2.086, 30: 2.042, 60: 2.000, 120: 1.980}
# other columns of the same tables: (p, df) -> t
T_OTHER = {(0.95, 1): 6.314, (0.95, 10): 1.812, (0.99, 5): 3.365, (0.995, 1): 63.657,
           (0.995, 10): 3.169, (0.9995, 1): 636.619, (0.9995, 30): 3.646, (0.90, 2): 1.886}


@pytest.mark.parametrize(("df", "t"), sorted(T_975.items()))
def test_quantile_matches_the_t_table(df: int, t: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(t, abs=5e-4)
    assert t_quantile(0.025, df) == pytest.approx(-t, abs=5e-4)
    assert t_cdf(t, df) == pytest.approx(0.975, abs=5e-5)  # t rounded to 3 decimals


@pytest.mark.parametrize(("key", "t"), sorted(T_OTHER.items()))
def test_other_columns_of_the_table(key: tuple[float, int], t: float) -> None:
    p, df = key
    assert t_quantile(p, df) == pytest.approx(t, abs=5e-4)


def test_large_df_tends_to_the_normal() -> None:
    assert t_quantile(0.975, 1e7) == pytest.approx(1.95996, abs=1e-4)
    assert t_quantile(0.975, 1000) == pytest.approx(1.962, abs=5e-4)


def test_two_sided_p_values() -> None:
    # t = 2.0 with 10 df: p = 0.0734 (two-sided); t = 1 with 1 df: p = 0.5 exactly (Cauchy)
    assert t_sf2(2.0, 10) == pytest.approx(0.07339, abs=1e-5)
    assert t_sf2(1.0, 1) == pytest.approx(0.5, abs=1e-12)
    assert t_sf2(0.0, 3) == pytest.approx(1.0)
    assert t_sf2(-2.0, 10) == t_sf2(2.0, 10)
    assert t_sf2(math.inf, 4) == 0.0
    # the Cauchy CDF in closed form, for fractional t
    for t in (-3.3, -0.4, 0.7, 5.0):
        assert t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-12)


def test_incomplete_beta_closed_forms() -> None:
    for x in (0.0, 0.1, 0.37, 0.5, 0.93, 1.0):
        assert betainc(1, 1, x) == pytest.approx(x, abs=1e-13)
        assert betainc(3.5, 1, x) == pytest.approx(x ** 3.5, abs=1e-13)
        assert betainc(1, 2.5, x) == pytest.approx(1 - (1 - x) ** 2.5, abs=1e-13)
    assert betainc(7.3, 7.3, 0.5) == pytest.approx(0.5, abs=1e-13)
    with pytest.raises(ValueError):
        betainc(0, 1, 0.5)


def test_welch_textbook_example() -> None:
    """Wikipedia's Welch's t-test example 1: t = -2.46, df = 25.0, p = 0.021."""
    a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
         21.4]
    b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
         24.4]
    w = welch(statistics.fmean(a), statistics.stdev(a), len(a),
              statistics.fmean(b), statistics.stdev(b), len(b))
    assert w.t == pytest.approx(-2.46, abs=0.005)
    assert w.df == pytest.approx(24.99, abs=0.01)
    assert w.p_value == pytest.approx(0.021, abs=0.0005)
    assert w.significant and w.ci_high < 0


def test_the_issues_two_identical_runs_are_no_significant_difference() -> None:
    """n = 2 each, +12.2 % at ± 85 / ± 188 MiB/s (a baseline of 400 MiB/s): p is about 0.78,
    so the old "+12.2 % better" was noise."""
    w = welch(448.8, 188.0, 2, 400.0, 85.0, 2)
    assert w.p_value == pytest.approx(0.78, abs=0.01)
    assert not w.significant
    assert w.ci_low < 0 < w.ci_high
    assert w.ratio == pytest.approx(1.122)
    assert w.ratio_low is None or w.ratio_low < 1  # the ratio's interval holds 1 too


def test_interval_and_ratio_interval_agree() -> None:
    for ma, sa, mb, sb in ((110, 3, 100, 2), (101, 3, 100, 2), (90, 1, 100, 10)):
        w = welch(ma, sa, 5, mb, sb, 4)
        assert w.ci_low < w.delta < w.ci_high
        assert w.ratio_low is not None and w.ratio_high is not None
        assert (w.ci_low > 0 or w.ci_high < 0) == (w.ratio_low > 1 or w.ratio_high < 1)
        # the half width is the t quantile times the standard error
        q = t_quantile(0.975, w.df)
        assert w.ci_high - w.delta == pytest.approx(q * w.se)


def test_alpha_sets_the_interval_level_and_the_verdict() -> None:
    w05 = welch(104.0, 3.0, 4, 100.0, 3.0, 4)  # p about 0.1
    w10 = welch(104.0, 3.0, 4, 100.0, 3.0, 4, alpha=0.2)
    assert 0.05 < w05.p_value < 0.2
    assert not w05.significant and w10.significant
    assert w10.ci_high - w10.ci_low < w05.ci_high - w05.ci_low


def test_no_spread_at_all() -> None:
    assert welch(5.0, 0.0, 3, 5.0, 0.0, 3).p_value == 1.0
    same = welch(5.0, 0.0, 3, 4.0, 0.0, 3)
    assert same.p_value == 0.0 and same.significant and same.ci_low == same.ci_high == 1.0


def test_one_run_is_no_test() -> None:
    with pytest.raises(ValueError):
        welch(1.0, 0.0, 1, 2.0, 0.1, 3)


def test_coefficient_of_variation_and_noise() -> None:
    assert cv(100.0, 12.0) == pytest.approx(0.12)
    assert cv(0.0, 1.0) is None and cv(None, 1.0) is None
    assert is_noisy(100.0, 12.0, 3)
    assert not is_noisy(100.0, 12.0, 2)  # two runs: too few to call noisy
    assert not is_noisy(100.0, 9.0, 10)


@pytest.mark.parametrize("df", [0.4, 1.0, 1.7, 2.0, 2.6, 3.3, 5.0, 9.4, 41.0, 1e4])
def test_quantile_inverts_the_cdf_everywhere(df: float) -> None:
    # Welch's df is fractional and small: the quantile must invert the CDF there too, in both
    # tails, to within rounding (the root is kept in a bracket, whatever Newton's first guess)
    for p in (1e-6, 0.001, 0.025, 0.3, 0.9, 0.975, 0.9995, 1 - 1e-6):
        t = t_quantile(p, df)
        assert math.isfinite(t)
        assert t_cdf(t, df) == pytest.approx(p, rel=1e-9, abs=1e-15)
    # next to the centre the CDF itself (1 - a tail near 1/2) is good to ~1e-9 at large df
    assert t_cdf(t_quantile(0.5001, df), df) == pytest.approx(0.5001, abs=1e-8)


def test_verdict_and_interval_never_disagree() -> None:
    # `significant` reads p alone; the interval (worked out when read) must say the same
    for ma, sa, na, mb, sb, nb in ((110, 3, 5, 100, 2, 4), (101, 3, 5, 100, 2, 4),
                                   (90, 1, 3, 100, 10, 7), (100.5, 0.2, 2, 100, 0.3, 2),
                                   (7, 5, 2, 3, 0.1, 9), (3.2, 0.4, 30, 3.0, 0.5, 25)):
        for alpha in (0.01, 0.05, 0.2):
            w = welch(ma, sa, na, mb, sb, nb, alpha)
            assert w.significant == (w.ci_low > 0 or w.ci_high < 0), (ma, mb, alpha)


@pytest.mark.parametrize("df", [1.0, 2.0, 3.5, 10.0, 120.0])
@pytest.mark.parametrize("q", [0.05, 1e-3, 1e-7, 1e-12, 1e-16, 1e-100])
def test_the_upper_tail_quantile_holds_where_one_minus_q_rounds_to_one(q: float,
                                                                       df: float) -> None:
    t = stats.t_upper_quantile(q, df)
    assert t > 0
    assert math.isclose(stats.t_sf2(t, df) / 2.0, q, rel_tol=1e-9)
    if q >= 1e-6:
        assert t == stats.t_quantile(1.0 - q, df)
