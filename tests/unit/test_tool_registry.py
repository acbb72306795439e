"""The adapter registry checks each adapter against the interface when it loads, and the
adapters' capabilities are read: by the plan loader and by `disklab tools --json`."""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import ClassVar

import pytest

from disklab.cli.commands import tools_cmd
from disklab.core import tools
from disklab.core.plan.parse import parse_plan
from disklab.core.tools.base import Capabilities, ToolAdapter
from disklab.core.vocab.errors import AdapterError, PlanError
from tests.helpers import fixture_text

BROKEN = '''\
"""An adapter that forgot parse_result, gives its capabilities as a dict and a wrong name."""

from disklab.core.tools.base import Command, ToolAdapter


class BrokenAdapter(ToolAdapter):
    name = "other"
    title = "Broken"
    executable = "broken"
    package = "broken"
    capabilities = {"direct_io": True}
    params = {}

    def build_command(self, params, target):
        return Command(argv=("broken",))
'''


@pytest.fixture
def broken_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A real module file, importable by name, as a broken adapter would be."""
    (tmp_path / "disklab_broken_adapter.py").write_text(BROKEN)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "disklab_broken_adapter"


def test_a_broken_adapter_is_refused_naming_it_and_what_it_lacks(broken_module: str) -> None:
    with pytest.raises(AdapterError) as e:
        tools.load_adapter("broken", broken_module, "BrokenAdapter")
    message = str(e.value)
    assert "tool adapter 'broken' (disklab_broken_adapter.BrokenAdapter)" in message
    assert "abstract method parse_result() not implemented" in message
    assert "capabilities is dict, not Capabilities" in message
    assert "name is 'other' but it is registered as 'broken'" in message


def test_a_missing_class_or_member_is_named(broken_module: str) -> None:
    with pytest.raises(AdapterError, match="no ToolAdapter subclass named Nope"):
        tools.load_adapter("broken", broken_module, "Nope")

    class NoTitle(ToolAdapter):
        name = "x"
        executable = package = ""
        capabilities = Capabilities()
        params: ClassVar[dict] = {}
        build_command = parse_result = sniff = None  # type: ignore[assignment]

    problems = tools.interface_problems("x", NoTitle)
    assert "missing title" in problems
    assert "missing method sniff()" in problems and "missing method build_command()" in problems


def test_every_registered_adapter_implements_the_interface() -> None:
    for name in tools.tool_names():
        adapter = tools.get_adapter(name)
        assert adapter.name == name
        assert isinstance(adapter.capabilities, Capabilities)


@pytest.mark.parametrize(("tool", "fixture"), [
    ("fio", "fio/seqwrite_1m_qd1_libaio_direct_ext4.txt"),
    ("bonnie", "bonnie/s1g_r512_n16_quiet_ext4.csv"),
    ("iozone", "iozone/auto_s64m_q16m_i0-1-2_ext4.txt"),
    ("dd", "dd/read_1m_iflag-direct_progress_ext4.stderr.txt"),
])
def test_sniff_is_on_the_interface_and_tells_the_tools_apart(tool: str, fixture: str) -> None:
    text = fixture_text(fixture)
    assert [name for name in tools.tool_names() if tools.get_adapter(name).sniff(text)] == [tool]


def test_direct_true_is_refused_for_a_tool_without_direct_io(tmp_path: Path) -> None:
    # bonnie++ has -D now; the file-tree tool writes through the page cache as dd did
    assert not tools.get_adapter("tree").capabilities.direct_io
    plan = textwrap.dedent(f"""\
        name = "no direct"

        [target]
        directory = "{tmp_path}"

        [[test]]
        tool = "tree"
        dirs = 1
        direct = true
        """)
    with pytest.raises(PlanError) as e:
        parse_plan(plan)
    (problem,) = e.value.problems
    assert (problem.key, problem.line) == ("test[1].direct", 9)
    assert "tree cannot do direct I/O" in problem.message


def test_tools_json_reports_capabilities(capsys: pytest.CaptureFixture[str]) -> None:
    assert tools_cmd(argparse.Namespace(json=True)) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["format"], doc["version"]) == ("disklab.tools", 1)
    rows = {r["tool"]: r for r in doc["tools"]}
    assert rows["tree"]["capabilities"]["direct_io"] is False
    assert rows["fio"]["capabilities"]["direct_io"] is True
    assert rows["engine"]["capabilities"]["tests"] == list(
        tools.get_adapter("engine").capabilities.tests)


def test_every_tool_package_is_installed_by_the_setup_script() -> None:
    # the adapter names its Debian package; the script a fresh machine runs must install it
    script = (Path(__file__).parents[2] / "scripts" / "install-system-packages.sh").read_text()
    code = "\n".join(line.split("#", 1)[0] for line in script.splitlines())
    listed = set(code.split("PACKAGES=(", 1)[1].split(")", 1)[0].split())
    assert {"fio", "xvfb", "linux-perf"} <= listed  # the whole list was read
    packages = {tools.get_adapter(n).package for n in tools.tool_names()} - {""}
    assert packages - {"coreutils"} <= listed  # coreutils (dd) is essential on Debian
