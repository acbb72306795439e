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

import functools
import math
from dataclasses import dataclass, field
from functools import cached_property
from statistics import NormalDist

ALPHA = 0.05  # the significance level unless the user sets another
NOISY_CV = 0.10  # a coefficient of variation above this, over NOISY_MIN_N runs, is noisy
NOISY_MIN_N = 3

_EPS = 1e-15
_TINY = 1e-300
_MAX_ITER = 500
_NORMAL = NormalDist()


def _beta_cf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz). The constants
    are locals: a comparison of a 10,000-run session evaluates this thousands of times, and
    the loop's global look-ups were a fifth of it."""
    tiny, eps = _TINY, _EPS
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, _MAX_ITER + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        if abs(c) <= tiny:
            c = tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        if abs(c) <= tiny:
            c = tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
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


def t_pdf(t: float, df: float) -> float:
    """The density of Student's t with `df` degrees of freedom at t (the CDF's slope)."""
    log_norm = (math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0)
                - 0.5 * math.log(df * math.pi))
    return math.exp(log_norm - (df + 1.0) / 2.0 * math.log1p(t * t / df))


def _t_guess(p: float, df: float) -> float:
    """A first t for P(T <= t) = p (p > 0.5): exact for df = 1 and 2, else the Cornish-Fisher
    expansion around the normal quantile (within 1e-4 from df = 4 on; Newton does the rest)."""
    if df == 1.0:
        return math.tan(math.pi * (p - 0.5))
    if df == 2.0:
        return (2.0 * p - 1.0) / math.sqrt(2.0 * p * (1.0 - p))
    z = _NORMAL.inv_cdf(p)
    z2 = z * z
    g1 = (z2 + 1.0) * z / 4.0
    g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0
    g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0
    g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4


def t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = p (0 < p < 1), to full double precision.

    Newton's method on the CDF from a close first guess (_t_guess), two or three steps where a
    bisection took fifty (a pivot of thousands of cells asks for thousands of quantiles), kept
    inside a bracket that every evaluation narrows so that a step out of it (small df, far
    tails) falls back to bisection and the root is never lost (t of df = 1 at p = 0.9995 is
    636.6)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a quantile needs 0 < p < 1 (got {p})")
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0 (got {df})")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, math.inf
    t = _t_guess(p, df)
    if not 0.0 < t < 1e300:
        t = 1.0
    for _ in range(200):
        err = t_cdf(t, df) - p
        if err == 0.0:
            return t
        if err < 0.0:
            lo = t
        else:
            hi = t
        slope = t_pdf(t, df)
        step = err / slope if slope > 0.0 else math.inf
        nxt = t - step
        if not lo < nxt < hi:  # Newton left the bracket: bisect (or grow it) instead
            nxt = 0.5 * (lo + hi) if hi < math.inf else max(2.0 * t, 1.0)
            if nxt > 1e300:
                return math.inf
        if abs(nxt - t) <= 4e-16 * abs(nxt) or nxt in (lo, hi):
            return nxt
        t = nxt
    return t


def t_upper_quantile(q: float, df: float) -> float:
    """The t with P(T > t) = q (0 < q < 1), from the upper tail itself.

    Why not t_quantile(1 - q): for a tiny q (alpha = 1e-16) 1 - q rounds to 1.0 and the
    quantile is lost; the tail probability (t_sf2) keeps full precision there, so the root is
    found on it directly, bracketed and bisected on t (the tail falls monotonically)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"a tail probability needs 0 < q < 1 (got {q})")
    if q >= 1e-6:
        return t_quantile(1.0 - q, df)
    lo, hi = t_quantile(1.0 - 1e-6, df), 2.0
    while hi <= lo or t_sf2(hi, df) / 2.0 > q:
        hi *= 2.0
        if hi > 1e300:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if t_sf2(mid, df) / 2.0 > q:
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
    zero, where the interval is unbounded).

    The intervals and the p-value are worked out when first read: they need the t
    distribution (the incomplete beta, the quantile), the costliest steps, and a comparison of
    thousands of cells gives verdicts long before anyone reads a cell's p or interval.
    `significant` is p < alpha, the same statement as |t| > q, q the (1 - alpha / 2) quantile
    at df; the quantile falls as df grows, so the quantiles at the whole df either side of
    Welch's fractional one (computed once per df and alpha) decide it for all but a t within
    a hair of them, where p itself decides."""

    delta: float
    se: float
    df: float
    t: float
    alpha: float
    ratio: float | None
    _means: tuple[float, float, float, float] = field(repr=False, compare=False)
    # (mean a, variance of mean a, mean b, variance of mean b), for the intervals
    _p: float | None = field(default=None, repr=False, compare=False)  # exact: se == 0

    @cached_property
    def p_value(self) -> float:
        """The two-sided p-value: P(|T| >= |t|) at df."""
        return self._p if self._p is not None else t_sf2(self.t, self.df)

    @cached_property
    def q(self) -> float:
        """The t quantile of the intervals (0 when neither side varies: the difference is
        exact)."""
        return 0.0 if self.se == 0.0 else t_upper_quantile(self.alpha / 2.0, self.df)

    @property
    def ci_low(self) -> float:
        return self.delta - self.q * self.se

    @property
    def ci_high(self) -> float:
        return self.delta + self.q * self.se

    @cached_property
    def _ratio_interval(self) -> tuple[float | None, float | None]:
        ma, va, mb, vb = self._means
        return _fieller(ma, va, mb, vb, self.q)

    @property
    def ratio_low(self) -> float | None:
        return self._ratio_interval[0]

    @property
    def ratio_high(self) -> float | None:
        return self._ratio_interval[1]

    @property
    def significant(self) -> bool:
        """p < alpha: the difference is unlikely under "no difference", and so its interval
        excludes zero (decided by the quantiles around df where they can, see the class)."""
        if self._p is None and "p_value" not in self.__dict__:
            decided = _beyond_quantile(abs(self.t), self.df, self.alpha)
            if decided is not None:
                return decided
        return self.p_value < self.alpha


# |t| within this relative distance of a whole-df quantile is left to p: the quantile is exact
# to a few ulps, this keeps the decision exact with room to spare
_DECIDE_MARGIN = 1e-9


def _beyond_quantile(abs_t: float, df: float, alpha: float) -> bool | None:
    """Whether |t| > the (1 - alpha / 2) t quantile at df, from the quantiles at floor(df)
    (larger) and ceil(df) (smaller); None when |t| lies between them (or df < 1)."""
    low = math.floor(df)
    if low < 1 or math.isinf(abs_t) or math.isnan(abs_t):
        return None
    if abs_t > _critical_t(low, alpha) * (1.0 + _DECIDE_MARGIN):
        return True
    if abs_t < _critical_t(math.ceil(df), alpha) * (1.0 - _DECIDE_MARGIN):
        return False
    return None


@functools.lru_cache(maxsize=4096)
def _critical_t(df: int, alpha: float) -> float:
    """The two-sided critical t at a whole df, computed once: a comparison asks for a few."""
    return t_upper_quantile(alpha / 2.0, df)


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
    p: float | None
    if se == 0.0:
        df = float(n_a + n_b - 2)
        p = 0.0 if delta != 0 else 1.0
        t = math.copysign(math.inf, delta) if delta else 0.0
    else:
        df = (va + vb) ** 2 / (va * va / (n_a - 1) + vb * vb / (n_b - 1))
        t = delta / se
        p = None  # worked out when read (Welch.p_value)
    ratio = mean_a / mean_b if mean_b else None
    # Welch's fields set as its __init__ would, without a frozen __init__'s object.__setattr__
    # per field (a comparison of a 10,000-run session makes thousands of tests)
    test = object.__new__(Welch)
    test.__dict__.update(delta=delta, se=se, df=df, t=t, alpha=alpha, ratio=ratio,
                         _means=(mean_a, va, mean_b, vb), _p=p)
    return test


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
    half = t_upper_quantile(alpha / 2.0, n - 1) * stddev / math.sqrt(n)
    return mean - half, mean + half
