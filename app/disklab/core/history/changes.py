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
0.5 % is no news to a disk's owner. A latency percentile is judged only where a run has
TAIL_IOS I/Os or more beyond it (`unresolved`): a run's slowest few I/Os are not a figure.

Why the pooled t decides and not Welch's: "nothing changed" means one distribution either side,
equal variances included, and under it the pooled t is exact; Welch's test, whose degrees of
freedom come from the two variances, is anti-conservative with two or three sessions a side
(measured on pure noise, 10 sessions x 20 figures: 16 % of histories with a false change for
a nominal 5 % at two a side, 6 % at three). Once a change is found the two sides need not
share a variance, so its size's interval is Welch's (Fieller's interval of the ratio of the
means), and a step whose interval holds "no change" is not reported: the pooled t assumes one
variance either side, and sessions that spread widely after a point (a latency percentile
that is now a cache hit's, now a device read's: +183 %, CI -662 … +1294 %) changed their
spread more than their level, which the pooled t cannot tell apart. Why not asv's step
detection (a penalised piecewise-constant fit): its penalty comes from a noise estimate and
gives no false-positive rate to state, and its steps carry no interval. The sessions' own
repeats are not pooled: the spread that matters between weeks is the spread of whole
sessions (a busy machine, a cold cache), which the session means carry.
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
TAIL_IOS = 10  # a percentile is judged when a run has at least this many I/Os beyond it
_NORMAL = NormalDist()
# the step scan's shortcut (_near_best): the points within NARROW of the largest SSB are worked
# out; no split when the largest t^2 is under the screen by MARGIN; none of it past GUARD
NARROW = 1e-4
MARGIN = 1e-3
GUARD = 1e10


@dataclass(frozen=True)
class Step:
    """A change found in one figure's history, between point `at - 1` and point `at`."""

    at: int  # the index of the first point after the change
    before: float  # the mean of the session means before it (its segment)
    after: float  # and after it
    pct: float  # (after / before - 1) x 100
    pct_low: float  # its (1 - alpha) interval (Fieller's, for the ratio)
    pct_high: float
    p: float  # the pooled t-test's two-sided p-value
    p_adjusted: float  # p x m (Bonferroni), at most 1: what is compared with alpha
    n_before: int
    n_after: int


def percentile(metric: str) -> float | None:
    """99.9 for 'write:lat_p99.9'; None for a figure that is not a percentile."""
    name = metric.rsplit(":", 1)[-1]
    if not name.startswith("lat_p"):
        return None
    try:
        return float(name[len("lat_p"):])
    except ValueError:
        return None


def unresolved(metric: str, ios: int | None) -> str:
    """Why a figure's history is not judged ('' when it is): a percentile beyond which a run
    has fewer than TAIL_IOS of its `ios` I/Os is one of the run's few slowest I/Os, which a
    single stall of the machine moves (a p99.9 of 256 writes is their slowest), so its
    sessions differ by chance far more than their repeats show, and a step in it would be
    news of nothing. Shown, not tested: nor counted in the correction."""
    q = percentile(metric)
    if q is None or ios is None or ios * (100.0 - q) / 100.0 >= TAIL_IOS:
        return ""
    return (f"not judged: {ios:,} I/Os a run leave fewer than {TAIL_IOS} beyond "
            f"p{q:g}")


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


@functools.lru_cache(maxsize=64)
def _roots(n: int) -> list[float]:
    """sqrt(1/before + 1/after) at each candidate point of a segment of n sessions."""
    return list(map(math.sqrt, _sides(n)[2]))


def _best_split(values: Sequence[float], lo: int, hi: int, screen: float | None = None
                ) -> tuple[int, float] | None:
    """The candidate point in values[lo:hi] with the largest pooled |t| (index, t squared
    over (n - 2), which orders the candidates as |t| does): the smallest p, the degrees of
    freedom (n - 2) being the same at every point. One pass over prefix sums. A segment of
    one finite value throughout (a figure that does not move) has t = 0 at every point: its
    first point, without the pass.

    With `screen` (the t^2 a change needs at least), the t of the points that cannot be the
    largest is not worked out, and None comes back when no point's t^2 reaches the screen
    (_near_best); otherwise the same point and t as without it."""
    n = hi - lo
    if n < 2 * MIN_SIDE:
        return None
    first = values[lo]
    if math.isfinite(first) and values[lo:hi].count(first) == n:
        return lo + MIN_SIDE, 0.0
    s, q = _moments(values[lo:hi])
    total_s, total_q = s[n], q[n]
    ks, nbs, ws = _sides(n)
    sas, qas = s[MIN_SIDE:MIN_SIDE + len(ks)], q[MIN_SIDE:MIN_SIDE + len(ks)]
    near = None if screen is None else _near_best(sas, total_s, total_q, n, screen)
    if near is not None:
        if not near:
            return None
        ks, nbs, ws, sas, qas = ([column[i] for i in near] for column in (ks, nbs, ws, sas, qas))
    best_k, best = float(MIN_SIDE), -1.0
    for k, nb, w, sa, qa in zip(ks, nbs, ws, sas, qas, strict=True):
        sb = total_s - sa
        ss = (qa - sa * sa / k) + (total_q - qa - sb * sb / nb)  # within both sides
        d = sb / nb - sa / k
        t2 = d * d / (ss * w) if ss > 0.0 else (math.inf if d else 0.0)
        if t2 > best:
            best_k, best = k, t2
    return lo + int(best_k), best


def _near_best(sas: Sequence[float], total_s: float, total_q: float, n: int, screen: float
               ) -> list[int] | None:
    """Where a segment's largest pooled t can be, from the sum of squares between its two
    sides at each candidate point (SSB = c^2 (1/before + 1/after), c the prefix sum less its
    share of the total), which orders the points as t does (t^2 = (n - 2) SSB / (SST - SSB),
    SST the segment's sum of squares): the candidate indexes whose SSB is within NARROW of
    the largest; [] when even the largest t^2 is short of the screen by more than MARGIN;
    None when rounding could decide, so that every point is worked out: the values not
    finite, or n times their sum of squares about the first value over GUARD times the
    spread within the sides at the largest SSB (SST - SSB). Under GUARD the scan's rounding
    moves a t^2 by under 1e-5 of itself, ten times less than NARROW. A few C-level passes
    instead of a Python step a point: most segments of a long history hold no change, and
    one that does has its largest t at a few points (bench figure 11)."""
    sst = total_q - total_s * total_s / n
    if not (math.isfinite(total_q) and sst > 0.0):
        return None
    x = list(map(operator.mul, map(operator.sub, sas, map(operator.mul, _sides(n)[0],
                                                             itertools.repeat(total_s / n))),
                 _roots(n)))
    top = max(max(x), -min(x))
    ssb = top * top
    if n * total_q > GUARD * (sst - ssb):
        return None
    if ssb * (n - 2) < screen * (1.0 - MARGIN) * (sst - ssb):
        return []
    cut = top * math.sqrt(1.0 - NARROW)
    return [i for i, v in enumerate(x) if v >= cut or v <= -cut]


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
    if low is None or high is None or low <= 1.0 <= high:
        return None  # its size unresolved: a change of spread more than of level
    return Step(at=at, before=ma, after=mb, pct=100.0 * (mb / ma - 1.0),
                pct_low=100.0 * (low - 1.0), pct_high=100.0 * (high - 1.0),
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
        # |t| below even the normal's quantile (below every t's) is no change: no p needed
        screen = _z(alpha / (2.0 * max(m, 1))) ** 2
        best = _best_split(values, lo, hi, screen)
        if best is None or best[1] * (hi - lo - 2) < screen:
            continue
        step = _test(values, lo, best[0], hi, max(m, 1), alpha)
        if step is None:
            continue
        found.append(step)
        todo += [(lo, step.at), (step.at, hi)]
    return sorted(found, key=lambda s: s.at)
