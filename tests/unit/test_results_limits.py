"""The verdicts of core.results.limits from samples as the monitor records them: each kind at
its named threshold, with its evidence; a row's verdict from its runs'; nothing guessed."""

from __future__ import annotations

from disklab.core.results import limits
from disklab.core.results.limits import Limit, RunFacts, row_limits, run_limits


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


def test_cpu_per_thread_or_the_whole_machine() -> None:
    (limit,) = run_limits(samples(cpu_pct=[98, 98]), FACTS)
    assert limit.words == "CPU: fio at 98 % of a core"
    four = RunFacts(tool="fio", duration=10.0, threads=4, cpus=8)
    assert run_limits(samples(cpu_pct=[200, 200]), four)[0].kind == "none"
    (limit,) = run_limits(samples(cpu_pct=[30, 30], machine_cpu_pct=[97, 99]), four)
    assert limit.kind == "cpu" and limit.evidence["machine_cpu_pct"] == 98


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
