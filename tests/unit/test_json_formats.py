"""Every JSON document DiskLab writes names its format and version at the top level, so a
script can check what it reads: exported sessions, comparisons, `--json` outputs, run events.
And the plan's JSON Schema: generated from the adapters, shipped, and agreeing with the loader."""

from __future__ import annotations

import argparse
import json
import re
import tomllib
from pathlib import Path

import pytest

from disklab.cli.commands import import_cmd, sessions, show, tools_cmd
from disklab.cli.main import main
from disklab.cli.output import event_json
from disklab.core import tools
from disklab.core.library import Library
from disklab.core.plan.schema import plan_schema, plan_schema_text
from disklab.core.resources import preset_paths, resource
from disklab.core.results import limits
from disklab.core.results.documents import comparison_text, write_session
from disklab.core.vocab.events import Notice
from disklab.core.vocab.jsonformat import VERSIONS
from disklab.core.vocab.model import Case, Metric
from tests.helpers import fixture_text, record_session


def _stamp(doc: dict) -> tuple[str, int]:
    assert list(doc)[:2] == ["format", "version"], "the stamp comes first"
    return doc["format"], doc["version"]


@pytest.fixture
def library(tmp_path: Path) -> Path:
    path = tmp_path / "library.sqlite3"
    with Library.open(path) as lib:
        for name, bps in (("a", 100e6), ("b", 120e6)):
            case = Case("c0", 0, "ext4", "dd", 0, {"mode": "write", "bs": 1 << 20})
            record_session(lib, [(case, [(Metric("write", bps, "B/s"),)])], name=name)
    return path


def test_exports_and_json_outputs_carry_format_and_version(
        library: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Library.open(library) as lib:
        out = write_session(lib, 1, tmp_path / "s.json", "json")
        assert _stamp(json.loads(out.read_text())) == ("disklab.session", 2)
        compared = json.loads(comparison_text(lib, [1, 2], 1, "json"))
        assert _stamp(compared) == ("disklab.comparison", 3)

    lib_arg = str(library)
    assert sessions(argparse.Namespace(json=True, library=lib_arg)) == 0
    listed = json.loads(capsys.readouterr().out)
    assert _stamp(listed) == ("disklab.sessions", 1)
    assert sorted(s["name"] for s in listed["sessions"]) == ["a", "b"]

    assert show(argparse.Namespace(json=True, library=lib_arg, session="a")) == 0
    shown = json.loads(capsys.readouterr().out)
    assert _stamp(shown) == ("disklab.results", 2)
    assert shown["results"][0]["metric"] == "write"
    assert shown["results"][0]["limited_by"][0]["kind"] in limits.KINDS

    assert tools_cmd(argparse.Namespace(json=True)) == 0
    assert _stamp(json.loads(capsys.readouterr().out)) == ("disklab.tools", 1)

    dd_output = tmp_path / "dd.txt"
    dd_output.write_text(fixture_text(
        "dd", "write_1m_x1024_oflag-direct_progress_ext4.stderr.txt"))
    assert import_cmd(argparse.Namespace(files=[str(dd_output)], tool="dd", session=None,
                                         config="imported", json=True, library=lib_arg)) == 0
    imported = json.loads(capsys.readouterr().out)
    assert _stamp(imported) == ("disklab.import", 1)
    assert imported["imported"][0]["tool"] == "dd"


def test_run_events_carry_format_and_version() -> None:
    line = json.loads(json.dumps(event_json(Notice(level="warning", message="m", t=1.0))))
    assert _stamp(line) == ("disklab.event", 1)
    assert (line["event"], line["message"]) == ("Notice", "m")


def test_every_format_has_a_version() -> None:
    assert all(name.startswith("disklab.") and v >= 1 for name, v in VERSIONS.items())


# --- the plan schema ---------------------------------------------------------------------------

def test_the_shipped_schema_is_the_generated_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert resource("plan.schema.json").read_text() == plan_schema_text(), (
        "regenerate: disklab plan schema > app/disklab/resources/plan.schema.json")
    assert main(["plan", "schema"]) == 0
    assert capsys.readouterr().out == plan_schema_text()


def test_the_schema_knows_every_adapter_parameter() -> None:
    schema = plan_schema()
    assert schema["$schema"].startswith("http://json-schema.org/draft-07")
    branches = schema["properties"]["test"]["items"]["allOf"]
    by_tool = {b["if"]["properties"]["tool"]["const"]: b["then"] for b in branches}
    assert set(by_tool) == set(tools.tool_names())
    placed = {"iozone", "fio", "engine", "dd"}  # streams spread by `on`
    raw = {"engine", "dd", "fio"}  # a device without a filesystem
    for name, then in by_tool.items():
        hosts = {"hosts"} if name == "fio" else set()  # fio --client on [hosts.*]
        own = {"fio_options"} if name == "fio" else set()  # [test.fio_options]
        assert set(then["properties"]) == {"tool", "page_cache_limit", "zip", *hosts, *own,
                                           *tools.get_adapter(name).params,
                                           *(["on"] if name in placed else []),
                                           *(["raw"] if name in raw else [])}
        assert then["additionalProperties"] is False
    iozone_tests = by_tool["iozone"]["properties"]["tests"]
    assert "write" in json.dumps(iozone_tests)  # a multi parameter's choices


def _matches(schema: dict, value: object) -> bool:
    """A small draft-07 checker for the keywords plan_schema uses (no new dependency)."""
    if "anyOf" in schema and not any(_matches(s, value) for s in schema["anyOf"]):
        return False
    if "oneOf" in schema and sum(_matches(s, value) for s in schema["oneOf"]) != 1:
        return False
    for sub in schema.get("allOf", []):
        if "if" in sub:
            if _matches(sub["if"], value) and not _matches(sub["then"], value):
                return False
        elif not _matches(sub, value):
            return False
    if "const" in schema and value != schema["const"]:
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool}
    t = schema.get("type")
    if t in kinds and not isinstance(value, kinds[t]):
        return False
    if t in ("integer", "number") and (isinstance(value, bool) or not isinstance(
            value, int if t == "integer" else int | float)):
        return False
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        return False
    if isinstance(value, int | float) and not isinstance(value, bool) and (
            value < schema.get("minimum", value) or value > schema.get("maximum", value)):
        return False
    if isinstance(value, dict):
        props = schema.get("properties", {})
        if any(k not in value for k in schema.get("required", [])):
            return False
        if schema.get("additionalProperties") is False and set(value) - set(props):
            return False
        if not all(_matches(props[k], v) for k, v in value.items() if k in props):
            return False
    if isinstance(value, list) and "items" in schema:
        return all(_matches(schema["items"], v) for v in value)
    return True


@pytest.mark.parametrize("preset", preset_paths(), ids=lambda p: p.name)
def test_every_preset_matches_the_schema(preset: Path) -> None:
    assert _matches(plan_schema(), tomllib.loads(preset.read_text()))


def test_the_schema_rejects_what_the_loader_rejects() -> None:
    test = {"tool": "engine", "mode": ["write", "read"], "size": "16m"}
    good = {"target": {"directory": "/tmp"}, "test": [test]}
    assert _matches(plan_schema(), good)
    for bad in ({**good, "repeat": 2},  # a misspelt top-level key
                {**good, "test": [{**test, "blocksize": "1m"}]},
                {**good, "test": [{**test, "mode": "scribble"}]},
                {**good, "test": [{**test, "size": "lots"}]},
                {**good, "test": [{"tool": "engine", "mode": "write"}]},  # size is required
                {**good, "target": {"directory": "/tmp", "image": {"path": "/x", "size": "1g"}}},
                {**good, "config": [{"label": "x", "fs": "ntfs"}]}):
        assert not _matches(plan_schema(), bad), bad
