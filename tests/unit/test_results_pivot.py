"""Pivot tables (core.results.pivot) and `disklab compare --rows/--columns`, on sessions
recorded through the real recorder into a real library file: the figures in each cell are the
mean and stddev of the values recorded, whatever the format."""

from __future__ import annotations

import csv
import html
import io
import json
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from disklab.cli.main import main
from disklab.core.library import Library
from disklab.core.plan.parse import parse_plan
from disklab.core.plan.report import session_report
from disklab.core.results.charts import pivot_charts
from disklab.core.results.documents import pivot_json, pivot_text
from disklab.core.results.partial import session_results
from disklab.core.results.pivot import BaselineError, PivotKeyError, build_pivot
from disklab.core.results.tables import pivot_table
from disklab.core.vocab.errors import PlanError
from tests.helpers import PIVOT_FIGURES, REPORT_PLAN, record_two_configs

# figures written in MiB (2**20 multiples): read in IEC units (tests/conftest.py iec_units);
# the SI default is tests/unit/test_units_choice.py's
pytestmark = pytest.mark.usefixtures("iec_units")

MiB = 1 << 20
FIGURES = PIVOT_FIGURES


def _record(lib: Library, plan_text: str | None = None) -> int:
    return record_two_configs(lib, plan_text)


@pytest.fixture
def lib(tmp_path: Path) -> Library:
    library = Library.open(tmp_path / "lib.sqlite")
    yield library
    library.close()


def test_config_by_test_is_two_by_two_with_the_recorded_means(lib: Library) -> None:
    sid = _record(lib)
    p = build_pivot(session_results(lib, sid).rows, ["config"], ["test"])
    assert p.rows == ("a", "b") and p.columns == ("write", "read")
    # what every cell shares is said once: the tool and the parameters that do not vary
    assert p.common == {"tool": "engine", "block_size": MiB, "size": 64 * MiB}
    for (i, config) in enumerate(p.rows):
        for (j, test) in enumerate(p.columns):
            cell = p.cell(i, j)
            values = [v * MiB for v in FIGURES[(config, test)]]
            assert cell is not None and cell.n == 3
            assert cell.mean == pytest.approx(statistics.fmean(values))
            assert cell.stddev == pytest.approx(statistics.stdev(values))
    # cells are values: nothing is compared unless asked
    assert all(c.verdict == "" for c in p.cells.values()) and p.baseline is None
    table_text = pivot_text(p, "text")
    assert "every cell: tool=engine block_size=1m size=64m" in table_text
    assert "figures in MiB/s, n=3 in every cell" in table_text
    assert "b              150 ± 2.00 (CV 1.3 %)  300" in table_text and "▲" not in table_text
    # asked: b writes 150 ± 2 against a's 100 ± 4: significantly better; reads: no difference
    p = build_pivot(session_results(lib, sid).rows, ["config"], ["test"], baseline="config=a")
    assert p.cell(1, 0).verdict == "better"
    assert p.cell(1, 1).verdict == "no significant difference"
    assert p.cell(0, 0).verdict == "baseline"
    table_text = pivot_text(p, "text")
    assert "150 ± 2.00 (CV 1.3 %) +50.0 % ▲" in table_text
    assert "◆ baseline a: each cell is compared with the cell of a in the same column" in table_text
    assert "▲ significantly better" in table_text
    # the p-value and the interval of the difference in the tooltip (window, HTML title)
    tip = pivot_table(p).tips[1][1]
    assert tip == "vs a: +50.0 %, 95 % CI +41.7 … +58.3 MiB/s, p < 0.001: better"
    assert f'title="{html.escape(tip)}"' in pivot_text(p, "html")


def test_a_parameter_as_rows_and_unchosen_dimensions_added(lib: Library) -> None:
    sid = _record(lib)
    rows = session_results(lib, sid).rows
    p = build_pivot(rows, ["mode"], ["config"])
    assert p.rows == ("mode=write", "mode=read") and p.columns == ("a", "b")
    # two metrics chosen: the metric varies inside a cell, so it joins the columns
    p = build_pivot(rows, ["config"], ["test"], metrics=["throughput", "iops"])
    assert p.added == ("metric",)
    assert p.columns == ("write / write", "write / write:iops", "read / read",
                         "read / read:iops")
    # latency is a metric like any other, and lower is better
    p = build_pivot(rows, ["config"], ["test"], metrics=["lat_mean"])
    assert p.higher_is_better == {0: False, 1: False}
    assert "lower is better in every column" in pivot_text(p, "text")
    with pytest.raises(PivotKeyError, match=r"'journal_size'.*valid: config, tool, test"):
        build_pivot(rows, ["journal_size"], ["test"])


def test_cli_json_csv_md_html_show_the_same_figures(lib: Library, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    sid = _record(lib)
    base = [str(sid), "--library", str(lib.path), "--rows", "config", "--columns", "test",
            "--baseline", "a", "--units", "iec"]
    assert main(["compare", *base, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "disklab.pivot" and doc["version"] == 3
    assert doc["baseline"] == "a" and doc["compared_along"] == "config"
    assert doc["rows"] == ["a", "b"] and doc["columns"] == ["write", "read"]
    assert [len(r) for r in doc["cells"]] == [2, 2]
    cell = doc["cells"][1][0]
    assert cell["mean"] == pytest.approx(150 * MiB) and cell["n"] == 3
    assert cell["stddev"] == pytest.approx(2 * MiB) and cell["verdict"] == "better"
    # the interval of the mean and that of the difference, named apart
    assert cell["mean_ci_low"] < 150 * MiB < cell["mean_ci_high"] and cell["p_value"] < 0.05
    assert 0 < cell["delta_ci_low"] < 50 * MiB < cell["delta_ci_high"]
    assert cell["compared_with"] == "a / write" and "ci_low" not in cell
    assert main(["compare", *base, "--format", "csv"]) == 0
    lines = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert lines[0][:4] == ["config", "write mean (B/s)", "write stddev (B/s)", "write n"]
    assert float(lines[2][1]) == pytest.approx(150 * MiB)
    for fmt in ("md", "html", "text"):
        assert main(["compare", *base, "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "150 ± 2.00" in out and "300 ± 10.0" in out and "MiB/s" in out


def test_cli_unknown_key_exits_2_naming_it(lib: Library,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    sid = _record(lib)
    code = main(["compare", str(sid), "--library", str(lib.path), "--rows", "confgi"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown pivot key 'confgi'" in err
    assert "valid: config, tool, test, figure, metric" in err and "block_size" in err
    assert "Traceback" not in err
    code = main(["compare", str(sid), "--library", str(lib.path), "--metric", "iosp"])
    err = capsys.readouterr().err
    assert code == 2 and "--metric iosp: no such metric" in err and "write:iops" in err


def test_the_plans_report_table_is_the_default(lib: Library,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    sid = _record(lib, REPORT_PLAN)
    assert main(["compare", str(sid), "--library", str(lib.path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["row_keys"] == ["test"] and doc["rows"] == ["write", "read"]
    assert doc["columns"] == ["a", "b"]
    assert pivot_json(build_pivot(session_results(lib, sid).rows, ["test"], ["config"])
                      )["cells"][0][1]["mean"] == doc["cells"][0][1]["mean"]


@pytest.mark.parametrize(("line", "key", "words"), [
    ('baseline = "ext4"', "report.baseline", "expected KEY=VALUE"),
    ('baseline = "blocksize=4k"', "report.baseline", "unknown pivot key 'blocksize'"),
    ('baseline = 3', "report.baseline", "is not KEY=VALUE text"),
    ('where = ["mode"]', "report.where", "expected KEY=VALUE"),
    ('title = ["a"]', "report.title", "is not text"),
])
def test_a_reports_baseline_where_and_title_are_checked_by_key(tmp_path: Path, line: str,
                                                               key: str, words: str) -> None:
    text = (f'[target]\ndirectory = "{tmp_path}"\n[[test]]\ntool = "engine"\n'
            'mode = "write"\nsize = "1m"\n[report]\nrows = ["block_size"]\n'
            f'columns = ["config"]\n{line}\n')
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    assert any(p.key == key and words in p.message for p in e.value.problems), e.value.problems


def test_a_reports_baseline_and_where_shape_its_pivot(tmp_path: Path) -> None:
    """The report's baseline compares like with like; its where keeps the rows it names."""
    text = (f'[target]\ndirectory = "{tmp_path}"\n[[test]]\ntool = "engine"\n'
            'mode = "write"\nsize = "1m"\n[report]\nrows = ["block_size"]\n'
            'columns = ["config"]\nbaseline = "config=a"\nwhere = ["mode=write"]\n'
            'title = "Table 1"\n')
    report = parse_plan(text).plan.report
    assert report is not None and report.baseline == "config=a"
    assert report.where == (("mode", "write"),) and report.title == "Table 1"
    assert session_report(text) == report


def test_report_table_in_a_plan_is_checked(tmp_path: Path) -> None:
    text = (f'[target]\ndirectory = "{tmp_path}"\n[[test]]\ntool = "engine"\n'
            'mode = "write"\nsize = "1m"\n[report]\nrows = ["block_size"]\n'
            'columns = ["config"]\nmetrics = ["iops"]\n')
    report = parse_plan(text).plan.report
    assert report is not None and report.rows == ("block_size",)
    assert report.metrics == ("iops",)
    assert session_report(text) == report
    bad = text.replace('rows = ["block_size"]', 'rows = ["blocksize"]')
    with pytest.raises(PlanError) as e:
        parse_plan(bad)
    (problem,) = e.value.problems
    assert problem.key == "report.rows" and "'blocksize'" in problem.message
    assert problem.line == 8 and "block_size" in problem.message
    assert session_report(bad) is None


def test_show_prints_the_report_pivot_first(lib: Library,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    sid = _record(lib, REPORT_PLAN)
    assert main(["show", str(sid), "--units", "iec", "--library", str(lib.path)]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("test \\ config"))
    assert header.split() == ["test", "\\", "config", "a", "b"]
    write_row = next(line for line in out.splitlines() if line.startswith("write "))
    assert "100 ± 4.00" in write_row and "150 ± 2.00" in write_row
    assert "figures in MiB/s, n=3 in every cell" in out


def test_configurations_are_compared_never_tests(lib: Library) -> None:
    """With configurations in the columns, each is tested against the baseline's column of
    its row; a test or metric is never a baseline; nothing is tested unless asked."""
    rows = session_results(lib, _record(lib)).rows
    p = build_pivot(rows, ["test"], ["config"], baseline="a")
    assert p.against == "column" and p.baseline == "a"
    assert p.cell(0, 1).verdict == "better"  # b's write against a's write
    assert p.cell(1, 0).verdict == "baseline"  # a's read is a baseline, not 'worse than write'
    p = build_pivot(rows, ["test"], ["config"], baseline="config=b")
    assert p.cell(0, 0).verdict == "worse" and p.cell(0, 1).verdict == "baseline"
    for bad in ("test=write", "metric=write", "write", "c"):
        with pytest.raises(BaselineError):
            build_pivot(rows, ["test"], ["config"], baseline=bad)
    only_a = [r for r in rows if r["config"] == "a"]
    p = build_pivot(only_a, ["test"], ["block_size"])
    assert p.against == "" and all(c.verdict == "" for c in p.cells.values())


def test_export_size_is_checked(lib: Library, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    sid = _record(lib)
    with pytest.raises(SystemExit) as e:
        main(["export", str(sid), "--format", "svg", "--size", "big", "-o", str(tmp_path / "x"),
              "--library", str(lib.path)])
    assert e.value.code == 2 and "--size" in capsys.readouterr().err
    assert main(["export", str(sid), "--format", "svg", "--size", "640x360", "-o",
                 f"{tmp_path / 'charts'}/", "--library", str(lib.path)]) == 0
    for path in (tmp_path / "charts").glob("*.svg"):
        assert 'width="640" height="360" viewBox="0 0 640 360"' in path.read_text()


def test_sessions_and_configurations_as_keys_of_their_own(lib: Library) -> None:
    from disklab.core.results.pivot import session_rows

    first, second = _record(lib), _record(lib)
    rows = session_rows([(f"{sid} two configs", session_results(lib, sid).rows)
                         for sid in (first, second)])
    # several sessions: a configuration is named with its session, as comparisons name it
    p = build_pivot(rows, ["config"], ["test"])
    assert p.rows == tuple(f"{sid} two configs / {c}" for sid in (first, second)
                           for c in ("a", "b"))
    # with session as a key, config is the plan's own label again
    p = build_pivot(rows, ["session"], ["config", "test"])
    assert p.rows == (f"{first} two configs", f"{second} two configs")
    assert p.columns == ("a / write", "a / read", "b / write", "b / read")
    assert p.cell(1, 2).verdict == ""  # values unless asked
    p = build_pivot(rows, ["session"], ["config", "test"], baseline=f"session={first} two configs")
    assert p.cell(1, 2).verdict == "no significant difference"  # the same figures twice
    # a session as --baseline names its rows when config holds the sessions' names
    p = build_pivot(rows, ["config"], ["test"], baseline=f"{second} two configs")
    assert p.baseline_key == "config" and p.baseline == f"{second} two configs / a"
    assert p.cell(0, 0).verdict == "no significant difference"


def test_show_fits_an_80_column_terminal_without_cutting_a_figure(
        lib: Library, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
        ) -> None:
    sid = _record(lib, REPORT_PLAN)
    capsys.readouterr()
    assert main(["show", str(sid), "--library", str(lib.path)]) == 0
    wide = capsys.readouterr().out  # to a pipe: nothing to fit
    assert max(len(line) for line in wide.splitlines()) > 80
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["show", str(sid), "--units", "iec", "--library", str(lib.path)]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    # what every row shares is said once instead of in a column; the figures are whole
    assert "tool: engine" in out
    for figure in ("100 MiB/s", "4.00 MiB/s", "0.0889 µs", "150 ± 2.00 (CV 1.3 %)"):
        assert figure in out
    assert out.count("mode=write") == 6  # the parameter column, every row


def test_compare_baseline_is_a_session_a_configuration_or_a_value(
        lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    sid = _record(lib)
    base = ["compare", str(sid), "--library", str(lib.path), "--format", "json"]
    for given in ("b", f"{sid} two configs / b"):  # a configuration, by its name or its row
        assert main([*base, "--baseline", given]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["baseline"] == f"{sid} two configs / b"
        a_write = next(c for c in doc["cells"] if c["configuration"].endswith("/ a")
                       and c["test"] == "engine write")
        assert a_write["verdict"] == "worse"  # a's 100 against b's 150, same test only
    # a row or column value makes it a pivot, compared along that key
    assert main([*base, "--rows", "config", "--baseline", "config=b"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "disklab.pivot" and doc["baseline"] == "b"
    for bad in ("c", "config=c", "metric=write"):
        assert main([*base, "--baseline", bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("disklab compare: --baseline ") and "Traceback" not in err
        assert err.count("\n") == 1
    assert main([*base, "--where", "mode"]) == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err


def test_a_reports_chart_and_x_choose_the_charts_shape(tmp_path: Path) -> None:
    """chart = "bars" draws bars even over a numeric sweep; x names the swept key; a shape or
    a key the report does not have is refused at its key."""
    rows = [{"config": c, "tool": "fio", "test": "read", "metric": "read:iops", "unit": "op/s",
             "params": {"iodepth": d, "numjobs": j}, "n": 1, "mean": float(d * j), "stddev": None,
             "values": [float(d * j)]}
            for c in ("a",) for d in (1, 2, 4) for j in (1, 2)]
    p = build_pivot(rows, ("iodepth",), ("numjobs",))
    assert [c.kind for c in pivot_charts(p)] == ["heatmap", "line"]
    assert [c.kind for c in pivot_charts(replace(p, chart="bars"))] == ["bar"]
    assert [c.kind for c in pivot_charts(replace(p, chart="heatmap"))] == ["heatmap"]
    along = pivot_charts(replace(p, chart="lines", x="numjobs"))
    assert [c.kind for c in along] == ["line"] and along[0].x_label == "numjobs"
    text = (f'[target]\ndirectory = "{tmp_path}"\n[[test]]\ntool = "engine"\n'
            'mode = "write"\nsize = "1m"\n[report]\nrows = ["block_size"]\n'
            'columns = ["config"]\n')
    report = parse_plan(text + 'chart = "lines"\nx = "block_size"\n').plan.report
    assert report is not None and (report.chart, report.x) == ("lines", "block_size")
    for line, key in (('chart = "pie"', "report.chart"), ('x = "iodepth"', "report.x")):
        with pytest.raises(PlanError) as e:
            parse_plan(text + line + "\n")
        assert [p.key for p in e.value.problems] == [key]
