"""The verdicts of core.results.limits from samples as the monitor records them: each kind at
its named threshold, with its evidence; a row's verdict from its runs'; nothing guessed."""

from __future__ import annotations

from disklab.core.results import limit_words, limits
from disklab.core.results.compare import compare_results
from disklab.core.results.documents import cell_json, pivot_cell_json, pivot_csv
from disklab.core.results.limits import Limit, RunFacts, row_limits, run_facts, run_limits
from disklab.core.results.pivot import build_pivot
from disklab.core.results.tables import comparison_table, pivot_table


def samples(**series: list[float]) -> list[dict[str, object]]:
    return [{"series": name, "value": v} for name, values in series.items() for v in values]


FACTS = RunFacts(tool="fio", duration=10.0, threads=1, queue_depth=8, cpus=2,
                 dirty_threshold=400e6)


def test_a_device_busy_at_the_threshold_is_the_limit_with_its_queue() -> None:
    busy = samples(cpu_pct=[20, 20], device_busy_pct=[99, 99], device_in_flight=[7.8, 7.8])
    (limit,) = run_limits(busy, FACTS)
    assert limit == Limit("device", "device busy 99 %, 7.8 of 8 requests in flight",
                          {"busy_pct": 99.0, "in_flight": 7.8, "asked": 8.0})
    idle = samples(cpu_pct=[20, 20], device_busy_pct=[limits.DEVICE_BUSY_PCT - 1] * 2)
    assert [x.kind for x in run_limits(idle, FACTS)] == ["none"]


def test_more_requests_in_flight_than_the_tool_keeps_are_said_as_such() -> None:
    """The device's average queue above the tool's (others' I/O, a request split by the
    kernel): never '13.6 of 8 requests in flight' (issue 49, point 6)."""
    busy = samples(cpu_pct=[20, 20], device_busy_pct=[99, 99], device_in_flight=[13.6, 13.6])
    (limit,) = run_limits(busy, FACTS)
    assert limit.words == ("device busy 99 %, 13.6 requests in flight at the device, more "
                           "than the 8 the tool keeps")
    assert "of 8" not in limit.words and limit.evidence["asked"] == 8.0


def test_cpu_per_thread_or_the_whole_machine() -> None:
    (limit,) = run_limits(samples(cpu_pct=[98, 98]), FACTS)
    assert limit.words == "CPU: fio at 98 % of a core"
    four = RunFacts(tool="fio", duration=10.0, threads=4, cpus=8)
    assert run_limits(samples(cpu_pct=[200, 200]), four)[0].kind == "none"
    (limit,) = run_limits(samples(cpu_pct=[30, 30], machine_cpu_pct=[97, 99]), four)
    assert limit.kind == "cpu" and limit.evidence["machine_cpu_pct"] == 98
    # a tool asleep on a busy machine was not waiting for a CPU
    idle = samples(cpu_pct=[0.4, 0.4], machine_cpu_pct=[99, 99])
    assert run_limits(idle, four)[0].kind == "none"


def test_the_page_cache_read_and_write_shares() -> None:
    mib = float(1 << 20)
    read = samples(cpu_pct=[10, 10], app_rchar_bps=[100 * mib, 100 * mib],
                   device_read_bps=[2 * mib, 2 * mib])
    (limit,) = run_limits(read, FACTS)
    assert limit.words == "read from the page cache: the device read 2 % of it"
    wrote = samples(cpu_pct=[10, 10], app_wchar_bps=[100 * mib] * 2,
                    device_write_bps=[31 * mib] * 2)
    (limit,) = run_limits(wrote, FACTS)
    assert limit.words == "writes absorbed by the page cache: 31 % reached the device"
    # a run that barely read says nothing of the cache
    tiny = samples(cpu_pct=[10, 10], app_rchar_bps=[1000, 1000], device_read_bps=[0, 0])
    assert run_limits(tiny, FACTS)[0].kind == "none"


def test_write_back_when_dirty_holds_near_the_threshold() -> None:
    held = samples(cpu_pct=[10] * 3, dirty_bytes=[380e6, 390e6, 395e6])
    (limit,) = run_limits(held, FACTS)
    assert limit.kind == "writeback" and limit.evidence["threshold"] == 400e6
    no_threshold = RunFacts(tool="fio", duration=10.0)
    assert run_limits(held, no_threshold)[0].kind == "none"
    # a slow device: most of the held pages are under write-back, not dirty; the kernel
    # throttles on their sum, judged while the tool wrote (not after it stopped)
    queued = samples(cpu_pct=[10] * 4, dirty_bytes=[50e6, 60e6, 40e6, 0.0],
                     writeback_bytes=[300e6, 290e6, 300e6, 20e6],
                     app_wchar_bps=[9e6, 8e6, 8e6, 0.0])
    (limit,) = run_limits(queued, FACTS)
    assert limit.kind == "writeback" and limit.evidence["dirty_bytes"] == 350e6
    assert limit.words == ("write-back throttling: Dirty + Writeback held at 88 % of the "
                           "kernel's threshold (381 MiB)")
    below = samples(cpu_pct=[10] * 3, dirty_bytes=[100e6] * 3,
                    writeback_bytes=[limits.WRITEBACK_SHARE * 400e6 - 101e6] * 3)
    assert run_limits(below, FACTS)[0].kind == "none"


def test_the_queue_depth_asked_is_only_a_direct_run_s() -> None:
    """Buffered I/O's requests are the kernel's (read-ahead, write-back): no depth was asked."""
    direct = limits.run_facts({"tool": "engine", "params": {"queue_depth": 8, "direct": True,
                                                            "streams": 2}}, 3.0, {})
    assert (direct.queue_depth, direct.threads) == (8, 2)
    buffered = limits.run_facts({"tool": "engine", "params": {"queue_depth": 8,
                                                              "direct": False}}, 3.0, {})
    assert buffered.queue_depth is None
    fio = limits.run_facts({"tool": "fio", "params": {"iodepth": 4, "direct": 0}}, 3.0,
                           {"page_cache_limit": {"tests": {"test[1]": 64 << 20}}})
    assert fio.queue_depth is None and fio.page_cache_limit is None  # no test_index given
    limited = limits.run_facts({"tool": "fio", "params": {}, "test_index": 0}, 3.0,
                               {"page_cache_limit": {"tests": {"test[1]": 64 << 20}}})
    assert limited.page_cache_limit == 64 << 20


def test_too_short_and_too_few_samples() -> None:
    (limit,) = run_limits(samples(cpu_pct=[99, 99]), RunFacts(tool="dd", duration=0.2))
    assert limit.kind == "too_short" and limit.evidence["seconds"] == 0.2
    assert run_limits(samples(cpu_pct=[99]), FACTS)[0].kind == "too_short"


def test_a_row_takes_the_kinds_of_at_least_half_its_runs() -> None:
    device = Limit("device", "device busy 99 %", {"busy_pct": 99.0})
    device2 = Limit("device", "device busy 95 %", {"busy_pct": 95.0})
    cpu = Limit("cpu", "CPU", {"cpu_pct": 95.0})
    (row,) = row_limits([[device], [device2, cpu], [Limit("none", "nothing found")]])
    assert row.kind == "device" and row.evidence == {"busy_pct": 97.0}
    assert row.words == "device busy 99 % (2 of 3 runs)"
    # half the runs each: both are said, with how many runs found them
    assert [(x.kind, x.words) for x in row_limits([[cpu], [device]])] == [
        ("device", "device busy 99 % (1 of 2 runs)"), ("cpu", "CPU (1 of 2 runs)")]
    assert [x.kind for x in row_limits([])] == ["unknown"]


def test_a_pivot_and_a_comparison_say_what_limited_their_cells() -> None:
    """Rows carrying their verdicts (with_limits) give each pivot and comparison cell its
    verdict: one line under the table per kind, with the cells it names and its evidence as
    ranges, the words and evidence in the cell's tooltip and in the JSON."""
    device = Limit("device", "device busy 99 %, 7.8 of 8 requests in flight",
                   {"busy_pct": 99.0, "in_flight": 7.8, "asked": 8.0})
    device2 = Limit("device", "device busy 95 %, 7.1 of 8 requests in flight",
                    {"busy_pct": 95.0, "in_flight": 7.1, "asked": 8.0})
    cache = Limit("page_cache_read", "read from the page cache: the device read 2 % of it",
                  {"device_share": 0.02})

    def row(case: str, bs: int, mean: float) -> dict[str, object]:
        return {"config": "ext4", "tool": "fio", "metric": "read", "unit": "B/s",
                "case_id": case, "params": {"bs": bs}, "values": [mean], "mean": mean,
                "stddev": None, "n": 1}

    rows = limit_words.with_limits([row("a", 4096, 1e8), row("b", 65536, 2e8), row("c", 1 << 20,
                                                                              3e9)],
                              {"a": [device], "b": [device2], "c": [cache]})
    p = build_pivot(rows, ("bs",), ("test",))
    note = pivot_table(p).note
    assert ("limited by device (busy 95–99 %, 7.1–7.8 in flight): every cell but bs=1m\n"
            "limited by reads from the page cache (the device read 2 %): bs=1m") in note
    tip = pivot_table(p).tips[0][1]
    assert "device busy 99 %, 7.8 of 8 requests in flight" in tip and "busy_pct 99 %" in tip
    assert pivot_cell_json(p, 2, 0)["limited_by"] == [cache.to_json()]
    assert pivot_csv(p).splitlines()[0].endswith("read limited by")
    # an imported row (no verdicts of its case) is not known; rows never judged say nothing
    unjudged = build_pivot([row("a", 4096, 1e8)], ("bs",), ("test",))
    assert "limited by" not in pivot_table(unjudged).note
    assert pivot_cell_json(unjudged, 0, 0)["limited_by"] is None
    (imported,) = limit_words.with_limits([row("x", 4096, 1e8)], {})
    assert limit_words.limits_of(imported) == (limits.UNKNOWN,)
    # a comparison of two sessions: every cell device-limited, said once
    same = limit_words.with_limits([row("a", 4096, 1e8), row("b", 4096, 2e8)],
                              {"a": [device], "b": [device2]})
    c = compare_results([("1 a", same[:1]), ("2 b", same[1:])])
    table = comparison_table(c)
    assert "limited by device (busy 95–99 %, 7.1–7.8 in flight): every cell" in table.note
    assert "busy_pct 95 %" in table.tips[1][1]
    assert cell_json(c, "2 b", c.columns[0])["limited_by"] == [device2.to_json()]


def test_a_note_names_whole_rows_or_columns_rather_than_their_cells() -> None:
    """A case's figures fill a row or a column of a table: the note names the row or column
    once, or the few it does not hold for."""
    short = Limit("too_short", "t", {"seconds": 0.5})
    cpu = Limit("cpu", "c", {"per_thread_pct": 95.0})
    device = Limit("device", "d", {"busy_pct": 99.0})
    cells = [(row, col, [short, *([cpu] if col.startswith("read") else [])])
             for row in ("ordered", "journal") for col in ("write", "write:iops", "read")]
    assert limit_words.limits_note(cells) == ("limited by too short (0.50 s): every cell\n"
                                         "limited by CPU (95 % of a core): read")
    rows = [(row, col, [short] if row == "x" else [device]) for row in ("a", "b", "c", "x")
            for col in ("w", "r")]
    assert limit_words.limits_note(rows) == ("limited by too short (0.50 s): x\n"
                                        "limited by device (busy 99 %): every cell but x")
    assert limit_words.limits_note([("a", "w", None)]) == ""


def test_a_write_only_case_is_never_read_from_the_page_cache() -> None:
    """The engine's write case: the device read nothing, and the tool's rchar is its own
    start-up (the interpreter reading its modules). That is no page-cache read (it was shown
    as one beside every write row); the same samples of a read case are."""
    samples = [{"series": name, "value": value} for _ in range(5) for name, value in
               [("cpu_pct", 20.0), ("app_rchar_bps", 30e6), ("device_read_bps", 0.0)]]
    host = {"cpu_count": 2}
    write = run_facts({"tool": "engine", "params": {"mode": "write", "direct": False}}, 5.0,
                      host)
    read = run_facts({"tool": "engine", "params": {"mode": "read", "direct": False}}, 5.0,
                     host)
    assert not write.reads and read.reads
    assert "page_cache_read" not in [lim.kind for lim in run_limits(samples, write, 5.0)]
    assert "page_cache_read" in [lim.kind for lim in run_limits(samples, read, 5.0)]


def test_a_tool_waits_for_each_request_when_synchronous_or_direct_at_depth_one() -> None:
    """Which cases measure the device's latency: synchronous writes, direct I/O one request
    at a time (dd, iozone: no queue of their own; the engine and fio at depth 1); not direct
    I/O with a deeper queue, nor buffered I/O."""
    host: dict = {"cpu_count": 2}

    def waits(tool: str, **params) -> bool:
        return run_facts({"tool": tool, "params": params}, 10.0, host).waits

    assert waits("dd", mode="write", direct=False, sync=True)
    assert waits("iozone", sync=True, direct=False)
    assert waits("dd", mode="read", direct=True)
    assert waits("engine", mode="randread", direct=True, queue_depth=1)
    assert not waits("engine", mode="randread", direct=True, queue_depth=32)
    assert not waits("fio", rw="randread", direct=True, iodepth=8)
    assert not waits("dd", mode="write", direct=False)
    assert waits("engine", mode="read", direct=False, queue_depth=1)  # buffered reads wait
    assert waits("fio", rw="randread", direct=False, iodepth=16)  # buffered: no queue asked


def test_images_on_one_disk_are_held_by_that_disk() -> None:
    """The RAID study's a+b+c+d read on four images of one disk (session 4 of this round's
    study runs, repeat 1, the read's samples as recorded): the first target's loop device
    busy 79-90 %, never the 90 % of a device held all the time, while the disk under the
    images was 92-99 % busy. The verdict is the device, the backing one, not 'nothing
    found'."""
    loop = [78.6, 87.8, 90.2, 88.7, 88.6, 89.2]
    backing = [85.7, 97.4, 99.0, 94.2, 91.8, 98.0]
    read = [806e6, 1354e6, 1490e6, 1424e6, 1566e6, 1603e6]
    samples = [{"series": name, "value": v} for name, values in (
        ("device_busy_pct", loop), ("backing_busy_pct", backing),
        ("backing_in_flight", [3.1, 3.9, 4.2, 4.0, 3.8, 4.1]),
        ("device_in_flight", [0.9, 1.0, 1.1, 1.0, 1.0, 1.0]),
        ("device_read_bps:all", read), ("app_rchar_bps", read),
        ("cpu_pct", [47.6, 31.9, 22.0, 18.0, 20.0, 21.9])) for v in values]
    facts = RunFacts(tool="iozone", duration=6.0, threads=4)
    (found,) = run_limits(samples, facts)
    assert found.kind == "device", found
    assert found.evidence["backing"] == 1.0 and found.evidence["busy_pct"] > 90
    assert "backing device busy" in found.words
    no_backing = [s for s in samples if not str(s["series"]).startswith("backing")]
    assert [x.kind for x in run_limits(no_backing, facts)] == ["none"]  # a device target


def test_a_read_only_case_is_not_judged_on_its_writes() -> None:
    """dd reading a device writes what it reads to /dev/null: 1 GB/s of writes that never
    reach a device. The SAN study's raw dd read said 'writes absorbed by the page cache: 0 %
    reached the device' beside its device verdict."""
    host: dict = {"cpu_count": 2}
    read = run_facts({"tool": "dd", "params": {"mode": "read", "direct": True}}, 2.0, host)
    assert not read.writes
    samples = [{"series": name, "value": v} for name, values in (
        ("device_busy_pct", [93.0] * 4), ("device_in_flight", [0.9] * 4),
        ("device_read_bps", [1.05e9] * 4), ("app_rchar_bps", [1.05e9] * 4),
        ("app_wchar_bps", [1.05e9] * 4), ("device_write_bps", [0.0] * 4),
        ("cpu_pct", [40.0] * 4)) for v in values]
    assert [x.kind for x in run_limits(samples, read)] == ["device"]
    assert run_facts({"tool": "dd", "params": {"mode": "write"}}, 2.0, host).writes
    assert not run_facts({"tool": "fio", "params": {"rw": "randread"}}, 2.0, host).writes
    assert run_facts({"tool": "fio", "params": {"rw": "randrw"}}, 2.0, host).writes
