"""The history's fast reading (core.library.history: the figures as numeric rows sliced by the
one layout every session shares, the step scan's shortcuts) gives the very history the general
reading gives: the same figures, points, changes and p-values, to the last bit. The digests
below are the histories the general reading built on these fixtures before the fast one was
written; each fixture is read both ways."""

from __future__ import annotations

import hashlib
import json
import random
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
