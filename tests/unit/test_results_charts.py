"""core.results.charts and core.results.svg: chart specs and their Qt-free SVG."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from disklab.core.results.charts import (
    comparison_charts,
    results_charts,
    session_charts,
    sweep_charts,
)
from disklab.core.results.compare import compare_results
from disklab.core.results.format import format_value
from disklab.core.results.svg import nice_ticks, to_svg, write_svgs

# figures written in MiB (2**20 multiples): read in IEC units (tests/conftest.py iec_units);
# the SI default is tests/unit/test_units_choice.py's
pytestmark = pytest.mark.usefixtures("iec_units")

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
    assert spec.kind == "line" and spec.log_x and spec.x_label == "record_size"
    assert [s.name for s in spec.series] == ["as is"]  # one stream's row: no headline
    assert spec.series[0].x == (4096.0, 65536.0)
    assert spec.x_ticks == ((4096.0, "4k"), (65536.0, "64k"))  # as the plan spells them
    assert spec.series[0].y == (100.0, 200.0)  # MiB/s
    assert spec.series[0].err == (2.0, 4.0)  # whiskers ± 1 stddev
    assert "n=3 per point; whiskers ± 1 stddev" in spec.note
    svg = to_svg(spec)
    assert ">4k<" in svg and ">64k<" in svg and ">MiB/s, higher is better<" in svg
    root = ET.fromstring(to_svg(spec))
    assert root.tag.endswith("svg")
    assert any(e.tag.endswith("path") for e in root.iter())


def test_bar_titles_in_svg_write_the_figure_as_the_tables_do() -> None:
    # a swept record size is a line chart; a mode that is not numeric stays bars
    assert results_charts(ROWS) == []
    rows = [dict(ROWS[0], params={"mode": "write", "file_size": 1 << 20}),
            dict(ROWS[1], params={"mode": "rewrite", "file_size": 1 << 20})]
    (spec,) = results_charts(rows)
    assert spec.categories == ("mode=write", "mode=rewrite")  # what differs, nothing else
    assert "every bar: file_size=1m" in spec.note and "n=3 per point" in spec.note
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
    assert titles == ["iozone write (MiB/s) against record_size", "Throughput over time"]


def test_write_svgs_one_file_or_a_directory(tmp_path: Path) -> None:
    samples = [{"t": float(t), "series": "app_wchar_bps", "value": 1e6} for t in range(5)]
    specs = session_charts(ROWS, samples)
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


def _sweep(metric: str = "read:iops", unit: str = "op/s") -> list[dict]:
    """An iodepth x numjobs sweep as fio-plot's benchmark data has it, one run per point."""
    return [{"config": "imported", "tool": "fio", "test": "read", "metric": metric,
             "unit": unit, "params": {"bs": 4096, "rw": "randread", "iodepth": d,
                                      "numjobs": j, "runtime": 0.0},
             "n": 1, "mean": 1000.0 * d + j, "stddev": None, "values": []}
            for d in (1, 16, 2, 4) for j in (1, 2, 32)]


def test_a_two_axis_sweep_is_a_heat_map_and_lines_in_number_order() -> None:
    from disklab.core.results.charts import pivot_charts
    from disklab.core.results.pivot import build_pivot

    heat, lines = pivot_charts(build_pivot(_sweep(), ["iodepth"], ["numjobs"]))
    assert heat.kind == "heatmap" and heat.rows == ("1", "2", "4", "16")
    assert heat.categories == ("1", "2", "32")
    assert heat.grid[3] == (16001.0, 16002.0, 16032.0)
    svg = to_svg(heat)
    texts = [e.text for e in _texts(svg)]
    assert "16032" in texts and "op/s, higher is better" in texts  # values written in cells
    assert "n=1 per cell" in heat.note
    # the line chart: IOPS against iodepth, one line per numjobs, on a log-2 axis
    assert lines.kind == "line" and lines.x_label == "iodepth" and lines.log_x
    assert [s.name for s in lines.series] == ["numjobs=1", "numjobs=2", "numjobs=32"]
    assert lines.series[0].x == (1.0, 2.0, 4.0, 16.0)
    assert [t for _x, t in lines.x_ticks] == ["1", "2", "4", "16"]
    assert lines.better == "higher is better" and "n=1 per point" in lines.note
    # runtime=0.0 is fio's default: never said; bs=4k says what the test is
    assert "runtime" not in lines.note and "bs=4k" in lines.note


def test_one_chart_per_metric_never_two_quantities_on_one_axis() -> None:
    from disklab.core.results.charts import pivot_charts
    from disklab.core.results.pivot import build_pivot

    rows = [dict(r, config=c, metric=m) for r in _sweep()[:1] for c in ("a", "b")
            for m in ("read:iops", "write:iops")]
    charts = pivot_charts(build_pivot(rows, ["config"], ["test"], metrics=["iops"]))
    assert [c.title.split(" ")[0] for c in charts] == ["read:iops", "write:iops"]
    c = compare_results([("A", _sweep()), ("B", _sweep("write:iops"))])
    assert len({spec.title for spec in comparison_charts(c)}) == len(comparison_charts(c)) == 2


def test_latency_percentiles_of_every_case_share_one_log_axis() -> None:
    """fio-plot's shape: one chart for the session's (or comparison's) cases, the
    percentiles along x, a bar per case, on a log axis where p50 (426 µs) still reads beside
    p99.9 (113,962 µs); each value inside its bar's foot, not at the whisker's tip."""
    from disklab.core.results.charts import percentile_charts
    from disklab.core.results.svg import to_svg

    rows = [dict(_sweep()[0], config=c, metric=f"read:lat_{p}", unit="ns", mean=v * k,
                 stddev=v * k / 10, n=3, case_id=f"c{c}")
            for k, c in ((1, "ext4"), (2, "xfs"))
            for p, v in (("p99.9", 113_962_000.0), ("p50", 426_000.0), ("p99", 5e6))]
    (spec,) = percentile_charts(rows)
    assert spec.categories == ("p50", "p99", "p99.9") and spec.y_label == "µs"
    assert spec.log_y and spec.better == "lower is better"
    assert [s.name.split()[0] for s in spec.series] == ["ext4", "xfs"]
    assert spec.series[0].y == (426.0, 5000.0, 113962.0)
    assert "n=3 per point" in spec.note
    svg = to_svg(spec)
    for tick in (">100<", ">1000<", ">10000<", ">100000<"):  # decades on the value axis
        assert tick in svg
    bar = re.search(r'<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)" '
                    r'fill="#0072B2"><title>ext4[^<]*: 426 ', svg)
    assert bar is not None
    foot = float(bar[1]) + float(bar[2])
    label = re.search(r'<text x="[\d.]+" y="([\d.]+)" text-anchor="middle" font-size="10" '
                      r'fill="#ffffff">426</text>', svg)
    assert label is not None and float(label[1]) == pytest.approx(foot - 4, abs=0.01)


def test_series_beyond_the_palette_are_dashed_with_their_own_markers() -> None:
    from disklab.core.results.charts import PALETTE, ChartSpec, Series
    from disklab.core.results.svg import to_svg

    lines = tuple(Series(f"s{k}", (1.0, 2.0), (float(k), k + 1.0)) for k in range(10))
    svg = to_svg(ChartSpec("ten", "line", "threads", "MiB/s", lines))
    paths = re.findall(r'<path d="M[^"]*" fill="none" stroke="(#\w+)" stroke-width="1.8"'
                       r'( stroke-dasharray="[^"]+")?><title>(s\d+)</title>', svg)
    style = {name: (colour, dash) for colour, dash, name in paths}
    assert style["s0"][0] == style["s8"][0] == PALETTE[0]
    assert style["s0"] != style["s8"] and style["s1"] != style["s9"]
    assert len(set(style.values())) == 10


def test_the_studies_sweeps_draw_as_lines_by_their_report() -> None:
    """The SAN study (rows tool, block_size, streams, queue_depth; columns test) and the
    journal-size study (rows record_size, config): lines over the swept size, one per
    configuration, one chart per test; the table in number order, record size major."""
    from disklab.core.results.charts import pivot_charts
    from disklab.core.results.pivot import build_pivot

    san = [{"config": "xfs", "tool": "engine", "test": t, "metric": t, "unit": "B/s",
            "params": {"mode": t, "block_size": b, "streams": 1, "queue_depth": q},
            "n": 2, "mean": float(b * q), "stddev": 1.0, "values": []}
           for t in ("write", "read") for b in (1 << 20, 4096, 65536) for q in (1, 8)]
    charts = pivot_charts(build_pivot(san, ["tool", "block_size", "streams", "queue_depth"],
                                      ["test"], metrics=["write", "read"]))
    assert [(c.kind, c.x_label) for c in charts] == [("line", "block_size")] * 2
    assert [c.title.split(" ")[0] for c in charts] == ["write", "read"]
    assert [s.name for s in charts[0].series] == [
        "engine / streams=1 / queue_depth=1", "engine / streams=1 / queue_depth=8"]
    assert [t for _x, t in charts[0].x_ticks] == ["4k", "64k", "1m"] and charts[0].log_x

    journal = [{"config": c, "tool": "iozone", "test": t, "metric": t, "unit": "B/s",
                "params": {"record_size": r, "file_size": 1 << 26}, "n": 1,
                "mean": float(r), "stddev": None, "values": []}
               for c in ("Disk - 16MB", "Disk - 128MB") for r in (65536, 4096, 1 << 20)
               for t in ("write", "read")]
    p = build_pivot(journal, ["record_size", "config"], ["test"])
    assert p.rows[:3] == ("record_size=4k / Disk - 16MB", "record_size=4k / Disk - 128MB",
                          "record_size=64k / Disk - 16MB")
    charts = pivot_charts(p)
    assert [(c.kind, c.x_label) for c in charts] == [("line", "record_size")] * 2
    assert [s.name for s in charts[0].series] == ["Disk - 16MB", "Disk - 128MB"]


def test_a_log_2_axis_where_the_values_double_or_span_far() -> None:
    from disklab.core.results.charts import doubling

    assert doubling([1, 2, 4, 8, 16, 32, 64]) and doubling([4096, 65536])
    assert doubling([k << 10 for k in (64, 128, 256, 320, 512, 1024)])  # the SAN sweep
    assert not doubling([1, 2, 3]) and not doubling([10, 20, 30, 40]) and not doubling([5])


def _tree_rows() -> list[dict]:
    """The file-tree study's zipped shapes (file size, files, directories change together),
    each phase as bytes per second and as seconds, on two filesystems."""
    shapes = ((10 * 1024, 50, 2), (1 << 20, 4, 1), (100 << 20, 1, 1))
    return [{"config": fs, "tool": "tree", "metric": metric, "unit": unit, "n": 3,
             "params": {"file_size": size, "files_per_dir": files, "dirs": dirs},
             "mean": value * (k + 1), "stddev": 0.1, "values": []}
            for fs in ("ext2", "xfs") for k, (size, files, dirs) in enumerate(shapes)
            for metric, unit, value in (("create", "B/s", 50.0 * 2**20),
                                        ("create:seconds", "s", 2.5))]


def test_zipped_tree_shapes_are_categories_in_seconds() -> None:
    """Zipped shapes are no sweep: one bar chart (not 6 one-point lines over file_size), in
    seconds as the study and its report give them, not MiB/s."""
    rows = _tree_rows()
    assert sweep_charts(rows) == []
    (spec,) = [c for c in results_charts(rows)]
    assert spec.kind == "bar" and spec.y_label == "s" and "create:seconds" in spec.title
    assert spec.better == "lower is better" and len(spec.categories) == 3
    assert [s.name for s in spec.series] == ["ext2", "xfs"]


def test_iozone_single_process_is_a_category_not_the_number_0() -> None:
    from disklab.core.results.charts import pivot_charts
    from disklab.core.results.pivot import build_pivot

    rows = [{"config": "ext4", "tool": "iozone", "metric": "write", "unit": "B/s", "n": 2,
             "params": {"threads": t, "file_size": 75 << 20}, "mean": (100.0 + t) * 2**20,
             "stddev": 1.0, "values": []} for t in (0, 6, 7)]
    assert sweep_charts(rows) == []
    (bars,) = results_charts(rows)
    assert bars.kind == "bar" and "single process" in bars.categories
    (pivoted,) = pivot_charts(build_pivot(rows, ["config"], ["threads"]))
    assert pivoted.kind == "bar" and pivoted.categories == ("single process", "6", "7")


def test_a_pivot_chart_notes_its_cells_verdicts() -> None:
    from disklab.core.results.charts import pivot_charts
    from disklab.core.results.pivot import build_pivot

    rows = [{"config": fs, "tool": "engine", "metric": t, "unit": "B/s", "n": 3,
             "params": {"mode": t}, "mean": m * 2**20, "stddev": 2**18,
             "values": [v * 2**20 for v in (m - 0.2, m, m + 0.2)]}
            for fs, ms in (("ext2", (100.0, 300.0)), ("ext4", (150.0, 200.0)))
            for t, m in zip(("write", "read"), ms, strict=True)]
    charts = pivot_charts(build_pivot(rows, ["config"], ["test"], baseline="config=ext2"))
    assert [c.note.rsplit("; ", 1)[1] for c in charts] == ["vs ext2: 1 better",
                                                           "vs ext2: 1 worse"]


def test_placements_are_the_axis_not_23_series() -> None:
    """The RAID study's placement rows (on = a, a+a, a+b ..., each target and 'all'), whose
    process count follows the placement: categories of one bar chart, a colour per
    configuration, not a one-point line per placement over threads."""
    placements = {"a": ("a", "all"), "a+a": ("a", "all"), "a+b": ("a", "b", "all"),
                  "a+b+c": ("a", "b", "c", "all")}
    rows = [{"config": "ext4o", "tool": "iozone", "metric": "write", "unit": "B/s", "n": 1,
             "params": {"on": on, "target": t, "threads": on.count("+") + 1},
             "mean": 100.0 * 2**20, "stddev": None, "values": []}
            for on, targets in placements.items() for t in targets]
    assert sweep_charts(rows) == []
    (spec,) = results_charts(rows)
    assert [s.name for s in spec.series] == ["ext4o"]
    assert "on=a+b target=b" in spec.categories[5] and len(spec.categories) == 11
