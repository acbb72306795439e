"""`disklab`: the command line over disklab.core (a contract: later checks call it).

Exit codes: 0 success, 1 a case failed, 2 bad input, 130 cancelled.
"""

from __future__ import annotations

from disklab.cli import loading  # first: Ctrl-C while the rest loads is one line, exit 130

loading.install()

import argparse  # noqa: E402  (after the handler: these imports are what Ctrl-C interrupts)
import contextlib  # noqa: E402
import logging  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402

from disklab import __version__  # noqa: E402
from disklab.cli import (  # noqa: E402
    commands,
    exporting,
    gui_cmd,
    history_cmds,
    install,
    library_cmds,
    output,
    plan_cmds,
)
from disklab.cli import devices as devices_cmd  # noqa: E402
from disklab.cli.arguments import units_option  # noqa: E402
from disklab.cli.docs import SHELLS  # noqa: E402
from disklab.core import tools  # noqa: E402
from disklab.core.logfile import install_exception_hooks, start_log  # noqa: E402
from disklab.core.results.stats import ALPHA  # noqa: E402
from disklab.core.vocab.errors import (  # noqa: E402
    DisklabError,
    LibraryError,
    LibraryWriteError,
    PlanError,
)
from disklab.core.vocab.units import DEFAULT_UNITS, use_units  # noqa: E402

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_CANCELLED = 0, 1, 2, 130
JSON_HELP = "print JSON (its format name and version first) instead of a table"


def alpha_value(text: str) -> float:
    """--alpha: a significance level strictly between 0 and 1 (argparse exits 2 otherwise,
    naming the option)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (got {text})")
    return value


def chart_size(text: str) -> tuple[int, int]:
    """--size WxH: a chart's size in pixels, each side 200 to 8000 (argparse exits 2
    otherwise, naming the option)."""
    m = re.fullmatch(r"\s*(\d{1,5})\s*[xX×]\s*(\d{1,5})\s*", text)
    if m is None:
        raise argparse.ArgumentTypeError(f"not WIDTHxHEIGHT in pixels: {text!r}")
    width, height = int(m.group(1)), int(m.group(2))
    if not (200 <= width <= 8000 and 200 <= height <= 8000):
        raise argparse.ArgumentTypeError(f"each side must be 200 to 8000 px (got {text})")
    return width, height


def include_partial_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--include-partial", action="store_true",
                   help="count the figures of runs that did not complete (cancelled, failed, "
                        "stopped early) in the means; by default they are shown but left out")


def library_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--library", metavar="PATH",
                   help="session library file (default: $DISKLAB_LIBRARY or the XDG data dir)")


def json_option(p: argparse.ArgumentParser, text: str = JSON_HELP) -> None:
    p.add_argument("--json", action="store_true", help=text)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command, its groups in the order `disklab --help` lists them."""
    parser = argparse.ArgumentParser(
        prog="disklab",
        description="Storage and filesystem benchmark workbench (headless command line).",
    )
    parser.add_argument("--version", action="version", version=f"disklab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND",
                                help="what to do (disklab COMMAND --help says more)")
    run_parsers(sub)
    session_parsers(sub)
    gui_cmd.add_parsers(sub)
    compare_parser(sub)
    library_cmds.add_parsers(sub, library_option, commands.open_library)
    history_cmds.add_parsers(sub, library_option, alpha_value)
    tool_parsers(sub)
    plan_parsers(sub)
    install.add_parser(sub, parser)
    document_parsers(sub, parser)
    verbosity_options(parser)
    return parser


def run_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """run and resume: a plan run, or a session's missing runs, recorded in the library."""
    p = sub.add_parser("run", help="run a plan and keep the session in the library")
    p.add_argument("plan", metavar="PLAN",
                   help="a plan file, or a preset's name (quick, fio-basic, ...)")
    p.add_argument("--target", metavar="DIR", help="run in DIR instead of the plan's target")
    json_option(p, "one JSON event per line on stdout")
    yes_destroy_option(p)
    units_option(p)
    library_option(p)
    p.set_defaults(func=commands.run)

    p = sub.add_parser("resume", help="run an interrupted, cancelled or failed session's "
                       "missing runs, in the same session")
    p.add_argument("session", metavar="SESSION", help="session id or name")
    json_option(p, "one JSON event per line on stdout")
    yes_destroy_option(p)
    units_option(p)
    library_option(p)
    p.set_defaults(func=commands.resume)


def yes_destroy_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--yes-destroy", metavar="DEVICE", action="append",
                   help="confirm destroying DEVICE (a format or device target, an external "
                        "journal or log device) without being asked; once per device")


def session_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """sessions, show, export: what the library holds; devices: the machine's block devices."""
    p = sub.add_parser("sessions", help="list the sessions in the library")
    json_option(p)
    library_option(p)
    p.set_defaults(func=commands.sessions)

    p = sub.add_parser("show", help="a session's results: mean, stddev and n per case and metric")
    p.add_argument("session", metavar="SESSION", help="session id or name")
    json_option(p)
    include_partial_option(p)
    units_option(p)
    library_option(p)
    p.set_defaults(func=commands.show)

    p = sub.add_parser("export", help="write sessions as CSV, JSON, HTML, Markdown, samples, "
                                      "charts or a bundle")
    p.add_argument("sessions", nargs="+", metavar="SESSION",
                   help="session id, name or UUID (several only for --format bundle)")
    p.add_argument("--format", choices=exporting.FORMATS, required=True,
                   help=exporting.FORMAT_HELP)
    p.add_argument("-o", "--output", metavar="FILE", required=True,
                   help="the file to write ('-': standard output, for text formats); for "
                        "several charts an existing directory or a path ending with /")
    p.add_argument("--size", type=chart_size, default=None, metavar="WxH",
                   help="svg and png: each chart's size in pixels (default 1000x560); the "
                        "PNG and the SVG of a chart are the same size")
    include_partial_option(p)
    units_option(p)
    library_option(p)
    p.set_defaults(func=commands.export)

    p = sub.add_parser("devices", help="block devices with their safety class")
    json_option(p)
    units_option(p)
    library_option(p)
    p.set_defaults(func=devices_cmd.devices)


def compare_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """compare: sessions against a baseline, or as a pivot table (cli.arguments.CompareArgs)."""
    p = sub.add_parser("compare", help="compare sessions: mean ± stddev, differences and their "
                                       "significance (Welch's t-test)")
    p.add_argument("sessions", nargs="+", metavar="SESSION",
                   help="session id, name or UUID: at least two, or one with several "
                        "configurations")
    p.add_argument("--baseline", metavar="SESSION|KEY=VALUE",
                   help="what the others are compared with: a session, a configuration "
                        "('3 raid / ext2'), or a row or column value of the table "
                        "(iodepth=1, config=ext2); cells are compared only with the cell of "
                        "the same metric, test and other values. A pivot compares nothing "
                        "unless asked")
    p.add_argument("--where", action="append", metavar="KEY=VALUE",
                   help="show only the results whose KEY is VALUE (repeatable: all must hold; "
                        "iodepth=16, block_size=4k, config=ext2)")
    p.add_argument("--format", choices=("text", "md", "csv", "json", "html"), default=None,
                   help="md by default; text and the --rows/--columns pivot need no Qt either")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the file to write (its directory must exist); default or '-': "
                        "standard output")
    p.add_argument("--rows", action="append", metavar="KEYS",
                   help="pivot table: the keys of its rows, comma separated (config, tool, "
                        "test, metric, session, target, host, on, hosts or any parameter)")
    p.add_argument("--columns", action="append", metavar="KEYS",
                   help="pivot table: the keys of its columns (default test)")
    p.add_argument("--metric", action="append", metavar="NAME",
                   help="pivot table: the metrics shown ('write', 'write:iops', or a suffix: "
                        "iops, lat_mean, cpu, min_proc...); default each test's main figure")
    p.add_argument("--alpha", type=alpha_value, default=ALPHA, metavar="P",
                   help=f"significance level: a difference is better or worse only when "
                        f"p < P (default {ALPHA:g}); the confidence intervals are 1 - P")
    include_partial_option(p)
    units_option(p)
    library_option(p)
    p.set_defaults(func=commands.compare)


def tool_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """tools: the tools and their versions; import: their outputs kept as sessions."""
    p = sub.add_parser("tools", help="installed tools and their versions")
    json_option(p)
    p.set_defaults(func=commands.tools_cmd)

    p = sub.add_parser("import", help="store existing iozone/fio/bonnie++/dd outputs as sessions")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="a tool output, a folder of them (read recursively), a bundle "
                        "(.disklab) or another library")
    p.add_argument("--tool", choices=tools.importable_tools(),
                   help="the tool whose output the files are, when it is not recognised")
    p.add_argument("--session", metavar="NAME", help="session name (default: the file name)")
    p.add_argument("--config", metavar="LABEL", default="imported",
                   help="configuration label of the results")
    json_option(p)
    library_option(p)
    p.set_defaults(func=commands.import_cmd)


def plan_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """plan validate|show|schema: a plan read without running it; start: the quick preset."""
    p = sub.add_parser("plan", help="check a plan or show its cases")
    plan_sub = p.add_subparsers(dest="plan_command", metavar="validate|show|schema",
                                required=True, help="what to do with the plan")
    for name, func, text in (
        ("validate", plan_cmds.plan_validate, "report every problem of a plan (exit 2 if any)"),
        ("show", plan_cmds.plan_show, "print the cases and the exact argv of each"),
    ):
        q = plan_sub.add_parser(name, help=text)
        q.add_argument("plan", metavar="PLAN", help="a plan file, or a preset's name")
        q.add_argument("--target", metavar="DIR",
                       help="check the plan as run in DIR instead of its target")
        json_option(q)
        library_option(q)
        q.set_defaults(func=func)
    q = plan_sub.add_parser("schema", help="print the JSON Schema of the plan format")
    q.set_defaults(func=commands.plan_schema_cmd)

    p = sub.add_parser("start", help="what `make run` starts: the quick preset, headless")
    library_option(p)
    p.set_defaults(func=commands.start)


def document_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser],
                     parser: argparse.ArgumentParser) -> None:
    """completion and manpage: documents made from the parser itself (a package build runs
    them: log=False, nothing written under $HOME)."""
    p = sub.add_parser("completion", help="print a shell completion script (bash, zsh, fish)")
    p.add_argument("shell", choices=SHELLS, help="the shell the script is for")
    p.set_defaults(func=lambda args: commands.completion_cmd(args, parser), log=False)
    p = sub.add_parser("manpage", help="print the man page disklab(1) in roff")
    p.set_defaults(func=lambda args: commands.manpage_cmd(args, parser), log=False)


def verbosity_options(parser: argparse.ArgumentParser) -> None:
    """--quiet and --verbose on the top parser and on every subcommand (before or after it)."""
    def add(p: argparse.ArgumentParser, default: object) -> None:
        group = p.add_mutually_exclusive_group()
        group.add_argument("-q", "--quiet", action="store_true", default=default,
                           help="print only results and errors")
        group.add_argument("-v", "--verbose", action="store_true", default=default,
                           help="also print what is logged (the log file's lines) on stderr")

    add(parser, False)
    for sub in _subparsers(parser):
        add(sub, argparse.SUPPRESS)
        for q in _subparsers(sub):
            add(q, argparse.SUPPRESS)


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """A parser's subcommands' parsers, each once (an alias names the same parser)."""
    found: dict[int, argparse.ArgumentParser] = {}
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        if isinstance(action.choices, dict):
            found.update({id(p): p for p in action.choices.values()})
    return list(found.values())


def _start_logging(args: argparse.Namespace, argv: Sequence[str]) -> logging.Logger:
    """The CLI logs to the window's rotating log file (core.logfile): the command, how it
    ended, and any crash's traceback. A log that cannot be written stops nothing. The
    commands a package build runs (install-desktop, install-helper, completion, manpage) set
    log=False: they write nothing under $HOME."""
    log = logging.getLogger("disklab")
    if getattr(args, "log", True):  # not for what a package build runs (no $HOME written)
        with contextlib.suppress(OSError):
            start_log()
            install_exception_hooks()
    if args.verbose:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("disklab: %(levelname)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.DEBUG)
    output.set_quiet(bool(args.quiet))
    log.info("command line: disklab %s", shlex.join(argv))
    return log


def main(argv: Sequence[str] | None = None) -> int:
    """Parse, start the log, run the command. Until the command starts, Ctrl-C ends the
    process with one line (the loading handler: building the parser loads the tools'
    adapters); from then on it is a KeyboardInterrupt the command cancels with."""
    signal.signal(signal.SIGINT, loading.cancelled_while_loading)
    parser = build_parser()
    given = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(given)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    log = _start_logging(args, given)
    # every figure in --units, else the default (a command reading a session's [report]
    # units takes them where --units is not given: cli.output.report_units)
    use_units(getattr(args, "units", None) or DEFAULT_UNITS)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C cancels the command
    code = _dispatch(args)
    log.info("disklab %s ended with exit code %d", args.command, code)
    return code


def _dispatch(args: argparse.Namespace) -> int:
    """Run the subcommand; what the user gave wrong is one line and exit 2 (an I/O fault 1,
    Ctrl-C 130), never a traceback."""
    try:
        return int(args.func(args))
    except PlanError as e:
        print(f"disklab: the plan has {len(e.problems)} problem(s):", file=sys.stderr)
        for problem in e.problems:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except LibraryWriteError as e:  # the machine's fault (disk full, I/O error), not the input
        print(f"disklab: {e}", file=sys.stderr)
        return EXIT_FAILED
    except (LibraryError, DisklabError) as e:
        print(f"disklab: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("disklab: cancelled", file=sys.stderr)
        return EXIT_CANCELLED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as e:  # a path the user gave (exit 2) or a failing disk (exit 1)
        where = f"{e.filename}: " if e.filename else ""
        print(f"disklab: {where}{e.strerror or e}", file=sys.stderr)
        return exporting.os_error_exit(e)


if __name__ == "__main__":
    sys.exit(main())
