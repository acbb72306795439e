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
