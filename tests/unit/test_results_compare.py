"""core.results.compare and the comparison table: deltas, colours, headline figures, the config
diff, on hand-written rows as Library.results returns them."""

from __future__ import annotations

import pytest

from disklab.core.results.compare import compare_results, config_diff, delta_class, labelled_rows
from disklab.core.results.documents import comparison_csv, comparison_json, comparison_markdown
from disklab.core.results.rows import constant_params, headline, is_headline
from disklab.core.results.tables import cell_text, comparison_table

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
    assert delta_class(c, "B", col) == "better"
    assert cell_text(c, "A", col) == "100 MiB/s ± 2.00 MiB/s"  # the baseline: no delta
    assert cell_text(c, "B", col) == "110 MiB/s ± 2.00 MiB/s (+10.0 %)"
    table = comparison_table(c)
    assert table.rows[0] == ("A (baseline)", "100 MiB/s ± 2.00 MiB/s", "200 MiB/s ± 4.00 MiB/s")
    assert table.note == "in every test: file_size=1m"
    md = comparison_markdown(c)
    assert "| A (baseline) | 100 MiB/s ± 2.00 MiB/s | 200 MiB/s ± 4.00 MiB/s |" in md
    csv_text = comparison_csv(c)
    assert "110 MiB/s ± 2.00 MiB/s (+10.0 %)" in csv_text
    doc = comparison_json(c)
    assert {cell["shown"] for cell in doc["cells"]} >= {"110 MiB/s ± 2.00 MiB/s (+10.0 %)"}


def test_latency_is_better_lower() -> None:
    a = [{"config": "x", "tool": "fio", "metric": "read:lat_mean", "unit": "ns", "n": 1,
          "mean": 1000.0, "params": {}}]
    b = [dict(a[0], mean=2000.0)]
    c = compare_results([("A", a), ("B", b)])
    assert delta_class(c, "B", c.columns[0]) == "worse"


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
    assert diff == [("options", {"ext4 ordered": "rw,data=ordered",
                                 "ext4 journal": "rw,data=journal"})]


def test_markdown_escapes_the_pipe_in_cells() -> None:
    rows = [dict(r, config="a|b") for r in ROWS_A]
    two = [dict(r, config="c") for r in ROWS_A]
    c = compare_results([("x|y", rows), ("z", two)])
    lines = comparison_markdown(c).splitlines()
    assert lines[-1] == "in every test: file_size=1m"  # the table, then its note
    line = lines[2]
    assert line.startswith("| x\\|y (baseline) |")
    assert line.count(" | ") == len(c.columns)  # the cell did not split
