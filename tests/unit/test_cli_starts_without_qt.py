"""`disklab run`, `show` and the other commands work on a server without the gui extra.

That disklab.core never imports Qt, and that the CLI reaches Qt only through disklab.gui, are
import contracts (core-headless, cli-qt-only-through-gui in pyproject.toml). What a contract
cannot see is *when* cli/gui_cmd imports disklab.gui: it must be inside the commands that open
a window or draw a PNG, so starting the CLI loads no Qt. That is checked here, with Qt blocked.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCKER = textwrap.dedent("""
    import importlib, importlib.abc, pkgutil, sys

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6"):
                raise ImportError(f"the CLI must start without {name}")
            return None

    sys.meta_path.insert(0, Block())
    import disklab.cli
    names = [m.name for m in pkgutil.walk_packages(disklab.cli.__path__, "disklab.cli.")]
    for name in names:
        importlib.import_module(name)
    from disklab.cli.main import main
    try:
        main(["--help"])
    except SystemExit as e:
        assert e.code == 0, e.code
    print(len(names))
""")


def test_every_cli_module_imports_and_the_cli_starts_with_qt_blocked() -> None:
    done = subprocess.run([sys.executable, "-c", BLOCKER], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.splitlines()[-1]) >= 4  # the walk really found the CLI modules
