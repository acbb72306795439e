"""Welch's verdict decided from the t quantiles around its df must be the verdict p gives:
over a spread of differences, spreads and run counts, and at t right on the quantiles."""

from __future__ import annotations

import random

import pytest

from disklab.core.results.stats import Welch, t_quantile, t_sf2, welch


def _p_says(w: Welch) -> bool:
    return t_sf2(w.t, w.df) < w.alpha


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2])
def test_the_verdict_is_the_one_p_gives_over_many_tests(alpha: float) -> None:
    rng = random.Random(17)
    decided = 0
    for _ in range(3000):
        n_a, n_b = rng.randint(2, 12), rng.randint(2, 12)
        sd_a, sd_b = rng.uniform(0.01, 5), rng.uniform(0.01, 5)
        w = welch(100 + rng.gauss(0, 3), sd_a, n_a, 100.0, sd_b, n_b, alpha)
        verdict = w.significant
        decided += "p_value" not in w.__dict__  # decided without working out p
        assert verdict == _p_says(w), (w, w.p_value)
        assert w.p_value == t_sf2(w.t, w.df)  # p read afterwards is the exact one
    assert decided > 2500  # the quantiles decide almost every test


@pytest.mark.parametrize("df", [1.0, 2.5, 4.0, 7.93, 30.2])
def test_a_t_on_the_quantile_is_decided_by_p(df: float) -> None:
    """Differences whose t lands on, just inside and just outside the critical t (at df and
    at the whole df either side): the verdict is still p's."""
    for whole in (df, float(int(df)), float(int(df) + 1)):
        q = t_quantile(0.975, whole)
        for t in (q, q * (1 + 1e-12), q * (1 - 1e-12), q * (1 + 1e-6), q * (1 - 1e-6)):
            w = Welch(delta=t, se=1.0, df=df, t=t, alpha=0.05, ratio=None,
                      _means=(t, 0.5, 0.0, 0.5))
            assert w.significant == (t_sf2(t, df) < 0.05)


def test_an_exact_difference_keeps_its_p() -> None:
    """Neither side varies: p is 0 for a difference, 1 for none, with no t distribution."""
    assert welch(2.0, 0.0, 3, 1.0, 0.0, 3).p_value == 0.0
    assert welch(2.0, 0.0, 3, 1.0, 0.0, 3).significant
    assert welch(1.0, 0.0, 3, 1.0, 0.0, 3).p_value == 1.0
    assert not welch(1.0, 0.0, 3, 1.0, 0.0, 3).significant
