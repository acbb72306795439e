"""core.results.compare and the comparison table: deltas, colours, headline figures, the config
diff, on hand-written rows as Library.results returns them."""

from __future__ import annotations

import pytest

from disklab.core.results.compare import (
    better_is_higher,
    compare_results,
    config_diff,
    delta_class,
    labelled_rows,
)
from disklab.core.results.documents import comparison_csv, comparison_json, comparison_markdown
from disklab.core.results.pivot import build_pivot
from disklab.core.results.rows import constant_params, headline, is_headline
from disklab.core.results.tables import cell_text, comparison_table, pivot_cell_text, pivot_marks

# figures written in MiB (2**20 multiples): read in IEC units (tests/conftest.py iec_units);
# the SI default is tests/unit/test_units_choice.py's
pytestmark = pytest.mark.usefixtures("iec_units")

ROWS_A = [
    {"config": "as is", "tool": "iozone", "test": "write", "metric": "write", "unit": "B/s",
     "params": {"record_size": 4096, "file_size": 1 << 20}, "n": 3, "mean": 100 * 2**20,
     "stddev": 2 * 2**20, "values": []},
    {"config": "as is", "tool": "iozone", "test": "write", "metric": "write", "unit": "B/s",
     "params": {"record_size": 65536, "file_size": 1 << 20}, "n": 3, "mean": 200 * 2**20,
     "stddev": 4 * 2**20, "values": []},
]
ROWS_B = [dict(r, mean=r["mean"] * 1.1) for r in ROWS_A]


def test_comparison_deltas_and_colours() -> None:
    c = compare_results([("A", ROWS_A), ("B", ROWS_B)], baseline="A")
    assert c.rows == ("A", "B") and c.baseline == "A"
    col = "iozone write record_size=4k"  # file_size is the same everywhere: said once
    assert c.columns == (col, "iozone write record_size=64k")
    assert c.common == {"file_size": 1 << 20}
    cell = c.cells[("B", col)]
    assert cell.delta == pytest.approx(10 * 2**20)
    assert cell.delta_pct == pytest.approx(10.0)
    # 110 ± 2 against 100 ± 2 over three runs each: t = 6.12 with 4 df, p = 0.0036
    assert cell.test is not None and cell.test.p_value == pytest.approx(0.0036, abs=1e-4)
    assert cell.verdict == "better" and delta_class(c, "B", col) == "better"
    assert delta_class(c, "A", col) == "same"  # the baseline itself
    assert cell_text(c, "A", col) == "100 MiB/s ± 2.00 MiB/s (n=3, CV 2.0 %)"
    assert cell_text(c, "B", col) == (
        "110 MiB/s ± 2.00 MiB/s (n=3, CV 1.8 %); +10.0 %, 95 % CI +5.47 … +14.5 MiB/s "
        "(×1.05 … ×1.15), p = 0.0036: better")
    table = comparison_table(c)
    assert table.header == ("configuration", f"{col} (higher is better)",
                            "iozone write record_size=64k (higher is better)")
    assert table.rows[0] == ("A (baseline)", "100 MiB/s ± 2.00 MiB/s (n=3, CV 2.0 %)",
                             "200 MiB/s ± 4.00 MiB/s (n=3, CV 2.0 %)")
    assert table.classes[1] == ("", "num better", "num better")
    assert "in every test: file_size=1m" in table.note.splitlines()
    md = comparison_markdown(c)
    assert ("| A (baseline) | 100 MiB/s ± 2.00 MiB/s (n=3, CV 2.0 %) | "
            "200 MiB/s ± 4.00 MiB/s (n=3, CV 2.0 %) |") in md
    assert "Welch's t-test" in md
    csv_text = comparison_csv(c)
    assert "p = 0.0036: better" in csv_text
    doc = comparison_json(c)
    b = next(d for d in doc["cells"] if d["configuration"] == "B" and d["test"] == col)
    assert b["significant"] is True and b["better"] == "higher" and b["verdict"] == "better"
    assert b["delta_ci_low"] == pytest.approx(cell.test.ci_low) and b["n"] == 3
    # the interval of the mean has its own name: it holds the mean, the difference's does not
    assert b["mean_ci_low"] < b["mean"] < b["mean_ci_high"]
    assert b["delta_ci_high"] < b["mean_ci_low"] and "ci_low" not in b
    assert b["cv"] == pytest.approx(2 / 110)


def test_a_difference_within_the_noise_is_no_significant_difference() -> None:
    """+10 % at ± 8 % over three runs each: p = 0.18, neither better nor coloured."""
    a = [dict(r, stddev=r["mean"] * 0.08) for r in ROWS_A]
    b = [dict(r, mean=r["mean"] * 1.1, stddev=r["mean"] * 0.08) for r in ROWS_A]
    c = compare_results([("A", a), ("B", b)])
    cell = c.cells[("B", c.columns[0])]
    assert cell.verdict == "no significant difference"
    assert delta_class(c, "B", c.columns[0]) == "same"
    assert cell.test is not None and 0.1 < cell.test.p_value < 0.3
    assert cell.test.ci_low < 0 < cell.test.ci_high
    assert cell_text(c, "B", c.columns[0]).endswith(": no significant difference")
    # a looser alpha makes the same difference significant
    loose = compare_results([("A", a), ("B", b)], alpha=0.3)
    assert loose.cells[("B", c.columns[0])].verdict == "better"
    assert "p < 0.3 and the 70 % confidence interval" in comparison_table(loose).note


def test_the_issues_plus_12_percent_is_no_significant_difference() -> None:
    """Two runs a side, 400 ± 85 against 448.8 ± 188 MiB/s: once "+12.2 % better", now p = 0.78
    and the text the README quotes."""
    a = [dict(ROWS_A[0], n=2, mean=400 * 2**20, stddev=85 * 2**20)]
    b = [dict(ROWS_A[0], n=2, mean=448.8 * 2**20, stddev=188 * 2**20)]
    c = compare_results([("A", a), ("B", b)])
    assert delta_class(c, "B", c.columns[0]) == "same"
    assert cell_text(c, "B", c.columns[0]) == (
        "449 MiB/s ± 188 MiB/s (n=2, CV 41.9 %); +12.2 %, 95 % CI -931 … +1028 MiB/s "
        "(ratio unbounded), p = 0.78: no significant difference")


def test_one_run_on_either_side_is_no_test() -> None:
    one = [dict(r, n=1, stddev=None) for r in ROWS_A]
    c = compare_results([("A", one), ("B", ROWS_B)])
    cell = c.cells[("B", c.columns[0])]
    assert cell.verdict == "one run: no test possible" and cell.test is None
    assert delta_class(c, "B", c.columns[0]) == "same"
    assert cell_text(c, "B", c.columns[0]).endswith("(n=3, CV 1.8 %); +10.0 % †")
    # the reason is said once, under the table, not in every cell
    assert comparison_table(c).note.count("† one run: no test possible") == 1
    assert cell_text(c, "A", c.columns[0]) == "100 MiB/s (n=1)"
    d = comparison_json(c)["cells"][-1]
    assert d["p_value"] is None and d["significant"] is False


def test_noisy_cells_are_flagged_with_a_hint() -> None:
    noisy = [dict(r, stddev=r["mean"] * 0.15) for r in ROWS_A]
    c = compare_results([("A", ROWS_A), ("B", noisy)])
    cell = c.cells[("B", c.columns[0])]
    assert cell.noisy and cell.cv == pytest.approx(0.15)
    assert cell_text(c, "B", c.columns[0]).endswith("; noisy")
    note = comparison_table(c).note
    assert "noisy: CV above 10 % over 3 runs or more" in note and "more repeats" in note
    two_runs = [dict(r, n=2, stddev=r["mean"] * 0.15) for r in ROWS_A]
    assert not compare_results([("A", two_runs)]).cells[("A", c.columns[0])].noisy


def test_latency_is_better_lower() -> None:
    a = [{"config": "x", "tool": "fio", "metric": "read:lat_mean", "unit": "ns", "n": 3,
          "mean": 1000.0, "stddev": 10.0, "params": {}}]
    b = [dict(a[0], mean=2000.0)]
    c = compare_results([("A", a), ("B", b)])
    assert delta_class(c, "B", c.columns[0]) == "worse"
    assert c.higher_is_better == {c.columns[0]: False}


def test_bytes_moved_differ_without_being_better_or_worse() -> None:
    """A time-based run that moved twice the bytes did more, not better: its significant
    difference is said as such, in the table, its legend and the JSON, and not coloured."""
    a = [{"config": "x", "tool": "fio", "test": "write", "metric": "write:bytes", "unit": "B",
          "n": 3, "mean": 1e9, "stddev": 1e7, "params": {}, "values": [0.99e9, 1e9, 1.01e9]}]
    b = [dict(a[0], mean=2e9, values=[1.99e9, 2e9, 2.01e9])]
    c = compare_results([("A", a), ("B", b)])
    col = c.columns[0]
    assert c.cells[("B", col)].verdict == "significantly different (neither way is better)"
    assert delta_class(c, "B", col) == "same"
    assert cell_text(c, "B", col).endswith("p < 0.001: significantly different (neither way "
                                           "is better)")
    assert "↕ significantly different (neither way is better): bytes moved" in \
        comparison_table(c).note
    p = build_pivot([dict(a[0], config="A"), dict(b[0], config="B")], ["config"], ["test"],
                    metrics=["write:bytes"],
                    baseline="config=A")
    assert pivot_cell_text(p, 1, 0).endswith("+100.0 % ↕")
    assert "↕ significantly different" in pivot_marks(p)
    doc = comparison_json(c)
    (cell,) = [x for x in doc["cells"] if x["configuration"] == "B"]
    assert cell["significant"] and cell["better"] == "neither"
    assert doc["columns"][0]["better"] == "neither"


def test_the_direction_of_better_per_metric() -> None:
    assert better_is_higher("write", "B/s") and better_is_higher("read:iops", "op/s")
    assert not better_is_higher("read:lat_p99", "ns")
    assert not better_is_higher("write:cpu", "%") and not better_is_higher("cpu:sys", "%")
    assert not better_is_higher("elapsed", "s")


def test_one_headline_filter_for_tables_comparisons_and_charts() -> None:
    metrics = ("write", "write:iops", "write:lat_mean", "write:lat_p99", "write:parent",
               "write:min_proc", "write:max_proc", "write:avg_proc", "write:min_xfer",
               "write:stream", "write:cpu")
    rows = [{"config": "x", "tool": "t", "metric": m, "unit": "B/s", "n": 1, "mean": 1.0,
             "params": {}} for m in metrics]
    # the spread of processes (iozone -t) and streams (engine) is a headline: min, max, avg
    assert [r["metric"] for r in headline(rows)] == [
        "write", "write:iops", "write:lat_mean", "write:parent", "write:min_proc",
        "write:max_proc", "write:avg_proc"]
    assert not is_headline({"metric": "write:lat_p99"})
    assert not is_headline({"metric": "write:stream"})  # one row per stream: all metrics
    c = compare_results([("A", rows)], all_metrics=False)
    assert [col.split()[1] for col in c.columns] == [r["metric"] for r in headline(rows)]
    assert len(compare_results([("A", rows)]).columns) == len(metrics)


def test_sessions_with_several_configurations_are_a_row_per_configuration() -> None:
    rows = [dict(ROWS_A[0], config="ext4"), dict(ROWS_A[0], config="xfs", mean=50 * 2**20)]
    c = compare_results([("1 s", rows), ("2 t", ROWS_B[:1])], baseline="1 s")
    assert c.rows == ("1 s / ext4", "1 s / xfs", "2 t") and c.baseline == "1 s / ext4"
    assert [r["config"] for r in labelled_rows([("1 s", rows)])] == ["1 s / ext4", "1 s / xfs"]


def test_constant_params() -> None:
    assert constant_params(ROWS_A) == {"file_size": 1 << 20}
    assert constant_params([]) == {}


def test_config_diff_lists_only_what_differs() -> None:
    diff = config_diff({
        "ext4 ordered": {"fstype": "ext4", "options": "rw,data=ordered", "readahead": 128},
        "ext4 journal": {"fstype": "ext4", "options": "rw,data=journal", "readahead": 128},
    })
    # a list shows only the items that differ, and the key says so
    assert diff == [("options (items not in all)", {"ext4 ordered": "data=ordered",
                                                    "ext4 journal": "data=journal"})]
    diff = config_diff({
        "ext2": {"readback.features": ["ext_attr", "dir_index", "filetype"], "fstype": "ext2"},
        "ext4": {"readback.features": ["has_journal", "ext_attr", "dir_index", "filetype",
                                       "extent"], "fstype": "ext4"},
        "ext4 again": {"readback.features": ["has_journal", "ext_attr", "dir_index",
                                             "filetype", "extent"], "fstype": "ext4"},
    })
    assert diff == [("readback.features (items not in all)",
                     {"ext2": "(none)", "ext4": "has_journal,extent",
                      "ext4 again": "has_journal,extent"}),
                    ("fstype", {"ext2": "ext2", "ext4": "ext4", "ext4 again": "ext4"})]


def test_markdown_escapes_the_pipe_in_cells() -> None:
    rows = [dict(r, config="a|b") for r in ROWS_A]
    two = [dict(r, config="c") for r in ROWS_A]
    c = compare_results([("x|y", rows), ("z", two)])
    lines = comparison_markdown(c).splitlines()
    assert lines[-1] == "in every test: file_size=1m"  # the table, then its note
    line = lines[2]
    assert line.startswith("| x\\|y (baseline) |")
    assert line.count(" | ") == len(c.columns)  # the cell did not split
