"""The file-tree adapter (tool = "tree") on a real output of the workload: argv, metrics per
phase, progress as files done over files planned, and what a damaged output gives."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings

from disklab.core import tools
from disklab.core.results.rows import is_headline
from disklab.core.tools.base import RunTarget, ToolOutput
from disklab.core.vocab.errors import ParseError, ToolError
from tests.helpers import HOSTILE, examples, fixture_text, mutated

PARAMS = {"dirs": 2, "files_per_dir": 300, "file_size": 65536, "block_size": 131072,
          "phases": ("create", "delete"), "sync": True}


def test_the_tree_tool_is_registered_and_builds_its_own_process() -> None:
    adapter = tools.get_adapter("tree")
    command = adapter.build_command(PARAMS, RunTarget(directory="/mnt/x", tag="t1",
                                                      python="/usr/bin/python3"))
    assert command.argv[:3] == ("/usr/bin/python3", "-m", "disklab.treeload")
    assert command.files == ("/mnt/x/disklab-t1-tree",)  # removed by the runner whatever happens
    assert command.argv[command.argv.index("--files-per-dir") + 1] == "300"
    assert [command.argv[i + 1] for i, a in enumerate(command.argv) if a == "--phase"] == [
        "create", "delete"]
    assert adapter.space_bytes(PARAMS) == 2 * 300 * 65536


def test_metrics_of_each_phase_come_from_its_summary() -> None:
    text = fixture_text("tree", "create-delete.jsonl")
    summary = json.loads(text.splitlines()[-1])
    metrics = {m.name: m for m in tools.get_adapter("tree").parse_result(ToolOutput(text),
                                                                          PARAMS)}
    for phase in summary["phases"]:
        name = phase["phase"]
        assert metrics[f"{name}:seconds"].value == phase["seconds"]
        assert metrics[f"{name}:user"].value == phase["user"]
        assert metrics[f"{name}:sys"].value == phase["sys"]
        assert metrics[name].value == pytest.approx(600 * 65536 / phase["seconds"])
        assert metrics[f"{name}:files_per_s"].value == pytest.approx(600 / phase["seconds"])
        assert metrics[name].unit == "B/s" and metrics[f"{name}:seconds"].unit == "s"
    assert set(metrics) >= {"create", "delete"}
    assert all(m.note is None for m in metrics.values())


def test_progress_is_files_done_over_files_planned() -> None:
    parser = tools.get_adapter("tree").progress_parser(PARAMS)
    updates = [u for line in fixture_text("tree", "create-delete.jsonl").splitlines()
               if (u := parser.feed("stdout", line)) is not None]
    assert updates and {u.phase for u in updates} == {"create", "delete"}
    last = updates[-1]
    assert last.done_bytes == last.total_bytes == 600 * 65536
    assert last.message == "delete: 600 of 600 files"


def test_a_stopped_run_is_partial_and_an_error_line_is_the_tools_words() -> None:
    adapter = tools.get_adapter("tree")
    text = fixture_text("tree", "create-delete.jsonl")
    lines = text.splitlines()
    summary = json.loads(lines[-1])
    summary["partial"] = True
    stopped = "\n".join([*lines[:-1], json.dumps(summary)])
    assert all(m.note == "partial" for m in adapter.parse_result(ToolOutput(stopped), PARAMS))
    with pytest.raises(ToolError, match="No space left"):
        adapter.parse_result(ToolOutput('{"type":"error","message":"/x: No space left on '
                                        'device"}\n'), PARAMS)
    with pytest.raises(ParseError):
        adapter.parse_result(ToolOutput("\n".join(lines[:-1])), PARAMS)  # no summary
    with pytest.raises(ParseError):
        adapter.parse_result(ToolOutput(lines[-1].replace('"seconds"', '"secs"')), PARAMS)


def test_a_tree_beyond_the_bound_or_out_of_order_phases_are_refused() -> None:
    adapter = tools.get_adapter("tree")
    assert adapter.check({**PARAMS, "dirs": 1_000_000, "files_per_dir": 1000})[0][0] == (
        "files_per_dir")
    assert adapter.check({**PARAMS, "phases": ("delete", "create")})[0][0] == "phases"


@settings(HOSTILE, max_examples=examples(1000))
@given(text=mutated({"tree": fixture_text("tree", "create-delete.jsonl")}))
def test_damaged_output_gives_finite_metrics_or_a_named_error(text: str) -> None:
    adapter = tools.get_adapter("tree")
    try:
        metrics = adapter.parse_result(ToolOutput(text), PARAMS)
    except ParseError as e:
        assert e.tool == "tree"
    except ToolError:
        pass
    else:
        assert metrics and all(m.value is not None and math.isfinite(m.value) and m.value >= 0
                               for m in metrics)
    assert isinstance(adapter.parse_partial(ToolOutput(text), PARAMS), list)
    parser = adapter.progress_parser(PARAMS)
    for line in text.splitlines():
        update = parser.feed("stdout", line)
        assert update is None or (update.done_bytes or 0) >= 0


def test_a_phases_times_are_headline_figures_and_fios_cpu_percent_is_not() -> None:
    assert is_headline({"metric": "create:seconds", "unit": "s"})
    assert is_headline({"metric": "delete:sys", "unit": "s"})
    assert is_headline({"metric": "create:user", "unit": "s"})
    assert not is_headline({"metric": "cpu:sys", "unit": "%"})
    assert not is_headline({"metric": "create:files_per_s", "unit": "op/s"})
