"""Reports: the JSON and CSV exports, the terminal table and the comparison of sessions, from
sessions recorded with the real recorder into a real library file."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from disklab.core.events import (
    CaseFinished,
    CaseStarted,
    Sample,
    SessionFinished,
    SessionStarted,
)
from disklab.core.library import Library
from disklab.core.model import Case, Metric
from disklab.core.report import compare, format_value, results_table, session_json, write_csv

PARAMS = {"bs": 1048576, "count": 64}


def record(lib: Library, name: str, per_config: dict[str, list[tuple[float, float]]]) -> int:
    """One dd case per configuration; per repeat a (write B/s, write:lat_mean ns) pair."""
    cases = tuple(Case(f"c{i}", i, config, "dd", 0, PARAMS)
                  for i, config in enumerate(per_config))
    repeats = len(next(iter(per_config.values())))
    rec = lib.recorder()
    rec.handle(SessionStarted(name=name, cases=cases, repeats=repeats, host={"cpu": "x86"},
                              plan_text=f"name = '{name}'\n", t=1.0))
    for case, values in zip(cases, per_config.values(), strict=True):
        for repeat, (bps, lat) in enumerate(values, start=1):
            rec.handle(CaseStarted(case=case, repeat=repeat, argv=("dd", "bs=1M"), t=2.0))
            rec.handle(Sample(case_id=case.id, series="app_bps", value=bps, repeat=repeat,
                              t=2.5))
            rec.handle(CaseFinished(case_id=case.id, repeat=repeat, exit_status=0, duration=1.0,
                                    metrics=(Metric("write", bps, "B/s"),
                                             Metric("write:lat_mean", lat, "ns")), t=3.0))
    rec.handle(SessionFinished(status="finished", t=4.0))
    rec.close()
    assert rec.session_id is not None
    return rec.session_id


@pytest.fixture
def lib(tmp_path: Path):
    with Library.open(tmp_path / "library.sqlite3") as library:
        yield library


def test_session_json_holds_facts_results_runs_and_samples(lib: Library) -> None:
    sid = record(lib, "one", {"ext4": [(100e6, 2000.0), (120e6, 4000.0)]})
    doc = json.loads(json.dumps(session_json(lib, sid)))  # it is plain JSON
    assert doc["session"]["name"] == "one"
    assert doc["session"]["status"] == "finished"
    assert doc["session"]["host"] == {"cpu": "x86"}
    assert doc["session"]["plan_text"] == "name = 'one'\n"
    write, lat = doc["results"]
    assert (write["metric"], write["test"], write["values"], write["mean"]) == (
        "write", "write", [100e6, 120e6], 110e6)
    assert (lat["metric"], lat["test"], lat["unit"], lat["mean"]) == (
        "write:lat_mean", "write", "ns", 3000.0)
    assert [(r["repeat"], r["argv"], r["status"]) for r in doc["runs"]] == [
        (1, ["dd", "bs=1M"], "ok"), (2, ["dd", "bs=1M"], "ok")]
    assert [s["value"] for s in doc["samples"]] == [100e6, 120e6]
    assert "samples" not in session_json(lib, sid, samples=False)


def test_csv_has_one_row_per_result(lib: Library) -> None:
    sid = record(lib, "one", {"ext4": [(100e6, 2000.0), (120e6, 4000.0)]})
    out = io.StringIO()
    write_csv(lib, sid, out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert len(rows) == 2
    row = rows[0]
    assert (row["config"], row["tool"], row["test"], row["metric"], row["unit"]) == (
        "ext4", "dd", "write", "write", "B/s")
    assert json.loads(row["params"]) == PARAMS
    assert (row["n"], float(row["mean"])) == ("2", 110e6)
    assert float(row["stddev"]) == pytest.approx(14142135.623730951)  # 20e6 / sqrt(2)
    assert [float(v) for v in row["values"].split(";")] == [100e6, 120e6]
    assert (rows[1]["metric"], rows[1]["mean"]) == ("write:lat_mean", "3000.0")


def test_results_table_shows_human_units_and_deltas_against_a_baseline(lib: Library) -> None:
    sid = record(lib, "two", {"ext4": [(100e6, 2000.0), (120e6, 4000.0)],
                              "xfs": [(132e6, 1.5e6), (132e6, 2.5e6)]})
    table = results_table(lib.results(sid))
    assert table[0] == ["config", "tool", "parameters", "metric", "mean ± stddev", "n", "note"]
    # 110e6 B/s = 104.9 MiB/s, stddev 14142135.6 B/s = 13.5 MiB/s; 3000 ns = 3.0 µs.
    # Both cases have the same parameters: only what varies (the config) is shown.
    assert table[1] == ["ext4", "dd", "", "write", "104.9 MiB/s ± 13.5 MiB/s", "2", ""]
    assert table[2][3:5] == ["write:lat_mean", "3.0 µs ± 1.4 µs"]
    assert table[4][3:5] == ["write:lat_mean", "2.00 ms ± 707.1 µs"]

    with_base = results_table(lib.results(sid), baseline_config="ext4")
    assert with_base[0][6] == "Δ vs ext4"
    by_key = {(r[0], r[3]): r[6] for r in with_base[1:]}
    assert by_key[("ext4", "write")] == ""
    assert by_key[("xfs", "write")] == "+20.0 %"  # 132e6 against 110e6
    assert by_key[("xfs", "write:lat_mean")] == "+66566.7 %"  # 2e6 ns against 3000 ns


def test_a_single_case_shows_its_parameters(lib: Library) -> None:
    sid = record(lib, "one", {"ext4": [(100e6, 2000.0)]})
    assert results_table(lib.results(sid))[1] == [
        "ext4", "dd", "bs=1m count=64", "write", "95.4 MiB/s", "1", ""]  # 100e6 / 2**20


def test_format_value_per_unit() -> None:
    assert format_value(None, "B/s") == "-"
    assert format_value(1048576.0, "B/s") == "1.0 MiB/s"
    assert format_value(850.0, "ns") == "0.8 µs"
    assert format_value(12500.0, "op/s") == "12,500 op/s"
    assert format_value(42.25, "%") == "42.2 %"


def test_compare_gives_each_session_and_the_delta_to_the_baseline(lib: Library) -> None:
    before = record(lib, "before", {"ext4": [(100e6, 2000.0), (120e6, 4000.0)]})
    after = record(lib, "after", {"ext4": [(88e6, 1000.0), (88e6, 1000.0)]})
    rows = compare(lib, [before, after], baseline=before)
    write = next(r for r in rows if r["metric"] == "write")
    assert (write["tool"], write["test"], write["params"], write["unit"]) == (
        "dd", "write", PARAMS, "B/s")
    base, other = write["cells"][f"{before}:ext4"], write["cells"][f"{after}:ext4"]
    assert (base["mean"], base["n"], base["delta_pct"]) == (110e6, 2, 0.0)
    assert (other["mean"], other["stddev"], other["delta"]) == (88e6, 0.0, -22e6)
    assert other["delta_pct"] == pytest.approx(-20.0)  # 88 against 110
    lat = next(r for r in rows if r["metric"] == "write:lat_mean")
    assert lat["cells"][f"{after}:ext4"]["delta_pct"] == pytest.approx(-100 * 2 / 3)
