"""The man page and the shell completions are generated from the parser, so every subcommand
and option of `disklab` is in them (the packaging test renders and runs them for real)."""

from __future__ import annotations

import datetime

import pytest

from disklab import __version__
from disklab.cli.docs import command_tree, completion, manpage
from disklab.cli.main import build_parser, main
from disklab.core.resources import preset_names


def _commands() -> list[str]:
    return [" ".join(c.path) for c in command_tree(build_parser()).walk()
            if c.path and not c.children]


def test_the_man_page_has_every_command_and_option() -> None:
    page = manpage(build_parser(), datetime.date(2026, 1, 2))
    assert page.startswith(f'.TH DISKLAB 1 "2026-01-02" "disklab {__version__}"')
    for command in _commands():
        assert f'.SS "{command}"' in page, command
    for option in ("\\-\\-yes\\-destroy", "\\-\\-baseline", "\\-\\-format", "\\-\\-system"):
        assert option in page
    assert "quick" in page  # the presets a PLAN may name
    assert "\n-" not in page and "\n'" not in page  # no line that roff would take as a request


def test_completions_name_every_command_and_the_presets() -> None:
    parser = build_parser()
    for shell in ("bash", "zsh", "fish"):
        script = completion(parser, shell)
        for command in _commands():
            assert command.split()[-1] in script, (shell, command)
        assert all(name in script for name in preset_names())


def test_completion_and_manpage_commands_print_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "bash"]) == 0
    assert "complete -o filenames -F _disklab disklab" in capsys.readouterr().out
    assert main(["manpage"]) == 0
    assert capsys.readouterr().out.startswith(".TH DISKLAB 1")


def test_a_bad_shell_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["completion", "tcsh"])
    assert stopped.value.code == 2
    assert "invalid choice: 'tcsh'" in capsys.readouterr().err


def _help_usage(path: tuple[str, ...]) -> str:
    """What `disklab PATH --help` prints as its usage, on one line, without 'usage: '."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        build_parser().parse_args([*path, "--help"])
    usage = out.getvalue().split("\n\n")[0]
    return " ".join(usage.removeprefix("usage: ").split())


def _unroff(line: str) -> str:
    for code in ("\\fB", "\\fR", "\\fI", "\\&"):
        line = line.replace(code, "")
    return line.replace("\\-", "-").replace("\\e", "\\")


def test_every_synopsis_is_the_commands_own_usage() -> None:
    """The man page showed `export --format` and `-o` as optional (both are required) and one
    SESSION where several are taken: its synopsis was written apart from the parser."""
    lines = manpage(build_parser(), datetime.date(2026, 1, 2)).splitlines()
    checked = 0
    for cmd in command_tree(build_parser()).walk():
        if not cmd.path or cmd.children:
            continue
        synopsis = lines[lines.index(f'.SS "{" ".join(cmd.path)}"') + 1]
        assert _unroff(synopsis) == _help_usage(cmd.path), cmd.path
        checked += 1
    assert checked >= 20
    # and the page's own synopsis is `disklab --help`'s usage (it was written by hand and
    # lacked -q/-v)
    top = _unroff(lines[lines.index(".SH SYNOPSIS") + 1])
    assert top == _help_usage(()) and "[-q | -v]" in top, top
    export = _unroff(lines[lines.index('.SS "export"') + 1])
    assert " --format {" in export and " -o FILE " in export and "[--format" not in export
    assert export.endswith("SESSION [SESSION ...]")


def test_every_argument_has_help_text() -> None:
    """13 arguments had none (compare SESSION and -o, import FILE and --tool, ...)."""
    import argparse

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> list[str]:
        missing = []
        for action in parser._actions:
            if not (action.help or "").strip():
                missing.append(f"{' '.join(path) or 'disklab'}: "
                               f"{'/'.join(action.option_strings) or action.metavar}")
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    missing += walk(sub, (*path, name))
        return missing

    assert walk(build_parser(), ()) == []


def test_the_man_page_names_its_files() -> None:
    page = manpage(build_parser(), datetime.date(2026, 1, 2))
    files = page.split(".SH FILES")[1].split(".SH SEE ALSO")[0]
    for name in ("library.sqlite3", "disklab.log", "setup\\-state\\-PID.json", "draft.toml"):
        assert name in files, name
