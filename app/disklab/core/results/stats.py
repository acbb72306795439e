"""The statistics behind every "better" and "worse": Student's t distribution and Welch's test.

Two benchmark runs never give the same figure, so a comparison that calls any difference above
a fixed per cent "better" calls noise better half of the time. A difference counts here only
when Welch's t-test (unequal variances, the right test for two sets of repeats whose spread
need not match) finds it unlikely under "no difference", and its confidence interval excludes
zero.

The t distribution is computed here rather than taken from scipy: it is one function (the
regularised incomplete beta, by its continued fraction evaluated with Lentz's method, as in
Numerical Recipes §6.4) and a root search, and DiskLab's headless installs stay small. The tests
check it against published t tables.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ALPHA = 0.05  # the significance level unless the user sets another
NOISY_CV = 0.10  # a coefficient of variation above this, over NOISY_MIN_N runs, is noisy
NOISY_MIN_N = 3

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 500


def _beta_cf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_ITER + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if a <= 0 or b <= 0:
        raise ValueError(f"betainc needs a, b > 0 (got {a}, {b})")
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    front = math.exp(log_front)
    # the continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry
    # I_x(a, b) = 1 - I_(1-x)(b, a) on the other side
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def t_sf2(t: float, df: float) -> float:
    """The two-sided tail probability P(|T| >= |t|) of Student's t with `df` degrees of freedom
    (df may be fractional, as Welch's is)."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0 (got {df})")
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom."""
    tail = t_sf2(t, df) / 2.0
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = p (0 < p < 1): bisection on the CDF, which is monotone, to full
    double precision; the bracket grows until it holds the root (t of df = 1 at p = 0.9995 is
    636.6)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a quantile needs 0 < p < 1 (got {p})")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 2.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
        if hi > 1e300:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def cv(mean: float | None, stddev: float | None) -> float | None:
    """The coefficient of variation stddev / |mean| (a fraction), None without both or at a
    zero mean."""
    if mean is None or stddev is None or mean == 0:
        return None
    return stddev / abs(mean)


def is_noisy(mean: float | None, stddev: float | None, n: int) -> bool:
    """Whether a mean is too spread to trust: CV above NOISY_CV over NOISY_MIN_N runs or more
    (over two runs a CV says little, so it is not flagged)."""
    c = cv(mean, stddev)
    return n >= NOISY_MIN_N and c is not None and c > NOISY_CV


@dataclass(frozen=True)
class Welch:
    """Welch's t-test of mean a - mean b, with the (1 - alpha) confidence intervals of the
    difference and of the ratio a / b (Fieller's; None when b's mean is not clearly away from
    zero, where the interval is unbounded)."""

    delta: float
    se: float
    df: float
    t: float
    p_value: float
    alpha: float
    ci_low: float
    ci_high: float
    ratio: float | None
    ratio_low: float | None
    ratio_high: float | None

    @property
    def significant(self) -> bool:
        """p < alpha and the interval of the difference excludes zero."""
        return self.p_value < self.alpha and (self.ci_low > 0 or self.ci_high < 0)


def welch(mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int,
          alpha: float = ALPHA) -> Welch:
    """Welch's test of a against b (b is the baseline). Needs n >= 2 on both sides.

    Degrees of freedom by Welch-Satterthwaite; when neither side varies at all (stddev 0 twice)
    the difference is exact: p = 0 for a non-zero difference, 1 for none, interval a point.
    """
    if n_a < 2 or n_b < 2:
        raise ValueError("Welch's test needs two runs or more on each side")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1 (got {alpha})")
    va, vb = sd_a * sd_a / n_a, sd_b * sd_b / n_b
    delta = mean_a - mean_b
    se = math.sqrt(va + vb)
    if se == 0.0:
        df = float(n_a + n_b - 2)
        p = 0.0 if delta != 0 else 1.0
        t = math.copysign(math.inf, delta) if delta else 0.0
        q = 0.0
    else:
        df = (va + vb) ** 2 / (va * va / (n_a - 1) + vb * vb / (n_b - 1))
        t = delta / se
        p = t_sf2(t, df)
        q = t_quantile(1.0 - alpha / 2.0, df)
    ratio = mean_a / mean_b if mean_b else None
    r_low, r_high = _fieller(mean_a, va, mean_b, vb, q)
    return Welch(delta, se, df, t, p, alpha, delta - q * se, delta + q * se, ratio,
                 r_low, r_high)


def _fieller(ma: float, va: float, mb: float, vb: float, q: float
             ) -> tuple[float | None, float | None]:
    """Fieller's interval of ma / mb for independent means with variances va, vb and the t
    quantile q: the ratios r with (ma - r mb)^2 <= q^2 (va + r^2 vb). It holds 1 exactly when
    the difference's interval holds 0, so the two intervals never disagree."""
    a = mb * mb - q * q * vb
    if a <= 0:
        return None, None
    b = ma * mb
    c = ma * ma - q * q * va
    root = math.sqrt(max(b * b - a * c, 0.0))
    return (b - root) / a, (b + root) / a


def mean_interval(mean: float | None, stddev: float | None, n: int, alpha: float = ALPHA
                  ) -> tuple[float | None, float | None]:
    """The (1 - alpha) confidence interval of a mean over n runs (Student's t), (None, None)
    below two runs: how far the true mean may lie from the one measured."""
    if mean is None or stddev is None or n < 2:
        return None, None
    half = t_quantile(1.0 - alpha / 2.0, n - 1) * stddev / math.sqrt(n)
    return mean - half, mean + half
