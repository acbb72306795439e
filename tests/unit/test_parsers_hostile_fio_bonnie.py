"""fio and bonnie++ parsers on damaged, foreign and random input.

Whatever the input, a parser gives a list of Metric with finite values (or None with a note),
or raises ParseError naming the tool, the line and what it expected, or ToolError: nothing else
escapes, nothing hangs, and a progress parser never raises at all.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disklab.core.tools.base import ToolAdapter, ToolOutput
from disklab.core.tools.bonnie import BonnieAdapter
from disklab.core.tools.bonnie import sniff as bonnie_sniff
from disklab.core.tools.fio import FioAdapter
from disklab.core.tools.fio.output import sniff as fio_sniff
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import Metric, ProgressUpdate
from tests.helpers import (
    EOL,
    HOSTILE,
    examples,
    fixture_bytes,
    fixture_text,
    lines_of,
    mutated,
)

FOREIGN = ["throughput_t1_r4m_s256m_ext4_excel.txt", "auto_s64m_q16m_i0-1-2_ext4.txt"]
UNITS = {"B/s", "op/s", "ns", "%", "B"}  # B: the bytes a tool says it moved (fio's io_bytes)
fio = FioAdapter()
bonnie = BonnieAdapter()


# ---------------------------------------------------------------------------------------------
# truncated


def test_fio_json_cut_in_half() -> None:
    doc = fixture_text("fio", "seqwrite_1m_qd1_libaio_direct_ext4_jsonplus.json")
    cut = doc[: len(doc) // 2]
    with pytest.raises(ParseError) as e:
        fio.parse_result(ToolOutput(stdout=cut), {})
    assert e.value.tool == "fio"
    assert e.value.line == lines_of(cut)  # where the document stops
    assert "complete JSON document" in e.value.expected


def test_fio_result_file_cut_with_the_process_killed() -> None:
    doc = fixture_text("fio", "disklab_sigterm_randread.output.json")
    out = ToolOutput(stdout=fixture_text("fio", "disklab_sigterm_randread.txt"),
                     result_file=doc[:900], exit_status=-9)
    with pytest.raises(ParseError) as e:
        fio.parse_result(out, {"rw": "randread", "size": 1 << 24})
    assert e.value.tool == "fio" and e.value.line is not None
    assert fio.parse_partial(out, {"rw": "randread", "size": 1 << 24}) == []


def test_fio_text_cut_after_the_job_header() -> None:
    report = fixture_text("fio", "seqwrite_1m_qd1_libaio_direct_ext4.txt")
    cut = "\n".join(report.split("\n")[:6])
    # line 6: "seqwrite: (groupid=0, jobs=1): err= 0: pid=14585: Sun Nov 22 03:34:40 2026"
    with pytest.raises(ParseError) as e:
        fio.parse_result(ToolOutput(stdout=cut), {})
    assert (e.value.tool, e.value.line) == ("fio", 6)
    assert "I/O results of job seqwrite" in e.value.expected


def test_bonnie_csv_cut() -> None:
    line = fixture_text("bonnie", "s1g_r512_n16_quiet_ext4.csv")
    cut = line[:150]
    with pytest.raises(ParseError) as e:
        bonnie.parse_result(ToolOutput(stdout=cut), {})
    assert (e.value.tool, e.value.line) == ("bonnie", 1)
    assert "50 fields" in e.value.expected


def test_bonnie_table_row_cut_inside_a_cell() -> None:
    table = fixture_text("bonnie", "s1g_r512_n16_quiet_ext4.stderr.txt")
    lines = table.split("\n")
    # line 4: "vm               1G 2305k  62  174m  46  909m  28 5421k  99 +++++ +++ +++++ +++"
    cut = "\n".join([*lines[:3], lines[3][:33]])
    with pytest.raises(ParseError) as e:
        bonnie.parse_result(ToolOutput(stdout=cut), {})
    assert (e.value.tool, e.value.line) == ("bonnie", 4)
    assert "complete row" in e.value.expected


# ---------------------------------------------------------------------------------------------
# garbage and foreign output

GARBAGE = [
    "",
    "\n\n\n",
    bytes(range(256)).decode("utf-8", errors="replace"),
    "{" * 5000,  # deep nesting must not blow the stack
    "[" * 5000 + "]" * 5000,
    "Jobs: 1 (f=1): [r(1)][60.0%][r=1258MiB/s][r=322k IOPS][eta 00m:02s]\r" * 3,
    "1.98,2.00a," + "," * 60,
    "Version 2.00a       ------Sequential Output------ --Sequential Input- --Random-\n",
]


@pytest.mark.parametrize("adapter", [fio, bonnie], ids=["fio", "bonnie"])
@pytest.mark.parametrize("junk", GARBAGE, ids=[f"garbage{i}" for i in range(len(GARBAGE))])
def test_garbage_is_a_parse_error(adapter: ToolAdapter, junk: str) -> None:
    with pytest.raises(ParseError) as e:
        adapter.parse_result(ToolOutput(stdout=junk), {})
    assert e.value.tool == adapter.name
    assert e.value.expected
    assert e.value.line is None or 1 <= e.value.line <= lines_of(junk)
    assert adapter.parse_partial(ToolOutput(stdout=junk), {}) == []


@pytest.mark.parametrize("name", FOREIGN)
def test_iozone_output_is_neither_fio_nor_bonnie(name: str) -> None:
    other = fixture_text("fio", f"foreign/{name}")
    assert not fio_sniff(other) and not bonnie_sniff(other)
    for adapter in (fio, bonnie):
        with pytest.raises(ParseError) as e:
            adapter.parse_result(ToolOutput(stdout=other), {})
        assert e.value.tool == adapter.name and e.value.line is None


def test_each_tool_refuses_the_others_output() -> None:
    with pytest.raises(ParseError):
        fio.parse_result(ToolOutput(stdout=fixture_text("bonnie", "s1g_r512_n16_ext4.txt")), {})
    with pytest.raises(ParseError):
        bonnie.parse_result(
            ToolOutput(stdout=fixture_text("fio", "randread_4k_qd32_ext4_eta-always_pipe.txt")), {})


# ---------------------------------------------------------------------------------------------
# invalid UTF-8, decoded with errors="replace" as the runner does


def broken(tool: str, name: str, old: bytes, new: bytes) -> str:
    data = fixture_bytes(tool, name)
    assert data.count(old) >= 1
    return data.replace(old, new, 1).decode("utf-8", errors="replace")


def test_invalid_utf8_in_a_fio_bandwidth() -> None:
    # line 6: "  read: IOPS=339k, BW=1326MiB/s (1390MB/s)(6632MiB/5001msec)"
    damaged = broken("fio", "randread_4k_qd32_ext4_eta-always_pipe.txt", b"BW=1326", b"BW=13\xff6")
    with pytest.raises(ParseError) as e:
        fio.parse_result(ToolOutput(stdout=damaged), {})
    assert (e.value.tool, e.value.line) == ("fio", 6)
    assert "IOPS=N, BW=N" in e.value.expected
    assert "\ufffd" in (e.value.got or "")


def test_invalid_utf8_in_a_fio_json_number() -> None:
    # line 27: '        "bw_bytes" : 4588640273,' (json+ of seqwrite on ext4)
    name = "seqwrite_1m_qd1_libaio_direct_ext4_jsonplus.json"
    damaged = broken("fio", name, b'"bw_bytes" : 4588640273', b'"bw_bytes" : 45886\xff0273')
    line = fixture_text("fio", name).split("\n").index('        "bw_bytes" : 4588640273,') + 1
    with pytest.raises(ParseError) as e:
        fio.parse_result(ToolOutput(stdout=damaged), {})
    assert (e.value.tool, e.value.line) == ("fio", line)
    assert "JSON" in e.value.expected


def test_invalid_utf8_in_a_bonnie_csv_number() -> None:
    damaged = broken("bonnie", "s1g_r512_n16_quiet_ext4.csv", b",2305,62,", b",23\xff5,62,")
    with pytest.raises(ParseError) as e:
        bonnie.parse_result(ToolOutput(stdout=damaged), {})
    assert (e.value.tool, e.value.line) == ("bonnie", 1)
    assert e.value.expected == "a number for char_write"


def test_invalid_utf8_in_a_bonnie_table_cell() -> None:
    # line 4 of the -q table: "vm               1G 2305k  62  174m  46 ..."
    damaged = broken("bonnie", "s1g_r512_n16_quiet_ext4.stderr.txt", b"2305k", b"23\xff5k")
    with pytest.raises(ParseError) as e:
        bonnie.parse_result(ToolOutput(stdout=damaged), {})
    assert (e.value.tool, e.value.line) == ("bonnie", 4)
    assert "char_write" in e.value.expected


# ---------------------------------------------------------------------------------------------
# mutated fixtures (hypothesis)

FIO_SAMPLES = [
    "seqwrite_1m_qd1_libaio_direct_ext4_jsonplus.json",
    "randread_4k_qd32_ext4_eta-always_json.json",
    "disklab_enospc_write_tmpfs4m.output.json",
    "disklab_numjobs2_randrw70.output.json",
    "jobfile_seqread-randread_2groups_ext4_json.json",
    "client-server_jobfile_ext4_json.json",
    "randread_4k_qd32_ext4_eta-always_pipe.txt",
    "randrw70_4k_qd32_libaio_direct_ext4.txt",
    "seqread_1m_qd1_libaio_direct_ext4-datajournal.txt",
    "jobfile_seqread-randread_2groups_btrfs.txt",
    "client-server_jobfile_ext4_normal.txt",
    "error_enospc_seqwrite_8g_on_4g_ext4.txt",
    "randread_4k_qd32_btrfs_status-interval1_normal.txt",
]
BONNIE_SAMPLES = [
    "s1g_r512_n16_quiet_ext4.csv",
    "s1g_r512_n16_quiet_ext4-datajournal.csv",
    "s1g_r512_n16_ext4.txt",
    "s1g_r512_n16_ext4_stdout-pty.txt",
    "s1g_r512_n16_quiet_ext4.stderr.txt",
    "bon_csv2txt_of_quiet_csv_ext4-datajournal.txt",
    "disklab_s64m_r32_n1_fast.txt",
    "disklab_s64m_r32_n0_fast.txt",
    "disklab_s0_n1_quiet.csv",
    "error_root_without_u.stderr.txt",
    "s1g_r512_n16_ext4.stderr.txt",
]
FIO_TEXTS = {n: fixture_text("fio", n) for n in FIO_SAMPLES}
BONNIE_TEXTS = {n: fixture_text("bonnie", n) for n in BONNIE_SAMPLES}
def check_outcome(adapter: ToolAdapter, output: ToolOutput, params: dict) -> None:
    try:
        metrics = adapter.parse_result(output, params)
    except ParseError as e:
        assert e.tool == adapter.name
        assert e.expected
        n = max(lines_of(output.stdout), lines_of(output.result_file or ""))
        assert e.line is None or 1 <= e.line <= n
    except ToolError as e:
        assert str(e)
    else:
        assert isinstance(metrics, list)
        for m in metrics:
            assert isinstance(m, Metric)
            assert m.unit in UNITS
            assert m.value is None or (isinstance(m.value, float | int)
                                       and math.isfinite(m.value)), m
            assert m.value is not None or m.note
    partial = adapter.parse_partial(output, params)
    assert all(m.value is None or math.isfinite(m.value) for m in partial)
    progress = adapter.progress_parser(params)
    for line in EOL.split(output.stdout)[:400]:
        for stream in ("stdout", "stderr"):
            update = progress.feed(stream, line)
            assert update is None or isinstance(update, ProgressUpdate)


@settings(HOSTILE, max_examples=examples(1200))
@given(mutated(FIO_TEXTS), st.booleans())
def test_fio_mutated_fixtures(damaged: str, as_result_file: bool) -> None:
    output = (ToolOutput(stdout="", result_file=damaged, exit_status=0) if as_result_file
              else ToolOutput(stdout=damaged))
    check_outcome(fio, output, {})
    check_outcome(fio, output, {"rw": "randread", "size": 1 << 29})


@settings(HOSTILE, max_examples=examples(1000))
@given(mutated(BONNIE_TEXTS), st.sampled_from([0, 1]))
def test_bonnie_mutated_fixtures(damaged: str, exit_status: int) -> None:
    output = ToolOutput(stdout=damaged, exit_status=exit_status)
    check_outcome(bonnie, output, {})
    check_outcome(bonnie, output, {"size": 1 << 30, "files": 16})
