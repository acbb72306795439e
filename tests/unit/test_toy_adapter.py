"""Adding a tool is adding its adapter module, and nothing else (ARCHITECTURE.md, "A tool").

A toy adapter is written as a module of its own in a temporary folder, put on the
`disklab.core.tools` package's path (as a new file in `core/tools/` is), and then the plan
checker, `disklab plan validate`, `disklab import` (sniffed and with `--tool`), `disklab tools
--json` and the plan's JSON Schema all know it, its facts included (placeable: `on`; raw-device
capable: `raw`; importable: `--tool`), with no other file of DiskLab edited.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from disklab.cli.main import main
from disklab.core import tools
from disklab.core.library import Library
from disklab.core.plan.matrix import expand
from disklab.core.plan.parse import parse_plan
from disklab.core.plan.schema import plan_schema

TOY = '''\
"""A toy tool: `toy-bench SIZE` writes SIZE bytes and prints 'toy-bench 1.0' and 'wrote N B/s'."""

import re
from collections.abc import Mapping
from typing import Any

from disklab.core.vocab.errors import ParseError
from disklab.core.vocab.model import Metric
from disklab.core.tools.base import (
    MAX_FILE, Capabilities, Command, ParamSpec, RunTarget, ToolAdapter, ToolOutput)

_RATE = re.compile(r"^wrote (\\d+) B/s$", re.M)


class ToyAdapter(ToolAdapter):
    name = "toy"
    title = "Toy bench"
    executable = "toy-bench"
    package = "toy-bench"
    capabilities = Capabilities(tests=("write",), placeable=True, raw_device=True,
                                importable=True)
    rank = 50
    params = {"size": ParamSpec("size", 1 << 20, minimum=4096, maximum=MAX_FILE,
                                help="bytes written")}

    def build_command(self, params: Mapping[str, Any], target: RunTarget) -> Command:
        path = f"{target.directory}/toy-{target.tag}"
        return Command(argv=("toy-bench", str(params["size"]), path), files=(path,))

    def parse_result(self, output: ToolOutput, params: Mapping[str, Any]) -> list[Metric]:
        m = _RATE.search(output.stdout)
        if m is None:
            raise ParseError("toy", None, "a 'wrote N B/s' line", output.stdout[:80])
        return [Metric("write_bps", float(m.group(1)), "B/s")]

    def sniff(self, text: str) -> bool:
        return text.startswith("toy-bench 1.0")


ADAPTER = ToyAdapter
'''


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The toy module in a folder of the tools package's path; forgotten afterwards."""
    folder = tmp_path / "adapters"
    folder.mkdir()
    (folder / "toy.py").write_text(TOY)
    bin_dir = tmp_path / "bin"  # the toy's executable, installed
    bin_dir.mkdir()
    program = bin_dir / "toy-bench"
    program.write_text('#!/bin/sh\nhead -c "$1" /dev/zero > "$2"\n'
                       'echo "toy-bench 1.0"; echo "wrote 123456 B/s"\n')
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setattr(tools, "__path__", [*tools.__path__, str(folder)])
    yield "toy"
    tools._cache.pop("toy", None)
    sys.modules.pop("disklab.core.tools.toy", None)


def _plan(tmp_path: Path, extra: str = "") -> Path:
    plan = tmp_path / "toy.toml"
    plan.write_text(textwrap.dedent(f"""\
        name = "toy"

        [target]
        directory = "{tmp_path}"

        [[test]]
        tool = "toy"
        size = ["64k", "1m"]
        {extra}
        """))
    return plan


def test_a_new_adapter_module_is_a_tool_everywhere(
        toy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert toy in tools.tool_names()
    assert tools.tool_names()[-1] == "toy"  # rank 50: after the six tools DiskLab ships
    assert [toy in names for names in (tools.placeable_tools(), tools.raw_tools(),
                                      tools.importable_tools())] == [True, True, True]

    # the plan checker: its parameters, with their bounds, by key and line
    library = str(tmp_path / "lib.sqlite3")
    assert main(["plan", "validate", str(_plan(tmp_path)), "--library", library]) == 0
    plan = parse_plan(_plan(tmp_path).read_text()).plan
    assert [c.params["size"] for c in expand(plan)] == [64 << 10, 1 << 20]
    capsys.readouterr()
    assert main(["plan", "validate", str(_plan(tmp_path, 'on = "target+target"')), "--library",
                 library]) == 0
    bad = _plan(tmp_path).read_text().replace('["64k", "1m"]', '"1k"')
    (tmp_path / "bad.toml").write_text(bad)
    assert main(["plan", "validate", str(tmp_path / "bad.toml"), "--library", library]) == 2
    assert "test[1].size" in capsys.readouterr().err

    # `disklab import`: sniffed, and named with --tool
    output = tmp_path / "run.txt"
    output.write_text("toy-bench 1.0\nwrote 123456 B/s\n")
    assert main(["import", str(output), "--library", library, "--session", "sniffed"]) == 0
    again = tmp_path / "again.txt"  # another output (the same one again is not imported)
    again.write_text("toy-bench 1.0\nwrote 123456 B/s\n\n")
    assert main(["import", str(again), "--tool", "toy", "--library", library,
                 "--session", "named"]) == 0
    with Library.open(library) as lib:
        for name in ("sniffed", "named"):
            results = lib.results(lib.find_session(name)["id"])
            assert [(r["tool"], r["metric"], r["values"]) for r in results] == [
                ("toy", "write_bps", [123456.0])]

    # `disklab tools --json`: its row, capabilities and package
    capsys.readouterr()
    assert main(["tools", "--json"]) == 0
    rows = {r["tool"]: r for r in json.loads(capsys.readouterr().out)["tools"]}
    assert rows["toy"]["package"] == "toy-bench"
    assert rows["toy"]["installed"] is True
    assert rows["toy"]["capabilities"]["importable"] is True

    # the plan's JSON Schema: the tool, its parameters, `on` and `raw`
    branches = plan_schema()["properties"]["test"]["items"]["allOf"]
    then = {b["if"]["properties"]["tool"]["const"]: b["then"] for b in branches}["toy"]
    assert {"size", "on", "raw"} <= set(then["properties"])
    assert then["properties"]["size"]["description"] == "bytes written"


def test_without_the_module_the_toy_is_unknown(tmp_path: Path) -> None:
    assert "toy" not in tools.tool_names()
    with pytest.raises(KeyError):
        tools.get_adapter("toy")
