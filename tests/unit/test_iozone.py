"""iozone's outputs as recorded in tests/fixtures/iozone (iozone3 3.489): tables, throughput
blocks, the -R report, CPU figures, errors, killed runs, progress, and the argv it is given.

Expected numbers are read by hand from the files (the line they come from is quoted beside each).
iozone's "kB" is 1024 bytes, so a figure of X kB/sec is stored as X * 1024 B/s.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from disklab.core.proc.tool import ToolProcess
from disklab.core.tools import get_adapter
from disklab.core.tools.base import RunTarget, ToolOutput
from disklab.core.tools.iozone import IozoneAdapter, planned_bytes, sniff
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import Metric
from tests.helpers import FIXTURES, fixture_text

IOZ = FIXTURES / "iozone"
K = 1024
MiB = 1024 * 1024
iozone = IozoneAdapter()


def parse(name: str, params: dict | None = None, exit_status: int = 0) -> list[Metric]:
    stderr = name.replace(".txt", ".stderr.txt")
    err = fixture_text("iozone", stderr) if (IOZ / stderr).exists() else ""
    out = ToolOutput(fixture_text("iozone", name), err, exit_status=exit_status)
    return iozone.parse_result(out, params or {})


def pick(metrics: list[Metric], name: str, **params: int) -> Metric:
    found = [m for m in metrics if m.name == name
             and all((m.params or {}).get(k) == v for k, v in params.items())]
    assert len(found) == 1, (name, params, found)
    return found[0]


# --- throughput mode ---------------------------------------------------------------------------

# (file, write "Children see ... initial writers", reread "Children see ... re-readers",
#  reread Min xfer), all in kB as printed
THROUGHPUT_T1 = [
    # "Children see throughput for  1 initial writers  =  348541.47 kB/sec"
    # "Children see throughput for 1 re-readers  = 6827195.00 kB/sec"; "Min xfer = 262144.00 kB"
    ("throughput_t1_r4m_s256m_ext4_excel.txt", 348541.47, 6827195.00, 262144.00),
    # "... 1 initial writers = 2406250.50 kB/sec"; "... 1 re-readers = 6222730.00 kB/sec"
    ("throughput_t1_r4m_s256m_ext4-nodelalloc_excel.txt", 2406250.50, 6222730.00, 262144.00),
    # "... 1 initial writers = 323432.12 kB/sec"; "... 1 re-readers = 4470471.50 kB/sec"
    ("throughput_t1_r4m_s256m_ext4-datajournal_excel.txt", 323432.12, 4470471.50, 262144.00),
    # "... 1 initial writers = 4373645.00 kB/sec"; "... 1 re-readers = 7015958.50 kB/sec"
    ("throughput_t1_r4m_s256m_ext4-j256m_excel.txt", 4373645.00, 7015958.50, 262144.00),
    # "... 1 initial writers = 6159804.50 kB/sec"; "... 1 re-readers = 7345856.00 kB/sec"
    ("throughput_t1_r4m_s256m_xfs-su128k-sw10_excel.txt", 6159804.50, 7345856.00, 262144.00),
    # pty capture ("\r\n"): "... 1 initial writers = 349260.44"; "... 1 re-readers = 6822238.50"
    ("throughput_t1_r4m_s256m_ext4_excel_pty.txt", 349260.44, 6822238.50, 262144.00),
    # -o -e: "... 1 initial writers = 392936.47 kB/sec"; "... 1 re-readers = 6966526.50 kB/sec"
    ("throughput_t1_r4m_s256m_osync-fsync_ext4_excel.txt", 392936.47, 6966526.50, 262144.00),
    # "... 1 initial writers = 268907.91 kB/sec"; "... 1 re-readers = 5834475.50 kB/sec"
    ("throughput_t1_r4m_s256m_osync-fsync_ext4-nodelalloc_excel.txt", 268907.91, 5834475.50,
     262144.00),
    # "... 1 initial writers = 311079.66 kB/sec"; "... 1 re-readers = 7105321.50 kB/sec"
    ("throughput_t1_r4m_s256m_osync-fsync_ext4-j16m_excel.txt", 311079.66, 7105321.50,
     262144.00),
    # "... 1 initial writers = 386070.75 kB/sec"; "... 1 re-readers = 6964673.00 kB/sec"
    ("throughput_t1_r4m_s256m_osync-fsync_ext4-j256m_excel.txt", 386070.75, 6964673.00,
     262144.00),
    # "... 1 initial writers = 640535.06 kB/sec"; "... 1 re-readers = 5063448.00 kB/sec"
    ("throughput_t1_r4m_s256m_osync-fsync_btrfs_excel.txt", 640535.06, 5063448.00, 262144.00),
    # 4 processes: "... 4 initial writers = 486430.38"; "... 4 re-readers = 7154035.75";
    # "Min xfer = 114688.00 kB" (stonewalling: below the 262144 kB file)
    ("throughput_t4_r4m_s256m_ext4_excel.txt", 486430.38, 7154035.75, 114688.00),
    # "... 4 initial writers = 238913.92"; "... 4 re-readers = 6034154.62"; "= 163840.00 kB"
    ("throughput_t4_r4m_s256m_ext4-datajournal_excel.txt", 238913.92, 6034154.62, 163840.00),
    # "... 4 initial writers = 764217.06"; "... 4 re-readers = 13223137.12"; "= 69632.00 kB"
    ("throughput_t4_r4m_s256m_ext4-j16m_excel.txt", 764217.06, 13223137.12, 69632.00),
    # "... 4 initial writers = 713529.16"; "... 4 re-readers = 12341219.62"; "= 53248.00 kB"
    ("throughput_t4_r4m_s256m_xfs-su128k-sw10_excel.txt", 713529.16, 12341219.62, 53248.00),
]


@pytest.mark.parametrize(("name", "write_kbs", "reread_kbs", "xfer_kb"), THROUGHPUT_T1)
def test_throughput_blocks_give_children_figures_in_bytes(name, write_kbs, reread_kbs,
                                                          xfer_kb) -> None:
    metrics = parse(name)
    threads = 4 if "_t4_" in name else 1
    # "Record Size 4096 kB", "File size set to 262144 kB", "Throughput test with N processes"
    point = {"threads": threads, "file_size": 262144 * K, "record_size": 4096 * K}
    assert pick(metrics, "write").value == pytest.approx(write_kbs * K)
    assert pick(metrics, "write").params == point
    assert pick(metrics, "reread").value == pytest.approx(reread_kbs * K)
    xfer = pick(metrics, "reread:min_xfer")
    assert xfer.value == pytest.approx(xfer_kb * K) and xfer.unit == "B"
    # 4 phases x (children, parent, min, max, avg, min xfer); the -R report only agrees
    assert len(metrics) == 24
    assert {m.unit for m in metrics} == {"B/s", "B"}


def test_every_line_of_a_four_process_block() -> None:
    metrics = parse("throughput_t4_r4m_s256m_ext4_excel.txt")
    expected = {
        # "Children see throughput for  4 readers \t\t= 9472112.81 kB/sec"
        "read": 9472112.81,
        # "Parent sees throughput for  4 readers \t\t= 6932618.03 kB/sec"
        "read:parent": 6932618.03,
        # "Min throughput per process \t\t\t=  580366.44 kB/sec "
        "read:min_proc": 580366.44,
        # "Max throughput per process \t\t\t= 7007507.50 kB/sec"
        "read:max_proc": 7007507.50,
        # "Avg throughput per process \t\t\t= 2368028.20 kB/sec"
        "read:avg_proc": 2368028.20,
        # "Min xfer \t\t\t\t\t=   20480.00 kB"
        "read:min_xfer": 20480.00,
        # "Children see throughput for  4 rewriters \t= 5073783.94 kB/sec"
        "rewrite": 5073783.94,
        # "Parent sees throughput for  4 initial writers \t=  236366.72 kB/sec"
        "write:parent": 236366.72,
    }
    for name, kb in expected.items():
        assert pick(metrics, name).value == pytest.approx(kb * K), name


def test_o_sync_header_lines_do_not_disturb_the_blocks() -> None:
    metrics = parse("throughput_t1_r4m_s256m_osync-fsync_ext4_excel.txt")
    # "Parent sees throughput for  1 initial writers \t=  392378.94 kB/sec"
    assert pick(metrics, "write:parent").value == pytest.approx(392378.94 * K)


def test_every_throughput_label_and_its_cpu_line() -> None:
    metrics = parse("throughput_t2_r64k_s1m_all-tests_cpu_excel.txt")
    point = {"threads": 2, "file_size": 1024 * K, "record_size": 64 * K}
    expected = {
        # "Children see throughput for  2 initial writers \t= 3606774.25 kB/sec"
        "write": 3606774.25,
        # "Children see throughput for  2 rewriters \t= 4079544.25 kB/sec"
        "rewrite": 4079544.25,
        # "Children see throughput for  2 readers \t\t= 10352341.50 kB/sec"
        "read": 10352341.50,
        # "Children see throughput for 2 re-readers \t= 11156681.00 kB/sec"
        "reread": 11156681.00,
        # "Children see throughput for 2 reverse readers \t=  324925.51 kB/sec"
        "backward_read": 324925.51,
        # "Children see throughput for 2 stride readers \t= 8680109.00 kB/sec"
        "stride_read": 8680109.00,
        # "Children see throughput for 2 random readers \t= 3578746.75 kB/sec"
        "random_read": 3578746.75,
        # "Children see throughput for 2 mixed workload \t= 2983669.70 kB/sec"
        "mixed": 2983669.70,
        # "Children see throughput for 2 random writers \t= 5693455.25 kB/sec"
        "random_write": 5693455.25,
        # "Children see throughput for 2 pwrite writers \t= 4674511.00 kB/sec"
        "pwrite": 4674511.00,
        # "Children see throughput for 2 pread readers \t= 5690162.50 kB/sec"
        "pread": 5690162.50,
        # "Children see throughput for  2 fwriters \t= 2749898.88 kB/sec"
        "fwrite": 2749898.88,
        # "Children see throughput for  2 freaders \t= 10861108.50 kB/sec"
        "fread": 10861108.50,
    }
    for name, kb in expected.items():
        m = pick(metrics, name)
        assert m.value == pytest.approx(kb * K) and m.params == point, name
    # "CPU Utilization: Wall time    0.000    CPU time    0.001    CPU utilization 180.86 %"
    assert pick(metrics, "write:cpu").value == pytest.approx(180.86)
    assert pick(metrics, "write:cpu").unit == "%"
    # "CPU utilization: Wall time    0.000    CPU time    0.000    CPU utilization 190.20 %"
    assert pick(metrics, "fread:cpu").value == pytest.approx(190.20)
    assert len(metrics) == 13 * 7


def test_process_ranges_keep_one_result_per_process_count() -> None:
    metrics = parse("throughput_l1-u2_r64k_s1m_C_cpu_excel.txt")
    # "Children see throughput for  1 initial writers \t= 4232305.00 kB/sec"
    assert pick(metrics, "write", threads=1).value == pytest.approx(4232305.00 * K)
    # "Children see throughput for  2 initial writers \t= 6976343.25 kB/sec"
    assert pick(metrics, "write", threads=2).value == pytest.approx(6976343.25 * K)
    # "Min xfer \t\t\t\t\t=     832.00 kB" (2 processes, initial writers)
    assert pick(metrics, "write:min_xfer", threads=2).value == pytest.approx(832 * K)
    # the "Child[0] xfer count = ..." lines of -C are not results
    assert not [m for m in metrics if "child" in m.name]
    assert len(metrics) == 2 * 2 * 7


# --- single-process tables -------------------------------------------------------------------

AUTO = [
    # (file, first row "65536 4 ...", last row "65536 16384 ..." : write, random_write in kB/s)
    # "65536       4  2257282  3204833  4732517  3922187  3460377  2357245"
    # "65536   16384  4262743  5970829  6608467  7808409  7844732  6398788"
    ("auto_s64m_q16m_i0-1-2_ext4.txt", 2257282, 2357245, 4262743, 6398788),
    # "65536       4  1341877 ... 2318122"; "65536   16384  2311183 ... 6322112"
    ("auto_s64m_q16m_i0-1-2_ext4-nodelalloc.txt", 1341877, 2318122, 2311183, 6322112),
    # "65536       4   472809 ...  349391"; "65536   16384   486619 ...  551232"
    ("auto_s64m_q16m_i0-1-2_ext4-datajournal.txt", 472809, 349391, 486619, 551232),
    # "65536       4  1837753 ... 2691087"; "65536   16384  3636826 ... 5473605"
    ("auto_s64m_q16m_i0-1-2_ext4-j16m.txt", 1837753, 2691087, 3636826, 5473605),
    # "65536       4  2029670 ...   117015"; "65536   16384  2069352 ... 2591163"
    ("auto_s64m_q16m_i0-1-2_btrfs.txt", 2029670, 117015, 2069352, 2591163),
    # via `script` (a pty, "\r\n"): "65536 4 2153307 ... 2416343"; "... 3790802 ... 5352942"
    ("auto_s64m_q16m_i0-1-2_ext4_script-pty.txt", 2153307, 2416343, 3790802, 5352942),
    # with -R: "65536       4  2058350 ... 2750820"; "65536   16384  3639667 ... 6041829"
    ("auto_s64m_q16m_i0-1-2_ext4_excel.txt", 2058350, 2750820, 3639667, 6041829),
    # "65536       4  1258276 ... 2387298"; "65536   16384  2247831 ... 6948940"
    ("auto_s64m_q16m_i0-1-2_ext4-nodelalloc_excel.txt", 1258276, 2387298, 2247831, 6948940),
    # "65536       4  1778410 ... 2701614"; "65536   16384  4295248 ... 6252795"
    ("auto_s64m_q16m_i0-1-2_ext4-j16m_excel.txt", 1778410, 2701614, 4295248, 6252795),
    # "65536       4  2264143 ... 2677013"; "65536   16384  4147860 ... 4770711"
    ("auto_s64m_q16m_i0-1-2_ext4-j256m_excel.txt", 2264143, 2677013, 4147860, 4770711),
    # "65536       4  2555296 ... 2681191"; "65536   16384  6784293 ... 7653396"
    ("auto_s64m_q16m_i0-1-2_xfs-su128k-sw10_excel.txt", 2555296, 2681191, 6784293, 7653396),
]


@pytest.mark.parametrize(("name", "w4", "rw4", "w16m", "rw16m"), AUTO)
def test_auto_table_gives_one_result_per_cell_with_its_sizes(name, w4, rw4, w16m,
                                                             rw16m) -> None:
    metrics = parse(name)
    f = 65536 * K
    assert pick(metrics, "write", file_size=f, record_size=4 * K).value == w4 * K
    assert pick(metrics, "random_write", file_size=f, record_size=4 * K).value == rw4 * K
    assert pick(metrics, "write", file_size=f, record_size=16384 * K).value == w16m * K
    assert pick(metrics, "random_write", file_size=f, record_size=16384 * K).value == rw16m * K
    # 13 record sizes (4 kB .. 16384 kB) x 6 results (-i 0 -i 1 -i 2); no CPU without -+u
    assert len(metrics) == 78
    assert {m.name for m in metrics} == {"write", "rewrite", "read", "reread", "random_read",
                                         "random_write"}


def test_auto_table_middle_row() -> None:
    metrics = parse("auto_s64m_q16m_i0-1-2_ext4_excel.txt")
    # "65536     256   666104  6044088  8439913  8664174  8414078  7586018"
    row = {"write": 666104, "rewrite": 6044088, "read": 8439913, "reread": 8664174,
           "random_read": 8414078, "random_write": 7586018}
    for name, kb in row.items():
        assert pick(metrics, name, record_size=256 * K).value == kb * K


SINGLE = [
    # "524288    1024   466360  5111264  6182940  7144074  7060375  5234189"
    ("direct_r1m_s512m_i0-1-2_ext4.txt", [466360, 5111264, 6182940, 7144074, 7060375, 5234189]),
    # "524288    1024   235508   389252  6980166  5923760  6530992   462310"
    ("direct_r1m_s512m_i0-1-2_ext4-datajournal.txt",
     [235508, 389252, 6980166, 5923760, 6530992, 462310]),
    # "524288    1024  2968673  3659337  4085658  4248451  4436092  3511292"
    ("direct_r1m_s512m_i0-1-2_ext4-j256m.txt",
     [2968673, 3659337, 4085658, 4248451, 4436092, 3511292]),
    # "524288    1024  1225773  1229507  6085546  6045128  6181115   290423"
    ("direct_r1m_s512m_i0-1-2_btrfs.txt", [1225773, 1229507, 6085546, 6045128, 6181115, 290423]),
]


@pytest.mark.parametrize(("name", "row"), SINGLE)
def test_single_row_with_o_direct(name: str, row: list[int]) -> None:
    metrics = parse(name)
    names = ["write", "rewrite", "read", "reread", "random_read", "random_write"]
    expected = [(n, v * K) for n, v in zip(names, row, strict=True)]
    assert [(m.name, m.value) for m in metrics] == expected
    # "Record Size 1024 kB", "File size set to 524288 kB"
    assert all(m.params == {"file_size": 524288 * K, "record_size": 1024 * K} for m in metrics)


def test_long_run_row() -> None:
    metrics = parse("long_direct_r4k_s1g_i0-1_ext4.txt")
    # "1048576       4    90317   145260   169137   148035"
    assert [(m.name, m.value) for m in metrics] == [
        ("write", 90317 * K), ("rewrite", 145260 * K), ("read", 169137 * K),
        ("reread", 148035 * K)]


def test_values_are_placed_by_column_not_by_order() -> None:
    metrics = parse("single_r64k_s8m_i0-3_gaps.txt")
    # "8192      64  4773640  8183217                                      9558162": the third
    # value sits under "bkwd read"
    assert [(m.name, m.value) for m in metrics] == [
        ("write", 4773640 * K), ("rewrite", 8183217 * K), ("backward_read", 9558162 * K)]


def test_all_thirteen_columns_and_cpu_from_the_excel_report() -> None:
    metrics = parse("single_r64k_s1m_all-tests_cpu_excel.txt")
    # "1024      64  4178773  9923546  9161508 13686709 24430194 15080341 12037272    300393
    #   24292018  8542002  5885083  2547723 19719260"
    row = [4178773, 9923546, 9161508, 13686709, 24430194, 15080341, 12037272, 300393, 24292018,
           8542002, 5885083, 2547723, 19719260]
    names = ["write", "rewrite", "read", "reread", "random_read", "random_write",
             "backward_read", "record_rewrite", "stride_read", "fwrite", "frewrite", "fread",
             "freread"]
    throughput = [m for m in metrics if m.unit == "B/s"]
    expected = [(n, v * K) for n, v in zip(names, row, strict=True)]
    assert [(m.name, m.value) for m in throughput] == expected
    cpu = {m.name: m for m in metrics if m.unit == "%"}
    assert set(cpu) == {f"{n}:cpu" for n in names}
    # "Writer CPU utilization report (Zero values should be ignored)" / "1024"     6.45
    assert cpu["write:cpu"].value == pytest.approx(6.45)
    # "Re-Fread CPU utilization report (Zero values should be ignored)" / "1024"    22.54
    assert cpu["freread:cpu"].value == pytest.approx(22.54)
    assert cpu["write:cpu"].params == {"file_size": 1024 * K, "record_size": 64 * K}


def test_auto_over_file_sizes_with_cpu() -> None:
    metrics = parse("auto_n1m-g4m_y64k-q256k_i0-1_cpu_excel.txt")
    # "1024      64  4249053  7883484 11132462 23754601"
    assert pick(metrics, "reread", file_size=1024 * K, record_size=64 * K).value == 23754601 * K
    # "4096     256  5859825 10394367 11833449 12597006"
    assert pick(metrics, "write", file_size=4096 * K, record_size=256 * K).value == 5859825 * K
    # "Writer CPU utilization report ..." row "2048"    19.49  24.33  19.22
    assert pick(metrics, "write:cpu", file_size=2048 * K, record_size=128 * K).value == 24.33
    # 9 rows x 4 results, and as many CPU figures
    assert len([m for m in metrics if m.unit == "B/s"]) == 36
    assert len([m for m in metrics if m.unit == "%"]) == 36


def test_import_without_parameters_reads_everything_from_the_output() -> None:
    for name in ("throughput_t4_r4m_s256m_ext4_excel.txt", "auto_s64m_q16m_i0-1-2_ext4.txt"):
        plan = {"tests": ("write", "read"), "file_size": 256 * MiB, "record_size": 4 * MiB,
                "threads": 4}
        assert parse(name, {}) == parse(name, plan if "t4" in name else {})


def test_excel_report_must_agree_with_the_main_output() -> None:
    good = fixture_text("iozone", "auto_s64m_q16m_i0-1-2_ext4_excel.txt")
    # the Writer report's first value, "2058350", changed in the report only
    bad = good.replace('"65536"   2058350', '"65536"   2058351')
    assert bad != good
    with pytest.raises(ParseError) as info:
        iozone.parse_result(ToolOutput(bad), {})
    assert info.value.tool == "iozone" and info.value.line is not None
    assert "main output" in info.value.expected


# --- errors and killed runs ----------------------------------------------------------------------

def test_usage_error_is_a_tool_error_with_iozones_message() -> None:
    # the whole file: "invalid options: not enough filenames for 4 streams", exit status 13
    with pytest.raises(ToolError, match="not enough filenames for 4 streams"):
        parse("error_t4_only_2_files_ext4.txt", exit_status=13)
    with pytest.raises(ToolError, match="not enough filenames"):  # an import: status unknown
        parse("error_t4_only_2_files_ext4.txt")


@pytest.mark.parametrize(("name", "status", "message"), [
    # "Can not open temporary file /tmp/ioz/cap/missing.tmp for read"; stderr "open: No such
    # file or directory"
    ("error_read_without_file.txt", 58, "Can not open temporary file .* for read; open: No such"),
    # "\tCan not mix throughput mode and auto-mode flags."
    ("error_auto_with_threads.txt", 17, "Can not mix throughput mode and auto-mode flags"),
    # "Can not open temp file: /nonexistent/a" ... "iozone: interrupted" (iozone exits 0)
    ("error_interrupted_missing_dir.txt", 0, "/nonexistent/a.*interrupted"),
    ("killed_throughput_t2_r64k_s512m.txt", 0, "^iozone: interrupted$"),
])
def test_iozone_errors_are_tool_errors(name: str, status: int, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        parse(name, exit_status=status)


def test_a_killed_throughput_run_keeps_its_complete_blocks_as_partial() -> None:
    out = ToolOutput(fixture_text("iozone", "killed_throughput_t2_r64k_s512m.txt"))
    metrics = iozone.parse_partial(out, {})
    assert {m.name.split(":")[0] for m in metrics} == {"write", "rewrite"}
    assert all(m.note == "partial" for m in metrics)
    # "Children see throughput for  2 rewriters \t= 7585745.50 kB/sec"
    assert pick(metrics, "rewrite").value == pytest.approx(7585745.50 * K)
    # "Each process writes a 524288 kByte file in 64 kByte records"
    assert pick(metrics, "rewrite").params == {"threads": 2, "file_size": 524288 * K,
                                               "record_size": 64 * K}


def test_a_killed_auto_run_keeps_every_printed_value() -> None:
    out = ToolOutput(fixture_text("iozone", "killed_auto_s256m_i0-1.txt"))
    metrics = iozone.parse_partial(out, {"auto": True, "file_size": 256 * MiB})
    # three whole rows of 4 results, then "262144      32   845102  7198027"
    assert len(metrics) == 14
    last = [m for m in metrics if m.params == {"file_size": 262144 * K, "record_size": 32 * K}]
    assert [(m.name, m.value, m.note) for m in last] == [
        ("write", 845102 * K, "partial"), ("rewrite", 7198027 * K, "partial")]


def test_partial_of_a_run_whose_children_all_failed_is_empty() -> None:
    out = ToolOutput(fixture_text("iozone", "error_interrupted_missing_dir.txt"))
    assert iozone.parse_partial(out, {}) == []


def test_a_truncated_output_is_a_parse_error_naming_what_is_missing() -> None:
    full = fixture_text("iozone", "throughput_t1_r4m_s256m_ext4_excel.txt")
    cut = full[: full.index("\tChildren see throughput for  1 readers")]
    with pytest.raises(ParseError) as info:
        iozone.parse_result(ToolOutput(cut), {})
    assert info.value.tool == "iozone" and "iozone test complete." in info.value.expected
    # parse_partial keeps the two blocks that were complete
    assert len(iozone.parse_partial(ToolOutput(cut), {})) == 12


def test_a_damaged_block_names_its_line() -> None:
    lines = fixture_text("iozone", "throughput_t1_r4m_s256m_ext4_excel.txt").splitlines()
    number = next(i for i, ln in enumerate(lines, 1) if ln.startswith("\tParent sees"))
    lines[number - 1] = "\tParent sees throughput for  1 initial writers \t=  27599x.89 kB/sec"
    with pytest.raises(ParseError) as info:
        iozone.parse_result(ToolOutput("\n".join(lines)), {})
    assert info.value.line == number and "kB/sec" in info.value.expected


def test_ops_mode_output_is_refused_not_misread() -> None:
    changed = fixture_text("iozone", "direct_r1m_s512m_i0-1-2_ext4.txt").replace(
        "Output is in kBytes/sec", "Output is in operations per second")
    with pytest.raises(ParseError, match="kBytes/sec"):
        iozone.parse_result(ToolOutput(changed), {})


# --- detection and progress ----------------------------------------------------------------------

def test_sniff_knows_iozone_outputs_and_nothing_else() -> None:
    for path in IOZ.glob("*.txt"):
        if path.name.startswith("error_") and "interrupted" not in path.name:
            continue
        if ".stderr." in path.name:
            continue
        assert sniff(fixture_text("iozone", path.name)), path.name
    for path in (FIXTURES / "dd").glob("*.txt"):
        assert not sniff(fixture_text("dd", path.name)), path.name


def test_progress_follows_the_throughput_phases() -> None:
    params = {"tests": ("write", "read"), "threads": 1, "file_size": 256 * MiB,
              "record_size": 4 * MiB}
    parser = iozone.progress_parser(params)
    lines = fixture_text("iozone", "throughput_t1_r4m_s256m_ext4_excel.txt").splitlines()
    updates = [u for ln in lines
               if (u := parser.feed("stdout", ln)) is not None]
    phases = [u.phase for u in updates]
    assert phases == ["write", "rewrite", "read", "reread", "report", "report", "done"]
    done = [u.done_bytes for u in updates]
    assert done == [0, 256 * MiB, 512 * MiB, 768 * MiB, 1024 * MiB, 1024 * MiB, 1024 * MiB]
    assert {u.total_bytes for u in updates} == {1024 * MiB}
    # "Children see throughput for  1 initial writers \t=  348541.47 kB/sec"
    assert updates[1].rate == pytest.approx(348541.47 * K)
    assert planned_bytes(params) == 1024 * MiB


def test_progress_counts_auto_rows() -> None:
    params = {"tests": ("write", "read", "random"), "auto": True, "threads": 0,
              "file_size": 64 * MiB, "max_record_size": 16 * MiB}
    parser = iozone.progress_parser(params)
    updates = [u for ln in fixture_text("iozone", "auto_s64m_q16m_i0-1-2_ext4.txt").splitlines()
               if (u := parser.feed("stdout", ln)) is not None]
    assert updates[0].phase == "file 64m, record 4k"  # after the table header
    assert updates[1].phase == "file 64m, record 8k"  # after the first row
    # each row moves the 64 MiB file 6 times; 13 rows
    assert updates[1].done_bytes == 6 * 64 * MiB
    assert updates[-2].phase == "finishing" and updates[-2].done_bytes == 13 * 6 * 64 * MiB
    assert updates[-1].phase == "done"
    assert updates[0].total_bytes == 13 * 6 * 64 * MiB == planned_bytes(params)


def test_progress_reports_errors() -> None:
    parser = iozone.progress_parser({})
    u = parser.feed("stdout", "Can not open temp file: /nonexistent/a")
    assert u is not None and u.phase == "error"
    assert parser.feed("stdout", "\tFile stride size set to 17 * record size.") is None


def test_replayed_throughput_run_gives_phases_through_the_real_pipe(tmp_path: Path) -> None:
    """Replay a recorded run's stdout chunks at 40x through a real process and pipe."""
    trace = IOZ / "throughput_t1_r4m_s256m_ext4_excel.trace.jsonl"
    script = tmp_path / "replay.py"
    script.write_text(
        "import json, sys, time\n"
        f"chunks = [json.loads(l) for l in open({str(trace)!r})]\n"
        "start = time.monotonic()\n"
        "for c in chunks:\n"
        "    if c['fd'] != 'stdout': continue\n"
        "    time.sleep(max(0, c['t'] / 40 - (time.monotonic() - start)))\n"
        "    sys.stdout.write(c['data']); sys.stdout.flush()\n")
    parser = iozone.progress_parser({"threads": 1, "file_size": 256 * MiB})
    phases = []
    with ToolProcess([sys.executable, str(script)]) as p:
        p.start()
        while not p.poll():
            for line in p.read(0.5):
                u = parser.feed(line.stream, line.text)
                if u is not None:
                    phases.append(u.phase)
        stdout = p.output("stdout")
    assert phases[:4] == ["write", "rewrite", "read", "reread"] and phases[-1] == "done"
    assert iozone.parse_result(ToolOutput(stdout), {}) == parse(
        "throughput_t1_r4m_s256m_ext4_excel.txt")
    assert any(json.loads(x)["fd"] == "stdout" for x in trace.read_text().splitlines())


# --- argv, checks, registry ----------------------------------------------------------------------

TARGET = RunTarget(directory="/mnt/x", tag="c1r0")


def test_throughput_argv_uses_kb_and_one_file_per_process() -> None:
    cmd = iozone.build_command({"tests": ("write", "read"), "record_size": 4 * MiB,
                                "file_size": 256 * MiB, "threads": 4, "excel": True}, TARGET)
    files = tuple(f"/mnt/x/disklab-c1r0-{i}.ioz" for i in range(4))
    assert cmd.argv == ("iozone", "-r", "4096k", "-s", "262144k", "-i", "0", "-i", "1", "-R",
                        "-t", "4", "-F", *files)
    assert cmd.files == files and cmd.cwd == "/mnt/x"
    assert cmd.planned_bytes == 4 * 4 * 256 * MiB  # 4 phases x 4 files


def test_single_process_argv_with_every_flag() -> None:
    cmd = iozone.build_command({"tests": ("read", "write", "random"), "record_size": 64 * K,
                                "file_size": 8 * MiB, "threads": 0, "sync": True,
                                "fsync": True, "direct": True, "include_close": True,
                                "cpu": True, "keep_files": True, "excel": False}, TARGET)
    assert cmd.argv == ("iozone", "-r", "64k", "-s", "8192k", "-i", "0", "-i", "1", "-i", "2",
                        "-o", "-e", "-I", "-c", "-+u", "-w", "-f", "/mnt/x/disklab-c1r0.ioz")
    assert cmd.files == ("/mnt/x/disklab-c1r0.ioz",)
    assert cmd.planned_bytes == 6 * 8 * MiB


def test_auto_argv_passes_ranges_not_record_size() -> None:
    params = {"auto": True, "threads": 0, "tests": ("write", "read"), "record_size": 4 * MiB,
              "min_file_size": MiB, "max_file_size": 4 * MiB, "min_record_size": 64 * K,
              "max_record_size": 256 * K, "excel": True, "cpu": True}
    cmd = iozone.build_command(params, TARGET)
    assert cmd.argv == ("iozone", "-a", "-n", "1024k", "-g", "4096k", "-y", "64k", "-q",
                        "256k", "-i", "0", "-i", "1", "-+u", "-R", "-f",
                        "/mnt/x/disklab-c1r0.ioz")
    # the captured run of this command printed 9 rows: 1, 2 and 4 MiB x 64, 128, 256 kB
    assert cmd.planned_bytes == 4 * (1 + 2 + 4) * MiB * 3


def test_auto_rows_follow_iozones_large_file_rule() -> None:
    # iozone -a -n 16m -g 64m -i 0 printed records 4k..16m for the 16 MiB file, but 64k..16m
    # for 32 and 64 MiB (13 + 9 + 9 rows), 2 results each
    params = {"auto": True, "tests": ("write",), "min_file_size": 16 * MiB,
              "max_file_size": 64 * MiB}
    assert planned_bytes(params) == 2 * (13 * 16 + 9 * 32 + 9 * 64) * MiB


@pytest.mark.parametrize(("params", "key", "words"), [
    ({"threads": 1}, "file_size", "missing"),
    ({"file_size": MiB, "record_size": 2 * MiB}, "record_size", "above file_size"),
    ({"file_size": 1000, "record_size": 4 * K}, "file_size", "KiB"),
    ({"auto": True, "threads": 1}, "threads", "Can not mix"),
    ({"file_size": MiB, "max_record_size": MiB}, "max_record_size", "auto mode only"),
    ({"auto": True, "threads": 0, "file_size": MiB, "max_file_size": 4 * MiB}, "file_size",
     "not both"),
    ({"file_size": MiB, "tests": ("read",)}, "tests", "add 'write'"),
    ({"file_size": MiB, "threads": 0, "tests": ("write", "pread")}, "tests", "throughput"),
    ({"file_size": MiB, "threads": 2, "tests": ("write", "record_rewrite")}, "tests",
     "threads = 0"),
])
def test_check_explains_each_impossible_case(params: dict, key: str, words: str) -> None:
    full = {"tests": ("write", "read"), "record_size": 4 * K, "threads": 1, "auto": False,
            **params}
    problems = iozone.check(full)
    assert any(k == key and words in msg for k, msg in problems), problems


def test_a_sound_case_has_no_problems() -> None:
    assert iozone.check({"tests": ("write", "read", "random"), "record_size": 4 * MiB,
                         "file_size": 256 * MiB, "threads": 4, "auto": False}) == []


def test_registry_and_version() -> None:
    assert isinstance(get_adapter("iozone"), IozoneAdapter)
    assert iozone.parse_version("        Version $Revision: 3.489 $\n") == "3.489"
    assert iozone.version_argv() == ("iozone", "-v")


def test_a_value_wider_than_its_column_is_placed_by_the_tests_that_ran() -> None:
    # "8192      64  4773640  8183217 ... 9558162" with the write figure made 2 digits wider
    # (a re-spaced or hand-edited file): the values no longer sit under their headings, so they
    # are placed in the order of the tests of "Command line used: iozone -s 8m -r 64k -i 0 -i 3"
    wide = fixture_text("iozone", "single_r64k_s8m_i0-3_gaps.txt").replace("  4773640",
                                                                          "  104773640")
    metrics = iozone.parse_result(ToolOutput(wide), {})
    assert [(m.name, m.value) for m in metrics] == [
        ("write", 104773640 * K), ("rewrite", 8183217 * K), ("backward_read", 9558162 * K)]
    # without the command line (and without parameters) there is no way to tell: refused
    anonymous = wide.replace("Command line used:", "Command line was:")
    with pytest.raises(ParseError, match="column headings"):
        iozone.parse_result(ToolOutput(anonymous), {})
    # the plan's tests say it as well as the command line does
    assert iozone.parse_result(ToolOutput(anonymous), {"tests": ("write", "backward")}) == [
        Metric(m.name, m.value, m.unit, m.note, m.params) for m in metrics]


def test_a_cpu_figure_of_zero_is_not_a_measurement() -> None:
    # "Writer CPU utilization report (Zero values should be ignored)" / "1024"     6.45
    zero = fixture_text("iozone", "single_r64k_s1m_all-tests_cpu_excel.txt").replace(
        '"1024"     6.45', '"1024"     0.00')
    (m,) = [m for m in iozone.parse_result(ToolOutput(zero), {}) if m.name == "write:cpu"]
    assert m.value is None and "not measured" in (m.note or "")


def test_a_duplicated_row_is_refused() -> None:
    lines = fixture_text("iozone", "direct_r1m_s512m_i0-1-2_ext4.txt").split("\n")
    i = next(i for i, ln in enumerate(lines) if ln.strip().startswith("524288"))
    doubled = "\n".join([*lines[: i + 1], lines[i], *lines[i + 1:]])
    with pytest.raises(ParseError, match="each result once") as info:
        iozone.parse_result(ToolOutput(doubled), {})
    assert info.value.line == i + 2


def test_degenerate_per_process_figures_are_flagged_not_passed_on_as_a_spread() -> None:
    """min = max > avg, as iozone printed it for two 4 MiB writers: no two processes have
    that; the per-process figures carry a note saying why they are not a spread."""
    out = ToolOutput(fixture_text("iozone", "throughput_t2_r1m_s4m_degenerate.txt"), "",
                     exit_status=0)
    metrics = {m.name: m for m in IozoneAdapter().parse_result(
        out, {"threads": 2, "file_size": 4 << 20, "record_size": 1 << 20, "tests": ("write",)})}
    for name in ("write:min_proc", "write:max_proc", "write:avg_proc"):
        assert metrics[name].note is not None and "min = max > avg" in metrics[name].note
    assert metrics["write"].note is None  # the children's total is a figure
    # a block whose figures can be true (min < avg < max) is not flagged
    good = ToolOutput(fixture_text("iozone", "throughput_r64k_s2m_t2_i0-10.txt"), "",
                      exit_status=0)
    parsed = {m.name: m for m in IozoneAdapter().parse_result(
        good, {"threads": 2, "file_size": 2 << 20, "record_size": 64 << 10})}
    sane = [n.removesuffix(":min_proc") for n, m in parsed.items() if n.endswith(":min_proc")
            and 0 < (m.value or 0) < (parsed[n.replace("min", "max")].value or 0)]
    assert sane  # the fixture has such blocks
    assert all(parsed[f"{b}:{k}"].note is None for b in sane
               for k in ("min_proc", "max_proc", "avg_proc"))
