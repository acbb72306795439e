"""core.results.charts and core.results.svg: chart specs and their Qt-free SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from disklab.core.results.charts import (
    comparison_charts,
    results_charts,
    session_charts,
    sweep_charts,
)
from disklab.core.results.compare import compare_results
from disklab.core.results.format import format_value
from disklab.core.results.svg import nice_ticks, to_svg, write_svgs

ROWS = [
    {"config": "as is", "tool": "iozone", "test": "write", "metric": "write", "unit": "B/s",
     "params": {"record_size": 4096, "file_size": 1 << 20}, "n": 3, "mean": 100 * 2**20,
     "stddev": 2 * 2**20, "values": []},
    {"config": "as is", "tool": "iozone", "test": "write", "metric": "write", "unit": "B/s",
     "params": {"record_size": 65536, "file_size": 1 << 20}, "n": 3, "mean": 200 * 2**20,
     "stddev": 4 * 2**20, "values": []},
    {"config": "as is", "tool": "iozone", "test": "write", "metric": "write:stream",
     "unit": "B/s", "params": {"record_size": 4096, "file_size": 1 << 20}, "n": 3,
     "mean": 9 * 2**20, "stddev": None, "values": []},
]


def test_sweep_chart_over_record_size() -> None:
    specs = sweep_charts(ROWS)
    assert len(specs) == 1
    spec = specs[0]
    assert spec.kind == "line" and spec.log_x and spec.x_label == "record_size (KiB)"
    assert [s.name for s in spec.series] == ["as is write"]  # one stream's row: no headline
    assert spec.series[0].x == (4.0, 64.0)
    assert spec.series[0].y == (100.0, 200.0)  # MiB/s
    root = ET.fromstring(to_svg(spec))
    assert root.tag.endswith("svg")
    assert any(e.tag.endswith("path") for e in root.iter())


def test_bar_titles_in_svg_write_the_figure_as_the_tables_do() -> None:
    (spec,) = results_charts(ROWS)
    assert spec.categories == ("write record_size=4k", "write record_size=64k")
    svg = to_svg(spec)
    assert f"as is: {format_value(ROWS[0]['mean'], 'B/s')}</title>" in svg
    # the value axis says which way is better
    assert spec.axis_title == "MiB/s, higher is better" and ">MiB/s, higher is better<" in svg


def test_comparison_and_session_charts() -> None:
    c = compare_results([("A", ROWS), ("B", ROWS)], all_metrics=True)
    (spec,) = comparison_charts(c)
    assert len(spec.categories) == 2  # the headline columns only
    assert spec.better == "higher is better"
    assert all(s.better == "higher is better" for s in sweep_charts(ROWS))
    samples = [{"t": float(t), "series": "app_write_bps", "value": 1e6} for t in range(5)]
    titles = [s.title for s in session_charts(ROWS, samples)]
    assert titles[-1] == "Throughput over time" and len(titles) == 3


def test_write_svgs_one_file_or_a_directory(tmp_path: Path) -> None:
    specs = results_charts(ROWS) + sweep_charts(ROWS)
    one = write_svgs(specs[:1], tmp_path / "one.svg")
    assert one == [tmp_path / "one.svg"]
    many = write_svgs(specs, tmp_path / "dir")
    assert [p.name[:3] for p in many] == ["01-", "02-"]
    for p in many:
        assert ET.fromstring(p.read_text()).tag.endswith("svg")


def test_nice_ticks_cover_the_range() -> None:
    ticks = nice_ticks(0.0, 93.0)
    assert ticks[0] == 0.0 and ticks[-1] >= 93.0 and len(ticks) <= 7
