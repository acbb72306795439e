"""Each command's arguments as a typed record: a command reads `a.include_partial`, not
`getattr(args, "include_partial", None)`, so a mistyped name is mypy's error and a field the
parser does not give is a test's (tests/unit/test_cli_arguments.py), never a silent None."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from typing import TypeVar

from disklab.core.results.stats import ALPHA
from disklab.core.vocab.units import UNIT_SYSTEMS

UNITS_HELP = ("rates and sizes in si (MB/s, GB: powers of 1000, as KDiskMark; the default) or "
              "iec (MiB/s, GiB: powers of 1024); default: the session's [report] units, else "
              "si. JSON and CSV figures stay in B/s and bytes")


def units_option(p: argparse.ArgumentParser) -> None:
    """--units si|iec on a command that writes figures (argparse exits 2 naming it)."""
    p.add_argument("--units", type=str.lower, choices=UNIT_SYSTEMS, default=None,
                   help=UNITS_HELP)


@dataclass(frozen=True, kw_only=True)
class Args:
    """What every command's record is: the parser's names, each field one `dest`."""


A = TypeVar("A", bound=Args)


def typed(cls: type[A], args: argparse.Namespace | Args) -> A:
    """The parsed arguments as `cls`: the fields it names, each with its default where the
    namespace has none (a command called with a few of them); a field without a default the
    namespace lacks is a TypeError. A record of the class already is returned as it is."""
    if isinstance(args, cls):
        return args
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in vars(args).items() if k in names})


@dataclass(frozen=True, kw_only=True)
class LibraryArgs(Args):
    """--library (None: $DISKLAB_LIBRARY, else the XDG default) and the command's name, which
    says whether a missing library may be made."""

    library: str | None = None
    command: str | None = None


@dataclass(frozen=True, kw_only=True)
class ToolsArgs(Args):
    """`disklab tools`."""

    json: bool = False


@dataclass(frozen=True, kw_only=True)
class CompletionArgs(Args):
    """`disklab completion SHELL`."""

    shell: str


@dataclass(frozen=True, kw_only=True)
class PlanArgs(LibraryArgs):
    """`plan validate` and `plan show`: a plan file or a preset's name, run in --target."""

    plan: str
    target: str | None = None
    json: bool = False


@dataclass(frozen=True, kw_only=True)
class RunArgs(PlanArgs):
    """`disklab run`: the devices confirmed on the command line (None: ask), the units its
    figures are written in (None: the default)."""

    yes_destroy: list[str] | None = None
    units: str | None = None


@dataclass(frozen=True, kw_only=True)
class ResumeArgs(LibraryArgs):
    """`disklab resume SESSION`."""

    session: str
    json: bool = False
    yes_destroy: list[str] | None = None
    units: str | None = None


@dataclass(frozen=True, kw_only=True)
class SessionsArgs(LibraryArgs):
    """`disklab sessions`."""

    json: bool = False


@dataclass(frozen=True, kw_only=True)
class ShowArgs(LibraryArgs):
    """`disklab show SESSION`."""

    session: str
    json: bool = False
    include_partial: bool = False
    units: str | None = None  # None: the session's [report] units, else the default


@dataclass(frozen=True, kw_only=True)
class CompareArgs(LibraryArgs):
    """`disklab compare SESSION...`: the sessions, and the comparison or pivot asked for."""

    sessions: list[str]
    baseline: str | None = None
    where: list[str] | None = None
    format: str | None = None
    output: str | None = None
    rows: list[str] | None = None
    columns: list[str] | None = None
    metric: list[str] | None = None
    alpha: float = ALPHA
    include_partial: bool = False
    units: str | None = None  # None: the first session's [report] units, else the default


@dataclass(frozen=True, kw_only=True)
class PresetsArgs(Args):
    """`disklab presets`."""

    json: bool = False


@dataclass(frozen=True, kw_only=True)
class DevicesArgs(LibraryArgs):
    """`disklab devices`: the library's own filesystem is one of them (never to format)."""

    json: bool = False


@dataclass(frozen=True, kw_only=True)
class RerunArgs(LibraryArgs):
    """`disklab rerun SESSION`."""

    session: str
    json: bool = False
    yes_destroy: list[str] | None = None


@dataclass(frozen=True, kw_only=True)
class ExportArgs(LibraryArgs):
    """`disklab export SESSION... --format F -o OUT`."""

    sessions: list[str]
    format: str
    output: str
    include_partial: bool = False
    units: str | None = None  # None: the session's [report] units, else the default
    size: tuple[int, int] | None = None  # a chart's pixel size (--size WxH)

