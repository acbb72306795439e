"""The comparison a person asks for has one home (core.results.sessions_compared): the
sessions' rows with their verdicts, the [report] the pivot opens on, the baseline a session's
name becomes, a document's title and facts; `disklab compare` prints what it builds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from disklab.cli.main import main
from disklab.core.library import Library
from disklab.core.results.documents import pivot_json
from disklab.core.results.limit_words import LIMITS_KEY
from disklab.core.results.sessions_compared import compare_sessions, find_sessions
from disklab.core.vocab.model import Report
from tests.helpers import record_two_configs

STUDY_PLAN = """name = "study"
[report]
rows = ["test"]
columns = ["config"]
title = "Table 2"
[[test]]
tool = "engine"
"""


@pytest.fixture
def lib(tmp_path: Path) -> Iterator[Library]:
    library = Library.open(tmp_path / "lib.sqlite")
    yield library
    library.close()


def test_the_first_sessions_report_title_facts_and_rows(lib: Library) -> None:
    first = record_two_configs(lib, STUDY_PLAN)
    second = record_two_configs(lib)
    sessions = find_sessions(lib, [str(first), str(second), str(first)])
    assert [s["id"] for s in sessions] == [first, second]  # each once, in the order named
    asked = compare_sessions(lib, sessions)
    assert asked.report.title == "Table 2" and asked.report.rows == ("test",)
    lay = asked.layout()
    assert (lay.rows, lay.columns, lay.own) == (("test",), ("config",), True)
    assert asked.title(lay) == f"DiskLab: {first} two configs, {second} two configs — Table 2"
    assert asked.study_title(asked.layout(["config"], ["test"])) == ""
    assert [label for label, _rows in asked.results] == [f"{first} two configs",
                                                        f"{second} two configs"]
    assert all(LIMITS_KEY in r for _label, rows in asked.results for r in rows)
    assert {r["config"] for r in asked.rows} == {f"{sid} two configs / {c}"
                                                 for sid in (first, second) for c in "ab"}
    assert ("session", f"{second}: two configs") in asked.facts()
    # what only a document keeps is read when asked for
    assert asked.missing == () and asked.evidence == ()
    documents = compare_sessions(lib, sessions, documents=True)
    assert [title for title, _text in documents.evidence] == ["Commands", "Commands"]


def test_a_session_named_as_baseline_is_its_row(lib: Library) -> None:
    first, second = record_two_configs(lib), record_two_configs(lib)
    asked = compare_sessions(lib, find_sessions(lib, [first, second]))
    assert asked.report == Report()
    lay = asked.layout(["session"], ["test"], baseline=str(second))
    assert asked.baseline(lay) == f"session={second} two configs"
    assert asked.baseline(asked.layout(baseline=str(first))) == f"config={first} two configs"
    assert asked.baseline(asked.layout(baseline="test=write")) == "test=write"
    pivot = asked.pivot(lay)
    assert pivot.baseline is not None and pivot.rows == (f"{first} two configs",
                                                         f"{second} two configs")


def test_disklab_compare_prints_the_pivot_built_here(lib: Library,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    first, second = record_two_configs(lib, STUDY_PLAN), record_two_configs(lib)
    assert main(["compare", str(first), str(second), "--library", str(lib.path),
                 "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    asked = compare_sessions(lib, find_sessions(lib, [first, second]), documents=True)
    built = json.loads(json.dumps(pivot_json(asked.pivot(asked.layout())), default=str))
    assert printed["cells"] == built["cells"] and printed["rows"] == ["write", "read"]
    assert printed["columns"] == built["columns"]
