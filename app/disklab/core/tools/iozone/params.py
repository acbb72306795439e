"""What a case's parameters say about the run iozone will make: its tests in -i order, the rows
of an auto-mode table, and the bytes the whole run moves (for the ETA), read from the plan's
parameters or an imported output's command line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from disklab.core.tools.iozone.tables import NUMBER_TEST, TEST_COLUMNS, TEST_NUMBER, TEST_PHASES
from disklab.core.vocab.units import KiB, MiB


def int_param(params: Mapping[str, Any], key: str) -> int | None:
    """A whole-number parameter, or None (a bool is no number here, though Python says so)."""
    v = params.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def plan_tests(params: Mapping[str, Any]) -> list[str] | None:
    """The plan's tests in iozone's -i order; None when the parameters do not say."""
    tests = params.get("tests")
    if isinstance(tests, str):
        tests = (tests,)
    if not isinstance(tests, list | tuple) or not tests:
        return None
    known = [t for t in tests if t in TEST_NUMBER]
    return sorted(set(known), key=TEST_NUMBER.__getitem__) or None


def cmdline_tests(cmdline: str) -> list[str] | None:
    """Tests from iozone's 'Command line used:' (-i 0 -i 1, or -i0); all of them without -i."""
    words = cmdline.split()
    numbers: list[int] = []
    for i, w in enumerate(words):
        if w == "-i" and i + 1 < len(words) and words[i + 1].isdigit():
            numbers.append(int(words[i + 1]))
        elif re.fullmatch(r"-i\d+", w):
            numbers.append(int(w[2:]))
    if not numbers:
        return [t for t in TEST_NUMBER if TEST_COLUMNS[t]]  # iozone runs all of them
    return sorted({NUMBER_TEST[n] for n in numbers if n in NUMBER_TEST},
                  key=TEST_NUMBER.__getitem__)


def auto_rows(params: Mapping[str, Any]) -> list[tuple[int, int]]:
    """(file size, record size) of each row iozone prints, in order.

    Auto mode doubles the record size from -y (4 KiB) up to -q (16 MiB) or the file size, for
    each file size doubled from -n (64 KiB) to -g (512 MiB). For files above 16 MiB, iozone
    starts at 64 KiB records unless -y says otherwise (seen with iozone 3.489; -s pins one file
    size and then keeps the small records). An estimate for progress, not a promise.
    """
    record = int_param(params, "record_size")
    fixed = int_param(params, "file_size")
    if not params.get("auto"):
        return [(fixed, record)] if fixed and record else []
    lo_rec = int_param(params, "min_record_size")
    hi_rec = int_param(params, "max_record_size") or 16 * MiB
    if fixed:
        files = [fixed]
    else:
        f = int_param(params, "min_file_size") or 64 * KiB
        top = int_param(params, "max_file_size") or 512 * MiB
        files = []
        while f <= top and f > 0 and len(files) < 64:
            files.append(f)
            f *= 2
    rows: list[tuple[int, int]] = []
    for f in files:
        r = lo_rec or 4 * KiB
        if lo_rec is None and not fixed and f > 16 * MiB:
            r = 64 * KiB
        while r <= min(hi_rec, f) and r > 0 and len(rows) < 4096:
            rows.append((f, r))
            r *= 2
    return rows


def planned_bytes(params: Mapping[str, Any]) -> int | None:
    """Bytes the whole run moves (each phase reads or writes each file once), for ETA."""
    tests = plan_tests(params) or ["write", "read"]
    threads = int_param(params, "threads") or 0
    if threads >= 1 and not params.get("auto"):
        size = int_param(params, "file_size")
        if not size:
            return None
        return size * threads * sum(len(TEST_PHASES[t]) for t in tests)
    columns = sum(len(TEST_COLUMNS[t]) for t in tests)
    rows = auto_rows(params)
    return sum(f * columns for f, _r in rows) or None

