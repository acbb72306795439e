"""dd's outputs as recorded in tests/fixtures/dd (GNU coreutils 9.1): summary, progress, errors.

Expected numbers are read by hand from the files (quoted beside each)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from disklab.core.proc.tool import ToolProcess
from disklab.core.tools.base import RunTarget, ToolOutput
from disklab.core.tools.dd import DdAdapter, sniff
from disklab.core.vocab.errors import ParseError, ToolError
from tests.helpers import FIXTURES, fixture_text

DD = FIXTURES / "dd"
dd = DdAdapter()


def parse(name: str, mode: str, exit_status: int = 0) -> list:
    text = fixture_text("dd", name)
    return dd.parse_result(ToolOutput("", text, exit_status=exit_status), {"mode": mode})


@pytest.mark.parametrize(
    ("name", "mode", "nbytes", "seconds"),
    [
        # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.77481 s, 387 MB/s"
        ("write_1m_x1024_oflag-direct_progress_ext4.stderr.txt", "write", 1073741824, 2.77481),
        # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.708866 s, 1.5 GB/s"
        ("read_1m_iflag-direct_progress_ext4.stderr.txt", "read", 1073741824, 0.708866),
        # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 18.0138 s, 59.6 MB/s"
        ("write_4k_x262144_oflag-direct_progress_btrfs.stderr.txt", "write", 1073741824, 18.0138),
        # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 1.78761 s, 601 MB/s"
        ("write_1m_x1024_oflag-direct-dsync_progress_ext4.stderr.txt", "write", 1073741824,
         1.78761),
        # pty capture, "\r\n" line ends: "1638400000 bytes (1.6 GB, 1.5 GiB) copied, 29.7141 s"
        ("write_4k_x400000_oflag-direct_progress_rootfs_pty.txt", "write", 1638400000, 29.7141),
        # SIGUSR1 every second prints full summaries; the last is the result: "2147483648 bytes
        # (2.1 GB, 2.0 GiB) copied, 26.9221 s, 79.8 MB/s"
        ("write_4k_x524288_oflag-direct_sigusr1-every-1s_ext4.stderr.txt", "write", 2147483648,
         26.9221),
    ],
)
def test_throughput_is_bytes_over_seconds_of_the_summary(name, mode, nbytes, seconds) -> None:
    (metric,) = parse(name, mode)
    assert metric.name == mode and metric.unit == "B/s"
    assert metric.value == pytest.approx(nbytes / seconds)


def test_every_fixture_parses_and_agrees_with_the_printed_rate() -> None:
    """Each summary's own rate (SI units: MB = 10^6) matches bytes/seconds to its rounding."""
    files = [p for p in DD.iterdir() if p.suffix == ".txt" and "error" not in p.name]
    assert len(files) >= 20
    for path in files:
        text = fixture_text("dd", path.name)
        (metric,) = dd.parse_result(ToolOutput("", text), {"mode": "write"})
        last = [ln for ln in text.replace("\r", "\n").splitlines() if " copied, " in ln]
        rate, unit = last[-1].split(", ")[-1].split()
        printed = float(rate) * {"kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9}[unit]
        assert metric.value == pytest.approx(printed, rel=0.06), path.name


def test_full_disk_is_a_tool_error_and_partial_keeps_what_was_copied() -> None:
    name = "error_enospc_write_1m_x5120_progress_ext4.stderr.txt"
    with pytest.raises(ToolError, match="No space left on device"):
        parse(name, "write", exit_status=1)
    text = fixture_text("dd", name)
    (partial,) = dd.parse_partial(ToolOutput("", text, exit_status=1), {"mode": "write"})
    # "4059037696 bytes (4.1 GB, 3.8 GiB) copied, 7.82774 s, 519 MB/s"
    assert partial.value == pytest.approx(4059037696 / 7.82774)
    assert partial.note == "partial"


def test_progress_lines_give_bytes_done_and_the_rate() -> None:
    parser = dd.progress_parser({"mode": "write"})
    # "425721856 bytes (426 MB, 406 MiB) copied, 1 s, 425 MB/s"
    update = parser.feed("stderr", "425721856 bytes (426 MB, 406 MiB) copied, 1 s, 425 MB/s")
    assert update is not None
    assert update.done_bytes == 425721856 and update.rate == 425e6
    assert parser.feed("stderr", "1024+0 records in") is None


def test_replayed_run_gives_progress_through_the_real_pipe(tmp_path: Path) -> None:
    """Replay a recorded dd run (its chunks, '\\r' as separate 1-byte writes) through a real
    process and pipe at 20x speed: the lines split on '\\r' give rising progress."""
    trace = DD / "write_1m_x1024_oflag-direct_progress_ext4.trace.jsonl"
    script = tmp_path / "replay.py"
    script.write_text(
        "import json, sys, time\n"
        f"chunks = [json.loads(l) for l in open({str(trace)!r})]\n"
        "start = time.monotonic()\n"
        "for c in chunks:\n"
        "    time.sleep(max(0, c['t'] / 20 - (time.monotonic() - start)))\n"
        "    sys.stderr.write(c['data']); sys.stderr.flush()\n")
    parser = dd.progress_parser({"mode": "write"})
    seen = []
    with ToolProcess([sys.executable, str(script)]) as p:
        p.start()
        while not p.poll():
            for line in p.read(0.5):
                u = parser.feed(line.stream, line.text)
                if u is not None:
                    seen.append(u.done_bytes)
        stderr = p.output("stderr")
    assert seen == sorted(seen) and seen[0] == 425721856 and seen[-1] == 1073741824
    (metric,) = dd.parse_result(ToolOutput("", stderr), {"mode": "write"})
    assert metric.value == pytest.approx(1073741824 / 2.77481)
    assert len([json.loads(x) for x in trace.read_text().splitlines()]) > 3


@pytest.mark.parametrize("text", ["", "garbage\n", "1024+0 records in\n1024+0 records out\n",
                                  "\ufffd\ufffd copied, x s\n"])
def test_bad_input_names_dd_and_what_was_expected(text: str) -> None:
    with pytest.raises(ParseError) as info:
        dd.parse_result(ToolOutput("", text), {"mode": "write"})
    assert info.value.tool == "dd" and "expected" in str(info.value)


def test_import_without_a_command_line_stores_copy_with_size() -> None:
    text = fixture_text("dd", "read_1m_iflag-direct_progress_ext4.stderr.txt")
    assert sniff(text)
    (m,) = dd.parse_result(ToolOutput("", text), {})
    assert m.name == "copy" and m.params == {"size": 1073741824}


def test_argv_has_no_shell_and_uses_the_right_flags() -> None:
    target = RunTarget(directory="/mnt/x", tag="t1")
    w = dd.build_command({"mode": "write", "block_size": 1 << 20, "size": 8 << 20,
                          "direct": False, "sync": False}, target)
    assert w.argv == ("dd", "if=/dev/zero", "of=/mnt/x/disklab-t1.dd", "bs=1048576", "count=8",
                      "conv=fdatasync", "status=progress")
    r = dd.build_command({"mode": "read", "block_size": 1 << 20, "size": 8 << 20,
                          "direct": True, "sync": False}, target)
    assert r.argv[-2:] == ("iflag=direct", "status=progress")
    assert r.prepare[0][-2:] == ("oflag=direct", "conv=fsync") and r.reads_after_prepare
    assert dd.check({"block_size": 1 << 20, "size": 1000}) != []
