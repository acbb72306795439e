"""Removing the files a case leaves behind (Command.files).

Kept out of disklab.core.tools because adapters are pure: they name the files a command makes,
and whoever ran the command removes them. The runner removes its own cases' files with this; the
privileged helper removes the ones root made.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path


def remove_files(paths: Sequence[str]) -> list[str]:
    """Remove a case's files (a directory tree a tool made, too); the ones that could not be
    removed, so the caller can say which are left rather than fail the session over them."""
    left = []
    for p in paths:
        try:
            if Path(p).is_dir() and not Path(p).is_symlink():
                shutil.rmtree(p)
            else:
                Path(p).unlink(missing_ok=True)
        except OSError:
            left.append(p)
    return left
