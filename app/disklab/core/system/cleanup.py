"""Removing the files a case leaves behind (Command.files).

Kept out of disklab.core.tools because adapters are pure: they name the files a command makes,
and whoever ran the command removes them. The runner removes its own cases' files with this; the
privileged helper removes the ones root made.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

# The one kind of directory a case makes as its file: the file-tree tool's root
# (core/tools/tree.py names it disklab-TAG-tree). A killed session's record of one is removed
# whole; any other recorded directory is left alone.
TREE_ROOT = re.compile(r"^disklab-[\w.-]+-tree$")


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


def remove_recorded(root: str, paths: Sequence[str]
                    ) -> tuple[list[str], list[str], list[str]]:
    """Remove files a killed session recorded before its case created them: (removed, left,
    refused). Only a path whose parent directory resolves to `root` (the directory recorded
    with it) is touched, so a record cannot make DiskLab remove anything elsewhere; a path
    that is a directory is left alone (a case's files are files), except the file-tree tool's
    root (TREE_ROOT), which the record names because the case was about to create it."""
    removed, left, refused = [], [], []
    for p in paths:
        path = Path(p)
        if not root or not path.is_absolute() or os.path.realpath(path.parent) != root:
            refused.append(p)
            continue
        if not path.is_symlink() and not path.exists():
            continue
        if path.is_dir() and not path.is_symlink():
            if not TREE_ROOT.match(path.name):
                refused.append(p)
                continue
            shutil.rmtree(path, ignore_errors=True)
            (left if path.exists() else removed).append(p)
            continue
        try:
            path.unlink()
            removed.append(p)
        except FileNotFoundError:
            continue
        except OSError:
            left.append(p)
    return removed, left, refused
