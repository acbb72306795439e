"""The one part of the build pyproject.toml cannot declare without an experimental table: the
engine's accounting loop in C (app/disklab/engine/_native.c; engine/native.py says why).
Optional: without a C compiler and Python's headers the package installs all the same and the
engine runs its Python loop (engine/loop.py). Everything else is in pyproject.toml.

DISKLAB_PURE_WHEEL=1 (make dist) leaves the extension out: the wheel is then py3-none-any, for
every Python DiskLab supports, and runs the Python loop; the sdist (with _native.c, MANIFEST.in)
builds the C loop wherever it is installed with a compiler."""

import os

from setuptools import Extension, setup

PURE = os.environ.get("DISKLAB_PURE_WHEEL") == "1"
setup(ext_modules=[] if PURE else [
    Extension("disklab.engine._native", ["app/disklab/engine/_native.c"], optional=True,
              extra_compile_args=["-O2", "-Wall"])])
