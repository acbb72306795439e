"""Rule 1 of DESIGN.md: disklab.core runs on a headless server, so it never imports Qt."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCKER = textwrap.dedent("""
    import importlib, importlib.abc, pkgutil, sys

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6"):
                raise ImportError(f"disklab.core must not import {name}")
            return None

    sys.meta_path.insert(0, Block())
    import disklab.core
    names = [m.name for m in pkgutil.walk_packages(disklab.core.__path__, "disklab.core.")
             if not m.name.endswith("__main__")]
    for name in names:
        importlib.import_module(name)
    import disklab.cli.main
    print(len(names))
""")


def test_every_core_module_imports_with_qt_blocked() -> None:
    done = subprocess.run([sys.executable, "-c", BLOCKER], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 10  # the walk really found the core modules
