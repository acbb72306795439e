"""dd and iozone parsers on damaged, foreign and random input.

Whatever the input, parse_result gives a list of Metric with finite values (or None with a
note), or raises ParseError naming the tool, the line and what it expected, or ToolError;
nothing else escapes, nothing hangs, parse_partial never raises, and a progress parser never
raises at all.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disklab.core.tools.base import ToolAdapter, ToolOutput
from disklab.core.tools.dd import DdAdapter
from disklab.core.tools.iozone import IozoneAdapter
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import Metric, ProgressUpdate
from tests.helpers import (
    EOL,
    FIXTURES,
    HOSTILE,
    examples,
    fixture_bytes,
    fixture_text,
    lines_of,
    mutated,
)

UNITS = {"B/s", "B", "%"}
MiB = 1 << 20
dd = DdAdapter()
iozone = IozoneAdapter()
DD_PARAMS = {"mode": "write", "block_size": MiB, "size": 1024 * MiB}
IOZONE_PARAMS = {"tests": ("write", "read", "random"), "threads": 1, "file_size": 256 * MiB,
                 "record_size": 4 * MiB}


def dd_out(s: str, exit_status: int | None = 0) -> ToolOutput:
    return ToolOutput(stdout="", stderr=s, exit_status=exit_status)


def ioz_out(s: str, exit_status: int | None = 0) -> ToolOutput:
    return ToolOutput(stdout=s, exit_status=exit_status)


# ---------------------------------------------------------------------------------------------
# truncated


def test_dd_cut_inside_the_summary() -> None:
    full = fixture_text("dd", "write_4k_x262144_oflag-direct_progress_ext4.stderr.txt")
    cut = full[: full.index("1073741824 bytes") + 20]  # "1073741824 bytes (1.1"
    with pytest.raises(ParseError) as e:
        dd.parse_result(dd_out(cut), DD_PARAMS)
    # lines as logged: "", 2 progress redraws, "262144+0 records in", "... out", the cut line
    assert (e.value.tool, e.value.line) == ("dd", 6)
    assert "copied" in e.value.expected
    # what was copied before: the last progress line, "946008064 bytes ... copied, 2 s"
    (m,) = dd.parse_partial(dd_out(cut, None), DD_PARAMS)
    assert m.value == pytest.approx(946008064 / 2) and m.note == "partial"


def test_iozone_cut_inside_a_table_row() -> None:
    full = fixture_text("iozone", "auto_s64m_q16m_i0-1-2_ext4_excel.txt")
    # "65536     256   666104  6044088 ..." cut after "6661" and after "666104  6044088"
    for cut, kept in ((full[: full.index("  666104") + 6], 0),
                      (full[: full.index("  6044088") + 9], 1)):
        with pytest.raises(ParseError) as e:
            iozone.parse_result(ioz_out(cut), {})
        assert e.value.tool == "iozone" and e.value.line is None
        assert "iozone test complete." in e.value.expected
        # the 6 rows before it are kept; of the cut row, all but its last number (which may
        # be cut short)
        partial = iozone.parse_partial(ioz_out(cut), {})
        assert len(partial) == 6 * 6 + kept and all(m.note == "partial" for m in partial)
        assert all(m.value != 6661 * 1024 for m in partial)


def test_iozone_cut_inside_a_throughput_block() -> None:
    full = fixture_text("iozone", "throughput_t4_r4m_s256m_ext4_excel.txt")
    cut = full[: full.index("\tMin xfer")]  # the first block lacks its last line
    with pytest.raises(ParseError) as e:
        iozone.parse_result(ioz_out(cut), {})
    assert e.value.tool == "iozone" and "'Min xfer'" in e.value.expected
    assert iozone.parse_partial(ioz_out(cut), {}) == []


# ---------------------------------------------------------------------------------------------
# garbage and foreign output

GARBAGE = [
    "",
    "\n\n\n",
    "\r\r\r",
    bytes(range(256)).decode("utf-8", errors="replace"),
    "9" * 5000,
    "9" * 5000 + " bytes (1 GB) copied, 1 s, 1 GB/s\n",
    "1+0 records in\n1+0 records out\n" + "9" * 40 + " bytes copied, 1 s, 1 GB/s\n",
    "Children see throughput for  1 initial writers \t=  " + "9" * 40 + ".00 kB/sec\n",
    '"Writer report"\n"4"\n"65536" 1 2 3\n',
    "              kB  reclen    write  rewrite    read    reread\n" + "1 2 3 4 5 6 7 8 9\n" * 3,
]


@pytest.mark.parametrize("junk", GARBAGE, ids=[f"garbage{i}" for i in range(len(GARBAGE))])
def test_garbage_is_a_parse_error(junk: str) -> None:
    for adapter, out in ((dd, dd_out(junk)), (iozone, ioz_out(junk))):
        with pytest.raises(ParseError) as e:
            adapter.parse_result(out, {})
        assert e.value.tool == adapter.name and e.value.expected
        assert e.value.line is None or 1 <= e.value.line <= lines_of(junk)
        assert adapter.parse_partial(out, {}) == []


def foreign_files() -> list[tuple[str, str]]:
    found = [("fio", p.name) for p in sorted((FIXTURES / "fio").glob("*.txt"))[:12]]
    found += [("fio", p.name) for p in sorted((FIXTURES / "fio").glob("*.json"))[:6]]
    found += [("bonnie", p.name) for p in sorted((FIXTURES / "bonnie").glob("*.txt"))[:8]]
    found += [("bonnie", p.name) for p in sorted((FIXTURES / "bonnie").glob("*.csv"))[:4]]
    return found


@pytest.mark.parametrize(("tool", "name"), foreign_files())
def test_fio_and_bonnie_outputs_are_refused(tool: str, name: str) -> None:
    other = fixture_text(tool, name)
    with pytest.raises((ParseError, ToolError)) as e:
        dd.parse_result(dd_out(other), {})
    if isinstance(e.value, ParseError):
        assert e.value.tool == "dd" and e.value.expected
    with pytest.raises(ParseError) as e2:
        iozone.parse_result(ioz_out(other), {})
    assert e2.value.tool == "iozone" and e2.value.expected


def test_a_plain_fio_and_bonnie_report_are_parse_errors_for_both() -> None:
    foreign = foreign_files()
    if not foreign:
        pytest.skip("no fio or bonnie fixtures in this checkout")
    plain = [t for t in foreign if "error" not in t[1] and "enospc" not in t[1]]
    for tool, name in plain:
        with pytest.raises(ParseError):
            dd.parse_result(dd_out(fixture_text(tool, name)), {})


def test_each_refuses_the_other() -> None:
    with pytest.raises(ParseError):
        dd.parse_result(
            dd_out(fixture_text("iozone", "throughput_t4_r4m_s256m_ext4_excel.txt")), {})
    with pytest.raises(ParseError):
        iozone.parse_result(
            ioz_out(fixture_text("dd", "write_1m_x1024_oflag-direct_progress_ext4.stderr.txt")), {})


# ---------------------------------------------------------------------------------------------
# invalid UTF-8, decoded with errors="replace" as the runner does


def broken(tool: str, name: str, old: bytes, new: bytes) -> str:
    data = fixture_bytes(tool, name)
    assert data.count(old) >= 1
    return data.replace(old, new, 1).decode("utf-8", errors="replace")


def test_invalid_utf8_in_dds_seconds() -> None:
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.708866 s, 1.5 GB/s" (line 3)
    damaged = broken("dd", "read_1m_iflag-direct_progress_ext4.stderr.txt", b"0.708866",
                     b"0.70\xff866")
    with pytest.raises(ParseError) as e:
        dd.parse_result(dd_out(damaged), {"mode": "read"})
    assert (e.value.tool, e.value.line) == ("dd", 3)
    assert "copied" in e.value.expected and "\ufffd" in (e.value.got or "")


def test_invalid_utf8_in_an_iozone_block() -> None:
    name = "throughput_t1_r4m_s256m_ext4_excel.txt"
    # "\tChildren see throughput for  1 rewriters \t= 5663708.50 kB/sec"
    damaged = broken("iozone", name, b"5663708.50", b"566\xff708.50")
    line = fixture_text("iozone", name).split("\n").index(
        "\tChildren see throughput for  1 rewriters \t= 5663708.50 kB/sec") + 1
    with pytest.raises(ParseError) as e:
        iozone.parse_result(ioz_out(damaged), {})
    assert (e.value.tool, e.value.line) == ("iozone", line)
    assert "kB/sec" in e.value.expected and "\ufffd" in (e.value.got or "")


def test_invalid_utf8_in_an_iozone_table_row() -> None:
    name = "direct_r1m_s512m_i0-1-2_ext4.txt"
    # "          524288    1024   466360  5111264  6182940  7144074  7060375  5234189"
    damaged = broken("iozone", name, b"5111264", b"51\xff1264")
    line = next(i for i, ln in enumerate(fixture_text("iozone", name).split("\n"), 1)
                if "5111264" in ln)
    with pytest.raises(ParseError) as e:
        iozone.parse_result(ioz_out(damaged), {})
    assert (e.value.tool, e.value.line) == ("iozone", line)
    assert "table row" in e.value.expected


def test_invalid_utf8_in_the_excel_report() -> None:
    name = "auto_s64m_q16m_i0-1-2_ext4_excel.txt"
    # '"65536"   2977840  4997797 ...' in the "Re-writer report"
    damaged = broken("iozone", name, b'"65536"   2977840', b'"65536"   29\xff7840')
    with pytest.raises(ParseError) as e:
        iozone.parse_result(ioz_out(damaged), {})
    assert e.value.tool == "iozone" and "Excel" in e.value.expected


# ---------------------------------------------------------------------------------------------
# mutated fixtures (hypothesis)

DD_SAMPLES = sorted(p.name for p in (FIXTURES / "dd").glob("*.txt"))
IOZONE_SAMPLES = [
    "throughput_t1_r4m_s256m_ext4_excel.txt",
    "throughput_t1_r4m_s256m_ext4_excel_pty.txt",
    "throughput_t1_r4m_s256m_osync-fsync_btrfs_excel.txt",
    "throughput_t4_r4m_s256m_xfs-su128k-sw10_excel.txt",
    "throughput_t2_r64k_s1m_all-tests_cpu_excel.txt",
    "throughput_l1-u2_r64k_s1m_C_cpu_excel.txt",
    "auto_s64m_q16m_i0-1-2_ext4.txt",
    "auto_s64m_q16m_i0-1-2_ext4_excel.txt",
    "auto_s64m_q16m_i0-1-2_ext4_script-pty.txt",
    "auto_n1m-g4m_y64k-q256k_i0-1_cpu_excel.txt",
    "direct_r1m_s512m_i0-1-2_btrfs.txt",
    "single_r64k_s1m_all-tests_cpu_excel.txt",
    "single_r64k_s8m_i0-3_gaps.txt",
    "error_t4_only_2_files_ext4.txt",
    "error_interrupted_missing_dir.txt",
    "killed_throughput_t2_r64k_s512m.txt",
    "killed_auto_s256m_i0-1.txt",
]
DD_TEXTS = {n: fixture_text("dd", n) for n in DD_SAMPLES}
IOZONE_TEXTS = {n: fixture_text("iozone", n) for n in IOZONE_SAMPLES}
def check_outcome(adapter: ToolAdapter, output: ToolOutput, params: dict) -> None:
    whole = output.stdout + output.stderr
    try:
        metrics = adapter.parse_result(output, params)
    except ParseError as e:
        assert e.tool == adapter.name
        assert e.expected
        assert e.line is None or 1 <= e.line <= lines_of(whole)
    except ToolError as e:
        assert str(e)
    else:
        assert isinstance(metrics, list) and metrics
        for m in metrics:
            assert isinstance(m, Metric)
            assert m.unit in UNITS
            assert m.value is None or (isinstance(m.value, float | int)
                                       and math.isfinite(m.value)), m
            assert m.value is not None or m.note
    partial = adapter.parse_partial(output, params)
    assert isinstance(partial, list)
    assert all(isinstance(m, Metric) and (m.value is None or math.isfinite(m.value))
               for m in partial)
    progress = adapter.progress_parser(params)
    for line in EOL.split(whole)[:400]:
        for stream in ("stdout", "stderr"):
            update = progress.feed(stream, line)
            assert update is None or isinstance(update, ProgressUpdate)


@settings(HOSTILE, max_examples=examples(1000))
@given(mutated(DD_TEXTS), st.sampled_from([0, 1, None]))
def test_dd_mutated_fixtures(damaged: str, exit_status: int | None) -> None:
    check_outcome(dd, dd_out(damaged, exit_status), {})
    check_outcome(dd, dd_out(damaged, exit_status), DD_PARAMS)
    check_outcome(dd, ToolOutput(stdout=damaged, stderr=damaged), {})  # as `disklab import`


@settings(HOSTILE, max_examples=examples(1200))
@given(mutated(IOZONE_TEXTS), st.sampled_from([0, 13, None]))
def test_iozone_mutated_fixtures(damaged: str, exit_status: int | None) -> None:
    check_outcome(iozone, ioz_out(damaged, exit_status), {})
    check_outcome(iozone, ioz_out(damaged, exit_status), IOZONE_PARAMS)
    check_outcome(iozone, ioz_out(damaged, exit_status), {"auto": True, "tests": ("write",)})


@settings(HOSTILE, max_examples=examples(300))
@given(st.text(alphabet=st.sampled_from(list("0123456789 .+\t\n\r\"kBMG/s=:records copied"
                                             "inoutChildrensethroughputfor")), max_size=400))
def test_random_text_in_the_formats_alphabet(junk: str) -> None:
    check_outcome(dd, dd_out(junk), {})
    check_outcome(iozone, ioz_out(junk), {})
