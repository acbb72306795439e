"""iozone's names and numbers: its -i tests, its table headings, its throughput-mode labels and
-R report titles, each mapped to DiskLab's metric names, and the line patterns that more than
one reader of its output needs. One table per subject, so that a name iozone prints is looked
up in one place.
"""

from __future__ import annotations

import re

from disklab.core.vocab.units import MiB

TOOL = "iozone"
MAX_RECORD = 16 * MiB  # iozone.c MAXBUFFERSIZE: it refuses larger records
UNIT_BYTES = "B"

# Plan test name -> iozone's -i number.
TEST_NUMBER: dict[str, int] = {
    "write": 0, "read": 1, "random": 2, "backward": 3, "record_rewrite": 4, "stride": 5,
    "fwrite": 6, "fread": 7, "mixed": 8, "pwrite": 9, "pread": 10,
}
NUMBER_TEST = {n: t for t, n in TEST_NUMBER.items()}
# The table columns each test fills in single-process mode (mixed, pwrite and pread print
# nothing there), and the blocks it prints in throughput mode (no record rewrite there).
TEST_COLUMNS: dict[str, tuple[str, ...]] = {
    "write": ("write", "rewrite"), "read": ("read", "reread"),
    "random": ("random_read", "random_write"), "backward": ("backward_read",),
    "record_rewrite": ("record_rewrite",), "stride": ("stride_read",),
    "fwrite": ("fwrite", "frewrite"), "fread": ("fread", "freread"),
    "mixed": (), "pwrite": (), "pread": (),
}
TEST_PHASES: dict[str, tuple[str, ...]] = {
    "write": ("write", "rewrite"), "read": ("read", "reread"),
    "random": ("random_read", "random_write"), "backward": ("backward_read",),
    "record_rewrite": (), "stride": ("stride_read",), "fwrite": ("fwrite",),
    "fread": ("fread",), "mixed": ("mixed",), "pwrite": ("pwrite",), "pread": ("pread",),
}
# Table headings (the two header lines joined per column) -> metric name.
COLUMNS: dict[str, str] = {
    "write": "write", "rewrite": "rewrite", "read": "read", "reread": "reread",
    "random read": "random_read", "random write": "random_write",
    "bkwd read": "backward_read", "record rewrite": "record_rewrite",
    "stride read": "stride_read", "fwrite": "fwrite", "frewrite": "frewrite",
    "fread": "fread", "freread": "freread",
}
COLUMN_ORDER = tuple(COLUMNS.values())
# "Children see throughput for N <label>" -> metric name, in the order iozone runs them.
THROUGHPUT_LABELS: dict[str, str] = {
    "initial writers": "write", "rewriters": "rewrite", "readers": "read",
    "re-readers": "reread", "reverse readers": "backward_read",
    "stride readers": "stride_read", "random readers": "random_read",
    "mixed workload": "mixed", "random writers": "random_write",
    "pwrite writers": "pwrite", "pread readers": "pread", "fwriters": "fwrite",
    "freaders": "fread",
}
PHASE_ORDER = tuple(THROUGHPUT_LABELS.values())
# -R report titles: single-process mode ("Writer report", "Writer CPU utilization report
# (Zero values should be ignored)") and throughput mode rows ("  Initial write ").
EXCEL_TABLE: dict[str, str] = {
    "writer": "write", "re-writer": "rewrite", "reader": "read", "re-reader": "reread",
    "random read": "random_read", "random write": "random_write",
    "backward read": "backward_read", "record rewrite": "record_rewrite",
    "stride read": "stride_read", "fwrite": "fwrite", "re-fwrite": "frewrite",
    "fread": "fread", "re-fread": "freread",
}
EXCEL_THROUGHPUT: dict[str, str] = {
    "initial write": "write", "rewrite": "rewrite", "read": "read", "re-read": "reread",
    "reverse read": "backward_read", "stride read": "stride_read",
    "random read": "random_read", "mixed workload": "mixed", "random write": "random_write",
    "pwrite": "pwrite", "pread": "pread", "fwrite": "fwrite", "fread": "fread",
}

_EOL = re.compile(r"\r\n|\r|\n")
N = r"\d{1,18}"  # integers as iozone prints them (bounded: a damaged file cannot overflow)
F = r"\d{1,18}(?:\.\d{1,9})?"
KBS = r"(?:kB|KB|Kb|ops)/sec"  # ops/sec: -O
BANNER = re.compile(r"Iozone: Performance Test of File I/O")
PROCS = re.compile(rf"^Throughput test with ({N}) process(?:es)?$")
TABLE_HEAD = re.compile(r"^\s*kB\s+reclen\s")
ROW = re.compile(rf"^\s*{N}(?:\s+{N})*\s*$")
CHILDREN = re.compile(rf"^Children see throughput for\s+({N})\s+(.+?)\s*=\s*({F})\s+{KBS}$")
# iozone's own error lines (stdout) and what it prints when it is killed (it then exits 0).
ERROR = re.compile(r"^(invalid options?\b.*|Can not .*|Error (?:writing|reading) .*|"
                   r"iozone: interrupted.*)$")
COMPLETE = "iozone test complete."
EXCEL_BELOW = "Excel output is below:"  # -R: the report follows


def sniff(text: str) -> bool:
    """Whole-file detection for `disklab import`: iozone's banner, table or throughput blocks."""
    return bool(
        BANNER.search(text)
        or re.search(r"^\s*kB\s+reclen\s+write\s+rewrite\s+read", text, re.M)
        or re.search(r"^\s*Children see throughput for\s+\d+ ", text, re.M)
    )


def split_lines(text: str) -> list[str]:
    """Lines as iozone ends them: \\n, or \\r\\n and \\r in a capture made on a terminal."""
    return _EOL.split(text)

