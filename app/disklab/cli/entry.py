"""The `disklab` command's entry point (pyproject's console script): Ctrl-C handling
(cli.loading) begins before anything else of DiskLab loads, then the command line (cli.main)
loads and runs."""

from __future__ import annotations

from disklab.cli import loading  # first: Ctrl-C while the rest loads is one line, exit 130

loading.install()

from disklab.cli.main import main  # noqa: E402  (after the handler: what Ctrl-C interrupts)

__all__ = ["main"]
