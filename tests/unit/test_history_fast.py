"""The history's fast reading (core.library.history: the figures as numeric rows sliced by the
one layout every session shares, the step scan's shortcuts) gives the very history the general
reading gives: the same figures, points, changes and p-values, to the last bit. The digests
below are the histories the general reading built on these fixtures before the fast one was
written; each fixture is read both ways."""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from disklab.core.history import changes
from disklab.core.history.build import History, build_history
from disklab.core.library import Library, summary
from disklab.core.library import history as library_history
from disklab.core.vocab.model import Case, Metric
from tests.helpers import record_session

PLAN = "name = 'weekly'\nrepeats = 3\n[target]\ndirectory = '/mnt/x'\n[[test]]\ntool = 'fio'\n"
# the general reading's histories of the two fixtures (before the fast reading existed)
UNIFORM_DIGEST = "bed9c8fa3c8b2867f497ba8f73f7b1a999bb9ff57bf31e6e724e47d6a02a854d"
MIXED_DIGEST = "ead89ac8bbcbf4f6c3faed028816dc1191b97785ad20e9e294e620fb55cf8ad3"


def _host(read_ahead: int) -> dict[str, Any]:
    return {"hostname": "h", "machine_id": "m" * 32, "kernel": "6.1.0-13",
            "filesystem": {"fstype": "ext4", "options": "rw", "source": "/dev/sdz1"},
            "device": {"name": "sdz1", "read_ahead_kb": read_ahead},
            "target": {"kind": "directory", "path": "/mnt/x",
                       "identity": {"directory": "/mnt/x", "fstype": "ext4",
                                    "source": "/dev/sdz1"}}}


def _fixture(lib: Library, sessions: int, extra_from: int | None = None) -> list[int]:
    """`sessions` sessions of 3 cases x (rate, IOPS, a constant CPU), the read figures falling
    by half from session 9 on; from `extra_from` on the write case also records a latency (a
    second layout)."""
    rng = random.Random(11)
    cases = [Case(f"c{i}", i, "as is", "fio", i, {"rw": rw, "bs": 4096})
             for i, rw in enumerate(("read", "write", "read"))]
    ids = []
    for s in range(sessions):
        runs = []
        for case in cases:
            mode = str(case.params["rw"])
            per_repeat = []
            for _ in range(3):
                rate = 3e8 * rng.gauss(1, 0.03) * (0.5 if s >= 9 and mode == "read" else 1)
                metrics = [Metric(mode, rate, "B/s"), Metric(f"{mode}:iops", rate / 4096, "op/s"),
                           Metric(f"{mode}:cpu", 12.5, "%")]
                if extra_from is not None and s >= extra_from and mode == "write":
                    metrics.append(Metric(f"{mode}:lat_mean", 4096e9 / rate, "ns"))
                per_repeat.append(metrics)
            runs.append((case, per_repeat))
        ids.append(record_session(lib, runs, name="weekly", host=_host(16 if s >= 9 else 128),
                                  plan_text=PLAN, start=1.7e9 + s * 7 * 86400))
    return ids


def _digest(h: History) -> str:
    """Every number of the history (and its figures' keys and labels), to the last bit."""
    (s,) = h.series
    figures = [[f.key, f.label, f.unit, f.higher_is_better, f.headline, list(f.sessions),
                [repr(v) for v in f.means], [repr(v) for v in f.stddevs], list(f.ns),
                [[p.session, repr(p.mean), repr(p.low), repr(p.high), p.n] for p in f.points]]
               for f in s.figures]
    found = [[c.figure, c.before, c.after, c.worse, repr(c.step), list(c.what_changed)]
             for c in s.changes]
    text = json.dumps([[x["id"] for x in s.sessions], s.tests, figures, found], default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def _both_ways(lib: Library, ref: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    fast = _digest(build_history(lib, ref))
    with monkeypatch.context() as m:
        m.setattr(library_history, "_uniform_columns", lambda *_a: None)
        general = _digest(build_history(lib, ref))
    return fast, general


def test_the_fast_reading_gives_the_same_history(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch):
    with Library.open(tmp_path / "lib.sqlite") as lib:
        ids = _fixture(lib, 16)
        fast, general = _both_ways(lib, str(ids[-1]), monkeypatch)
        h = build_history(lib, str(ids[-1]))
        columns = library_history._uniform_columns(lib.db, ids)
    assert columns is not None and len(columns) == 9  # the fast reading read it
    assert fast == general == UNIFORM_DIGEST
    assert {c.figure.split("|")[1] for c in h.series[0].changes} == {"read", "read:iops"}


def test_sessions_of_two_layouts_and_a_stale_summary_read_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with Library.open(tmp_path / "lib.sqlite") as lib:
        ids = _fixture(lib, 16, extra_from=12)
        lib.db.execute("DELETE FROM result_stamp WHERE session_id = ?", (ids[3],))
        fast, general = _both_ways(lib, str(ids[0]), monkeypatch)
        assert library_history._uniform_columns(lib.db, ids) is None  # the general one did
        # a row past the layout's end (a figure added last) is not read as a slice either
        lib.db.execute("DELETE FROM result WHERE session_id >= ?", (ids[12],))
        lib.db.execute("INSERT INTO result SELECT session_id, 99, case_id, 'extra', params, "
                       "unit, n, mean, stddev, vals, notes FROM result WHERE session_id = ? "
                       "AND ord = 0", (ids[5],))
        assert library_history._uniform_columns(lib.db, ids[:12]) is None
    assert fast == general == MIXED_DIGEST


def test_a_constant_figure_has_no_split_and_infinities_keep_theirs():
    assert changes._best_split([12.5] * 9, 0, 9) == (2, 0.0)
    assert changes._best_split([1.0] * 3 + [12.5] * 6, 0, 9) == (3, float("inf"))
    inf = float("inf")
    assert changes._best_split([inf] * 6, 0, 6) == (2, inf)


def test_bulk_stamps_of_a_session_without_metrics(tmp_path: Path):
    case = Case("c0", 0, "as is", "fio", 0, {})
    with Library.open(tmp_path / "lib.sqlite") as lib:
        ids = [record_session(lib, [(case, [[]])], name="empty", start=1.0),
               *_fixture(lib, 2)]
        stamps = library_history.results_stamps(lib.db, ids)
        assert stamps[ids[0]][3:5] == (0, None)
        for sid in ids:
            assert stamps[sid] == summary.results_stamp(lib.db, lib.path, sid)


def _every_point(values: list[float], lo: int, hi: int) -> tuple[int, float] | None:
    """The step scan as it reads: the pooled t of every candidate point, from prefix sums
    (the same float operations as changes._best_split's, so its answer to the last bit)."""
    n = hi - lo
    if n < 2 * changes.MIN_SIDE:
        return None
    first = values[lo]
    if math.isfinite(first) and values[lo:hi].count(first) == n:
        return lo + changes.MIN_SIDE, 0.0
    s, q = changes._moments(values[lo:hi])
    best_k, best = changes.MIN_SIDE, -1.0
    for k in range(changes.MIN_SIDE, n - changes.MIN_SIDE + 1):
        sa, qa, nb, w = s[k], q[k], float(n - k), 1.0 / k + 1.0 / (n - k)
        sb = s[n] - sa
        ss = (qa - sa * sa / k) + (q[n] - qa - sb * sb / nb)
        d = sb / nb - sa / k
        t2 = d * d / (ss * w) if ss > 0.0 else (math.inf if d else 0.0)
        if t2 > best:
            best_k, best = k, t2
    return lo + best_k, best


def _reference_steps(values: list[float], m: int, alpha: float = 0.05) -> list[changes.Step]:
    """changes.steps with every point of every segment worked out (_every_point)."""
    found, todo = [], [(0, len(values))]
    while todo:
        lo, hi = todo.pop()
        best = _every_point(values, lo, hi)
        if best is None or best[1] * (hi - lo - 2) < changes._z(alpha / (2.0 * m)) ** 2:
            continue
        step = changes._test(values, lo, best[0], hi, m, alpha)
        if step is not None:
            found.append(step)
            todo += [(lo, step.at), (step.at, hi)]
    return sorted(found, key=lambda s: s.at)


def _histories(rng: random.Random) -> list[list[float]]:
    """Histories the step scan's shortcut could get wrong: noise, steps from the smallest
    reported to noise-free ones, a far first value, a huge offset, drifts, a constant stretch,
    ties, infinities; 4 to 1,000 sessions."""
    out = []
    for _ in range(1500):
        n = rng.choice((4, 5, 7, 10, 25, 60, 200, 1000))
        base, cv = rng.choice((1.0, 3e8, 1.3e4, 1e-6)), rng.choice((0.0, 1e-9, 1e-4, 0.03))
        values = [base * (1 + rng.gauss(0, cv)) for _ in range(n)]
        kind = rng.randrange(8)
        at = rng.randrange(1, n)
        if kind in (0, 1):  # a step somewhere, of 1 % to 60 %
            size = rng.choice((0.01, 0.05, 0.06, 0.1, 0.6)) * rng.choice((-1, 1))
            values[at:] = [v * (1 + size) for v in values[at:]]
        elif kind == 2:  # a far first value
            values[0] = base * rng.choice((2.0, 1e3, 1e8))
        elif kind == 3:  # a drift
            values = [v * (1 + 1e-3 * i) for i, v in enumerate(values)]
        elif kind == 4:  # a constant stretch, then noise, steps of exact ties
            values = [round(v / base * 20) / 20 for v in values]
        elif kind == 5:  # huge offset, tiny noise
            values = [1e12 + v / base for v in values]
        elif kind == 6 and n > 4:  # two steps
            values[at:] = [v * 0.7 for v in values[at:]]
            values[at // 2:] = [v * 1.3 for v in values[at // 2:]]
        if rng.random() < 0.02:
            values[rng.randrange(n)] = math.inf
        out.append(values)
    return out


def test_the_step_scan_shortcut_finds_what_every_point_finds(monkeypatch: pytest.MonkeyPatch):
    """changes._best_split's shortcut (only the points that can hold the largest t worked
    out, segments no point of which reaches the screen left at once) against the scan of
    every point: the same split, t and steps, to the last bit, on 1,500 histories; each of
    the shortcut's three ways (no split, a few points, every point) taken hundreds of times."""
    rng = random.Random(48)
    shortcuts = 0
    ways: Counter[str] = Counter()
    near_best = changes._near_best

    def counted(*args: Any) -> list[int] | None:
        near = near_best(*args)
        ways["every point" if near is None else "a few points" if near else "no split"] += 1
        return near

    monkeypatch.setattr(changes, "_near_best", counted)
    for values in _histories(rng):
        m = changes.candidates(len(values)) * rng.choice((1, 50))
        screen = changes._z(0.05 / (2.0 * m)) ** 2
        full = _every_point(values, 0, len(values))
        quick = changes._best_split(values, 0, len(values), screen)
        assert changes._best_split(values, 0, len(values)) == full
        if quick is None:
            shortcuts += 1
            assert full is None or full[1] * (len(values) - 2) < screen
        else:
            assert quick == full
        assert repr(changes.steps(values, m)) == repr(_reference_steps(values, m))
    assert shortcuts > 300  # the shortcut was taken, and held
    assert min(ways.values()) > 300 and len(ways) == 3, ways


def test_sessions_counting_other_repeats_read_the_same(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    """The fast reading leaves n out when every session counts the first one's repeats at
    each place; a session counting fewer somewhere (a repeat that gave no figure) has its own
    n read, and the history is the general reading's."""
    with Library.open(tmp_path / "lib.sqlite") as lib:
        ids = _fixture(lib, 16)
        lib.db.execute("UPDATE result SET n = 2 WHERE session_id = ? AND ord = 1", (ids[4],))
        fast, general = _both_ways(lib, str(ids[-1]), monkeypatch)
        columns = library_history._uniform_columns(lib.db, ids)
        assert columns is not None
        assert [f.n[4] for f in columns[:3]] == [3, 2, 3] and set(columns[0].n) == {3}
    assert fast == general != UNIFORM_DIGEST
