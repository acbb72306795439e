"""Each command reads its arguments as a typed record (cli.arguments): every field is a name
the command's parser gives, so a field spelt wrong fails here, and a read spelt wrong fails
mypy (`make check` types cli/commands.py), instead of either being a silent None."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from disklab.cli.arguments import (
    Args,
    CompareArgs,
    CompletionArgs,
    DevicesArgs,
    ExportArgs,
    LibraryArgs,
    PlanArgs,
    PresetsArgs,
    RerunArgs,
    ResumeArgs,
    RunArgs,
    SessionsArgs,
    ShowArgs,
    ToolsArgs,
    typed,
)
from disklab.cli.main import build_parser
from disklab.core.results.stats import ALPHA

# each command's record and the smallest command line it parses
COMMANDS: list[tuple[type[Args], list[str]]] = [
    (RunArgs, ["run", "quick"]), (ResumeArgs, ["resume", "3"]),
    (SessionsArgs, ["sessions"]), (ShowArgs, ["show", "3"]),
    (CompareArgs, ["compare", "1", "2"]), (ToolsArgs, ["tools"]),
    (PlanArgs, ["plan", "validate", "quick"]), (PlanArgs, ["plan", "show", "quick"]),
    (LibraryArgs, ["start"]), (CompletionArgs, ["completion", "bash"]),
    (PresetsArgs, ["presets"]), (DevicesArgs, ["devices"]), (RerunArgs, ["rerun", "3"]),
    (ExportArgs, ["export", "3", "--format", "csv", "-o", "x.csv"]),
    (LibraryArgs, ["history", "3"]), (LibraryArgs, ["gui"]),
]


def _dests(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """Every name the command's parser (and the top parser) can set."""
    names = {a.dest for a in parser._actions}
    for word in argv:
        sub = next((a for a in parser._actions
                    if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None or word not in sub.choices:
            break
        parser = sub.choices[word]
        names |= {a.dest for a in parser._actions}
    return names


@pytest.mark.parametrize(("record", "argv"), COMMANDS, ids=lambda x: str(x))
def test_every_field_is_a_name_the_parser_gives(record: type[Args], argv: list[str]) -> None:
    parser = build_parser()
    fields = {f.name for f in dataclasses.fields(record)}
    assert fields <= _dests(parser, argv), fields - _dests(parser, argv)
    a = typed(record, parser.parse_args(argv))
    assert isinstance(a, record)


def test_the_parsers_values_arrive_typed() -> None:
    a = typed(CompareArgs, build_parser().parse_args(
        ["compare", "1", "2", "--rows", "config", "--where", "mode=write", "--alpha", "0.01",
         "--include-partial", "--library", "/tmp/x.sqlite"]))
    assert a.sessions == ["1", "2"] and a.rows == ["config"] and a.where == ["mode=write"]
    assert a.alpha == 0.01 and a.include_partial and a.library == "/tmp/x.sqlite"
    assert a.command == "compare" and a.format is None and a.baseline is None
    assert typed(CompareArgs, build_parser().parse_args(["compare", "1"])).alpha == ALPHA


def test_a_namespace_with_a_few_names_takes_the_defaults_but_not_a_required_one() -> None:
    a = typed(ShowArgs, argparse.Namespace(session="a", json=True, other=1))
    assert (a.session, a.json, a.include_partial, a.library) == ("a", True, False, None)
    assert typed(LibraryArgs, a) is a  # a show record is a library record already
    with pytest.raises(TypeError):
        typed(ShowArgs, argparse.Namespace(json=True))
