"""The tools DiskLab has an adapter for, each installed or how to install it: `disklab tools`
and the window's lists of tools.

Not in core.tools, whose adapters are pure (they never look at the machine): this asks the
PATH (core.proc.which) for each adapter's executable, and names the adapter's Debian package.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass

from disklab.core import tools
from disklab.core.proc import which


@dataclass(frozen=True)
class ToolRow:
    """One tool with an adapter: where its program is (None: not installed)."""

    name: str
    title: str
    package: str
    path: str | None  # the executable found on PATH; the built-in engine runs in Python

    @property
    def installed(self) -> bool:
        return self.path is not None

    @property
    def label(self) -> str:
        """How a list of tools names it: its title, or that it is missing."""
        return f"{self.name} — {self.title}" if self.installed else f"{self.name} — not installed"

    @property
    def install_hint(self) -> str:
        return f"sudo apt install {self.package}"


def tool_rows(names: Iterable[str] | None = None) -> list[ToolRow]:
    """The tools `names` (default: every tool with an adapter), in that order."""
    rows = []
    for name in tools.tool_names() if names is None else names:
        adapter = tools.get_adapter(name)
        path = which(adapter.executable) if adapter.executable else sys.executable
        rows.append(ToolRow(name=name, title=adapter.title, package=adapter.package, path=path))
    return rows
