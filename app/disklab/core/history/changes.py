"""Where a figure's history steps: Welch's test between the sessions either side of a point,
corrected for every test made.

The method (README, "History"): a figure's history is the sequence of its sessions' means.
For each candidate point k (each side holding at least MIN_SIDE sessions) the means before k
and from k on are two samples, and Welch's t compares them; the candidate with the largest
|t| is the series' best split, and its two-sided p-value is compared with alpha / m, m the
number of candidate points tested over *all* the figures of the history (Bonferroni). The
chance of reporting any change when nothing changed is then at most alpha (0.05) for the
whole history, however many figures and sessions it has: the false-positive rate the tests
state. A change found splits its series, and each side is searched again the same way
(binary segmentation), at the same alpha / m. A step also has to move the mean by at least
MIN_STEP (5 %, asv's default regression threshold): a significant 0.5 % is no news to a
disk's owner.

Why this and not asv's step detection (a penalised piecewise-constant fit): its penalty is
chosen from a noise estimate and gives no false-positive rate to state, and its steps carry
no interval; a Welch test gives each change its p-value, its size with a confidence interval
(Fieller's, for the ratio) and works with two sessions a side. The sessions' own repeats are
not pooled: the spread that matters between weeks is the spread of whole sessions (a busy
machine, a cold cache), which the session means carry.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from disklab.core.results.stats import ALPHA, welch

MIN_SIDE = 2  # sessions each side of a candidate point (Welch needs two)
MIN_STEP = 0.05  # a change moves the mean by at least this fraction (asv's default)


@dataclass(frozen=True)
class Step:
    """A change found in one figure's history, between point `at - 1` and point `at`."""

    at: int  # the index of the first point after the change
    before: float  # the mean of the session means before it (its segment)
    after: float  # and after it
    pct: float  # (after / before - 1) x 100
    pct_low: float | None  # its (1 - alpha) interval (Fieller's, for the ratio)
    pct_high: float | None
    p: float  # Welch's two-sided p-value
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
    s, q = [0.0], [0.0]
    for v in values:
        d = v - shift
        s.append(s[-1] + d)
        q.append(q[-1] + d * d)
    return s, q


def _best_split(values: Sequence[float], lo: int, hi: int) -> tuple[int, float] | None:
    """The candidate point in values[lo:hi] with the largest Welch |t| (index, |t|)."""
    s, q = _moments(values[lo:hi])
    n = hi - lo
    best: tuple[int, float] | None = None
    for k in range(MIN_SIDE, n - MIN_SIDE + 1):
        na, nb = k, n - k
        ma, mb = s[k] / na, (s[n] - s[k]) / nb
        va = max(q[k] - na * ma * ma, 0.0) / (na - 1)
        vb = max((q[n] - q[k]) - nb * mb * mb, 0.0) / (nb - 1)
        se = math.sqrt(va / na + vb / nb)
        delta = abs(mb - ma)
        t = math.inf if se == 0.0 and delta > 0 else (delta / se if se else 0.0)
        if best is None or t > best[1]:
            best = (lo + k, t)
    return best


def _test(values: Sequence[float], lo: int, at: int, hi: int, m: int, alpha: float
          ) -> Step | None:
    """Welch's test of values[at:hi] against values[lo:at]: a Step when it holds."""
    left, right = values[lo:at], values[at:hi]
    ma, mb = math.fsum(left) / len(left), math.fsum(right) / len(right)
    sa = math.sqrt(math.fsum((v - ma) ** 2 for v in left) / (len(left) - 1))
    sb = math.sqrt(math.fsum((v - mb) ** 2 for v in right) / (len(right) - 1))
    test = welch(mb, sb, len(right), ma, sa, len(left), alpha)
    adjusted = min(1.0, test.p_value * m)
    if adjusted >= alpha or not ma or abs(mb / ma - 1.0) < MIN_STEP:
        return None
    low, high = test.ratio_low, test.ratio_high
    return Step(at=at, before=ma, after=mb, pct=100.0 * (mb / ma - 1.0),
                pct_low=None if low is None else 100.0 * (low - 1.0),
                pct_high=None if high is None else 100.0 * (high - 1.0),
                p=test.p_value, p_adjusted=adjusted, n_before=len(left), n_after=len(right))


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
        if best is None:
            continue
        step = _test(values, lo, best[0], hi, max(m, 1), alpha)
        if step is None:
            continue
        found.append(step)
        todo += [(lo, step.at), (step.at, hi)]
    return sorted(found, key=lambda s: s.at)
