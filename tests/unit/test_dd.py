"""The dd adapter on every recorded dd output (tests/fixtures/dd, GNU coreutils 9.1), on the
summary forms other coreutils versions print, and on the argv it builds.

Expected numbers are read by hand from the files (the line is quoted beside each). The stored
throughput is bytes / seconds of dd's last summary line, in B/s.
"""

from __future__ import annotations

import pytest

from disklab.core.tools import get_adapter
from disklab.core.tools.base import RunTarget, ToolOutput
from disklab.core.tools.dd import DdAdapter, sniff
from disklab.core.vocab.errors import ParseError, ToolError
from tests.helpers import FIXTURES, fixture_text

DD = FIXTURES / "dd"
GiB = 1 << 30
MiB = 1 << 20
dd = DdAdapter()

# (file, mode, bs of its command, bytes, seconds, printed rate in B/s, progress lines)
RECORDED = [
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.77481 s, 387 MB/s"
    ("write_1m_x1024_oflag-direct_progress_ext4.stderr.txt", "write", MiB, GiB, 2.77481,
     387e6, 2),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.57507 s, 417 MB/s"
    ("write_1m_x1024_oflag-direct_progress_ext4-nodelalloc.stderr.txt", "write", MiB, GiB,
     2.57507, 417e6, 2),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 6.23773 s, 172 MB/s"
    ("write_1m_x1024_oflag-direct_progress_ext4-datajournal.stderr.txt", "write", MiB, GiB,
     6.23773, 172e6, 6),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 1.70678 s, 629 MB/s"
    ("write_1m_x1024_oflag-direct_progress_ext4-j16m.stderr.txt", "write", MiB, GiB, 1.70678,
     629e6, 1),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.29976 s, 467 MB/s"
    ("write_1m_x1024_oflag-direct_progress_ext4-j256m.stderr.txt", "write", MiB, GiB, 2.29976,
     467e6, 2),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.600652 s, 1.8 GB/s"
    ("write_1m_x1024_oflag-direct_progress_xfs-su128k-sw10.stderr.txt", "write", MiB, GiB,
     0.600652, 1.8e9, 0),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 1.82893 s, 587 MB/s"
    ("write_1m_x1024_oflag-direct_progress_btrfs.stderr.txt", "write", MiB, GiB, 1.82893,
     587e6, 1),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 1.78761 s, 601 MB/s"
    ("write_1m_x1024_oflag-direct-dsync_progress_ext4.stderr.txt", "write", MiB, GiB, 1.78761,
     601e6, 1),
    # pty, "\r\n": "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.423169 s, 2.5 GB/s"
    ("write_1m_x1024_oflag-direct_progress_ext4_pty.txt", "write", MiB, GiB, 0.423169, 2.5e9, 0),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.708866 s, 1.5 GB/s"
    ("read_1m_iflag-direct_progress_ext4.stderr.txt", "read", MiB, GiB, 0.708866, 1.5e9, 0),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.639976 s, 1.7 GB/s"
    ("read_1m_iflag-direct_progress_ext4-nodelalloc.stderr.txt", "read", MiB, GiB, 0.639976,
     1.7e9, 0),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.726511 s, 1.5 GB/s"
    ("read_1m_iflag-direct_progress_ext4-datajournal.stderr.txt", "read", MiB, GiB, 0.726511,
     1.5e9, 0),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.666735 s, 1.6 GB/s"
    ("read_1m_iflag-direct_progress_ext4-j16m.stderr.txt", "read", MiB, GiB, 0.666735, 1.6e9, 0),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.749206 s, 1.4 GB/s"
    ("read_1m_iflag-direct_progress_ext4-j256m.stderr.txt", "read", MiB, GiB, 0.749206, 1.4e9,
     0),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 1.71654 s, 626 MB/s"
    ("read_1m_iflag-direct_progress_xfs-su128k-sw10.stderr.txt", "read", MiB, GiB, 1.71654,
     626e6, 1),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.868586 s, 1.2 GB/s"
    ("read_1m_iflag-direct_progress_btrfs.stderr.txt", "read", MiB, GiB, 0.868586, 1.2e9, 0),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.26753 s, 474 MB/s"
    ("write_4k_x262144_oflag-direct_progress_ext4.stderr.txt", "write", 4096, GiB, 2.26753,
     474e6, 2),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.30428 s, 466 MB/s"
    ("write_4k_x262144_oflag-direct_progress_ext4-nodelalloc.stderr.txt", "write", 4096, GiB,
     2.30428, 466e6, 2),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.86612 s, 375 MB/s"
    ("write_4k_x262144_oflag-direct_progress_ext4-datajournal.stderr.txt", "write", 4096, GiB,
     2.86612, 375e6, 2),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 10.2433 s, 105 MB/s"
    ("write_4k_x262144_oflag-direct_progress_ext4-j16m.stderr.txt", "write", 4096, GiB, 10.2433,
     105e6, 10),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 10.9465 s, 98.1 MB/s"
    ("write_4k_x262144_oflag-direct_progress_ext4-j256m.stderr.txt", "write", 4096, GiB,
     10.9465, 98.1e6, 10),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 15.5973 s, 68.8 MB/s"
    ("write_4k_x262144_oflag-direct_progress_xfs-su128k-sw10.stderr.txt", "write", 4096, GiB,
     15.5973, 68.8e6, 15),
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 18.0138 s, 59.6 MB/s"
    ("write_4k_x262144_oflag-direct_progress_btrfs.stderr.txt", "write", 4096, GiB, 18.0138,
     59.6e6, 18),
    # pty: "1638400000 bytes (1.6 GB, 1.5 GiB) copied, 29.7141 s, 55.1 MB/s"
    ("write_4k_x400000_oflag-direct_progress_rootfs_pty.txt", "write", 4096, 1638400000,
     29.7141, 55.1e6, 29),
    # SIGUSR1 every second, the last block: "2147483648 bytes (2.1 GB, 2.0 GiB) copied,
    # 26.9221 s, 79.8 MB/s"; each of the 27 blocks' "copied" lines is a progress update
    ("write_4k_x524288_oflag-direct_sigusr1-every-1s_ext4.stderr.txt", "write", 4096,
     2 * GiB, 26.9221, 79.8e6, 26),
    # conv=fdatasync: the last progress line printed straight after the one before, no '\r'
    ("write_1m_x1024_fdatasync_progress_ext4-root.stderr.txt", "write", MiB, GiB, 1.58606,
     677e6, 1),
]


def output(name: str, exit_status: int = 0) -> ToolOutput:
    return ToolOutput("", fixture_text("dd", name), exit_status=exit_status)


@pytest.mark.parametrize(("name", "mode", "bs", "nbytes", "seconds", "printed", "progress"),
                         RECORDED)
def test_each_recorded_run(name, mode, bs, nbytes, seconds, printed, progress) -> None:
    params = {"mode": mode, "block_size": bs, "size": nbytes}
    (metric,) = dd.parse_result(output(name), params)
    assert (metric.name, metric.unit, metric.note) == (mode, "B/s", None)
    assert metric.value == pytest.approx(nbytes / seconds, rel=1e-12)
    # dd's own rounded rate (SI: MB = 10^6) agrees to its 2-3 digits
    assert metric.value == pytest.approx(printed, rel=0.05)
    # status=progress lines (and the final summary) as the runner hands them: split on \r, \n
    parser = dd.progress_parser(params)
    lines = fixture_text("dd", name).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    updates = [u for ln in lines if (u := parser.feed("stderr", ln)) is not None]
    assert len(updates) == progress + 1
    assert updates[-1].done_bytes == nbytes
    assert all(u.total_bytes == nbytes and u.phase == mode for u in updates)
    done = [u.done_bytes for u in updates]
    assert done == sorted(done)


def test_every_fixture_is_listed() -> None:
    listed = {f[0] for f in RECORDED} | {"error_enospc_write_1m_x5120_progress_ext4.stderr.txt"}
    assert {p.name for p in DD.glob("*.txt")} == listed


def test_progress_values_of_one_run() -> None:
    parser = dd.progress_parser({"mode": "write", "size": GiB})
    name = "write_1m_x1024_oflag-direct_progress_ext4-j256m.stderr.txt"
    lines = fixture_text("dd", name).replace("\r", "\n").split("\n")
    updates = [u for ln in lines if (u := parser.feed("stderr", ln)) is not None]
    # "\r543162368 bytes (543 MB, 518 MiB) copied, 1 s, 543 MB/s"
    # "\r946864128 bytes (947 MB, 903 MiB) copied, 2 s, 473 MB/s"
    assert [(u.done_bytes, u.rate) for u in updates[:2]] == [(543162368, 543e6),
                                                             (946864128, 473e6)]


def test_padded_progress_line_on_a_pty() -> None:
    parser = dd.progress_parser({"mode": "write"})
    # "303878144 bytes (304 MB, 290 MiB) copied, 3 s, 101 MB/s " (a space pads a shorter line)
    u = parser.feed("stderr", "303878144 bytes (304 MB, 290 MiB) copied, 3 s, 101 MB/s ")
    assert u is not None and (u.done_bytes, u.rate) == (303878144, 101e6)


def test_full_disk_is_a_tool_error_with_dds_line() -> None:
    name = "error_enospc_write_1m_x5120_progress_ext4.stderr.txt"
    message = "dd: error writing '/mnt/scratch/fs/dd.dat': No space left on device"
    with pytest.raises(ToolError) as info:
        dd.parse_result(output(name, exit_status=1), {"mode": "write"})
    assert str(info.value) == message
    # an imported copy of the same output (exit status unknown) is refused the same way
    with pytest.raises(ToolError):
        dd.parse_result(output(name), {})
    # the progress parser shows the error line as it comes
    u = dd.progress_parser({"mode": "write"}).feed("stderr", message)
    assert u is not None and u.phase == "error"


def test_full_disk_partial_is_what_was_copied() -> None:
    name = "error_enospc_write_1m_x5120_progress_ext4.stderr.txt"
    (m,) = dd.parse_partial(output(name, exit_status=1), {"mode": "write"})
    # "3871+0 records out" / "4059037696 bytes (4.1 GB, 3.8 GiB) copied, 7.82774 s, 519 MB/s"
    assert (m.name, m.note) == ("write", "partial")
    assert m.value == pytest.approx(4059037696 / 7.82774)


def test_killed_before_the_summary_partial_uses_the_last_progress_line() -> None:
    text = fixture_text("dd", "write_1m_x1024_oflag-direct_progress_ext4.stderr.txt")
    cut = text[: text.index("\n1024+0")]
    # last progress line: "788529152 bytes (789 MB, 752 MiB) copied, 2 s, 394 MB/s"
    (m,) = dd.parse_partial(ToolOutput("", cut, exit_status=None), {"mode": "write"})
    assert m.value == pytest.approx(788529152 / 2) and m.note == "partial"
    with pytest.raises(ParseError, match="only progress lines"):
        dd.parse_result(ToolOutput("", cut), {"mode": "write"})


# Summary forms of other coreutils versions and locales (dd.c prints them with these formats).
OTHER_FORMS = [
    # coreutils 8.2x: SI size only in the parentheses
    ("1024+0 records in\n1024+0 records out\n"
     "1073741824 bytes (1.1 GB) copied, 2.77481 s, 387 MB/s\n", 1073741824 / 2.77481),
    # one byte: singular, no parentheses, kB/s
    ("0+1 records in\n0+1 records out\n1 byte copied, 0.000113 s, 8.8 kB/s\n", 1 / 0.000113),
    # a decimal comma (de_DE locale)
    ("1024+0 records in\n1024+0 records out\n"
     "1073741824 bytes (1,1 GB, 1,0 GiB) copied, 2,5 s, 429 MB/s\n", 1073741824 / 2.5),
    # %g seconds in exponent form
    ("1+0 records in\n1+0 records out\n512 bytes copied, 1e-05 s, 51.2 MB/s\n", 512 / 1e-05),
    # zero seconds: dd's printed rate is all there is
    ("1+0 records in\n1+0 records out\n512 bytes copied, 0 s, 1.5 GB/s\n", 1.5e9),
    # nothing copied
    ("0+0 records in\n0+0 records out\n0 bytes copied, 0 s, Infinity B/s\n", 0.0),
]


@pytest.mark.parametrize(("text", "value"), OTHER_FORMS)
def test_other_summary_forms(text: str, value: float) -> None:
    (m,) = dd.parse_result(ToolOutput("", text), {"mode": "write"})
    assert m.value == pytest.approx(value)


@pytest.mark.parametrize(("rate", "unit", "bps"), [
    ("512", "B/s", 512), ("8.8", "kB/s", 8800), ("387", "MB/s", 387e6), ("1.5", "GB/s", 1.5e9),
    ("1.2", "TB/s", 1.2e12), ("4", "KiB/s", 4096), ("2", "MiB/s", 2 * MiB),
    ("1", "GiB/s", GiB), ("1", "EB/s", 1e18), ("Infinity", "B/s", None),
])
def test_progress_rate_units(rate: str, unit: str, bps: float | None) -> None:
    u = dd.progress_parser({}).feed("stderr", f"1000 bytes (1 kB) copied, 1 s, {rate} {unit}")
    assert u is not None and u.rate == (pytest.approx(bps) if bps is not None else None)


def test_partial_blocks_are_noted() -> None:
    text = ("1023+1 records in\n1023+1 records out\n"
            "1073741000 bytes (1.1 GB, 1.0 GiB) copied, 2 s, 537 MB/s\n")
    (m,) = dd.parse_result(ToolOutput("", text), {"mode": "read", "block_size": MiB})
    assert m.note == "1 partial block(s) read; 1 partial block(s) written"
    assert m.value == pytest.approx(1073741000 / 2)


def test_byte_count_must_fit_records_and_bs() -> None:
    text = fixture_text("dd", "write_1m_x1024_oflag-direct_progress_ext4.stderr.txt")
    with pytest.raises(ParseError) as info:  # 1024 records of 4 KiB are not 1 GiB
        dd.parse_result(ToolOutput("", text), {"mode": "write", "block_size": 4096})
    # lines as the runner logs them: "", 2 progress redraws, records in, records out, copied
    assert info.value.tool == "dd" and info.value.line == 6
    assert "records out" in info.value.expected


def test_warnings_are_notes_not_errors() -> None:
    text = ("dd: warning: partial read (512 bytes); suggest iflag=fullblock\n"
            "0+1 records in\n0+1 records out\n512 bytes copied, 0.001 s, 512 kB/s\n")
    (m,) = dd.parse_result(ToolOutput("", text), {"mode": "read"})
    assert "warning: partial read" in (m.note or "") and m.value == pytest.approx(512 / 0.001)


@pytest.mark.parametrize(("text", "line", "expected"), [
    ("", None, "summary"),
    ("hello\n", None, "summary"),
    ("1024+0 records in\n1024+0 records out\n", 2, "copied"),
    ("1024+0 records out\n", 1, "records in"),
    ("1024+0 records in\n1024+0 records out\n1073741824 bytes (1.1 GB) copied, x s, 3 MB/s\n", 3,
     "copied"),
])
def test_bad_input_names_dd_the_line_and_what_was_expected(text, line, expected) -> None:
    with pytest.raises(ParseError) as info:
        dd.parse_result(ToolOutput("", text), {"mode": "write"})
    assert info.value.tool == "dd" and info.value.line == line
    assert expected in info.value.expected


def test_a_failed_run_without_a_message_is_still_a_tool_error() -> None:
    with pytest.raises(ToolError, match="status 1"):
        dd.parse_result(ToolOutput("", "1+0 records in\n1+0 records out\n"
                                       "512 bytes copied, 1 s, 512 B/s\n", exit_status=1),
                        {"mode": "write"})


def test_sniff_knows_dd_outputs_only() -> None:
    for path in DD.glob("*.txt"):
        assert sniff(fixture_text("dd", path.name)), path.name
    for path in (FIXTURES / "iozone").glob("*.txt"):
        assert not sniff(fixture_text("iozone", path.name)), path.name


def test_import_has_no_direction_and_keeps_the_size() -> None:
    (m,) = dd.parse_result(output("read_1m_iflag-direct_progress_btrfs.stderr.txt"), {})
    # "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.868586 s, 1.2 GB/s"
    assert (m.name, m.params) == ("copy", {"size": 1073741824})
    assert m.value == pytest.approx(1073741824 / 0.868586)
    assert "direction unknown" in (m.note or "")


TARGET = RunTarget(directory="/mnt/x", tag="c2r1")


def test_write_argv() -> None:
    plain = dd.build_command({"mode": "write", "block_size": MiB, "size": 64 * MiB,
                              "direct": False, "sync": False}, TARGET)
    assert plain.argv == ("dd", "if=/dev/zero", "of=/mnt/x/disklab-c2r1.dd", "bs=1048576",
                          "count=64", "conv=fdatasync", "status=progress")
    assert plain.files == ("/mnt/x/disklab-c2r1.dd",) and plain.planned_bytes == 64 * MiB
    assert plain.prepare == () and not plain.reads_after_prepare and plain.cwd == "/mnt/x"
    direct = dd.build_command({"mode": "write", "block_size": 4096, "size": 64 * MiB,
                               "direct": True, "sync": True}, TARGET)
    assert direct.argv == ("dd", "if=/dev/zero", "of=/mnt/x/disklab-c2r1.dd", "bs=4096",
                           "count=16384", "oflag=direct,dsync", "status=progress")
    synced = dd.build_command({"mode": "write", "block_size": MiB, "size": MiB,
                               "direct": False, "sync": True}, TARGET)
    assert synced.argv[-3:] == ("oflag=dsync", "conv=fdatasync", "status=progress")


def test_read_argv_lays_out_the_file_first() -> None:
    cmd = dd.build_command({"mode": "read", "block_size": MiB, "size": 32 * MiB,
                            "direct": True, "sync": False}, TARGET)
    assert cmd.prepare == (("dd", "if=/dev/zero", "of=/mnt/x/disklab-c2r1.dd", "bs=1048576",
                            "count=32", "oflag=direct", "conv=fsync"),)
    assert cmd.argv == ("dd", "if=/mnt/x/disklab-c2r1.dd", "of=/dev/null", "bs=1048576",
                        "count=32", "iflag=direct", "status=progress")
    assert cmd.reads_after_prepare and cmd.files == ("/mnt/x/disklab-c2r1.dd",)
    buffered = dd.build_command({"mode": "read", "block_size": MiB, "size": 32 * MiB,
                                 "direct": False, "sync": False}, TARGET)
    assert buffered.prepare[0][-1] == "conv=fsync" and "oflag=direct" not in buffered.prepare[0]
    assert buffered.argv[-1] == "status=progress" and "iflag=direct" not in buffered.argv


@pytest.mark.parametrize(("params", "key", "words"), [
    ({"block_size": MiB, "size": MiB + 512}, "size", "not a multiple"),
    ({"block_size": MiB, "size": 4096}, "size", "below block_size"),
    ({"block_size": 1000, "size": 1000 * 8, "direct": True}, "block_size", "512"),
])
def test_check(params: dict, key: str, words: str) -> None:
    problems = dd.check({"mode": "write", **params})
    assert any(k == key and words in msg for k, msg in problems), problems
    assert dd.check({"mode": "write", "block_size": MiB, "size": 8 * MiB, "direct": True}) == []


def test_registry() -> None:
    assert isinstance(get_adapter("dd"), DdAdapter)
    assert dd.version_argv() == ("dd", "--version")
