"""The man page and the bash, zsh and fish completions, generated from the argparse parser.

Generated rather than written so that they cannot drift from the command line: a new
subcommand or option appears in `man disklab` and in `disklab <TAB>` without anyone editing a
second copy. `disklab install-desktop` and `make install` write them out; `disklab completion
SHELL` prints a script for a shell's start-up file.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from disklab import __version__
from disklab.core.resources import preset_names

SHELLS = ("bash", "zsh", "fish")


# --- the parser as a tree of commands ----------------------------------------------------------

@dataclass
class Option:
    flags: tuple[str, ...]
    help: str
    metavar: str | None  # None: a flag that takes no value
    choices: tuple[str, ...] = ()


@dataclass
class Positional:
    dest: str
    metavar: str
    help: str
    choices: tuple[str, ...] = ()


@dataclass
class Command:
    """One (sub)command: its words from the top ('plan', 'validate'), help and arguments."""

    path: tuple[str, ...]
    help: str
    parser: argparse.ArgumentParser
    options: list[Option] = field(default_factory=list)
    positionals: list[Positional] = field(default_factory=list)
    children: list[Command] = field(default_factory=list)

    @property
    def key(self) -> str:
        """The path as one shell-safe word: '' for the top, 'plan_validate' for a nested one."""
        return "_".join(self.path)

    def walk(self) -> Iterator[Command]:
        yield self
        for child in self.children:
            yield from child.walk()


def _text(value: object) -> str:
    return " ".join(str(value or "").split())


def command_tree(parser: argparse.ArgumentParser, path: tuple[str, ...] = (),
                 help_text: str = "") -> Command:
    """The parser's commands, options and positional arguments, in definition order."""
    node = Command(path=path, help=help_text or _text(parser.description), parser=parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: _text(a.help) for a in action._choices_actions}
            for name, sub in action.choices.items():
                node.children.append(command_tree(sub, (*path, name), helps.get(name, "")))
        elif action.option_strings:
            takes_value = action.nargs != 0
            metavar = (action.metavar or action.dest.upper()) if takes_value else None
            node.options.append(Option(tuple(action.option_strings), _text(action.help),
                                       str(metavar) if metavar else None,
                                       tuple(map(str, action.choices or ()))))
        else:
            node.positionals.append(Positional(action.dest, str(action.metavar or action.dest),
                                               _text(action.help),
                                               tuple(map(str, action.choices or ()))))
    return node


# --- the man page ------------------------------------------------------------------------------

def _roff(text: str) -> str:
    """Text safe in a roff line: backslashes, hyphens, and no leading '.' or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in (".", "'") else text


def usage(parser: argparse.ArgumentParser) -> str:
    """A (sub)command's usage as its --help prints it, on one line, without 'usage: ': the
    man page's synopsis, so that it cannot differ from what the command takes (required
    options without brackets, a repeated positional as 'SESSION [SESSION ...]')."""
    formatter = argparse.HelpFormatter(parser.prog, width=100_000)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups,
                        prefix="")
    return " ".join(formatter.format_help().split())


def _synopsis(cmd: Command) -> str:
    return _roff(usage(cmd.parser))


def _options_roff(cmd: Command) -> list[str]:
    out = []
    for opt in cmd.options:
        if opt.flags[0] in ("-h", "--help"):
            continue
        flags = ", ".join(f"\\fB{_roff(f)}\\fR" for f in opt.flags)
        value = f" \\fI{_roff(opt.metavar)}\\fR" if opt.metavar else ""
        text = opt.help
        if opt.choices:
            text = f"{text} (one of: {', '.join(opt.choices)})".strip()
        out += [".TP", flags + value, _roff(text or "")]
    for pos in cmd.positionals:
        text = pos.help + (f" (one of: {', '.join(pos.choices)})" if pos.choices else "")
        out += [".TP", f"\\fI{_roff(pos.metavar)}\\fR", _roff(text.strip())]
    return out


def _build_date() -> datetime.date:
    """$SOURCE_DATE_EPOCH when a reproducible build sets it, else today."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    if epoch.isdigit():
        return datetime.datetime.fromtimestamp(int(epoch), datetime.UTC).date()
    return datetime.date.today()


def manpage(parser: argparse.ArgumentParser, date: datetime.date | None = None) -> str:
    """disklab(1) in roff (man(7) macros)."""
    top = command_tree(parser)
    day = (date or _build_date()).isoformat()
    lines = [
        f'.TH DISKLAB 1 "{day}" "disklab {__version__}" "User Commands"',
        ".SH NAME",
        "disklab \\- storage and filesystem benchmark workbench",
        ".SH SYNOPSIS",
        _roff(usage(parser)),  # the parser's own usage, as `disklab --help` prints it
        ".SH DESCRIPTION",
        _roff("DiskLab runs storage benchmarks (fio, iozone, bonnie++, dd and a built-in "
              "engine) from a plan: a TOML file whose list-valued parameters are matrix axes. "
              "It can make, mount and read back filesystem configurations on a scratch image "
              "or a confirmed device, keeps every session in a SQLite library, and shows, "
              "compares and exports the results as mean and standard deviation over repeats. "
              "A PLAN argument is a plan file or the name of a preset shipped with DiskLab: "
              + ", ".join(preset_names()) + "."),
        ".SH COMMANDS",
    ]
    for cmd in top.walk():
        if not cmd.path or cmd.children:
            continue
        lines += [f'.SS "{" ".join(cmd.path)}"', _synopsis(cmd), ".PP", _roff(cmd.help)]
        lines += _options_roff(cmd)
    lines += [
        ".SH OPTIONS",
        ".TP", "\\fB\\-\\-version\\fR", "print the version and exit",
        ".TP", "\\fB\\-h\\fR, \\fB\\-\\-help\\fR", "print the usage of a command and exit",
        ".SH EXIT STATUS",
        ".TP", "0", "success",
        ".TP", "1", "a case failed",
        ".TP", "2", _roff("bad input: the plan's problems are listed with their TOML key and "
                          "line"),
        ".TP", "130", "cancelled",
        ".SH ENVIRONMENT",
        ".TP", "\\fBDISKLAB_LIBRARY\\fR",
        _roff("the library file when --library is not given"),
        ".TP", "\\fBXDG_DATA_HOME\\fR",
        _roff("the library defaults to $XDG_DATA_HOME/disklab/library.sqlite3"),
        ".TP", "\\fBXDG_STATE_HOME\\fR",
        _roff("$XDG_STATE_HOME/disklab holds the log file (disklab.log) and the records of "
              "mounts and loop devices a run set up, cleaned at the next start"),
        ".SH FILES",
        ".TP", "\\fI$XDG_DATA_HOME/disklab/library.sqlite3\\fR",
        _roff("the session library (default ~/.local/share/disklab/library.sqlite3; "
              "--library or $DISKLAB_LIBRARY name another); with its -wal and -shm files"),
        ".TP", "\\fI$XDG_STATE_HOME/disklab/disklab.log\\fR",
        _roff("the log of the window and the command line, rotated (disklab.log.1 ...)"),
        ".TP", "\\fI$XDG_STATE_HOME/disklab/setup\\-state\\-PID.json\\fR",
        _roff("what a running session set up (mounts, loop devices, images), cleaned at the "
              "next start if the session died"),
        ".TP", "\\fI$XDG_CONFIG_HOME/DiskLab/DiskLab.conf\\fR, "
               "\\fI$XDG_CONFIG_HOME/DiskLab/draft.toml\\fR",
        _roff("the window's settings, and the plan being edited in it (kept every few "
              "seconds, given back at the next start)"),
        ".SH SEE ALSO",
        "\\fBfio\\fR(1), \\fBiozone\\fR(1), \\fBbonnie++\\fR(8), \\fBdd\\fR(1), "
        "\\fBmkfs\\fR(8), \\fBpkexec\\fR(1)",
    ]
    return "\n".join(lines) + "\n"


# --- shell completions -------------------------------------------------------------------------

def _value_words(opt: Option) -> tuple[str, ...] | None:
    """What may follow an option: its choices, or None for a file name."""
    return opt.choices or None


def _positional_words(cmd: Command) -> tuple[str, ...]:
    """Words offered for a command's positional argument besides file names: choices, and the
    preset names where a plan is expected."""
    words: list[str] = []
    for pos in cmd.positionals:
        words += pos.choices
        if pos.dest == "plan":
            words += preset_names()
    return tuple(dict.fromkeys(words))


def _q(words: Sequence[str]) -> str:
    return shlex.quote(" ".join(words))


def _path_cases(top: Command, assign: str) -> list[str]:
    """`case` branches that move the command path one word down: '":plan") path=plan;;'."""
    out = []
    for cmd in top.walk():
        for child in cmd.children:
            out.append(f'            "{cmd.key}:{child.path[-1]}") {assign}{child.key};;')
    return out


def bash_completion(parser: argparse.ArgumentParser) -> str:
    top = command_tree(parser)
    lines = [
        "# bash completion for disklab, generated from its argparse definitions",
        "_disklab() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
        '    local path="" w i',
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        w="${COMP_WORDS[i]}"',
        '        case "$path:$w" in',
        *_path_cases(top, "path="),
        "        esac",
        "    done",
        '    case "$path:$prev" in',
    ]
    for cmd in top.walk():
        for opt in cmd.options:
            if not opt.metavar:
                continue
            pattern = "|".join(f'"{cmd.key}:{f}"' for f in opt.flags)
            words = _value_words(opt)
            action = (f"COMPREPLY=($(compgen -W {_q(words)} -- \"$cur\"))" if words
                      else 'COMPREPLY=($(compgen -f -- "$cur"))')
            lines.append(f"        {pattern}) {action}; return;;")
    lines += ["    esac", '    local opts="" words="" files=0', '    case "$path" in']
    for cmd in top.walk():
        opts = [f for o in cmd.options for f in o.flags]
        words = [c.path[-1] for c in cmd.children] + list(_positional_words(cmd))
        files = int(any(not p.choices for p in cmd.positionals))
        lines.append(f'        "{cmd.key}") opts={_q(opts)}; words={_q(words)}; files={files};;')
    lines += [
        "    esac",
        '    if [[ "$cur" == -* ]]; then',
        '        COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
        "    else",
        '        COMPREPLY=($(compgen -W "$words" -- "$cur"))',
        '        [[ $files == 1 ]] && COMPREPLY+=($(compgen -f -- "$cur"))',
        "    fi",
        "}",
        "complete -o filenames -F _disklab disklab",
    ]
    return "\n".join(lines) + "\n"


def zsh_completion(parser: argparse.ArgumentParser) -> str:
    top = command_tree(parser)
    lines = [
        "#compdef disklab",
        "# zsh completion for disklab, generated from its argparse definitions",
        "_disklab() {",
        '    local cmdpath="" w i',
        "    for ((i = 2; i < CURRENT; i++)); do",
        '        w="${words[i]}"',
        '        case "$cmdpath:$w" in',
        *_path_cases(top, "cmdpath="),
        "        esac",
        "    done",
        '    local prev="${words[CURRENT-1]}" cur="${words[CURRENT]}"',
        '    case "$cmdpath:$prev" in',
    ]
    for cmd in top.walk():
        for opt in cmd.options:
            if not opt.metavar:
                continue
            pattern = "|".join(f'"{cmd.key}:{f}"' for f in opt.flags)
            words = _value_words(opt)
            action = f"compadd -- {' '.join(map(shlex.quote, words))}" if words else "_files"
            lines.append(f"        {pattern}) {action}; return;;")
    lines += ["    esac", '    case "$cmdpath" in']
    for cmd in top.walk():
        opts = " ".join(shlex.quote(f) for o in cmd.options for f in o.flags)
        described = [f"{c.path[-1]}:{c.help}".replace("'", "") for c in cmd.children]
        body = [f'if [[ "$cur" == -* ]]; then compadd -- {opts}; return; fi']
        if described:
            body.append("local -a cmds=(" + " ".join(shlex.quote(d) for d in described) + ")")
            body.append("_describe command cmds")
        extra = _positional_words(cmd)
        if extra:
            body.append("compadd -- " + " ".join(map(shlex.quote, extra)))
        if any(not p.choices for p in cmd.positionals):
            body.append("_files")
        lines.append(f'        "{cmd.key}") {"; ".join(body)};;')
    lines += ["    esac", "}", '_disklab "$@"']
    return "\n".join(lines) + "\n"


def fish_completion(parser: argparse.ArgumentParser) -> str:
    top = command_tree(parser)
    lines = ["# fish completion for disklab, generated from its argparse definitions",
             "complete -c disklab -f"]
    for cmd in top.walk():
        if not cmd.path:
            cond = "__fish_use_subcommand"
        else:
            cond = "; and ".join(f"__fish_seen_subcommand_from {w}" for w in cmd.path)
        if cmd.children:
            names = " ".join(c.path[-1] for c in cmd.children)
            below = f"{cond}; and not __fish_seen_subcommand_from {names}" if cmd.path else cond
            for child in cmd.children:
                lines.append(f"complete -c disklab -n {shlex.quote(below)} -a {child.path[-1]} "
                             f"-d {shlex.quote(child.help)}")
        for opt in cmd.options:
            spec = []
            for f in opt.flags:
                spec.append(f"-l {f[2:]}" if f.startswith("--") else f"-s {f[1:]}")
            if opt.metavar:
                spec.append(f"-x -a {shlex.quote(' '.join(opt.choices))}" if opt.choices
                            else "-r -F")
            lines.append(f"complete -c disklab -n {shlex.quote(cond)} {' '.join(spec)} "
                         f"-d {shlex.quote(opt.help or opt.flags[-1])}")
        if cmd.path and not cmd.children:
            extra = _positional_words(cmd)
            if extra:
                lines.append(f"complete -c disklab -n {shlex.quote(cond)} "
                             f"-a {shlex.quote(' '.join(extra))}")
            if any(not p.choices for p in cmd.positionals):
                lines.append(f"complete -c disklab -n {shlex.quote(cond)} -F")
    return "\n".join(lines) + "\n"


def completion(parser: argparse.ArgumentParser, shell: str) -> str:
    return {"bash": bash_completion, "zsh": zsh_completion, "fish": fish_completion}[shell](
        parser)
