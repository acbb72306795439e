"""The studies' tables as their presets' [report] lay them out, through `disklab compare`: the
data=journal study's per-thread table (per mode, min/max/avg per process down, tests across),
the journal-size study's write group then read group per record size, the journaling-cost
study's tests 1-6 in the plan's order; and `--where`, `--baseline none` and own
`--rows/--columns` against a preset's [report]. Sessions are recorded through the real
recorder with the presets' own plan text."""

from __future__ import annotations

import csv
import io
import json
from importlib import resources
from pathlib import Path

import pytest

from disklab.cli.main import main
from disklab.core.library import Library
from disklab.core.vocab.model import Case, Metric
from tests.helpers import record_session

MiB = 1 << 20
PRESETS = resources.files("disklab.resources.presets")

# iozone's own output order (random_write before mixed), not the study's
THROUGHPUT_TESTS = ("write", "rewrite", "random_read", "random_write", "mixed", "pwrite",
                    "fwrite")
STUDY_TESTS = ["write", "rewrite", "random_read", "mixed", "random_write", "pwrite", "fwrite"]
ORDERED, JOURNAL = "data=ordered, 1g journal", "data=journal, 1g journal"
# iozone's 13 single-process results in its output order
IOZONE_13 = ("write", "rewrite", "read", "reread", "random_read", "random_write",
             "backward_read", "record_rewrite", "stride_read", "fwrite", "frewrite", "fread",
             "freread")
JOURNALS = ("journal 16m", "journal 64m", "journal 256m", "journal 1g")
RECORDS = (MiB, 4 * MiB, 8 * MiB, 16 * MiB)


@pytest.fixture
def lib(tmp_path: Path) -> Library:
    library = Library.open(tmp_path / "lib.sqlite")
    yield library
    library.close()


def _preset(name: str) -> str:
    return PRESETS.joinpath(f"{name}.toml").read_text(encoding="utf-8")


def _per_thread_session(lib: Library) -> int:
    runs = []
    for index, config in enumerate((ORDERED, JOURNAL)):
        case = Case(f"c{index}", index, config, "iozone", 1,
                    {"record_size": MiB, "file_size": 1 << 30, "threads": 4})
        repeats = []
        for r in range(3):
            metrics = []
            for k, test in enumerate(THROUGHPUT_TESTS):
                v = (40 + 10 * k + index * 5 + r) * MiB
                metrics += [Metric(test, 4 * v, "B/s"), Metric(f"{test}:parent", 4 * v, "B/s"),
                            Metric(f"{test}:min_proc", 0.9 * v, "B/s"),
                            Metric(f"{test}:max_proc", 1.1 * v, "B/s"),
                            Metric(f"{test}:avg_proc", v, "B/s")]
            repeats.append(metrics)
        runs.append((case, repeats))
    return record_session(lib, runs, name="per-thread",
                          plan_text=_preset("study-ext4-data-journal-vs-ordered"))


def _journal_size_session(lib: Library) -> int:
    runs = []
    for c, config in enumerate(JOURNALS):  # the plan's cases: configuration major
        for k, record in enumerate(RECORDS):
            case = Case(f"c{c}{k}", c * 4 + k, config, "iozone", 1,
                        {"record_size": record, "file_size": 4 << 30, "threads": 0})
            runs.append((case, [[Metric(t, (100 + n + c + r) * MiB, "B/s")
                                 for n, t in enumerate(IOZONE_13)] for r in range(3)]))
    return record_session(lib, runs, name="journal size",
                          plan_text=_preset("study-ext4-journal-size"))


def _compare_json(lib: Library, sid: int, capsys: pytest.CaptureFixture[str], *extra: str
                  ) -> dict:
    assert main(["compare", str(sid), "--library", str(lib.path), "--format", "json",
                 *extra]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_the_data_journal_studys_per_thread_table_per_mode_min_max_avg_by_test(
        lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _compare_json(lib, _per_thread_session(lib), capsys)
    assert doc["row_keys"] == ["config", "figure"] and doc["column_keys"] == ["test"]
    assert doc["rows"] == [f"{c} / {f}" for c in (ORDERED, JOURNAL)
                           for f in ("min_proc", "max_proc", "avg_proc")]
    assert doc["columns"] == STUDY_TESTS  # the study's order, not iozone's
    assert doc["compared_along"] == "config"
    cell = doc["cells"][3][3]  # data=journal's min per process of the mixed workload
    assert cell["mean"] == pytest.approx(0.9 * (40 + 10 * 4 + 5 + 1) * MiB)
    assert cell["compared_with"] == f"{ORDERED} / min_proc / mixed"


def test_the_journal_size_studys_write_group_then_read_group_per_record_size(
        lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _compare_json(lib, _journal_size_session(lib), capsys)
    assert doc["columns"] == ["write", "rewrite", "random_write", "record_rewrite", "fwrite",
                              "frewrite", "read", "reread", "random_read", "backward_read",
                              "stride_read", "fread", "freread"]
    assert doc["rows"] == [f"record_size={s} / {j}" for s in ("1m", "4m", "8m", "16m")
                           for j in JOURNALS]


def test_the_journaling_cost_studys_tests_1_to_6_come_in_the_plans_order(
        lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [({"file_size": 4 << 30, "sync": True, "threads": 1}, ("write", "rewrite", "read",
                                                                   "reread")),
             ({"file_size": 4 << 30, "sync": False, "threads": 1}, ("write", "rewrite", "read",
                                                                    "reread")),
             ({"file_size": 75 * MiB, "sync": True, "threads": 1}, ("write", "rewrite", "read",
                                                                    "reread")),
             ({"file_size": 75 * MiB, "sync": False, "threads": 1}, ("write", "rewrite", "read",
                                                                     "reread")),
             ({"file_size": 75 * MiB, "sync": False, "threads": 6}, ("write", "rewrite")),
             ({"file_size": 75 * MiB, "sync": False, "threads": 7}, ("write", "rewrite"))]
    runs = [(Case(f"c{i}", i, "ext4 no journal (UFS soft updates)", "iozone", i + 1,
                  {"record_size": 4 * MiB, **params}),
             [[Metric(t, (200 - i) * MiB, "B/s") for t in tests]] * 2)
            for i, (params, tests) in enumerate(cases)]
    sid = record_session(lib, runs, name="tests 1-6",
                         plan_text=_preset("study-journaling-cost-sync-vs-buffered"))
    doc = _compare_json(lib, sid, capsys)
    firsts = list(dict.fromkeys(" / ".join(r.split(" / ")[:3]) for r in doc["rows"]))
    assert firsts == ["file_size=4g / sync=True / threads=1",
                      "file_size=4g / sync=False / threads=1",
                      "file_size=75m / sync=True / threads=1",
                      "file_size=75m / sync=False / threads=1",
                      "file_size=75m / sync=False / threads=6",
                      "file_size=75m / sync=False / threads=7"]
    assert [r.split(" / ")[-1] for r in doc["rows"][:4]] == ["write", "rewrite", "read",
                                                             "reread"]


def test_where_filtering_away_the_reports_baseline_shows_values_without_complaint(
        lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    sid = _journal_size_session(lib)
    doc = _compare_json(lib, sid, capsys, "--where", "config=journal 64m")
    assert doc["baseline"] is None and len(doc["rows"]) == 4
    assert all(c["verdict"] == "" for row in doc["cells"] for c in row if c)
    # a baseline typed by the person still has to name a row
    code = main(["compare", str(sid), "--library", str(lib.path), "--where",
                 "config=journal 64m", "--baseline", "config=journal 16m"])
    assert code == 2 and "--baseline 'config=journal 16m'" in capsys.readouterr().err


def test_baseline_none_shows_a_reports_table_as_values(
        lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _compare_json(lib, _journal_size_session(lib), capsys, "--baseline", "none")
    assert doc["baseline"] is None and doc["compared_along"] is None
    assert doc["columns"][:2] == ["write", "rewrite"]  # still the report's own table


def test_own_rows_and_columns_leave_the_reports_metrics(
        lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _compare_json(lib, _per_thread_session(lib), capsys, "--rows", "config",
                        "--columns", "test")
    assert doc["metrics"] == list(THROUGHPUT_TESTS)  # each test's main figure
    assert doc["added_keys"] == []


def test_samples_export_says_each_points_configuration(
        lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [(Case(f"c{i}", i, config, "engine", 1, {"mode": "write"}),
             [[Metric("write", (100 + i) * MiB, "B/s")]]) for i, config in enumerate(("a", "b"))]
    sid = record_session(lib, runs, name="samples", sample_series="write_bps")
    assert main(["export", str(sid), "--library", str(lib.path), "--format", "samples",
                 "-o", "-"]) == 0
    lines = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {(r["case_id"], r["config"]) for r in lines} == {("c0", "a"), ("c1", "b")}


def test_show_opens_on_the_per_thread_table(
        lib: Library, capsys: pytest.CaptureFixture[str]) -> None:
    sid = _per_thread_session(lib)
    assert main(["show", str(sid), "--library", str(lib.path)]) == 0
    out = capsys.readouterr().out
    head = next(line for line in out.splitlines() if line.startswith("config / figure"))
    assert head.split()[5:] == STUDY_TESTS  # 'config / figure \\ test', then the tests
    assert f"{JOURNAL} / avg_proc" in out
