"""core.results.charts and core.results.svg: chart specs and their Qt-free SVG."""

from __future__ import annotations

import itertools
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
    samples = [{"t": float(t), "series": "app_wchar_bps", "value": 1e6} for t in range(5)]
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


# ---- the SVG as librsvg and browsers draw it -------------------------------------------------

def _texts(svg: str) -> list[ET.Element]:
    return [e for e in ET.fromstring(svg).iter() if e.tag.endswith("text")]


def test_svg_size_values_on_bars_direction_and_plain_coordinates() -> None:
    c = compare_results([("A", ROWS), ("B", [dict(r, mean=r["mean"] * 1.5) for r in ROWS])])
    (spec,) = comparison_charts(c)
    svg = to_svg(spec)
    root = ET.fromstring(svg)
    assert (root.get("width"), root.get("height"), root.get("viewBox")) == (
        "1000", "560", "0 0 1000 560")
    assert "vector-effect" not in svg
    rects = [e for e in root.iter() if e.tag.endswith("rect")]
    assert not any(e.get("transform") for e in rects)  # shapes in the viewport's own units
    texts = {e.text or "" for e in _texts(svg)}
    assert {"100", "200", "150", "300"} <= texts  # every bar carries its value
    assert any("higher is better" in t for t in texts)
    assert to_svg(spec, 640, 360).startswith('<svg xmlns="http://www.w3.org/2000/svg" '
                                             'width="640" height="360" viewBox="0 0 640 360"')


def test_every_chart_says_which_way_is_better() -> None:
    samples = [{"t": float(t), "series": "app_wchar_bps", "value": 1e6} for t in range(5)]
    charts = session_charts(ROWS, samples)
    assert charts and all(s.better for s in charts)
    for spec in charts:
        assert spec.better in "".join("".join(e.itertext()) for e in _texts(to_svg(spec)))


def test_long_labels_never_collide_and_the_legend_flows() -> None:
    from disklab.core.results.charts import ChartSpec, Series
    from disklab.core.results.svg import CHAR, text_width

    names = [f"configuration number {k} with a long descriptive name" for k in range(6)]
    cats = tuple(f"block_size={b} queue_depth={q}" for b in ("4k", "1m") for q in (1, 32, 128))
    spec = ChartSpec("t", "bar", "x", "MiB/s", tuple(
        Series(n, tuple(float(i) for i in range(6)), tuple(10.0 + i for i in range(6)))
        for n in names), categories=cats, better="higher is better")
    svg = to_svg(spec)
    texts = _texts(svg)
    legend = [(float(e.get("x")), float(e.get("y")), e.text or "") for e in texts
              if (e.text or "").startswith("configuration number")]
    assert len(legend) == 6
    rows: dict[float, list[tuple[float, str]]] = {}
    for x, y, text in legend:
        rows.setdefault(y, []).append((x, text))
    assert len(rows) > 1  # wrapped onto more rows, not squeezed
    for entries in rows.values():
        entries.sort()
        for (x1, t1), (x2, _t2) in itertools.pairwise(entries):
            assert x1 + text_width(t1, 11) <= x2  # no overlap
    # the category labels: either each fits its slot (wrapped) or all are slanted
    slanted = [e for e in texts if "rotate(-35)" in (e.get("transform") or "")]
    assert len(slanted) == len(cats) or all(
        len(line) * 11 * CHAR <= 900 / len(cats) for c in cats for line in c.split())


def test_pivot_charts_one_per_unit() -> None:
    from disklab.core.results.charts import pivot_charts
    from disklab.core.results.pivot import build_pivot

    rows = [dict(ROWS[0], config=c, metric=m, unit=u, mean=v)
            for c in ("a", "b") for m, u, v in (("write", "B/s", 100 * 2**20),
                                                 ("write:iops", "op/s", 1000.0))]
    charts = pivot_charts(build_pivot(rows, ["config"], ["test"],
                                      metrics=["throughput", "iops"]))
    assert [c.y_label for c in charts] == ["MiB/s", "op/s"]  # never one axis for both
    assert all(c.better == "higher is better" for c in charts)
