"""Bench figure 11 (a history of 1,000 sessions x 50 metrics opens in < 200 ms) at a small
scale: its sessions record, its history finds the change it planted, its row has the shape of
the bench's rows. The timing itself is the bench's (bench/README.md): not judged here."""

from __future__ import annotations

from bench.figures import history_figure


def test_the_history_figure_runs_small() -> None:
    (row,) = history_figure.run(sessions=12, cases=4, timings=2)
    assert row["figure"] == "11 history of 12 sessions x 20 metrics, first look"
    assert row["target"] == "< 200 ms" and row["value"].endswith(" ms")
    assert row["verdict"] in ("ok", "short") or row["verdict"].startswith("unresolved")
    details = row["details"]
    assert len(details["ms"]) == 2 and details["record_seconds"] > 0
    # the read figures (2 of the 4 cases, 4 of their 5 metrics: CPU does not move) fall
    assert details["changes"] == 8
