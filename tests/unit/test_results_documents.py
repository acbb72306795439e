"""Tables and documents of sessions recorded with the real recorder into a real library file:
the results table, JSON, CSV, Markdown, HTML, and the comparison of library sessions."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest

from disklab.core.library import Library
from disklab.core.results.compare import comparison_for
from disklab.core.results.documents import (
    comparison_text,
    session_json,
    session_markdown,
    write_session,
    write_session_csv,
)
from disklab.core.results.tables import RESULTS_HEADER, results_table
from disklab.core.vocab.model import Case, Metric
from tests.helpers import record_session

PARAMS = {"bs": 1048576, "count": 64}


def record(lib: Library, name: str, per_config: dict[str, list[tuple[float, float]]]) -> int:
    """One dd case per configuration; per repeat a (write B/s, write:lat_mean ns) pair."""
    runs = [(Case(f"c{i}", i, config, "dd", 0, PARAMS),
             [(Metric("write", bps, "B/s"), Metric("write:lat_mean", lat, "ns"))
              for bps, lat in values])
            for i, (config, values) in enumerate(per_config.items())]
    return record_session(lib, runs, name=name, host={"cpu": "x86"}, argv=("dd", "bs=1M"),
                          sample_series="app_bps")


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
    write_session_csv(lib, sid, out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert len(rows) == 2
    row = rows[0]
    assert (row["config"], row["tool"], row["test"], row["metric"], row["unit"]) == (
        "ext4", "dd", "write", "write", "B/s")
    assert json.loads(row["params"]) == PARAMS
    assert (row["n"], float(row["mean"])) == ("2", 110e6)
    assert float(row["stddev"]) == pytest.approx(14142135.623730951)  # 20e6 / sqrt(2)
    assert [float(v) for v in row["values"].split(";")] == [100e6, 120e6]
    assert row["shown"] == "110 MB/s ± 14.1 MB/s"
    assert (rows[1]["metric"], rows[1]["mean"]) == ("write:lat_mean", "3000.0")


def test_results_table_shows_display_units_and_deltas_against_a_baseline(lib: Library) -> None:
    sid = record(lib, "two", {"ext4": [(100e6, 2000.0), (120e6, 4000.0)],
                              "xfs": [(132e6, 1.5e6), (132e6, 2.5e6)]})
    table = results_table(lib.results(sid), all_metrics=False)
    assert table.header == RESULTS_HEADER == (
        "config", "tool", "metric", "direction", "parameters", "mean", "± stddev", "n", "CV",
        "note")
    # 110e6 B/s = 110 MB/s, stddev 14142135.6 B/s = 14.1 MB/s; 3000 ns = 3.0 µs.
    # Both cases have the same parameters: said once above the table, not in each row.
    assert table.note == "every case: bs=1m count=64"
    assert table.rows[0] == ("ext4", "dd", "write", "higher is better", "", "110 MB/s",
                             "14.1 MB/s", "2", "12.9 %", "")
    assert table.rows[1][2:7] == ("write:lat_mean", "lower is better", "", "3.00 µs", "1.41 µs")
    assert table.rows[3][2:7] == ("write:lat_mean", "lower is better", "", "2000 µs", "707 µs")

    with_base = results_table(lib.results(sid), baseline_config="ext4")
    assert with_base.header[-1] == "Δ vs ext4"
    by_key = {(r[0], r[2]): r[-1] for r in with_base.rows}
    assert by_key[("ext4", "write")] == ""
    assert by_key[("xfs", "write")] == "+20.0 %"  # 132e6 against 110e6
    assert by_key[("xfs", "write:lat_mean")] == "+66566.7 %"  # 2e6 ns against 3000 ns


def test_a_single_repeat_has_no_stddev(lib: Library) -> None:
    sid = record(lib, "one", {"ext4": [(100e6, 2000.0)]})
    assert results_table(lib.results(sid)).rows[0] == (
        "ext4", "dd", "write", "higher is better", "", "100 MB/s", "", "1", "", "")
    # 100e6 / 10**6; one repeat: no stddev and no CV


def test_compare_gives_each_session_and_the_delta_to_the_baseline(lib: Library) -> None:
    before = record(lib, "before", {"ext4": [(100e6, 2000.0), (120e6, 4000.0)]})
    after = record(lib, "after", {"ext4": [(88e6, 1000.0), (88e6, 1000.0)]})
    c, sessions = comparison_for(lib, [before, after], baseline=before)
    assert [s["name"] for s in sessions] == ["before", "after"]
    assert c.rows == (f"{before} before", f"{after} after") and c.baseline == c.rows[0]
    assert c.columns == ("dd write", "dd write:lat_mean")
    assert c.common == PARAMS
    base, other = c.cells[(c.rows[0], "dd write")], c.cells[(c.rows[1], "dd write")]
    assert (base.mean, base.n, base.delta_pct) == (110e6, 2, 0.0)
    assert (other.mean, other.stddev, other.delta) == (88e6, 0.0, -22e6)
    assert other.delta_pct == pytest.approx(-20.0)  # 88 against 110
    lat = c.cells[(c.rows[1], "dd write:lat_mean")]
    assert lat.delta_pct == pytest.approx(-100 * 2 / 3)
    # 88 ± 0 against 110 ± 14.1 over two runs each: se 10e6, t = -2.2 with one degree of
    # freedom (Cauchy: p = 1 - 2 atan(2.2) / pi = 0.27), the 95 % interval -22e6 ± 12.706 x 10e6 B/s
    # holds zero: the drop is no significant difference, and the ratio's interval is unbounded
    assert other.verdict == "no significant difference"
    assert other.test is not None
    assert other.test.p_value == pytest.approx(1 - 2 * math.atan(2.2) / math.pi)
    assert other.test.ci_low == pytest.approx(-22e6 - 127.062e6, rel=1e-4)
    md = comparison_text(lib, [before, after], before, "md")
    assert (f"| {after} after | 88.0 MB/s ± 0 MB/s (n=2, CV 0.0 %); -20.0 %, 95 % CI -149 … "
            "+105 MB/s (ratio unbounded), p = 0.27: no significant difference |") in md
    assert "| configuration | dd write (higher is better) | dd write:lat_mean (lower is better) |" \
        in md
    assert "Welch's t-test" in md


def test_session_markdown_escapes_the_pipe_and_html_holds_the_table(lib: Library,
                                                                     tmp_path: Path) -> None:
    sid = record(lib, "piped", {"a|b": [(100e6, 2000.0)], "c": [(100e6, 2000.0)]})
    md = session_markdown(lib.session(sid), lib.results(sid))
    assert md.startswith(f"# Session {sid}: piped (finished)\n")
    assert "| a\\|b | dd | write |" in md
    html = write_session(lib, sid, tmp_path / "s.html", "html").read_text()
    assert "<td>100 MB/s</td>" in html and "<svg" in html
    with pytest.raises(ValueError):
        write_session(lib, sid, tmp_path / "s.x", "x")


def test_markdown_writes_names_literally_never_as_markup(lib: Library) -> None:
    """A name holding HTML or Markdown markup reads as typed in a Markdown viewer: no script
    runs, nothing turns bold, no link, no heading, no table cell splits."""
    name = "<script>alert(1)</script> *bold* [x](http://e) #1 `code`"
    sid = record(lib, name, {"<b>raid</b>|_x_": [(100e6, 2000.0)], "c": [(100e6, 2000.0)]})
    md = session_markdown(lib.session(sid), lib.results(sid))
    head = md.splitlines()[0]
    assert "<script>" not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in head
    assert "\\*bold\\*" in head and "\\[x\\](http://e)" in head and "\\#1" in head
    assert "\\`code\\`" in head
    row = next(line for line in md.splitlines() if "raid" in line)
    assert row.startswith("| &lt;b&gt;raid&lt;/b&gt;\\|\\_x\\_ | dd | write |")
    assert "write:lat\\_mean" not in md and "write:lat_mean" in md  # inner _ as written


def test_a_ratio_not_bounded_below_says_so(lib: Library,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A configuration whose two runs are 1 and 200 MB/s against a steady 100: its mean is
    not clearly away from zero, so Fieller's interval of the ratio reaches below zero; the
    comparison says the ratio is not bounded below, never '(×-39.2 … ×162)' (issue 49,
    point 6), through `disklab compare`."""
    from disklab.cli.main import main

    before = record(lib, "steady", {"a": [(100e6, 2000.0), (102e6, 2000.0)]})
    after = record(lib, "erratic", {"a": [(1e6, 2000.0), (200e6, 2000.0)]})
    assert main(["compare", str(before), str(after), "--format", "md",
                 "--library", str(lib.path)]) == 0
    md = capsys.readouterr().out
    assert "(ratio not bounded below, at most ×" in md, md
    assert "×-" not in md

