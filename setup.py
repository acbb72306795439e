"""The one part of the build pyproject.toml cannot declare without an experimental table: the
engine's accounting loop in C (app/disklab/engine/_native.c; engine/native.py says why).
Optional: without a C compiler and Python's headers the package installs all the same and the
engine runs its Python loop (engine/loop.py). Everything else is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("disklab.engine._native", ["app/disklab/engine/_native.c"],
                             optional=True, extra_compile_args=["-O2", "-Wall"])])
