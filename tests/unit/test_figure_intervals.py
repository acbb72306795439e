"""Each figure's own measured interval (issue 44 points 3, 4), from what the tools print: bonnie++'s
phase lines, fio's JSON report (the captures of tests/fixtures), and the samples a figure is
judged from when its neighbours share a sample's time span. The real runs are in
tests/integration/test_verdicts_intervals.py."""

from __future__ import annotations

import pytest

from disklab.core.results.limit_words import row_verdicts
from disklab.core.results.limits import FIGURE_SEP, NO_INTERVAL, Limit, RunFacts, figure_limits
from disklab.core.tools import get_adapter
from disklab.core.tools.base import Measured
from tests.helpers import fixture_text

# bonnie++ 2.00a's stderr as the runner stamps it (a real run: -s 128 -r 64 -n 1 -u root)
BONNIE = [(0.0, "stderr", "Using uid:0, gid:0."),
          (1.815, "stderr", "Writing a byte at a time...done"),
          (1.999, "stderr", "Writing intelligently...done"),
          (2.128, "stderr", "Rewriting...done"),
          (3.319, "stderr", "Reading a byte at a time...done"),
          (3.380, "stderr", "Reading intelligently...done"),
          (6.433, "stderr", "start 'em...done...done...done...done...done..."),
          (6.46, "stderr", "Create files in sequential order...done."),
          (6.46, "stderr", "Stat files in sequential order...done."),
          (6.47, "stdout", "Version 2.00a       ------Sequential Output------")]


def test_bonnie_phases_run_from_the_one_before_to_their_done() -> None:
    found = get_adapter("bonnie").measured(BONNIE, {"size": 128 << 20})
    assert found is not None
    spans = {m.name: (m.start, m.end) for m in found}
    assert list(spans) == ["char_write", "block_write", "rewrite", "char_read", "block_read",
                           "random_seeks", "seq_create", "seq_stat"]
    assert spans["char_write"] == (0.0, 1.815)
    assert spans["block_read"] == (3.319, 3.380)
    assert spans["seq_stat"] == (6.46, 6.46)  # two lines read at once: no time of its own


def test_a_bonnie_phase_without_a_start_or_an_end_has_no_interval() -> None:
    adapter = get_adapter("bonnie")
    unstarted = adapter.measured(BONNIE[1:], {})  # no 'Using uid' (not run as -u USER)
    assert unstarted is not None and "char_write" not in {m.name for m in unstarted}
    killed = [*BONNIE[:3], (2.0, "stderr", "Rewriting..."), (9.0, "stderr", "Reading a byte "
                                                                           "at a time...done")]
    names = {m.name for m in adapter.measured(killed, {}) or []}
    assert names == {"char_write", "block_write"}  # nothing after the phase that did not end


def _result_lines(name: str) -> list[tuple[float, str, str]]:
    return [(0.0, "result", line) for line in fixture_text("fio", name).splitlines()]


def test_fio_figures_are_timed_back_from_its_report_by_each_groups_runtime() -> None:
    fio = get_adapter("fio")
    one = fio.measured(_result_lines("disklab_numjobs2_write_group.output.json"), {})
    end = 1795383778.300
    assert one == [Measured("cpu", pytest.approx(end - 0.077), end),
                   Measured("write", pytest.approx(end - 0.077), end)]
    two = fio.measured(_result_lines("jobfile_seqread-randread_2groups_ext4_json.json"), {})
    assert two is not None
    end = 1795318532.348
    reads = sorted((m.start, m.end) for m in two if m.name == "read")
    # group 1 (3000 ms) ends at the report; group 0 (79 ms) ends where group 1 began
    assert reads == [(pytest.approx(end - 3.079), pytest.approx(end - 3.0)),
                     (pytest.approx(end - 3.0), end)]


def test_fio_without_a_stamped_local_report_gives_no_interval() -> None:
    fio = get_adapter("fio")
    assert fio.measured([(0.0, "stdout", "Jobs: 1 (f=1)")], {}) is None
    client = _result_lines("client-server_jobfile_ext4_json.json")  # stamped in seconds
    assert fio.measured(client, {}) is None


def _samples(rows: list[tuple[float, float, float]], direction: str = "write",
             cpu: float = 10.0) -> list[dict[str, float | str]]:
    """(t, app B/s, device B/s) of one direction ("write" or "read") -> samples of both
    series, with the CPU busy `cpu` %."""
    app_series = "app_wchar_bps" if direction == "write" else "app_rchar_bps"
    out: list[dict[str, float | str]] = []
    for t, app, dev in rows:
        out += [{"t": t, "series": app_series, "value": app},
                {"t": t, "series": f"device_{direction}_bps", "value": dev},
                {"t": t, "series": "cpu_pct", "value": cpu}]
    return out


def test_a_sample_shared_with_a_fast_neighbour_is_left_out_of_a_figure_with_its_own() -> None:
    # a slow phase (2 MB/s into the page cache for 1.8 s), then a fast one whose 180 MB
    # reach the device, the last sample's span shared by both
    samples = _samples([(0.5, 2e6, 0.0), (1.0, 2e6, 0.0), (1.5, 2e6, 0.0),
                        (2.0, 360e6, 360e6)])
    facts = RunFacts(tool="bonnie", duration=2.0)
    found = figure_limits(samples, facts, [Measured("char_write", 0.0, 1.8),
                                           Measured("block_write", 1.8, 2.0)])
    slow = {x.kind for x in found["char_write"]}
    assert "page_cache_write" in slow  # its own samples: nothing reached the device
    fast = {x.kind for x in found["block_write"]}
    assert fast == {"too_short"}  # its one sample is shared: no byte count said of it alone


def test_a_figure_its_tool_did_not_time_says_so() -> None:
    device, cpu = Limit("device", "device busy 99 %"), Limit("cpu", "CPU")
    timed = {"c1": [cpu], f"c1{FIGURE_SEP}": [NO_INTERVAL], f"c1{FIGURE_SEP}write": [device]}
    assert row_verdicts(timed, {"case_id": "c1", "metric": "write:iops"}) == (device,)
    # the run's verdict would be its other figures': not lent
    assert row_verdicts(timed, {"case_id": "c1", "metric": "seeks:latency"}) == (NO_INTERVAL,)
    untimed = {"c2": [cpu]}  # a tool that gives no boundary: its run is its figures' interval
    assert row_verdicts(untimed, {"case_id": "c2", "metric": "write"}) == (cpu,)


def test_a_write_figure_is_not_judged_on_its_intervals_reads_nor_a_read_on_its_writes() -> None:
    """The journal-size study's iozone write figure (0.26 s, one sample) said 'read from the
    page cache: the device read 0 %' beside 'too short': its sample's span held 48 MB that
    the tool's processes read and the device did not. A write figure is judged on what it
    wrote, a read figure on what it read."""
    samples = []
    for t, rchar, wchar in ((0.5, 96e6, 400e6), (1.0, 800e6, 0.0)):
        samples += [{"t": t, "series": "app_rchar_bps", "value": rchar},
                    {"t": t, "series": "app_wchar_bps", "value": wchar},
                    {"t": t, "series": "device_read_bps", "value": 0.0},
                    {"t": t, "series": "device_write_bps", "value": 0.0},
                    {"t": t, "series": "cpu_pct", "value": 50.0}]
    facts = RunFacts(tool="iozone", duration=1.0)
    found = figure_limits(samples, facts, [Measured("write", 0.0, 0.26),
                                           Measured("read", 0.6, 0.9)])
    wrote = {x.kind for x in found["write"]}
    assert "page_cache_read" not in wrote and "page_cache_write" in wrote, wrote
    read = {x.kind for x in found["read"]}
    assert "page_cache_read" in read and "page_cache_write" not in read, read


@pytest.mark.parametrize(("device_bps", "cached"), [(0.0, True), (2e6, True), (300e6, False)])
def test_a_figure_shorter_than_a_sample_is_judged_against_the_bytes_it_moved(
        device_bps: float, cached: bool) -> None:
    """iozone's re-read of 192 MiB from the page cache lasts 0.16 s, inside one sample shared
    with the read beside it: the device cannot have read more of the re-read's bytes than it
    read in that whole sample, so 1 MB there (half a per cent of 192 MiB) still says the page
    cache, 150 MB (three quarters of it) does not."""
    mib192 = float(192 << 20)
    samples = _samples([(0.5, 1.2e9, 0.0), (1.0, 1.2e9, 0.0), (1.5, 1.2e9, device_bps)],
                       "read", cpu=40.0)
    facts = RunFacts(tool="iozone", duration=1.5)
    found = figure_limits(samples, facts, [Measured("read", 0.0, 1.2, mib192 * 5),
                                           Measured("reread", 1.2, 1.36, mib192)])
    kinds = {x.kind for x in found["reread"]}
    assert "too_short" in kinds
    assert ("page_cache_read" in kinds) is cached, found["reread"]
    if cached:
        share = next(x for x in found["reread"] if x.kind == "page_cache_read")
        assert share.evidence["device_share"] == pytest.approx(device_bps * 0.5 / mib192)
    # without the bytes it moved, nothing is said of a figure that has no sample of its own
    unknown = figure_limits(samples, facts, [Measured("read", 0.0, 1.2),
                                             Measured("reread", 1.2, 1.36)])
    assert {x.kind for x in unknown["reread"]} == {"too_short"}


def test_iozone_phases_carry_the_bytes_their_processes_moved() -> None:
    lines = [(10.0, "stdout", "Children see throughput for  4 initial writers = "
                              "  409600.00 kB/sec"),
             (12.0, "stdout", "Children see throughput for  4 rewriters        = "
                              "  819200.00 kB/sec")]
    found = get_adapter("iozone").measured(lines, {"threads": 4, "file_size": 100 << 20})
    assert found is not None
    assert [(m.name, m.moved) for m in found] == [("write", 400 << 20), ("rewrite", 400 << 20)]
    assert found[1].start == pytest.approx(12.0 - (400 << 20) / (819200 * 1024))
