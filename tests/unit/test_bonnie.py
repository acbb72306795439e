"""bonnie++ adapter: the argv a case runs, and the numbers a user reads in bonnie++'s output.

Expected numbers are read by hand from the fixture files (the line is quoted beside them) and
written in bonnie++'s own unit: 2305 * KiB for a CSV putc field '2305' (K/sec), 174 * MiB for a
table cell '174m', 6211 * US for a latency '6211us'.
"""

from __future__ import annotations

import json
import re

import pytest

from disklab.core.importing import read_output
from disklab.core.tools import get_adapter
from disklab.core.tools.base import RunTarget, ToolOutput
from disklab.core.tools.bonnie import BonnieAdapter, sniff
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import Metric
from disklab.core.vocab.units import GiB, KiB, MiB
from tests.helpers import FIXTURES, fixture_text

BONNIE = FIXTURES / "bonnie"
US = 1000.0
MS = 1_000_000.0
TOO_FAST = "too fast to measure"
bonnie = BonnieAdapter()


def parse(name: str, params: dict | None = None) -> list[Metric]:
    return bonnie.parse_result(ToolOutput(stdout=fixture_text("bonnie", name)), params or {})


def values(metrics: list[Metric]) -> dict[str, float | None]:
    return {m.name: m.value for m in metrics}


# ---------------------------------------------------------------------------------------------
# argv

ROOT = RunTarget(directory="/mnt/t", tag="c1-r1", is_root=True)


def test_registered_under_its_plan_name() -> None:
    assert isinstance(get_adapter("bonnie"), BonnieAdapter)


def test_argv_as_root_with_default_ram() -> None:
    cmd = bonnie.build_command({"size": GiB, "ram": 0, "files": 16, "fast": False,
                                "label": "disklab", "user": "root"}, ROOT)
    # no -q: phases on stderr while it runs, and the CSV line still ends stdout
    assert cmd.argv == ("bonnie++", "-d", "/mnt/t", "-s", "1024", "-r", "512", "-n", "16",
                        "-m", "disklab", "-u", "root")
    assert cmd.cwd == "/mnt/t"
    assert cmd.files == ()  # bonnie++ removes its own Bonnie.<pid> file and directory
    # bytes moved: 3 MiB per-char write, 1 GiB block write, 2 GiB rewrite (read + write),
    # 3 MiB per-char read, 1 GiB block read
    assert cmd.planned_bytes == 6 * MiB + 4 * GiB


def test_argv_not_root_fast_no_files_and_given_ram() -> None:
    target = RunTarget(directory="/mnt/u/t", tag="x", is_root=False)
    cmd = bonnie.build_command({"size": 256 * MiB, "ram": 64 * MiB, "files": 0, "fast": True,
                                "label": "box"}, target)
    assert cmd.argv == ("bonnie++", "-d", "/mnt/u/t", "-s", "256", "-r", "64", "-n", "0",
                        "-m", "box", "-f")
    assert cmd.planned_bytes == 4 * 256 * MiB


def test_check() -> None:
    assert [k for k, _m in bonnie.check({"size": GiB + 1})] == ["size"]
    assert [k for k, _m in bonnie.check({"size": 256 * MiB, "ram": 256 * MiB})] == ["ram"]
    assert [k for k, _m in bonnie.check({"size": 0, "files": 0})] == ["size"]
    assert bonnie.check({"size": GiB, "ram": 512 * MiB, "files": 16}) == []


def test_version_from_the_usage_text() -> None:
    assert bonnie.version_argv() == ("bonnie++", "-h")
    # "Version: 2.00a" ends the usage text (error_root_without_u.stderr.txt)
    usage = fixture_text("bonnie", "error_root_without_u.stderr.txt")
    assert bonnie.parse_version(usage) == "2.00a"


# ---------------------------------------------------------------------------------------------
# CSV (format 1.98): -q output, and the line that ends a normal run's stdout

# (fixture, putc, putc_cpu, put_block, rewrite, getc, seeks, putc_latency, put_block_latency)
CSV = [
    # "1.98,2.00a,vm,1,1795298068,1G,,8192,5,833,87,219218,28,515917,33,5327,99,+++++,+++,
    #  +++++,+++,16,,,,,+++++,...,11008us,1492us,1915us,5681us,414us,3353us,..."
    ("s1g_r512_n16_quiet_btrfs.csv", 833, 87, 219218, 515917, 5327, None, 11008, 1492),
    # "...,5,1565,99,190700,43,381844,24,4773,99,+++++,+++,10501,35,16,...,6698us,146ms,..."
    ("s1g_r512_n16_quiet_ext4-datajournal.csv", 1565, 99, 190700, 381844, 4773, 10501, 6698,
     146_000),
    # "...,5,3541,93,229923,31,1171264,33,5482,99,+++++,+++,+++++,+++,...,2536us,3993us,..."
    ("s1g_r512_n16_quiet_ext4-j16m.csv", 3541, 93, 229923, 1171264, 5482, None, 2536, 3993),
    # "...,5,3304,89,219262,30,1049500,33,4902,99,+++++,+++,+++++,+++,...,2881us,404us,..."
    ("s1g_r512_n16_quiet_ext4-j256m.csv", 3304, 89, 219262, 1049500, 4902, None, 2881, 404),
    # "...,5,1423,86,211760,37,1091662,32,5435,99,+++++,+++,+++++,+++,...,45369us,3484us,..."
    ("s1g_r512_n16_quiet_ext4-nodelalloc.csv", 1423, 86, 211760, 1091662, 5435, None, 45369,
     3484),
    # "...,5,2305,62,178478,46,930923,28,5421,99,+++++,+++,+++++,+++,...,6211us,1513us,..."
    ("s1g_r512_n16_quiet_ext4.csv", 2305, 62, 178478, 930923, 5421, None, 6211, 1513),
    # "...,5,2108,85,843464,26,1147197,33,4912,99,+++++,+++,+++++,+++,...,3460us,293us,..."
    ("s1g_r512_n16_quiet_xfs-su128k-sw10.csv", 2108, 85, 843464, 1147197, 4912, None, 3460,
     293),
    # normal runs: the same fields in the CSV line after the table
    # "...,5,991,99,732552,50,549242,33,4771,99,+++++,+++,+++++,+++,...,12264us,258us,..."
    ("s1g_r512_n16_btrfs.txt", 991, 99, 732552, 549242, 4771, None, 12264, 258),
    # "...,5,1545,99,272107,44,335973,22,5366,99,+++++,+++,+++++,+++,...,6805us,118ms,..."
    ("s1g_r512_n16_ext4-datajournal.txt", 1545, 99, 272107, 335973, 5366, None, 6805,
     118_000),
    # "...,5,3718,99,295546,29,1194582,34,5435,99,+++++,+++,+++++,+++,...,3124us,451us,..."
    ("s1g_r512_n16_ext4-j16m.txt", 3718, 99, 295546, 1194582, 5435, None, 3124, 451),
    # "...,5,3679,99,398592,14,1163570,34,5178,99,+++++,+++,+++++,+++,...,7429us,174us,..."
    ("s1g_r512_n16_ext4-j256m.txt", 3679, 99, 398592, 1163570, 5178, None, 7429, 174),
    # "...,5,1686,96,253206,38,1070416,31,5356,97,+++++,+++,+++++,+++,...,39963us,2137us,..."
    ("s1g_r512_n16_ext4-nodelalloc.txt", 1686, 96, 253206, 1070416, 5356, None, 39963, 2137),
    # "...,5,3640,97,270725,24,925741,26,5424,99,+++++,+++,+++++,+++,...,2950us,13560us,..."
    ("s1g_r512_n16_ext4.txt", 3640, 97, 270725, 925741, 5424, None, 2950, 13560),
    # pty capture, '\r\n' line ends:
    # "...,5,3720,98,249936,16,918786,29,5352,99,+++++,+++,+++++,+++,...,3470us,7801us,..."
    ("s1g_r512_n16_ext4_stdout-pty.txt", 3720, 98, 249936, 918786, 5352, None, 3470, 7801),
    # "...,5,2526,99,1049883,30,1135467,32,4949,99,+++++,+++,+++++,+++,...,5183us,250us,..."
    ("s1g_r512_n16_xfs-su128k-sw10.txt", 2526, 99, 1049883, 1135467, 4949, None, 5183, 250),
]


@pytest.mark.parametrize(("name", "putc", "cpu", "block", "rewrite", "getc", "seeks", "lat0",
                          "lat1"), CSV, ids=[row[0] for row in CSV])
def test_csv(name: str, putc: int, cpu: int, block: int, rewrite: int, getc: int,
             seeks: int | None, lat0: float, lat1: float) -> None:
    metrics = parse(name)
    got = values(metrics)
    assert got["char_write"] == putc * KiB
    assert got["char_write:cpu"] == cpu
    assert got["block_write"] == block * KiB
    assert got["rewrite"] == rewrite * KiB
    assert got["char_read"] == getc * KiB
    assert got["char_write:latency"] == lat0 * US
    assert got["block_write:latency"] == lat1 * US
    assert got["random_seeks"] == seeks
    # every run here read its blocks too fast to measure: "+++++,+++"
    fast = {m.name: m for m in metrics}
    assert fast["block_read"].value is None and fast["block_read"].note == TOO_FAST
    assert fast["block_read:cpu"].value is None and fast["block_read:cpu"].note == TOO_FAST
    assert fast["block_read"].unit == "B/s" and fast["random_seeks"].unit == "op/s"
    # import: "vm" and "1G" and 16 files from the CSV
    assert metrics[0].params == {"size": GiB, "files": 16, "label": "vm"}


def test_csv_file_tests_and_their_latencies() -> None:
    got = values(parse("s1g_r512_n16_ext4.txt"))
    # "...,16,,,,,24770,15,+++++,+++,...,188us,994us,23580us,3408us,106us,1801us"
    assert got["seq_create"] == 24770
    assert got["seq_create:cpu"] == 15
    assert got["seq_stat"] is None  # "+++++"
    assert [got[f"{t}:latency"] for t in ("seq_create", "seq_stat", "seq_delete",
                                           "random_create", "random_stat", "random_delete")] \
        == [188 * US, 994 * US, 23580 * US, 3408 * US, 106 * US, 1801 * US]
    # "...,20664,13,+++++,+++,..." in the pty capture
    assert values(parse("s1g_r512_n16_ext4_stdout-pty.txt"))["seq_create"] == 20664


def test_csv_seeks_measured() -> None:
    got = values(parse("s1g_r512_n16_quiet_ext4-datajournal.csv"))
    # "...,+++++,+++,10501,35,16,..." and seeks latency "7879us"
    assert (got["random_seeks"], got["random_seeks:cpu"]) == (10501, 35)
    assert got["random_seeks:latency"] == 7879 * US
    assert got["block_write:latency"] == 146 * MS  # "146ms"


def test_runner_params_are_not_repeated_on_metrics() -> None:
    run = parse("s1g_r512_n16_ext4.txt", {"size": GiB, "files": 16})
    assert all(m.params is None for m in run)


def test_skipped_tests_are_left_out_never_zero() -> None:
    # -f: "1.98,2.00a,disklab,1,1795367795,64M,,8192,5,,,+++++,+++,+++++,+++,,,+++++,+++,..."
    fast = values(parse("disklab_s64m_r32_n1_fast.txt"))
    assert "char_write" not in fast and "char_read" not in fast
    assert "char_write:latency" not in fast  # ",,180us,230us,,154us,12089us,..."
    assert fast["block_write"] is None and fast["block_write:latency"] == 180 * US
    assert fast["random_delete:latency"] == 119 * US
    # -n 0: "...,+++++,+++,,,,,,,,,,,,,,,,,,,1291us,752us,,245us,7990us,,,,,,"
    no_files = values(parse("disklab_s64m_r32_n0_fast.txt"))
    assert not any(k.startswith(("seq_", "random_c", "random_st", "random_d")) for k in no_files)
    assert no_files["random_seeks:latency"] == 7990 * US
    # -s 0: "1.98,2.00a,disklab,1,1795367860,,,,,,,,,,,,,,,,,1,,,,,+++++,+++,..."
    only_files = parse("disklab_s0_n1_quiet.csv")
    assert {m.name.split(":")[0] for m in only_files} == {
        "seq_create", "seq_stat", "seq_delete", "random_create", "random_stat", "random_delete"}
    assert values(only_files)["seq_create:latency"] == 4534 * US
    assert only_files[0].params == {"files": 1, "label": "disklab"}


def test_several_csv_lines_are_runs() -> None:
    line = fixture_text("bonnie", "s1g_r512_n16_quiet_ext4.csv").strip()
    other = fixture_text("bonnie", "s1g_r512_n16_quiet_btrfs.csv").strip()
    metrics = bonnie.parse_result(ToolOutput(stdout=f"{line}\n{other}\n"), {})
    first = [m for m in metrics if m.params and m.params.get("run") == 1]
    second = [m for m in metrics if m.params and m.params.get("run") == 2]
    assert values(first)["char_write"] == 2305 * KiB  # "...,5,2305,62,..."
    assert values(second)["char_write"] == 833 * KiB  # "...,5,833,87,..."


def test_older_csv_formats_by_their_field_positions() -> None:
    # bonnie++ 1.97 (no seeks and seek_proc_count after the size) and 1.96 (no concurrency
    # and seed either), written from the 1.98 line of s1g_r512_n16_quiet_ext4.csv
    fields = fixture_text("bonnie", "s1g_r512_n16_quiet_ext4.csv").strip().split(",")
    v197 = ["1.97", "1.97", *fields[2:7], *fields[9:]]
    v196 = ["1.96", "1.96", fields[2], *fields[5:7], *fields[9:]]
    for line in (",".join(v197), ",".join(v196)):
        got = values(bonnie.parse_result(ToolOutput(stdout=line + "\n"), {}))
        assert got["char_write"] == 2305 * KiB
        assert got["rewrite"] == 930923 * KiB
        assert got["random_delete:latency"] == 2357 * US


# ---------------------------------------------------------------------------------------------
# the text table: -q puts it on stderr; bon_csv2txt renders a CSV as one

# (fixture, putc "k", cpu, put_block, rewrite, getc "k", putc latency, last file latency)
TABLES = [
    # "vm               1G  833k  87  214m  28  504m  33 5327k  99 +++++ +++ +++++ +++"
    # "Latency             11008us    1492us    1915us    5681us     414us    3353us"
    # "Latency               402us     158us    1104us    3849us      87us    2114us"
    ("s1g_r512_n16_quiet_btrfs.stderr.txt", 833 * KiB, 87, 214 * MiB, 504 * MiB, 5327 * KiB,
     11008 * US, 2114 * US),
    # "vm               1G 1565k  99  186m  43  373m  24 4773k  99 +++++ +++ 10501  35"
    # "Latency              6698us     146ms   55139us    3408us     220us    7879us"
    # "Latency               129us     287us    3373us     144us     104us    2320us"
    ("s1g_r512_n16_quiet_ext4-datajournal.stderr.txt", 1565 * KiB, 99, 186 * MiB, 373 * MiB,
     4773 * KiB, 6698 * US, 2320 * US),
    # "vm               1G 3541k  93  225m  31  1.1g  33 5482k  99 +++++ +++ +++++ +++"
    # "Latency              2536us    3993us    1259us    1681us     152us    2356us"
    # "Latency               145us     283us    2333us     154us     128us    2439us"
    ("s1g_r512_n16_quiet_ext4-j16m.stderr.txt", 3541 * KiB, 93, 225 * MiB, 1.1 * GiB,
     5482 * KiB, 2536 * US, 2439 * US),
    # "vm               1G 3304k  89  214m  30  1.0g  33 4902k  99 +++++ +++ +++++ +++"
    # "Latency              2881us     404us    4077us    2683us     251us   12212us"
    # "Latency               140us     267us    2040us    4462us     370us    3087us"
    ("s1g_r512_n16_quiet_ext4-j256m.stderr.txt", 3304 * KiB, 89, 214 * MiB, 1.0 * GiB,
     4902 * KiB, 2881 * US, 3087 * US),
    # "vm               1G 1423k  86  207m  37  1.0g  32 5435k  99 +++++ +++ +++++ +++"
    # "Latency             45369us    3484us    1440us    3035us     116us    4315us"
    # "Latency               363us     324us    2030us    4092us     114us    1579us"
    ("s1g_r512_n16_quiet_ext4-nodelalloc.stderr.txt", 1423 * KiB, 86, 207 * MiB, 1.0 * GiB,
     5435 * KiB, 45369 * US, 1579 * US),
    # "vm               1G 2305k  62  174m  46  909m  28 5421k  99 +++++ +++ +++++ +++"
    # "Latency              6211us    1513us    2469us    1842us     179us   16009us"
    # "Latency               222us     230us    2533us     881us     105us    2357us"
    ("s1g_r512_n16_quiet_ext4.stderr.txt", 2305 * KiB, 62, 174 * MiB, 909 * MiB, 5421 * KiB,
     6211 * US, 2357 * US),
    # "vm               1G 2108k  85  824m  26  1.1g  33 4912k  99 +++++ +++ +++++ +++"
    # "Latency              3460us     293us     205us    1798us    1001us    4858us"
    # "Latency               195us     108us     926us     156us      71us    2365us"
    ("s1g_r512_n16_quiet_xfs-su128k-sw10.stderr.txt", 2108 * KiB, 85, 824 * MiB, 1.1 * GiB,
     4912 * KiB, 3460 * US, 2365 * US),
    # bon_csv2txt: "vm       1G::8192:5  833k  87  214m  28  504m  33 5327k  99    0k +++ ..."
    ("bon_csv2txt_of_quiet_csv_btrfs.txt", 833 * KiB, 87, 214 * MiB, 504 * MiB, 5327 * KiB,
     11008 * US, 2114 * US),
    # "vm       1G::8192:5 1565k  99  186m  43  373m  24 4773k  99    0k +++ 10501  35"
    ("bon_csv2txt_of_quiet_csv_ext4-datajournal.txt", 1565 * KiB, 99, 186 * MiB, 373 * MiB,
     4773 * KiB, 6698 * US, 2320 * US),
    # "vm       1G::8192:5 3541k  93  225m  31  1.1g  33 5482k  99    0k +++ +++++ +++"
    ("bon_csv2txt_of_quiet_csv_ext4-j16m.txt", 3541 * KiB, 93, 225 * MiB, 1.1 * GiB,
     5482 * KiB, 2536 * US, 2439 * US),
    # "vm       1G::8192:5 3304k  89  214m  30  1.0g  33 4902k  99    0k +++ +++++ +++"
    ("bon_csv2txt_of_quiet_csv_ext4-j256m.txt", 3304 * KiB, 89, 214 * MiB, 1.0 * GiB,
     4902 * KiB, 2881 * US, 3087 * US),
    # "vm       1G::8192:5 1423k  86  207m  37  1.0g  32 5435k  99    0k +++ +++++ +++"
    ("bon_csv2txt_of_quiet_csv_ext4-nodelalloc.txt", 1423 * KiB, 86, 207 * MiB, 1.0 * GiB,
     5435 * KiB, 45369 * US, 1579 * US),
    # "vm       1G::8192:5 2305k  62  174m  46  909m  28 5421k  99    0k +++ +++++ +++"
    ("bon_csv2txt_of_quiet_csv_ext4.txt", 2305 * KiB, 62, 174 * MiB, 909 * MiB, 5421 * KiB,
     6211 * US, 2357 * US),
    # "vm       1G::8192:5 2108k  85  824m  26  1.1g  33 4912k  99    0k +++ +++++ +++"
    ("bon_csv2txt_of_quiet_csv_xfs-su128k-sw10.txt", 2108 * KiB, 85, 824 * MiB, 1.1 * GiB,
     4912 * KiB, 3460 * US, 2365 * US),
]


@pytest.mark.parametrize(("name", "putc", "cpu", "block", "rewrite", "getc", "lat0", "dlat"),
                         TABLES, ids=[row[0] for row in TABLES])
def test_text_table(name: str, putc: float, cpu: int, block: float, rewrite: float,
                    getc: float, lat0: float, dlat: float) -> None:
    metrics = parse(name)
    got = values(metrics)
    assert got["char_write"] == putc
    assert got["char_write:cpu"] == cpu
    assert got["block_write"] == pytest.approx(block)
    assert got["rewrite"] == pytest.approx(rewrite)
    assert got["char_read"] == getc
    assert got["char_write:latency"] == lat0
    assert got["random_delete:latency"] == dlat
    by = {m.name: m for m in metrics}
    # the table rounds: '174m' is 174 MiB/s give or take half a MiB/s
    assert by["block_write"].note == "rounded as printed in the text table"
    # '+++++ +++', and bon_csv2txt's '0k +++' for the same pair: too fast, not 0
    assert by["block_read"].value is None and by["block_read"].note == TOO_FAST
    assert by["seq_create"].value is None and by["seq_create"].note == TOO_FAST
    assert metrics[0].params == {"size": GiB, "label": "vm", "files": 16}


def test_text_table_file_rates_of_bonnie_2_are_not_trusted() -> None:
    # bonnie++ 2.00a prints file-test rates with printf("%5d", double): its table says
    # "                 16 16384  15 +++++ +++ ..." where its own CSV line says "24770,15"
    table = fixture_text("bonnie", "s1g_r512_n16_ext4.txt").split("\n1.98,")[0]
    by = {m.name: m for m in bonnie.parse_result(ToolOutput(stdout=table), {})}
    assert by["seq_create"].value is None
    assert "CSV" in (by["seq_create"].note or "")
    assert by["seq_create:cpu"].value == 15
    assert by["char_write"].value == 3640 * KiB  # "vm               1G 3640k  97  264m  24 ..."


def test_text_table_file_tests_only() -> None:
    # "                  1 +++++ +++ +++++ +++ ..." and "Latency  4534us  43us  198us ..."
    got = values(parse("disklab_s0_n1_quiet.stderr.txt"))
    assert got["seq_create"] is None
    assert got["seq_create:latency"] == 4534 * US and got["random_delete:latency"] == 1953 * US


# ---------------------------------------------------------------------------------------------
# errors


def test_root_without_u_is_a_tool_error_with_bonnies_message() -> None:
    out = ToolOutput(stdout="", stderr=fixture_text("bonnie", "error_root_without_u.stderr.txt"),
                     exit_status=1)
    with pytest.raises(ToolError, match='You must use the "-u" switch when running as root'):
        bonnie.parse_result(out, {"size": GiB})


def test_phase_lines_alone_are_not_a_result() -> None:
    with pytest.raises(ParseError) as e:
        parse("s1g_r512_n16_ext4.stderr.txt")
    assert e.value.tool == "bonnie" and "CSV" in e.value.expected


def test_a_killed_run_without_results_is_a_tool_error() -> None:
    out = ToolOutput(stdout="", stderr=fixture_text("bonnie", "s1g_r512_n16_ext4.stderr.txt")[:60],
                     exit_status=-15)
    with pytest.raises(ToolError):
        bonnie.parse_result(out, {"size": GiB})
    assert bonnie.parse_partial(out, {"size": GiB}) == []


# ---------------------------------------------------------------------------------------------
# live progress: phase lines on stderr

FULL = {"size": GiB, "files": 16, "fast": False}
ORDER = ["char_write", "block_write", "rewrite", "char_read", "block_read", "random_seeks",
         "seq_create", "seq_stat", "seq_delete", "random_create", "random_stat",
         "random_delete", "finishing"]
PHASE_FILES = ["s1g_r512_n16_btrfs.stderr.txt", "s1g_r512_n16_ext4-datajournal.stderr.txt",
               "s1g_r512_n16_ext4-j16m.stderr.txt", "s1g_r512_n16_ext4-j256m.stderr.txt",
               "s1g_r512_n16_ext4-nodelalloc.stderr.txt", "s1g_r512_n16_ext4.stderr.txt",
               "s1g_r512_n16_ext4_stdout-pty.stderr.txt",
               "s1g_r512_n16_xfs-su128k-sw10.stderr.txt"]


@pytest.mark.parametrize("name", PHASE_FILES)
def test_phases_from_complete_lines(name: str) -> None:
    # "Using uid:0, gid:0." / "Writing a byte at a time...done" / ... /
    # "start 'em...done...done...done...done...done..." / ... /
    # "Delete files in random order...done."
    parser = bonnie.progress_parser(FULL)
    ups = [u for line in fixture_text("bonnie", name).splitlines()
           if (u := parser.feed("stderr", line))]
    assert [u.phase for u in ups] == ORDER
    assert ups[1].message == "Writing intelligently"
    done = [u.done_bytes for u in ups]
    assert done[:7] == [0, 3 * MiB, 3 * MiB + GiB, 3 * MiB + 3 * GiB, 6 * MiB + 3 * GiB,
                        6 * MiB + 4 * GiB, 6 * MiB + 4 * GiB]
    assert all(u.total_bytes == 6 * MiB + 4 * GiB for u in ups)


def test_phases_of_a_fast_run_skip_per_char() -> None:
    # "Writing intelligently...done" follows "Using uid:0, gid:0." directly with -f
    parser = bonnie.progress_parser({"size": 64 * MiB, "files": 1, "fast": True})
    lines = fixture_text("bonnie", "disklab_s64m_r32_n1_fast.stderr.txt").splitlines()
    ups = [u for line in lines if (u := parser.feed("stderr", line))]
    assert [u.phase for u in ups] == ORDER[1:3] + ORDER[4:]
    parser = bonnie.progress_parser({"size": 64 * MiB, "files": 0, "fast": True})
    lines = fixture_text("bonnie", "disklab_s64m_r32_n0_fast.stderr.txt").splitlines()
    ups = [u for line in lines if (u := parser.feed("stderr", line))]
    assert [u.phase for u in ups][-1] == "finishing"


def test_a_phase_line_still_open_names_its_phase() -> None:
    parser = bonnie.progress_parser(FULL)
    up = parser.feed("stderr", "Rewriting...")
    assert up is not None and up.phase == "rewrite" and up.done_bytes == 3 * MiB + GiB
    assert parser.feed("stderr", "Version 2.00a") is None


TRACES = ["s1g_r512_n16_ext4.trace.jsonl", "s1g_r512_n16_ext4_stdout-pty.trace.jsonl"]


@pytest.mark.parametrize("trace", TRACES)
def test_phases_replayed_at_the_tools_own_chunking(trace: str) -> None:
    """Lines as the runner passes them: only complete ones. 'Writing a byte at a time...'
    (t=0.0018) is finished by 'done' at t=0.8463; that line announces the block write."""
    rest = {"stdout": "", "stderr": ""}
    parser = bonnie.progress_parser(FULL)
    seen: list[tuple[float, str]] = []
    for raw in fixture_text("bonnie", trace).splitlines():
        chunk = json.loads(raw)
        fd = "stdout" if chunk["fd"] == "tty" else chunk["fd"]
        parts = re.split(r"\r\n|\r|\n", rest[fd] + chunk["data"])
        rest[fd] = parts.pop()
        for line in parts:
            if (u := parser.feed(fd, line)) and u.phase:
                seen.append((chunk["t"], u.phase))
    assert [p for _t, p in seen] == ORDER
    times = [t for t, _p in seen]
    assert times == sorted(times)
    assert seen[1][0] > 0.8  # "done\nWriting intelligently..." arrived at t=0.8463 / 0.85


# ---------------------------------------------------------------------------------------------
# detection for `disklab import`, and coverage of the fixture set


def test_sniff() -> None:
    assert sniff(fixture_text("bonnie", "s1g_r512_n16_quiet_ext4.csv"))
    assert sniff(fixture_text("bonnie", "s1g_r512_n16_ext4.txt"))
    assert sniff(fixture_text("bonnie", "bon_csv2txt_of_quiet_csv_ext4.txt"))
    assert not sniff(fixture_text("bonnie", "s1g_r512_n16_ext4.stderr.txt"))
    assert not sniff(fixture_text("fio", "randread_4k_qd32_ext4_eta-always_pipe.txt"))
    assert not sniff(fixture_text("fio", "foreign", "auto_s64m_q16m_i0-1-2_ext4.txt"))


FIXTURE_FILES = sorted(p.name for p in BONNIE.iterdir() if p.is_file() and p.name != "README.md")


def test_every_trace_is_replayed() -> None:
    assert {f for f in FIXTURE_FILES if f.endswith(".trace.jsonl")} == set(TRACES)


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_every_fixture_file_imports_as_a_user_gets_it(name: str) -> None:
    """What `disklab import` makes of each recorded file: bonnie++'s results (its CSV line,
    its table, bon_csv2txt's table; with -q the table goes to stderr) are bonnie's with
    figures above zero; its other stderr (progress, errors) and the traces are no result."""
    run, problem = read_output(BONNIE / name)
    quiet_table = name.endswith(".stderr.txt") and "quiet" in name
    if name.endswith(".trace.jsonl") or (name.endswith(".stderr.txt") and not quiet_table):
        assert run is None and problem is not None
    else:
        assert problem is None, problem
        assert run is not None and run.tool == "bonnie"
        assert [m for m in run.metrics if m.value and m.value > 0]
