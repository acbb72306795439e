"""Where a figure's history steps: a two-sample t-test between the sessions either side of a
point, corrected for every test made.

The method (README, "History"): a figure's history is the sequence of its sessions' means.
For each candidate point k (each side holding at least MIN_SIDE sessions) the means before k
and from k on are two samples compared by Student's two-sample t (pooled variance); the
candidate with the largest |t| is the series' best split, and its two-sided p-value is
compared with alpha / m, m the number of candidate points tested over *all* the figures of the
series (Bonferroni). The chance of reporting any change when nothing changed is then at most
alpha (0.05) for the whole series, however many figures and sessions it has: the
false-positive rate the tests state. A change found splits its figure's history, and each side
is searched again the same way (binary segmentation), at the same alpha / m. A step also has to
move the mean by at least MIN_STEP (5 %, asv's default regression threshold): a significant
0.5 % is no news to a disk's owner.

Why the pooled t decides and not Welch's: "nothing changed" means one distribution either side,
equal variances included, and under it the pooled t is exact; Welch's test, whose degrees of
freedom come from the two variances, is anti-conservative with two or three sessions a side
(measured on pure noise, 10 sessions x 20 figures: 16 % of histories with a false change for
a nominal 5 % at two a side, 6 % at three). Once a change is found the two sides need not
share a variance, so its size's interval is Welch's (Fieller's interval of the ratio of the
means). Why not asv's step detection (a penalised piecewise-constant fit): its penalty comes
from a noise estimate and gives no false-positive rate to state, and its steps carry no
interval. The sessions' own repeats are not pooled: the spread that matters between weeks is
the spread of whole sessions (a busy machine, a cold cache), which the session means carry.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from disklab.core.results.stats import ALPHA, t_sf2, welch

MIN_SIDE = 2  # sessions each side of a candidate point (Welch needs two)
MIN_STEP = 0.05  # a change moves the mean by at least this fraction (asv's default)
_NORMAL = NormalDist()


@dataclass(frozen=True)
class Step:
    """A change found in one figure's history, between point `at - 1` and point `at`."""

    at: int  # the index of the first point after the change
    before: float  # the mean of the session means before it (its segment)
    after: float  # and after it
    pct: float  # (after / before - 1) x 100
    pct_low: float | None  # its (1 - alpha) interval (Fieller's, for the ratio)
    pct_high: float | None
    p: float  # the pooled t-test's two-sided p-value
    p_adjusted: float  # p x m (Bonferroni), at most 1: what is compared with alpha
    n_before: int
    n_after: int


def candidates(n: int) -> int:
    """How many candidate points a history of n sessions has."""
    return max(0, n - 2 * MIN_SIDE + 1)


def _moments(values: Sequence[float]) -> tuple[list[float], list[float]]:
    """Prefix sums of the values and of their squares (shifted by the first value, so that
    large figures keep their precision)."""
    shift = values[0] if values else 0.0
    d = list(map(operator.sub, values, itertools.repeat(shift)))
    return ([0.0, *itertools.accumulate(d)],
            [0.0, *itertools.accumulate(map(operator.mul, d, d))])


@functools.lru_cache(maxsize=64)
def _sides(n: int) -> tuple[list[float], list[float], list[float]]:
    """For a segment of n sessions, each candidate point's sizes before and after it and
    1/before + 1/after: the same for every figure of a series, worked out once."""
    ks = range(MIN_SIDE, n - MIN_SIDE + 1)
    return ([float(k) for k in ks], [float(n - k) for k in ks],
            [1.0 / k + 1.0 / (n - k) for k in ks])


def _best_split(values: Sequence[float], lo: int, hi: int) -> tuple[int, float] | None:
    """The candidate point in values[lo:hi] with the largest pooled |t| (index, t squared
    over (n - 2), which orders the candidates as |t| does): the smallest p, the degrees of
    freedom (n - 2) being the same at every point. One pass over prefix sums: a history of
    1,000 sessions x 50 figures is scanned in a few tens of milliseconds (bench figure 11).
    A segment of one finite value throughout (a figure that does not move) has t = 0 at
    every point: its first point, without the pass."""
    n = hi - lo
    if n < 2 * MIN_SIDE:
        return None
    first = values[lo]
    if math.isfinite(first) and values[lo:hi].count(first) == n:
        return lo + MIN_SIDE, 0.0
    s, q = _moments(values[lo:hi])
    total_s, total_q = s[n], q[n]
    best_k, best = float(MIN_SIDE), -1.0
    ks, nbs, ws = _sides(n)
    for k, nb, w, sa, qa in zip(ks, nbs, ws, s[MIN_SIDE:], q[MIN_SIDE:], strict=False):
        sb = total_s - sa
        ss = (qa - sa * sa / k) + (total_q - qa - sb * sb / nb)  # within both sides
        d = sb / nb - sa / k
        t2 = d * d / (ss * w) if ss > 0.0 else (math.inf if d else 0.0)
        if t2 > best:
            best_k, best = k, t2
    return lo + int(best_k), best


def _test(values: Sequence[float], lo: int, at: int, hi: int, m: int, alpha: float
          ) -> Step | None:
    """The t-test of values[at:hi] against values[lo:at]: a Step when it holds (p from the
    pooled t, the size's interval from Welch's test)."""
    left, right = values[lo:at], values[at:hi]
    na, nb = len(left), len(right)
    ma, mb = math.fsum(left) / na, math.fsum(right) / nb
    ssa, ssb = math.fsum((v - ma) ** 2 for v in left), math.fsum((v - mb) ** 2 for v in right)
    se = math.sqrt((ssa + ssb) / (na + nb - 2) * (1.0 / na + 1.0 / nb))
    exact = 0.0 if mb != ma else 1.0  # neither side varies: the difference is exact
    p = exact if se == 0.0 else t_sf2((mb - ma) / se, na + nb - 2)
    adjusted = min(1.0, p * m)
    if adjusted >= alpha or not ma or abs(mb / ma - 1.0) < MIN_STEP:
        return None
    test = welch(mb, math.sqrt(ssb / (nb - 1)), nb, ma, math.sqrt(ssa / (na - 1)), na, alpha)
    low, high = test.ratio_low, test.ratio_high
    return Step(at=at, before=ma, after=mb, pct=100.0 * (mb / ma - 1.0),
                pct_low=None if low is None else 100.0 * (low - 1.0),
                pct_high=None if high is None else 100.0 * (high - 1.0),
                p=p, p_adjusted=adjusted, n_before=na, n_after=nb)


@functools.lru_cache(maxsize=64)
def _z(tail: float) -> float:
    """The normal quantile with `tail` above it."""
    return _NORMAL.inv_cdf(1.0 - tail)


def steps(values: Sequence[float], m: int, alpha: float = ALPHA) -> list[Step]:
    """The changes in one figure's history (session means, oldest first), tested at alpha / m
    (m: candidate points over the whole history, `candidates` summed), in order."""
    found: list[Step] = []
    todo = [(0, len(values))]
    while todo:
        lo, hi = todo.pop()
        if hi - lo < 2 * MIN_SIDE:
            continue
        best = _best_split(values, lo, hi)
        # |t| below even the normal's quantile (below every t's) is no change: no p needed
        if best is None or best[1] * (hi - lo - 2) < _z(alpha / (2.0 * max(m, 1))) ** 2:
            continue
        step = _test(values, lo, best[0], hi, max(m, 1), alpha)
        if step is None:
            continue
        found.append(step)
        todo += [(lo, step.at), (step.at, hi)]
    return sorted(found, key=lambda s: s.at)
