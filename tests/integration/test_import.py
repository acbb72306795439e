"""`disklab import`: outputs people already have become sessions with the numbers in the files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FIX = Path(__file__).parents[1] / "fixtures"


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=120)


def results(library: Path, session: str) -> dict[str, dict]:
    shown = disklab("show", session, "--library", str(library), "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["session"]["status"] == "imported"
    return {r["metric"]: r for r in doc["results"]}


def test_import_detects_each_tool_and_keeps_the_printed_numbers(tmp_path: Path) -> None:
    library = tmp_path / "l.sqlite3"
    files = [
        FIX / "fio" / "seqwrite_1m_qd1_libaio_direct_ext4_jsonplus.json",
        FIX / "bonnie" / "s1g_r512_n16_quiet_ext4.csv",
        FIX / "dd" / "write_1m_x1024_oflag-direct_progress_ext4.stderr.txt",
    ]
    done = disklab("import", *map(str, files), "--library", str(library), "--config", "ext4",
                   "--json")
    assert done.returncode == 0, done.stderr
    imported = json.loads(done.stdout)["imported"]
    assert [i["tool"] for i in imported] == ["fio", "bonnie", "dd"]

    fio = results(library, files[0].name)
    # jobs[0].write.bw_bytes = 4588640273, iops = 4376.068376
    assert fio["write"]["mean"] == 4588640273 and fio["write"]["config"] == "ext4"
    assert fio["write:iops"]["mean"] == pytest.approx(4376.068376)
    assert fio["write"]["params"]["bs"] == 1 << 20

    bonnie = results(library, files[1].name)
    # CSV: ...,2305,62,178478,46,930923,28,5421,99,+++++,+++,... (K/sec, %CPU)
    assert bonnie["block_write"]["mean"] == 178478 * 1024
    assert bonnie["char_write"]["mean"] == 2305 * 1024
    assert bonnie["rewrite:cpu"]["mean"] == 28
    assert bonnie["block_read"]["mean"] is None
    assert "too fast to measure" in bonnie["block_read"]["notes"]

    dd = results(library, files[2].name)
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.77481 s, 387 MB/s"
    assert dd["copy"]["mean"] == pytest.approx(1073741824 / 2.77481)

    transcript = disklab("export", files[2].name, "--format", "json", "-o",
                         str(tmp_path / "x.json"), "--library", str(library))
    assert transcript.returncode == 0


def test_import_of_iozone_throughput_output(tmp_path: Path) -> None:
    library = tmp_path / "l.sqlite3"
    path = FIX / "iozone" / "throughput_t1_r4m_s256m_ext4_excel.txt"
    text = path.read_text()
    done = disklab("import", str(path), "--library", str(library))
    assert done.returncode == 0, done.stderr
    r = results(library, path.name)
    line = next(x for x in text.splitlines() if "Children see throughput" in x and
                "initial writers" in x)
    kb = float(line.split("=")[1].split()[0])
    assert r["write"]["mean"] == pytest.approx(kb * 1024)
    assert r["write"]["params"]["threads"] == 1


def test_unknown_content_is_refused_with_exit_2(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("my disk was fast yesterday\n")
    done = disklab("import", str(junk), "--library", str(tmp_path / "l.sqlite3"))
    assert done.returncode == 2
    assert "not recognised" in done.stderr and "--tool" in done.stderr
