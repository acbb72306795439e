"""fio adapter: the argv a case runs, and the numbers a user reads in fio's own output.

Every expected number below is read by hand from the fixture file (the line is quoted beside
it), written in fio's printed unit: 1326 * MiB for 'BW=1326MiB/s', 233 * US for a percentile
printed '[  233]' under 'clat percentiles (usec)'.
"""

from __future__ import annotations

import json
import re

import pytest

from disklab.core.importing import read_output
from disklab.core.tools import get_adapter
from disklab.core.tools.base import RunTarget, ToolOutput
from disklab.core.tools.fio import FioAdapter
from disklab.core.tools.fio.output import sniff
from disklab.core.vocab.errors import ParseError, ToolError
from disklab.core.vocab.model import Metric
from disklab.core.vocab.units import GiB, KiB, MiB
from tests.helpers import FIXTURES, fixture_text

FIO = FIXTURES / "fio"
US = 1000.0  # ns per usec
MS = 1_000_000.0  # ns per msec
fio = FioAdapter()


def parse(name: str, params: dict | None = None) -> list[Metric]:
    return fio.parse_result(ToolOutput(stdout=fixture_text("fio", name)), params or {})


def by_name(metrics: list[Metric], job: str | None = None) -> dict[str, Metric]:
    """Metrics by name; with `job`, those of that job; without, those with no job param."""
    return {m.name: m for m in metrics if (m.params or {}).get("job") == job}


def values(metrics: list[Metric], job: str | None = None) -> dict[str, float | None]:
    return {k: m.value for k, m in by_name(metrics, job).items()}


# ---------------------------------------------------------------------------------------------
# argv

TARGET = RunTarget(directory="/mnt/t", tag="c1-r1")


def test_registered_under_its_plan_name() -> None:
    assert isinstance(get_adapter("fio"), FioAdapter)


def test_write_argv_is_a_list_with_thread_json_file_and_eta() -> None:
    cmd = fio.build_command({"rw": "write", "size": 32 * MiB, "bs": MiB}, TARGET)
    assert cmd.argv == (
        "fio", "--name=disklab", "--directory=/mnt/t",
        "--filename_format=disklab-c1-r1.$jobnum.fio",
        "--rw=write", f"--bs={MiB}", f"--size={32 * MiB}", "--numjobs=1",
        "--iodepth=1", "--ioengine=psync", "--direct=0", "--group_reporting",
        "--thread", "--output-format=json", "--output=/mnt/t/disklab-c1-r1.json", "--eta=always",
    )
    assert cmd.files == ("/mnt/t/disklab-c1-r1.0.fio", "/mnt/t/disklab-c1-r1.json")
    assert cmd.result_file == "/mnt/t/disklab-c1-r1.json"
    assert cmd.cwd == "/mnt/t"
    assert cmd.planned_bytes == 32 * MiB
    assert cmd.prepare == ()  # fio writes the file itself
    assert not cmd.reads_after_prepare


def test_reads_lay_out_their_files_first_so_caches_can_be_dropped() -> None:
    cmd = fio.build_command({"rw": "randread", "size": 16 * MiB, "numjobs": 2}, TARGET)
    assert cmd.reads_after_prepare
    (layout,) = cmd.prepare
    assert "--create_only=1" in layout and "--thread" in layout
    assert "--rw=randread" in layout and "--numjobs=2" in layout
    assert not any(a.startswith("--output") for a in layout)
    assert "--create_only=1" not in cmd.argv


def test_numjobs_gives_one_file_per_job_and_planned_bytes_for_all() -> None:
    cmd = fio.build_command({"rw": "randwrite", "size": 8 * MiB, "numjobs": 3}, TARGET)
    assert cmd.files[:3] == tuple(f"/mnt/t/disklab-c1-r1.{n}.fio" for n in range(3))
    assert cmd.planned_bytes == 24 * MiB


def test_all_options_reach_the_argv() -> None:
    params = {"rw": "randrw", "size": GiB, "bs": 4 * KiB, "numjobs": 4, "iodepth": 32,
              "ioengine": "libaio", "direct": True, "end_fsync": True, "fsync": 8,
              "runtime": 30.0, "rwmixread": 60, "group_reporting": False, "ramp_time": 1.5}
    argv = fio.build_command(params, TARGET).argv
    for arg in ("--iodepth=32", "--ioengine=libaio", "--direct=1", "--end_fsync=1",
                "--fsync=8", "--runtime=30s", "--time_based", "--rwmixread=60",
                "--ramp_time=1500ms", "--numjobs=4", f"--size={GiB}", "--bs=4096", "--thread"):
        assert arg in argv
    assert "--group_reporting" not in argv


def test_rwmixread_only_for_mixed_jobs() -> None:
    argv = fio.build_command({"rw": "read", "size": MiB, "rwmixread": 50}, TARGET).argv
    assert not any(a.startswith("--rwmixread") for a in argv)


def test_check_flags_trim_on_files_and_unaligned_direct() -> None:
    assert [k for k, _m in fio.check({"rw": "trim", "size": MiB})] == ["rw"]
    assert [k for k, _m in fio.check({"rw": "read", "bs": 1000, "direct": True})] == ["bs"]
    assert fio.check({"rw": "read", "bs": 4096, "direct": True}) == []


def test_version() -> None:
    assert fio.version_argv() == ("fio", "--version")
    assert fio.parse_version("fio-3.33\n") == "fio-3.33"


# ---------------------------------------------------------------------------------------------
# normal (human) output, one job

# (fixture, direction, BW, IOPS, lat mean, clat p99, cpu sys)
SINGLE_TEXT = [
    # "  read: IOPS=177k, BW=691MiB/s (725MB/s)(3456MiB/5001msec)"
    # "     lat (usec): min=35, max=10435, avg=180.60, stdev=105.88"
    # "     | 99.00th=[  392], 99.50th=[  437], 99.90th=[  766], 99.95th=[ 1549],"
    # "  cpu          : usr=7.58%, sys=78.74%, ctx=94045, majf=0, minf=41"
    ("randread_4k_qd32_btrfs_eta-auto_pty.txt", "read", 691 * MiB, 177e3, 180.60 * US,
     392 * US, 78.74),
    # the last of four cumulative reports (line 82 on):
    # "  read: IOPS=132k, BW=516MiB/s (541MB/s)(1548MiB/3001msec)"
    # "     lat (usec): min=9, max=8331, avg=242.02, stdev=233.81"
    # "     | 99.00th=[  529], 99.50th=[ 1713], 99.90th=[ 3884], 99.95th=[ 4359],"
    # "  cpu          : usr=7.03%, sys=57.17%, ctx=140780, majf=0, minf=41"
    ("randread_4k_qd32_btrfs_status-interval1_normal.txt", "read", 516 * MiB, 132e3,
     242.02 * US, 529 * US, 57.17),
    # "  read: IOPS=314k, BW=1226MiB/s (1285MB/s)(4904MiB/4001msec)"
    # "     lat (usec): min=42, max=5506, avg=101.77, stdev=89.61"
    # "     | 99.00th=[  251], 99.50th=[  297], 99.90th=[ 1020], 99.95th=[ 2089],"
    # "  cpu          : usr=14.55%, sys=55.73%, ctx=30690, majf=0, minf=42"
    ("randread_4k_qd32_ext4_eta-always_eta-newline1s_eta-interval500ms_pipe.txt", "read",
     1226 * MiB, 314e3, 101.77 * US, 251 * US, 55.73),
    # "  read: IOPS=339k, BW=1326MiB/s (1390MB/s)(6632MiB/5001msec)"
    # "     lat (usec): min=35, max=4277, avg=94.07, stdev=107.93"
    # "     | 99.00th=[  233], 99.50th=[  289], 99.90th=[ 2147], 99.95th=[ 3064],"
    # "  cpu          : usr=13.64%, sys=35.26%, ctx=113723, majf=0, minf=42"
    ("randread_4k_qd32_ext4_eta-always_pipe.txt", "read", 1326 * MiB, 339e3, 94.07 * US,
     233 * US, 35.26),
    # "  read: IOPS=326k, BW=1274MiB/s (1336MB/s)(6371MiB/5001msec)"
    # "     lat (usec): min=11, max=4230, avg=97.91, stdev=123.81"
    # "     | 99.00th=[  251], 99.50th=[  326], 99.90th=[ 2737], 99.95th=[ 3064],"
    # "  cpu          : usr=13.70%, sys=35.08%, ctx=111147, majf=0, minf=42"
    ("randread_4k_qd32_ext4_eta-always_pty.txt", "read", 1274 * MiB, 326e3, 97.91 * US,
     251 * US, 35.08),
    # "  read: IOPS=337k, BW=1316MiB/s (1380MB/s)(6580MiB/5001msec)"
    # "     lat (usec): min=22, max=4235, avg=94.81, stdev=118.57"
    # "     | 99.00th=[  225], 99.50th=[  285], 99.90th=[ 2573], 99.95th=[ 2999],"
    # "  cpu          : usr=13.16%, sys=35.72%, ctx=116448, majf=0, minf=44"
    ("randread_4k_qd32_ext4_eta-auto_pty.txt", "read", 1316 * MiB, 337e3, 94.81 * US,
     225 * US, 35.72),
    # the last of four cumulative reports (line 93 on):
    # "  read: IOPS=330k, BW=1288MiB/s (1350MB/s)(3865MiB/3001msec)"
    # "     lat (usec): min=5, max=3408, avg=96.85, stdev=104.18"
    # "     | 99.00th=[  245], 99.50th=[  310], 99.90th=[ 2008], 99.95th=[ 2868],"
    # "  cpu          : usr=13.83%, sys=36.07%, ctx=64215, majf=0, minf=44"
    ("randread_4k_qd32_ext4_status-interval1_normal.txt", "read", 1288 * MiB, 330e3,
     96.85 * US, 245 * US, 36.07),
    # "  read: IOPS=209k, BW=816MiB/s (856MB/s)(4083MiB/5001msec)"
    # "     lat (usec): min=25, max=240241, avg=152.81, stdev=1331.40"
    # "     | 99.00th=[  404], 99.50th=[  437], 99.90th=[  570], 99.95th=[  766],"
    # "  cpu          : usr=9.46%, sys=44.42%, ctx=80253, majf=0, minf=43"
    ("randread_4k_qd32_libaio_direct_ext4-j16m.txt", "read", 816 * MiB, 209e3, 152.81 * US,
     404 * US, 44.42),
    # "  read: IOPS=356k, BW=1392MiB/s (1459MB/s)(6960MiB/5001msec)"
    # "     lat (usec): min=39, max=257679, avg=89.62, stdev=1092.61"
    # "     | 99.00th=[  186], 99.50th=[  217], 99.90th=[  408], 99.95th=[  889],"
    # "  cpu          : usr=15.08%, sys=62.18%, ctx=40976, majf=0, minf=43"
    ("randread_4k_qd32_libaio_direct_ext4-j256m.txt", "read", 1392 * MiB, 356e3, 89.62 * US,
     186 * US, 62.18),
    # "  read: IOPS=336k, BW=1311MiB/s (1375MB/s)(6557MiB/5001msec)"
    # "     lat (usec): min=41, max=290256, avg=95.14, stdev=1266.73"
    # "     | 99.00th=[  206], 99.50th=[  255], 99.90th=[ 2409], 99.95th=[ 2802],"
    # "  cpu          : usr=12.50%, sys=36.06%, ctx=113601, majf=0, minf=44"
    ("randread_4k_qd32_libaio_direct_ext4-nodelalloc.txt", "read", 1311 * MiB, 336e3,
     95.14 * US, 206 * US, 36.06),
    # "  read: IOPS=317k, BW=1238MiB/s (1298MB/s)(6191MiB/5001msec)"
    # "     lat (usec): min=42, max=251356, avg=100.78, stdev=1135.15"
    # "     | 99.00th=[  235], 99.50th=[  293], 99.90th=[ 2409], 99.95th=[ 2999],"
    # "  cpu          : usr=13.14%, sys=33.04%, ctx=104763, majf=0, minf=43"
    ("randread_4k_qd32_libaio_direct_ext4.txt", "read", 1238 * MiB, 317e3, 100.78 * US,
     235 * US, 33.04),
    # "  read: IOPS=319k, BW=1247MiB/s (1307MB/s)(6236MiB/5001msec)"
    # "     lat (usec): min=42, max=10151, avg=100.04, stdev=65.63"
    # "     | 99.00th=[  219], 99.50th=[  255], 99.90th=[  392], 99.95th=[  881],"
    # "  cpu          : usr=16.92%, sys=62.38%, ctx=29814, majf=0, minf=45"
    ("randread_4k_qd32_libaio_direct_xfs-su128k-sw10.txt", "read", 1247 * MiB, 319e3,
     100.04 * US, 219 * US, 62.38),
    # "  read: IOPS=344k, BW=1344MiB/s (1410MB/s)(6723MiB/5001msec)"
    # "     lat (usec): min=42, max=4998, avg=92.78, stdev=59.97"
    # "     | 99.00th=[  192], 99.50th=[  227], 99.90th=[  383], 99.95th=[  930],"
    # "  cpu          : usr=16.24%, sys=60.48%, ctx=39129, majf=0, minf=43"
    ("randread_4k_qd32_xfs-su128k-sw10_eta-always_pipe.txt", "read", 1344 * MiB, 344e3,
     92.78 * US, 192 * US, 60.48),
    # "  read: IOPS=323k, BW=1261MiB/s (1322MB/s)(6306MiB/5001msec)"
    # "     lat (usec): min=43, max=305367, avg=98.93, stdev=1360.16"
    # "     | 99.00th=[  196], 99.50th=[  229], 99.90th=[  334], 99.95th=[  486],"
    # "  cpu          : usr=12.46%, sys=60.70%, ctx=34032, majf=0, minf=43"
    ("randread_4k_qd32_xfs-su128k-sw10_eta-always_pty.txt", "read", 1261 * MiB, 323e3,
     98.93 * US, 196 * US, 60.70),
    # "  read: IOPS=5278, BW=5278MiB/s (5535MB/s)(512MiB/97msec)"
    # "     lat (usec): min=156, max=1576, avg=186.03, stdev=69.05"
    # "     | 99.00th=[  253], 99.50th=[  297], 99.90th=[  363], 99.95th=[  363],"
    # "  cpu          : usr=0.00%, sys=15.62%, ctx=619, majf=0, minf=266"
    ("seqread_1m_qd1_libaio_direct_btrfs.txt", "read", 5278 * MiB, 5278, 186.03 * US,
     253 * US, 15.62),
    # "  read: IOPS=2000, BW=2000MiB/s (2097MB/s)(512MiB/256msec)"
    # "     lat (usec): min=113, max=13411, avg=298.35, stdev=713.00"
    # "    clat percentiles (nsec):" ... "| 99.00th=[  4768], 99.50th=[  8768], ..."
    # "  cpu          : usr=0.00%, sys=86.67%, ctx=35, majf=0, minf=269"
    ("seqread_1m_qd1_libaio_direct_ext4-datajournal.txt", "read", 2000 * MiB, 2000,
     298.35 * US, 4768, 86.67),
    # "  read: IOPS=3436, BW=3436MiB/s (3603MB/s)(512MiB/149msec)"
    # "     lat (usec): min=132, max=1384, avg=288.08, stdev=77.78"
    # "     | 99.00th=[  412], 99.50th=[  510], 99.90th=[ 1352], 99.95th=[ 1352],"
    # "  cpu          : usr=2.03%, sys=14.86%, ctx=514, majf=0, minf=267"
    ("seqread_1m_qd1_libaio_direct_ext4-j256m.txt", "read", 3436 * MiB, 3436, 288.08 * US,
     412 * US, 14.86),
    # "  read: IOPS=6481, BW=6481MiB/s (6796MB/s)(512MiB/79msec)"
    # "     lat (usec): min=129, max=715, avg=151.90, stdev=52.79"
    # "     | 99.00th=[  322], 99.50th=[  400], 99.90th=[  594], 99.95th=[  594],"
    # "  cpu          : usr=0.00%, sys=14.10%, ctx=538, majf=0, minf=270"
    ("seqread_1m_qd1_libaio_direct_ext4-nodelalloc.txt", "read", 6481 * MiB, 6481,
     151.90 * US, 322 * US, 14.10),
    # "  read: IOPS=4970, BW=4971MiB/s (5212MB/s)(512MiB/103msec)"
    # "     lat (usec): min=128, max=1881, avg=198.26, stdev=236.31"
    # "     | 99.00th=[ 1811], 99.50th=[ 1844], 99.90th=[ 1860], 99.95th=[ 1860],"
    # "  cpu          : usr=0.00%, sys=12.75%, ctx=515, majf=0, minf=267"
    ("seqread_1m_qd1_libaio_direct_ext4.txt", "read", 4971 * MiB, 4970, 198.26 * US,
     1811 * US, 12.75),
    # "  write: IOPS=287, BW=287MiB/s (301MB/s)(512MiB/1783msec); 0 zone resets"
    # "     lat (usec): min=528, max=106707, avg=3480.10, stdev=11837.48"
    # "    clat percentiles (nsec):" ... "| 99.00th=[11584], 99.50th=[12608], ..."
    # "  cpu          : usr=0.22%, sys=38.33%, ctx=1120, majf=0, minf=11"
    ("seqwrite_1m_qd1_libaio_direct_ext4-datajournal.txt", "write", 287 * MiB, 287,
     3480.10 * US, 11584, 38.33),
    # "  write: IOPS=331, BW=331MiB/s (347MB/s)(512MiB/1546msec); 0 zone resets"
    # "     lat (usec): min=291, max=5388, avg=3014.96, stdev=585.05"
    # "     | 99.00th=[ 4015], 99.50th=[ 4080], 99.90th=[ 5276], 99.95th=[ 5276],"
    # "  cpu          : usr=0.97%, sys=1.68%, ctx=979, majf=0, minf=11"
    ("seqwrite_1m_qd1_libaio_direct_ext4-j16m.txt", "write", 331 * MiB, 331, 3014.96 * US,
     4015 * US, 1.68),
    # "  write: IOPS=352, BW=352MiB/s (369MB/s)(512MiB/1454msec); 0 zone resets"
    # "     lat (usec): min=2664, max=5838, avg=2836.57, stdev=204.12"
    # "     | 99.00th=[ 3654], 99.50th=[ 3982], 99.90th=[ 5735], 99.95th=[ 5735],"
    # "  cpu          : usr=0.41%, sys=1.03%, ctx=554, majf=0, minf=11"
    ("seqwrite_1m_qd1_libaio_direct_ext4-nodelalloc.txt", "write", 352 * MiB, 352,
     2836.57 * US, 3654 * US, 1.03),
    # "  write: IOPS=453, BW=453MiB/s (476MB/s)(512MiB/1129msec); 0 zone resets"
    # "     lat (usec): min=259, max=5826, avg=2201.73, stdev=638.34"
    # "     | 99.00th=[ 4228], 99.50th=[ 4817], 99.90th=[ 5735], 99.95th=[ 5735],"
    # "  cpu          : usr=0.98%, sys=0.89%, ctx=517, majf=0, minf=12"
    ("seqwrite_1m_qd1_libaio_direct_ext4.txt", "write", 453 * MiB, 453, 2201.73 * US,
     4228 * US, 0.89),
    # "  write: IOPS=537, BW=538MiB/s (564MB/s)(512MiB/952msec); 0 zone resets"
    # "     lat (usec): min=239, max=6195, avg=1857.21, stdev=1460.02"
    # "     | 99.00th=[ 3818], 99.50th=[ 4047], 99.90th=[ 6128], 99.95th=[ 6128],"
    # "  cpu          : usr=2.52%, sys=3.36%, ctx=528, majf=0, minf=12"
    ("seqwrite_1m_qd1_libaio_direct_xfs-su128k-sw10.txt", "write", 538 * MiB, 537,
     1857.21 * US, 3818 * US, 3.36),
]


@pytest.mark.parametrize(("name", "d", "bw", "iops", "lat", "p99", "sys"), SINGLE_TEXT,
                         ids=[row[0] for row in SINGLE_TEXT])
def test_normal_output_one_job(name: str, d: str, bw: float, iops: float, lat: float,
                               p99: float, sys: float) -> None:
    got = values(parse(name))
    assert got[d] == pytest.approx(bw)
    assert got[f"{d}:iops"] == pytest.approx(iops)
    assert got[f"{d}:lat_mean"] == pytest.approx(lat)
    assert got[f"{d}:lat_p99"] == pytest.approx(p99)
    assert got["cpu:sys"] == pytest.approx(sys)
    other = {"read": "write", "write": "read"}[d]
    assert other not in got  # a direction that moved nothing is left out


def test_normal_output_all_figures_of_one_job() -> None:
    got = values(parse("randread_4k_qd32_ext4_eta-always_pipe.txt"))
    assert got == pytest.approx({
        "read": 1326 * MiB,  # "  read: IOPS=339k, BW=1326MiB/s (1390MB/s)(6632MiB/5001msec)"
        "read:iops": 339_000,
        "read:clat_mean": 92.99 * US,  # "    clat (usec): min=35, max=4277, avg=92.99, ..."
        "read:lat_mean": 94.07 * US,  # "     lat (usec): min=35, max=4277, avg=94.07, ..."
        "read:lat_p50": 78 * US,  # "     | 30.00th=[   77], 40.00th=[   77], 50.00th=[   78], ..."
        "read:lat_p99": 233 * US,  # "     | 99.00th=[  233], 99.50th=[  289], 99.90th=[ 2147], ..."
        "read:lat_p99.9": 2147 * US,
        "cpu:usr": 13.64,  # "  cpu          : usr=13.64%, sys=35.26%, ctx=113723, ..."
        "cpu:sys": 35.26,
    })
    assert all(m.unit == u for m, u in zip(
        parse("randread_4k_qd32_ext4_eta-always_pipe.txt"),
        ["B/s", "op/s", "ns", "ns", "ns", "ns", "ns", "%", "%"], strict=True))


def test_normal_output_clat_in_nsec_with_k_suffix() -> None:
    # "    clat (nsec): min=1823, max=6983.0k, avg=367010.56, stdev=319447.08"
    report = fixture_text("fio", "error_enospc_seqwrite_8g_on_4g_ext4.txt")
    metrics = fio.parse_partial(ToolOutput(stdout=report, exit_status=1), {})
    assert values(metrics)["write:clat_mean"] == pytest.approx(367010.56)


# (fixture, read BW, read IOPS, read p99, write BW, write IOPS, write p99, cpu sys)
MIXED_TEXT = [
    # "  read: IOPS=35.2k, BW=137MiB/s (144MB/s)(687MiB/5001msec)"
    # "     | 99.00th=[ 2966], 99.50th=[ 3851], 99.90th=[ 4948], 99.95th=[ 5211],"
    # "  write: IOPS=15.1k, BW=58.9MiB/s (61.8MB/s)(295MiB/5001msec); 0 zone resets"
    # "     | 99.00th=[ 2868], 99.50th=[ 3818], 99.90th=[ 4948], 99.95th=[ 5211],"
    # "  cpu          : usr=4.50%, sys=35.20%, ctx=168311, majf=0, minf=12"
    ("randrw70_4k_qd32_libaio_direct_btrfs.txt", 137 * MiB, 35.2e3, 2966 * US,
     58.9 * MiB, 15.1e3, 2868 * US, 35.20),
    # "  read: IOPS=17.5k, BW=68.4MiB/s (71.8MB/s)(346MiB/5052msec)"
    # "     | 99.00th=[  2671], 99.50th=[  4015], 99.90th=[123208], 99.95th=[143655],"
    # "  write: IOPS=7489, BW=29.3MiB/s (30.7MB/s)(148MiB/5052msec); 0 zone resets"
    # "     | 99.00th=[  2704], 99.50th=[  4178], 99.90th=[110625], 99.95th=[137364],"
    # "  cpu          : usr=4.40%, sys=31.68%, ctx=90380, majf=0, minf=13"
    ("randrw70_4k_qd32_libaio_direct_ext4-datajournal.txt", 68.4 * MiB, 17.5e3, 2671 * US,
     29.3 * MiB, 7489, 2704 * US, 31.68),
    # "  read: IOPS=57.9k, BW=226MiB/s (237MB/s)(1132MiB/5001msec)"
    # "     | 99.00th=[  865], 99.50th=[  938], 99.90th=[ 1434], 99.95th=[ 1745],"
    # "  write: IOPS=24.9k, BW=97.2MiB/s (102MB/s)(486MiB/5001msec); 0 zone resets"
    # "     | 99.00th=[  955], 99.50th=[ 1029], 99.90th=[ 1483], 99.95th=[ 1778],"
    # "  cpu          : usr=6.10%, sys=19.98%, ctx=72139, majf=0, minf=13"
    ("randrw70_4k_qd32_libaio_direct_ext4-j256m.txt", 226 * MiB, 57.9e3, 865 * US,
     97.2 * MiB, 24.9e3, 955 * US, 19.98),
    # "  read: IOPS=109k, BW=426MiB/s (447MB/s)(2133MiB/5001msec)"
    # "     | 99.00th=[  433], 99.50th=[  529], 99.90th=[ 2507], 99.95th=[ 3195],"
    # "  write: IOPS=46.9k, BW=183MiB/s (192MB/s)(916MiB/5001msec); 0 zone resets"
    # "     | 99.00th=[  486], 99.50th=[  578], 99.90th=[ 2540], 99.95th=[ 3359],"
    # "  cpu          : usr=7.98%, sys=20.32%, ctx=248323, majf=0, minf=12"
    ("randrw70_4k_qd32_libaio_direct_ext4.txt", 426 * MiB, 109e3, 433 * US, 183 * MiB,
     46.9e3, 486 * US, 20.32),
    # "  read: IOPS=73.8k, BW=288MiB/s (302MB/s)(865MiB/3001msec)"
    # "     | 99.00th=[  449], 99.50th=[ 1106], 99.90th=[ 3818], 99.95th=[ 4293],"
    # "  write: IOPS=31.7k, BW=124MiB/s (130MB/s)(372MiB/3001msec); 0 zone resets"
    # "     | 99.00th=[  498], 99.50th=[ 1516], 99.90th=[ 3851], 99.95th=[ 4424],"
    # "  cpu          : usr=5.93%, sys=24.27%, ctx=12052, majf=0, minf=14"
    ("randrw70_4k_qd32_rootfs_eta-always_pipe.txt", 288 * MiB, 73.8e3, 449 * US, 124 * MiB,
     31.7e3, 498 * US, 24.27),
]


@pytest.mark.parametrize(("name", "rbw", "riops", "rp99", "wbw", "wiops", "wp99", "sys"),
                         MIXED_TEXT, ids=[row[0] for row in MIXED_TEXT])
def test_normal_output_mixed_read_write(name: str, rbw: float, riops: float, rp99: float,
                                        wbw: float, wiops: float, wp99: float,
                                        sys: float) -> None:
    got = values(parse(name))
    assert got["read"] == pytest.approx(rbw)
    assert got["read:iops"] == pytest.approx(riops)
    assert got["read:lat_p99"] == pytest.approx(rp99)
    assert got["write"] == pytest.approx(wbw)
    assert got["write:iops"] == pytest.approx(wiops)
    assert got["write:lat_p99"] == pytest.approx(wp99)
    assert got["cpu:sys"] == pytest.approx(sys)


def test_normal_output_import_params_from_the_header_line() -> None:
    # "rw: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B,
    #  ioengine=libaio, iodepth=32"
    m = parse("randrw70_4k_qd32_rootfs_eta-always_pipe.txt")[0]
    assert m.params == {"rw": "randrw", "bs": 4096, "ioengine": "libaio", "iodepth": 32}
    # a run by the runner knows its params: metrics carry none
    report = fixture_text("fio", "randrw70_4k_qd32_rootfs_eta-always_pipe.txt")
    run = fio.parse_result(ToolOutput(stdout=report), {"rw": "randrw", "size": GiB})
    assert all(m.params is None for m in run)


# --- several jobs in one normal output -------------------------------------------------------

# (fixture, seqread BW, IOPS, lat mean, p99 (ns), randread BW, IOPS, lat mean, p99, sys)
JOBS_TEXT = [
    # "seqread: (groupid=0, jobs=1): err= 0: pid=15559: ..."
    # "  read: IOPS=6023, BW=6024MiB/s (6316MB/s)(512MiB/85msec)"
    # "     lat (usec): min=130, max=689, avg=163.49, stdev=71.74"
    # "     | 99.00th=[  412], 99.50th=[  416], 99.90th=[  603], 99.95th=[  603],"
    # "randread: (groupid=1, jobs=1): err= 0: pid=15560: ..."
    # "  read: IOPS=335k, BW=1308MiB/s (1372MB/s)(3925MiB/3001msec)"
    # "     lat (usec): min=21, max=3378, avg=95.36, stdev=120.05"
    # "     | 99.00th=[  239], 99.50th=[  293], 99.90th=[ 2540], 99.95th=[ 3064],"
    # "  cpu          : usr=11.90%, sys=37.17%, ctx=65056, majf=0, minf=42"
    ("jobfile_seqread-randread_2groups_ext4.txt", 6024 * MiB, 6023, 163.49 * US, 412 * US,
     1308 * MiB, 335e3, 95.36 * US, 239 * US, 37.17),
    # "  read: IOPS=1340, BW=1340MiB/s (1405MB/s)(512MiB/382msec)"
    # "     lat (usec): min=506, max=2415, avg=742.51, stdev=174.96"
    # "    clat percentiles (nsec):" ... "| 99.00th=[485376], 99.50th=[561152], ..."
    # "  read: IOPS=178k, BW=695MiB/s (729MB/s)(2087MiB/3001msec)"
    # "     lat (usec): min=7, max=2431, avg=179.44, stdev=66.21"
    # "     | 99.00th=[  371], 99.50th=[  416], 99.90th=[  594], 99.95th=[ 1188],"
    # "  cpu          : usr=9.20%, sys=77.40%, ctx=52547, majf=0, minf=42"
    ("jobfile_seqread-randread_2groups_btrfs.txt", 1340 * MiB, 1340, 742.51 * US, 485376,
     695 * MiB, 178e3, 179.44 * US, 371 * US, 77.40),
    # client mode; the "All clients: (groupid=1, jobs=2)" block at the end is left out
    # "  read: IOPS=6243, BW=6244MiB/s (6547MB/s)(512MiB/82msec)"
    # "     lat (usec): min=130, max=480, avg=157.79, stdev=47.40"
    # "     | 99.00th=[  334], 99.50th=[  347], 99.90th=[  367], 99.95th=[  367],"
    # "  read: IOPS=344k, BW=1345MiB/s (1410MB/s)(4035MiB/3001msec)"
    # "     lat (usec): min=37, max=3443, avg=92.75, stdev=105.72"
    # "     | 99.00th=[  233], 99.50th=[  285], 99.90th=[ 2245], 99.95th=[ 2900],"
    # "  cpu          : usr=14.40%, sys=35.27%, ctx=69943, majf=0, minf=43"
    ("client-server_jobfile_ext4_normal.txt", 6244 * MiB, 6243, 157.79 * US, 334 * US,
     1345 * MiB, 344e3, 92.75 * US, 233 * US, 35.27),
    # "  read: IOPS=3555, BW=3556MiB/s (3728MB/s)(512MiB/144msec)"
    # "     lat (usec): min=149, max=1363, avg=277.77, stdev=94.81"
    # "     | 99.00th=[  388], 99.50th=[  478], 99.90th=[ 1336], 99.95th=[ 1336],"
    # "  read: IOPS=333k, BW=1302MiB/s (1365MB/s)(3907MiB/3001msec)"
    # "     lat (usec): min=45, max=4175, avg=95.77, stdev=63.90"
    # "     | 99.00th=[  221], 99.50th=[  262], 99.90th=[  420], 99.95th=[ 1012],"
    # "  cpu          : usr=16.13%, sys=59.67%, ctx=23083, majf=0, minf=43"
    ("client-server_jobfile_xfs-su128k-sw10_normal.txt", 3556 * MiB, 3555, 277.77 * US,
     388 * US, 1302 * MiB, 333e3, 95.77 * US, 221 * US, 59.67),
]


@pytest.mark.parametrize(("name", "sbw", "siops", "slat", "sp99", "rbw", "riops", "rlat",
                          "rp99", "rsys"), JOBS_TEXT, ids=[row[0] for row in JOBS_TEXT])
def test_normal_output_two_stonewalled_jobs(name: str, sbw: float, siops: float, slat: float,
                                            sp99: float, rbw: float, riops: float, rlat: float,
                                            rp99: float, rsys: float) -> None:
    metrics = parse(name)
    seq, rnd = values(metrics, "seqread"), values(metrics, "randread")
    assert (seq["read"], seq["read:iops"]) == pytest.approx((sbw, siops))
    assert (seq["read:lat_mean"], seq["read:lat_p99"]) == pytest.approx((slat, sp99))
    assert (rnd["read"], rnd["read:iops"]) == pytest.approx((rbw, riops))
    assert (rnd["read:lat_mean"], rnd["read:lat_p99"]) == pytest.approx((rlat, rp99))
    assert rnd["cpu:sys"] == pytest.approx(rsys)
    # two groups ran one after the other: no summed figure without a job
    assert values(metrics) == {}
    # the header lines give each job's own parameters
    assert by_name(metrics, "randread")["read"].params == {
        "job": "randread", "rw": "randread", "bs": 4096, "ioengine": "libaio", "iodepth": 32}


# ---------------------------------------------------------------------------------------------
# JSON and json+ output

# (fixture, direction, bw_bytes, iops, lat_ns mean, clat p99, usr_cpu, sys_cpu)
SINGLE_JSON = [
    # "bw_bytes" : 984025442, "iops" : 240240.586471, lat_ns "mean" : 132951.076377,
    # "99.000000" : 342016, "usr_cpu" : 10.566667, "sys_cpu" : 44.466667
    ("randread_4k_qd32_ext4_eta-always_json.json", "read", 984025442, 240240.586471,
     132951.076377, 342016, 10.566667, 44.466667),
    # "bw_bytes" : 705559547, "iops" : 172255.748850, lat_ns "mean" : 185518.597542,
    # "99.000000" : 346112, "usr_cpu" : 8.580000, "sys_cpu" : 41.680000
    ("randread_4k_qd32_libaio_direct_btrfs_jsonplus.json", "read", 705559547, 172255.748850,
     185518.597542, 346112, 8.58, 41.68),
    # "bw_bytes" : 462178847, "iops" : 112836.632673, lat_ns "mean" : 280697.254278,
    # "99.000000" : 2244608, "usr_cpu" : 7.700000, "sys_cpu" : 43.180000
    ("randread_4k_qd32_libaio_direct_ext4-datajournal_jsonplus.json", "read", 462178847,
     112836.632673, 280697.254278, 2244608, 7.70, 43.18),
    # "bw_bytes" : 1563168249, "iops" : 381632.873425, lat_ns "mean" : 83661.850328,
    # "99.000000" : 177152, "usr_cpu" : 17.560000, "sys_cpu" : 63.580000
    ("randread_4k_qd32_libaio_direct_ext4-j16m_jsonplus.json", "read", 1563168249,
     381632.873425, 83661.850328, 177152, 17.56, 63.58),
    # "bw_bytes" : 1473095563, "iops" : 359642.471506, lat_ns "mean" : 88781.719845,
    # "99.000000" : 199680, "usr_cpu" : 16.640000, "sys_cpu" : 35.220000
    ("randread_4k_qd32_libaio_direct_ext4-nodelalloc_jsonplus.json", "read", 1473095563,
     359642.471506, 88781.719845, 199680, 16.64, 35.22),
    # "bw_bytes" : 1365129393, "iops" : 333283.543291, lat_ns "mean" : 95811.786786,
    # "99.000000" : 242688, "usr_cpu" : 15.340000, "sys_cpu" : 33.640000
    ("randread_4k_qd32_libaio_direct_ext4_jsonplus.json", "read", 1365129393, 333283.543291,
     95811.786786, 242688, 15.34, 33.64),
    # "bw_bytes" : 373614372, "iops" : 91214.446388, lat_ns "mean" : 350515.090889,
    # "99.000000" : 569344, "usr_cpu" : 6.525000, "sys_cpu" : 28.500000
    ("randread_4k_qd32_rootfs_eta-always_json-to-file_pipe.output.json", "read", 373614372,
     91214.446388, 350515.090889, 569344, 6.525, 28.5),
    # "bw_bytes" : 465226093, "iops" : 443.674177, lat_ns "mean" : 2200775.257812,
    # "99.000000" : 13632, "usr_cpu" : 0.000000, "sys_cpu" : 14.310494
    ("seqread_1m_qd1_libaio_direct_ext4-datajournal_jsonplus.json", "read", 465226093,
     443.674177, 2200775.257812, 13632, 0.0, 14.310494),
    # "bw_bytes" : 4549753491, "iops" : 4338.983051, lat_ns "mean" : 227790.656250,
    # "99.000000" : 288768, "usr_cpu" : 0.000000, "sys_cpu" : 19.658120
    ("seqread_1m_qd1_libaio_direct_ext4-j16m_jsonplus.json", "read", 4549753491, 4338.983051,
     227790.656250, 288768, 0.0, 19.658120),
    # "bw_bytes" : 3603160483, "iops" : 3436.241611, lat_ns "mean" : 287215.212891,
    # "99.000000" : 350208, "usr_cpu" : 2.702703, "sys_cpu" : 13.513514
    ("seqread_1m_qd1_libaio_direct_ext4-j256m_jsonplus.json", "read", 3603160483, 3436.241611,
     287215.212891, 350208, 2.702703, 13.513514),
    # "bw_bytes" : 6170930022, "iops" : 5885.057471, lat_ns "mean" : 167042.292969,
    # "99.000000" : 366592, "usr_cpu" : 0.000000, "sys_cpu" : 15.116279
    ("seqread_1m_qd1_libaio_direct_ext4_jsonplus.json", "read", 6170930022, 5885.057471,
     167042.292969, 366592, 0.0, 15.116279),
    # "bw_bytes" : 3419559949, "iops" : 3261.146497, lat_ns "mean" : 303102.583984,
    # "99.000000" : 387072, "usr_cpu" : 2.564103, "sys_cpu" : 14.102564
    ("seqread_1m_qd1_libaio_direct_xfs-su128k-sw10_jsonplus.json", "read", 3419559949,
     3261.146497, 303102.583984, 387072, 2.564103, 14.102564),
    # "bw_bytes" : 741534408, "iops" : 707.182320, lat_ns "mean" : 1411857.498047,
    # "99.000000" : 3888, "usr_cpu" : 2.074689, "sys_cpu" : 34.993084
    ("seqwrite_1m_qd1_libaio_direct_btrfs_jsonplus.json", "write", 741534408, 707.182320,
     1411857.498047, 3888, 2.074689, 34.993084),
    # "bw_bytes" : 3158064188, "iops" : 3011.764706, lat_ns "mean" : 330488.921875,
    # "99.000000" : 509952, "usr_cpu" : 7.100592, "sys_cpu" : 10.650888
    ("seqwrite_1m_qd1_libaio_direct_ext4-j16m_jsonplus.json", "write", 3158064188,
     3011.764706, 330488.921875, 509952, 7.100592, 10.650888),
    # "bw_bytes" : 2902004929, "iops" : 2767.567568, lat_ns "mean" : 359691.548828,
    # "99.000000" : 407552, "usr_cpu" : 21.195652, "sys_cpu" : 7.608696
    ("seqwrite_1m_qd1_libaio_direct_ext4-j256m_jsonplus.json", "write", 2902004929,
     2767.567568, 359691.548828, 407552, 21.195652, 7.608696),
    # "bw_bytes" : 5212338951, "iops" : 4970.873786, lat_ns "mean" : 199909.148438,
    # "99.000000" : 362496, "usr_cpu" : 5.882353, "sys_cpu" : 5.882353
    ("seqwrite_1m_qd1_libaio_direct_ext4-nodelalloc_jsonplus.json", "write", 5212338951,
     4970.873786, 199909.148438, 362496, 5.882353, 5.882353),
    # "bw_bytes" : 4588640273, "iops" : 4376.068376, lat_ns "mean" : 226770.039063,
    # "99.000000" : 518144, "usr_cpu" : 4.310345, "sys_cpu" : 8.620690
    ("seqwrite_1m_qd1_libaio_direct_ext4_jsonplus.json", "write", 4588640273, 4376.068376,
     226770.039063, 518144, 4.310345, 8.620690),
    # the last of six concatenated documents (line 1368 on):
    # "bw_bytes" : 1295748837, "iops" : 316344.931014
    ("randread_4k_qd32_xfs-su128k-sw10_status-interval1_json-stream.txt", "read", 1295748837,
     316344.931014, None, None, None, None),
]


@pytest.mark.parametrize(("name", "d", "bw", "iops", "lat", "p99", "usr", "sys"), SINGLE_JSON,
                         ids=[row[0] for row in SINGLE_JSON])
def test_json_one_job(name: str, d: str, bw: float, iops: float, lat: float | None,
                      p99: float | None, usr: float | None, sys: float | None) -> None:
    got = values(parse(name))
    assert got[d] == bw
    assert got[f"{d}:iops"] == pytest.approx(iops)
    for key, want in ((f"{d}:lat_mean", lat), (f"{d}:lat_p99", p99), ("cpu:usr", usr),
                      ("cpu:sys", sys)):
        if want is not None:
            assert got[key] == pytest.approx(want)
    assert {"read", "write"} - {d} & set(got) == set()


def test_json_all_figures_and_import_params() -> None:
    metrics = parse("seqwrite_1m_qd1_libaio_direct_ext4_jsonplus.json")
    assert values(metrics) == pytest.approx({
        "write": 4588640273,  # "bw_bytes" : 4588640273,
        "write:bytes": 536870912,  # "io_bytes" : 536870912, what fio moved
        "write:iops": 4376.068376,  # "iops" : 4376.068376,
        "write:lat_mean": 226770.039063,  # lat_ns "mean" : 226770.039063,
        "write:clat_mean": 196535.310547,  # clat_ns "mean" : 196535.310547,
        "write:lat_p50": 175104,  # "50.000000" : 175104,
        "write:lat_p99": 518144,  # "99.000000" : 518144,
        "write:lat_p99.9": 2637824,  # "99.900000" : 2637824,
        "cpu:usr": 4.310345,  # "usr_cpu" : 4.310345,
        "cpu:sys": 8.620690,  # "sys_cpu" : 8.620690,
    })
    # "job options" : { "name" : "seqwrite", "filename" : "/mnt/scratch/fs/fio.dat",
    #   "size" : "512M", "ioengine" : "libaio", "direct" : "1", "rw" : "write", "bs" : "1M",
    #   "iodepth" : "1" }
    assert metrics[0].params == {"size": 512 * MiB, "ioengine": "libaio", "direct": True,
                                 "rw": "write", "bs": MiB, "iodepth": 1}


def test_json_stream_takes_the_last_complete_document() -> None:
    # six documents; the io_bytes of the first and the last:
    # "io_bytes" : 1215361024 ... "io_bytes" : 6631763968, "bw_bytes" : 1326087576
    metrics = parse("randread_4k_qd32_ext4_status-interval1_json-stream.txt")
    assert values(metrics)["read"] == 1326087576
    # the stream cut in the middle of its last document: the fifth one is the last complete
    text = fixture_text("fio", "randread_4k_qd32_ext4_status-interval1_json-stream.txt")
    fifth_end = [m.end() for m in re.finditer(r"^}\n", text, re.M)][4]
    cut = text[:fifth_end + 300]
    got = values(fio.parse_result(ToolOutput(stdout=cut), {}))
    # the fifth document: "io_bytes" : 6491205632, then "bw_bytes" : 1324735843
    assert got["read"] == 1324735843


# (fixture, seqread bw_bytes, seqread sys_cpu, randread bw_bytes, randread iops)
JOBS_JSON = [
    # seqread: "bw_bytes" : 6710886400, "sys_cpu" : 7.594937;
    # randread: "bw_bytes" : 1420871144, "iops" : 346892.369210
    ("jobfile_seqread-randread_2groups_ext4_json.json", 6710886400, 7.594937, 1420871144,
     346892.369210),
    # seqread: "bw_bytes" : 3376546616, "sys_cpu" : 13.924051;
    # randread: "bw_bytes" : 1457337964, "iops" : 355795.401533
    ("jobfile_seqread-randread_2groups_xfs-su128k-sw10_json.json", 3376546616, 13.924051,
     1457337964, 355795.401533),
    # client_stats instead of jobs; seqread "bw_bytes" : 7158278826, "sys_cpu" : 13.513514;
    # randread "bw_bytes" : 1394792413, "iops" : 340525.491503
    ("client-server_jobfile_ext4_json.json", 7158278826, 13.513514, 1394792413,
     340525.491503),
    # seqread "bw_bytes" : 1376592082, "sys_cpu" : 50.385604;
    # randread "bw_bytes" : 652650716, "iops" : 159338.553815
    ("client-server_jobfile_btrfs_json.json", 1376592082, 50.385604, 652650716,
     159338.553815),
]


@pytest.mark.parametrize(("name", "sbw", "ssys", "rbw", "riops"), JOBS_JSON,
                         ids=[row[0] for row in JOBS_JSON])
def test_json_two_stonewalled_jobs(name: str, sbw: float, ssys: float, rbw: float,
                                   riops: float) -> None:
    metrics = parse(name)
    assert values(metrics, "seqread")["read"] == sbw
    assert values(metrics, "seqread")["cpu:sys"] == pytest.approx(ssys)
    assert values(metrics, "randread")["read"] == rbw
    assert values(metrics, "randread")["read:iops"] == pytest.approx(riops)
    assert values(metrics) == {}  # groups 0 and 1 ran one after the other: no sum


def test_json_import_params_merge_global_and_job_options() -> None:
    # job.fio: [global] ioengine=libaio direct=1 filename=... size=512M;
    # [randread] stonewall rw=randread bs=4k iodepth=32 runtime=3 time_based
    job_file = fixture_text("fio", "job.fio")
    assert "size=512M" in job_file and "bs=4k" in job_file and "iodepth=32" in job_file
    metrics = parse("jobfile_seqread-randread_2groups_ext4_json.json")
    assert by_name(metrics, "randread")["read"].params == {
        "job": "randread", "ioengine": "libaio", "direct": True, "size": 512 * MiB,
        "rw": "randread", "bs": 4 * KiB, "iodepth": 32}


def test_json_numjobs_without_group_reporting_gives_each_job_the_total_and_the_spread() -> None:
    metrics = parse("disklab_numjobs2_randrw70.output.json")
    job0, job1 = values(metrics, "disklab.0"), values(metrics, "disklab.1")
    # first entry: read "bw_bytes" : 60560753, "iops" : 14785.340314;
    #              write "bw_bytes" : 27278073; "sys_cpu" : 21.052632
    assert (job0["read"], job0["write"], job0["cpu:sys"]) == (60560753, 27278073, 21.052632)
    assert job0["read:iops"] == pytest.approx(14785.340314)
    # second entry: read "bw_bytes" : 60209077, "iops" : 14699.481865;
    #               write "bw_bytes" : 26719502; "sys_cpu" : 17.708333
    assert (job1["read"], job1["write"], job1["cpu:sys"]) == (60209077, 26719502, 17.708333)
    total = values(metrics)
    # each job's rate is over its own runtime ("runtime" : 191 and 193 ms); the group's is the
    # total over the longest one (read "io_bytes" : 11567104 and 11620352, "total_ios" : 2824
    # and 2837; write 5210112 and 5156864), as fio's own group line: not the sum of the rates
    assert total["read"] == pytest.approx((11567104 + 11620352) / 0.193)
    assert total["write"] == pytest.approx((5210112 + 5156864) / 0.193)
    assert total["read:iops"] == pytest.approx((2824 + 2837) / 0.193)
    assert total["read"] < 60560753 + 60209077
    # the slowest, fastest and mean job, as iozone's per-process and the engine's per-stream
    assert (total["read:min_proc"], total["read:max_proc"]) == (60209077, 60560753)
    assert total["read:avg_proc"] == pytest.approx((60560753 + 60209077) / 2)
    assert (total["write:min_proc"], total["write:max_proc"]) == (26719502, 27278073)
    # the sum has no percentiles and no CPU share: they do not add up
    assert "read:lat_p99" not in total and "cpu:sys" not in total
    # its mean latency lies between the jobs' (lat_ns "mean" : 65888.620397 and 66144.827635)
    assert 65888.620397 <= total["read:lat_mean"] <= 66144.827635


def test_two_jobs_of_different_speeds_each_over_its_own_runtime() -> None:
    metrics = parse("two-speeds_write_4k-rate16m_1m_direct_ext4.output.json")
    slow, fast, total = values(metrics, "slow"), values(metrics, "fast"), values(metrics)
    # slow: "io_bytes" : 16777216, "bw_bytes" : 7821545, "runtime" : 2145;
    # fast: "io_bytes" : 16777216, "bw_bytes" : 409200390, "runtime" : 41
    assert (slow["write"], fast["write"]) == (7821545, 409200390)
    assert slow["write"] == pytest.approx(16777216 / 2.145, rel=1e-3)  # its own runtime
    assert total["write"] == pytest.approx(2 * 16777216 / 2.145)  # the total over the longest
    assert (total["write:min_proc"], total["write:max_proc"]) == (7821545, 409200390)
    assert total["write:avg_proc"] == pytest.approx((7821545 + 409200390) / 2)
    # the normal report: "write: IOPS=2200, BW=8804KiB/s (...)(16.0MiB/1861msec)" and
    # "IOPS=516, BW=516MiB/s (...)(16.0MiB/31msec)"; "WRITE: bw=17.2MiB/s ... run=31-1861msec"
    text = values(parse("two-speeds_write_4k-rate16m_1m_direct_ext4.txt"))
    assert text["write"] == pytest.approx(17.2 * MiB)  # fio's own group figure
    assert text["write:iops"] == pytest.approx((2200 * 1.861 + 516 * 0.031) / 1.861)
    assert (text["write:min_proc"], text["write:max_proc"]) == (8804 * KiB, 516 * MiB)


def test_json_group_reporting_is_one_job() -> None:
    # one entry for both jobs: "io_bytes" : 67108864, "bw_bytes" : 1597830095,
    # "iops" : 24380.952381, "sys_cpu" : 19.480519
    got = values(parse("disklab_numjobs2_write_group.output.json"))
    assert (got["write"], got["cpu:sys"]) == (1597830095, 19.480519)
    assert got["write:iops"] == pytest.approx(24380.952381)
    assert "read" not in got


def test_json_after_signal_text_is_parsed() -> None:
    # "fio: terminating on signal 15" precedes the document; "bw_bytes" : 67652785,
    # "iops" : 16516.793409, "99.000000" : 100864
    out = ToolOutput(stdout=fixture_text("fio", "disklab_sigterm_randread.txt"),
                     result_file=fixture_text("fio", "disklab_sigterm_randread.output.json"),
                     exit_status=128)
    got = values(fio.parse_partial(out, {"rw": "randread", "size": 16 * MiB}))
    assert got["read"] == 67652785
    assert got["read:iops"] == pytest.approx(16516.793409)
    assert got["read:lat_p99"] == 100864


# ---------------------------------------------------------------------------------------------
# errors


def test_enospc_normal_output_is_a_tool_error_with_fios_words() -> None:
    out = ToolOutput(stdout=fixture_text("fio", "error_enospc_seqwrite_8g_on_4g_ext4.txt"),
                     stderr=fixture_text("fio", "error_enospc_seqwrite_8g_on_4g_ext4.stderr.txt"),
                     exit_status=1)
    with pytest.raises(ToolError, match="No space left on device") as e:
        fio.parse_result(out, {"rw": "write", "size": 8 * GiB})
    assert "error 28" in str(e.value)
    # what it did before it failed is kept:
    # "  write: IOPS=2273, BW=2273MiB/s (2384MB/s)(3935MiB/1731msec); 0 zone resets"
    partial = values(fio.parse_partial(out, {"rw": "write", "size": 8 * GiB}))
    assert partial["write"] == 2273 * MiB
    assert partial["write:iops"] == 2273


def test_enospc_json_file_with_error_text_before_it() -> None:
    out = ToolOutput(stdout="",
                     stderr=fixture_text("fio", "disklab_enospc_write_tmpfs4m.stderr.txt"),
                     result_file=fixture_text("fio", "disklab_enospc_write_tmpfs4m.output.json"),
                     exit_status=1)
    with pytest.raises(ToolError, match=r"error 28 .*No space left on device"):
        fio.parse_result(out, {"rw": "write", "size": 8 * MiB})
    # "io_bytes" : 4194304, "bw_bytes" : 2097152000
    partial = fio.parse_partial(out, {"rw": "write", "size": 8 * MiB})
    assert values(partial)["write"] == 2097152000
    assert all(m.note == "job error" for m in partial)


def test_no_json_and_fio_messages_is_a_tool_error() -> None:
    # what fio printed for --directory=/nonexistent/x (captured while writing the adapter)
    out = ToolOutput(stdout="fio: file:options.c:1457, func=lstat, error=No such file or "
                            "directory\n",
                     stderr="fio: /nonexistent/x is not a directory\nfio: failed parsing "
                            "directory=/nonexistent/x\n", exit_status=1)
    with pytest.raises(ToolError, match="No such file or directory"):
        fio.parse_result(out, {"rw": "write", "size": MiB})


def test_eta_lines_only_are_not_a_result() -> None:
    with pytest.raises(ParseError) as e:
        parse("randread_4k_qd32_rootfs_eta-always_json-to-file_pipe.txt")
    assert e.value.tool == "fio" and e.value.line is None
    assert "JSON" in e.value.expected


# ---------------------------------------------------------------------------------------------
# live progress

PLANNED = 512 * MiB


def eta_lines(name: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", fixture_text("fio", name))


def updates(name: str, planned: int | None = PLANNED) -> list:
    parser = fio.progress_parser({"rw": "randread", "size": planned} if planned else {})
    return [u for u in (parser.feed("stdout", line) for line in eta_lines(name)) if u]


def test_progress_from_eta_lines_on_a_pipe() -> None:
    ups = updates("randread_4k_qd32_ext4_eta-always_pipe.txt")
    # "Jobs: 1 (f=1)\r" twice, then
    # "Jobs: 1 (f=1): [r(1)][60.0%][r=1354MiB/s][r=347k IOPS][eta 00m:02s]"
    # "Jobs: 1 (f=1): [r(1)][80.0%][r=1364MiB/s][r=349k IOPS][eta 00m:01s]"
    # "Jobs: 1 (f=1): [r(1)][100.0%][r=1276MiB/s][r=327k IOPS][eta 00m:00s]"
    assert [u.rate for u in ups] == [None, None, 1354 * MiB, 1364 * MiB, 1276 * MiB]
    assert [u.done_bytes for u in ups] == [None, None, int(PLANNED * 0.6), int(PLANNED * 0.8),
                                           PLANNED]
    assert [u.phase for u in ups] == ["starting", "starting", "random read", "random read",
                                      "random read"]
    assert ups[2].message == "Jobs: 1 (f=1): [r(1)][60.0%][r=1354MiB/s][r=347k IOPS][eta 00m:02s]"
    assert ups[2].total_bytes == PLANNED


def test_progress_mixed_job_adds_both_rates() -> None:
    ups = updates("randrw70_4k_qd32_rootfs_eta-always_pipe.txt")
    # "Jobs: 1 (f=1): [m(1)][-.-%][r=282MiB/s,w=123MiB/s][r=72.3k,w=31.4k IOPS][eta 00m:00s]"
    last = ups[-1]
    assert last.rate == (282 + 123) * MiB
    assert last.done_bytes is None  # '-.-%': fio does not know
    assert last.phase == "random mixed"


def test_progress_finishing_job_and_padding() -> None:
    ups = updates("randread_4k_qd32_rootfs_eta-always_json-to-file_pipe.txt")
    # last: "Jobs: 1 (f=0): [f(1)][100.0%][r=355MiB/s][r=90.9k IOPS][eta 00m:00s]"
    assert ups[-1].phase == "finishing" and ups[-1].rate == 355 * MiB
    # "[r(1)][75.0%][r=1233MiB/s]...[eta 00m:01s] " ends in a padding space before '\r'
    padded = updates("randread_4k_qd32_ext4_eta-always_eta-newline1s_eta-interval500ms_pipe.txt")
    assert [u.rate for u in padded if u.rate][:2] == [1280 * MiB, 1233 * MiB]


def test_progress_client_mode_bare_unit_and_host_prefix() -> None:
    ups = updates("client-server_jobfile_ext4_normal.txt")
    # "Jobs: 1 (f=1): [_(1),r(1)][75.0%][r=1406M][r=352k IOPS][eta 00m:01s]"
    assert ups[1].rate == 1406 * MiB and ups[1].phase == "random read"
    assert ups[1].done_bytes == int(PLANNED * 0.75)


def test_progress_ignores_other_lines_and_unknown_size() -> None:
    parser = fio.progress_parser({})
    assert parser.feed("stdout", "fio-3.33") is None
    assert parser.feed("stderr", "  read: IOPS=339k, BW=1326MiB/s") is None
    up = parser.feed("stdout", "Jobs: 1 (f=1): [W(1)][50.0%][w=10.0MiB/s][w=10 IOPS][eta 00m:05s]")
    assert up is not None and up.done_bytes is None and up.phase == "write"
    assert up.rate == 10 * MiB


def replay(trace: str) -> list[tuple[str, str]]:
    """Lines as the runner gets them: chunks joined per stream, split on \\r, \\n and \\r\\n,
    a partial line kept until its end arrives (or the stream ends)."""
    rest: dict[str, str] = {}
    lines: list[tuple[str, str]] = []
    for raw in fixture_text("fio", trace).splitlines():
        chunk = json.loads(raw)
        fd = "stdout" if chunk["fd"] == "tty" else chunk["fd"]
        buf = rest.get(fd, "") + chunk["data"]
        parts = re.split(r"\r\n|\r|\n", buf)
        rest[fd] = parts.pop()
        lines += [(fd, p) for p in parts]
    lines += [(fd, r) for fd, r in rest.items() if r]
    return lines


# trace -> ETA lines fio printed (the README's "N ETA/status line(s)", counted by hand)
TRACES = {
    "client-server_jobfile_ext4_normal.trace.jsonl": 3,
    "client-server_jobfile_xfs-su128k-sw10_normal.trace.jsonl": 3,
    "randread_4k_qd32_btrfs_eta-auto_pty.trace.jsonl": 5,
    "randread_4k_qd32_btrfs_status-interval1_normal.trace.jsonl": 0,
    "randread_4k_qd32_ext4_eta-always_eta-newline1s_eta-interval500ms_pipe.trace.jsonl": 8,
    "randread_4k_qd32_ext4_eta-always_pipe.trace.jsonl": 5,
    "randread_4k_qd32_ext4_eta-always_pty.trace.jsonl": 5,
    "randread_4k_qd32_ext4_eta-auto_pty.trace.jsonl": 5,
    "randread_4k_qd32_ext4_status-interval1_json-stream.trace.jsonl": 0,
    "randread_4k_qd32_ext4_status-interval1_normal.trace.jsonl": 0,
    "randread_4k_qd32_rootfs_eta-always_json-to-file_pipe.trace.jsonl": 4,
    "randread_4k_qd32_xfs-su128k-sw10_eta-always_pipe.trace.jsonl": 5,
    "randread_4k_qd32_xfs-su128k-sw10_eta-always_pty.trace.jsonl": 5,
    "randread_4k_qd32_xfs-su128k-sw10_status-interval1_json-stream.trace.jsonl": 0,
    "randrw70_4k_qd32_rootfs_eta-always_pipe.trace.jsonl": 3,
}


@pytest.mark.parametrize(("trace", "count"), TRACES.items(), ids=list(TRACES))
def test_progress_replayed_at_the_tools_own_chunking(trace: str, count: int) -> None:
    parser = fio.progress_parser({"rw": "randread", "size": PLANNED})
    ups = [u for fd, line in replay(trace) if (u := parser.feed(fd, line))]
    assert len(ups) == count
    done = [u.done_bytes for u in ups if u.done_bytes is not None]
    assert done == sorted(done)  # the bar never goes back
    assert all(u.rate is None or u.rate > 0 for u in ups)


# ---------------------------------------------------------------------------------------------
# detection for `disklab import`, and coverage of the fixture set


def test_sniff() -> None:
    assert sniff(fixture_text("fio", "seqwrite_1m_qd1_libaio_direct_ext4_jsonplus.json"))
    assert sniff(fixture_text("fio", "randread_4k_qd32_ext4_eta-always_pipe.txt"))
    assert sniff(fixture_text("fio", "client-server_jobfile_ext4_json.json"))
    assert not sniff(
        fixture_text("fio", "randread_4k_qd32_rootfs_eta-always_json-to-file_pipe.txt"))
    assert not sniff(fixture_text("fio", "job.fio"))
    assert not sniff(fixture_text("fio", "foreign/throughput_t1_r4m_s256m_ext4_excel.txt"))
    assert not sniff(fixture_text("bonnie", "s1g_r512_n16_ext4.txt"))
    assert not sniff(fixture_text("bonnie", "s1g_r512_n16_quiet_ext4.csv"))


# The fixtures that are no result of their own, and what `disklab import` says of each; every
# other file is a run's output and imports as fio's with its figures (the trace.jsonl files are
# replayed above, each in TRACES)
NO_RESULT = {
    "job.fio": "not recognised",  # the job file of the jobfile_* runs
    # a run that wrote its JSON to a file (--output): its stdout is ETA lines only
    "disklab_sigterm_randread.txt": "not recognised",
    "randread_4k_qd32_rootfs_eta-always_json-to-file_pipe.txt": "not recognised",
    # a job that failed: refused with fio's own words, not read as a figure
    "disklab_enospc_write_tmpfs4m.output.json": "error 28 (No space left on device)",
    "error_enospc_seqwrite_8g_on_4g_ext4.txt": "error 28 (No space left on device)",
    # fio --client's terse lines: read by the hosts' client adapter (test_hosts_plan), not
    # imported as a file of their own
    "client/client_2servers_one-killed_terse.txt": "not recognised",
    "client/client_2servers_one-refused_terse.txt": "not recognised",
    "client/client_2servers_randrw_terse.stdout.txt": "not recognised",
    "client/client_2servers_randrw_terse.txt": "not recognised",
}
FIXTURE_FILES = sorted(p.relative_to(FIO).as_posix() for p in FIO.rglob("*")
                       if p.is_file() and p.name != "README.md")


def test_every_trace_is_replayed() -> None:
    assert {f for f in FIXTURE_FILES if f.endswith(".trace.jsonl")} == set(TRACES)


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_every_fixture_file_imports_as_a_user_gets_it(name: str) -> None:
    """What `disklab import` makes of each recorded file: a run's output is fio's with
    figures above zero; a file that is no result is refused with its reason."""
    run, problem = read_output(FIO / name)
    if name.startswith("foreign/"):  # another tool's output is never taken for fio's
        assert run is not None and run.tool == "iozone"
    elif name in NO_RESULT or name.endswith((".stderr.txt", ".trace.jsonl")):
        assert run is None and problem is not None
        assert NO_RESULT.get(name, "not recognised") in problem.message
    else:
        assert problem is None, problem
        assert run is not None and run.tool == "fio"
        assert [m for m in run.metrics if m.value and m.value > 0]


# --- several targets (`on`): one job per target ---------------------------------------------

def test_fio_jobs_become_targets() -> None:
    text = fixture_text("fio", "placed_a+b_write_4m.output.json")
    params = {"rw": "write", "bs": KiB * KiB, "size": 4 * KiB * KiB, "on": "a+b"}
    metrics = get_adapter("fio").parse_result(
        ToolOutput(stdout="", result_file=text), params)
    write = _placed_rows(metrics, "write")
    assert set(write) == {"a", "b", "all"}
    assert _placed_rows(metrics, "write:bytes") == {"a": 4 * KiB * KiB, "b": 4 * KiB * KiB,
                                            "all": 8 * KiB * KiB}
    # each job's own rows carry its target
    jobs = {m.params["job"]: m.params["target"] for m in metrics
            if m.name == "write" and "job" in m.params}
    assert jobs == {"s0-a": "a", "s1-b": "b"}
    # fio does not say when each job started: no start skew is made up (engine and dd give one)
    assert not [m for m in metrics if m.name.endswith(":start_skew")]


def _placed_rows(metrics: list, name: str) -> dict[str, float]:
    return {m.params["target"]: m.value for m in metrics
            if m.name == name and "job" not in (m.params or {})}
