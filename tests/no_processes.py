"""pytest plugin for `make check`: the tests that start no process, for the edit loop.

Loaded with `-p tests.no_processes`. Every way this interpreter starts a process (subprocess
and multiprocessing through fork_exec, which subprocess keeps under a name of its own; pexpect's
pty fork, os.fork, os.system, os.posix_spawn) is refused, and the test that tried is reported as
skipped, whatever it did with the refusal (code under test may catch it and carry on): which
tests start a process is found by running them, not kept in a list that goes stale. `make test`
runs them all.
"""

from __future__ import annotations

import _posixsubprocess
import os
import subprocess
from collections.abc import Iterator
from typing import Any, NoReturn

import pytest

WHY = "starts a process (make check runs only the tests that start none; make test runs all)"
SPAWNERS = ((subprocess, "_fork_exec"), (_posixsubprocess, "fork_exec"), (os, "fork"),
            (os, "forkpty"), (os, "system"), (os, "posix_spawn"), (os, "posix_spawnp"))


class StartsAProcess(BaseException):
    """Not an Exception: an `except Exception` of the code under test lets it through."""


_refused: list[str] = []  # what the test being run tried to start


def _refuse(*args: Any, **_kwargs: Any) -> NoReturn:
    _refused.append(repr(args[0])[:200] if args else "a process")
    raise StartsAProcess(WHY)


def pytest_configure(config: pytest.Config) -> None:
    for module, name in SPAWNERS:
        if hasattr(module, name):
            setattr(module, name, _refuse)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if _refused and (call.when != "teardown" or report.failed):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {WHY}")
    if call.when == "teardown":
        _refused.clear()
