"""Before it serves as root, the helper checks that it runs only its own code: started isolated
(`python -I`: no working directory, user site or PYTHON* variable on its path), and from an
interpreter and package directories that no one but root can change. A venv in a home
directory fails the check: sudo and pkexec then start a root-owned copy (`disklab
install-helper` puts one under /usr/local/lib/disklab, with the launcher in libexec).

The check runs before any other module of the package is imported (`boot`): this module
imports the standard library only, and the launcher runs its source by its file path (after
checking that file and its directories itself; never a cached .pyc) without importing the
disklab package, so that a tampered copy runs none of its code as root before it is refused.
`python -I -m disklab.core.root_helper` (__main__) calls the same boot, after only the
package's three `__init__` files, which hold no code.
"""

from __future__ import annotations

import importlib
import json
import os
import stat
import sys
from collections.abc import Iterable
from importlib.machinery import PathFinder

PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
REFUSED_EXIT = 3
DEPENDENCIES = ("psutil", "platformdirs")  # what the helper and its tools import besides

INSTALL_HINT = ("install a root-owned copy of the helper once with `sudo disklab install-helper` "
                "(or `make install`), which sudo and pkexec then start")


def unsafe_path(path: str, seen: set[str]) -> str | None:
    """Why `path` or a directory above it could be changed by someone other than root
    (owned by another user, or writable by group or others; a root group may write), or None.
    Symbolic links are checked where they point too."""
    checked: list[str] = []
    current = os.path.abspath(path)
    while True:
        if current in seen:
            break
        try:
            st = os.lstat(current)
        except OSError as e:
            return f"{current}: {e.strerror}"
        if st.st_uid != 0:
            return f"{current} is owned by uid {st.st_uid}, not root"
        writable = stat.S_IWOTH | (stat.S_IWGRP if st.st_gid != 0 else 0)
        sticky = stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX  # /tmp: no renames
        if not stat.S_ISLNK(st.st_mode) and st.st_mode & writable and not sticky:
            return f"{current} is writable by {'others' if st.st_mode & 2 else 'its group'}"
        if stat.S_ISLNK(st.st_mode):
            why = unsafe_path(os.path.realpath(current), seen)
            if why:
                return why
        checked.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    seen.update(checked)
    return None


def code_paths() -> Iterable[str]:
    """The interpreter, every directory on the import path, every loaded module's file and
    cache, and every directory and file of the disklab package and of its DEPENDENCIES, their
    bytecode caches included (what it imports later, a tool adapter, comes from there; an
    unchecked-hash .pyc is imported without a look at its source)."""
    yield sys.executable
    yield os.path.realpath(sys.executable)
    packages = [PACKAGE]
    for name in DEPENDENCIES:  # found, not imported: they are checked before they run
        spec = PathFinder.find_spec(name, sys.path)
        if spec is not None and spec.origin:
            packages.append(os.path.dirname(os.path.realpath(spec.origin)))
    for package in packages:
        for top, _dirs, files in os.walk(package):  # __pycache__ too: a .pyc runs as is
            yield top
            yield from (os.path.join(top, f) for f in files)
    for entry in sys.path:  # one that does not exist yet must not be creatable by a user
        while entry and not os.path.exists(entry) and os.path.dirname(entry) != entry:
            entry = os.path.dirname(entry)
        if entry:
            yield entry
    for module in list(sys.modules.values()):
        for attribute in ("__file__", "__cached__"):
            file = getattr(module, attribute, None)
            if isinstance(file, str) and os.path.exists(file):
                yield file


def refusal() -> str | None:
    """Why this process must not serve as root, or None. Only root is checked: a helper that is
    not root cannot hurt anyone but its own user."""
    if os.geteuid() != 0:
        return None
    if not sys.flags.isolated:
        return ("the helper was not started isolated (python -I): the working directory and "
                "PYTHON* variables could put someone else's code on its path")
    seen: set[str] = set()
    for path in code_paths():
        why = unsafe_path(path, seen)
        if why:
            return (f"the helper's code is not root's alone ({why}); {INSTALL_HINT}")
    return None


def refuse(why: str) -> int:
    """Say why on stderr and, as the protocol's one line, on stdout; the exit status."""
    print(f"disklab helper: refusing to serve as root: {why}", file=sys.stderr)
    sys.stdout.write(json.dumps({"ready": False, "kind": "HelperRefused", "error": why}) + "\n")
    sys.stdout.flush()
    return REFUSED_EXIT


def boot() -> int:
    """The helper's start: the check first, and only when it passes the helper itself (the
    first import of the package's code beyond its empty __init__ files)."""
    why = refusal()
    if why:
        return refuse(why)
    helper = importlib.import_module("disklab.core.root_helper.helper")
    return int(helper.main())
