"""The built-in engine's adapter on recorded real engine outputs (tests/fixtures/engine), and the
engine's pure parts (block orders, percentiles). Expected figures are copied from the files."""

from __future__ import annotations

import json
import math
from array import array
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from disklab.core.plan.parse import parse_plan
from disklab.core.tools import get_adapter
from disklab.core.tools.base import RunTarget, ToolOutput
from disklab.core.tools.engine import EngineAdapter
from disklab.core.vocab.errors import ParseError, PlanError, ToolError
from disklab.core.vocab.model import Metric
from disklab.engine.report import latency_figures
from disklab.engine.worker import TABLE_LIMIT, GridOrder, block_order
from tests.helpers import examples, fixture_text

TARGET = RunTarget(directory="/mnt/t", tag="c1-r1", python="/usr/bin/python3")
DEFAULTS = {"block_size": 1 << 20, "streams": 1, "queue_depth": 1, "direct": False,
            "sync": False, "fsync": True, "runtime": 0.0}


def params(**kw: object) -> dict[str, object]:
    return {**DEFAULTS, **kw}


def output(name: str, exit_status: int = 0) -> ToolOutput:
    return ToolOutput(stdout=fixture_text("engine", f"{name}.jsonl"), exit_status=exit_status)


def values(metrics: list[Metric]) -> dict[str, float | None]:
    return {m.name: m.value for m in metrics if m.params is None}


# --- declaration ----------------------------------------------------------------------------

def test_registered_with_its_capabilities_and_parameters() -> None:
    a = get_adapter("engine")
    assert isinstance(a, EngineAdapter)
    assert (a.name, a.title, a.executable, a.package) == ("engine", "Built-in engine", "", "")
    assert a.capabilities.live_progress and a.capabilities.direct_io
    assert a.capabilities.tests == ("write", "rewrite", "read", "random_read", "random_write")
    assert a.params["mode"].choices == ("write", "rewrite", "read", "randread", "randwrite")
    assert a.params["block_size"].default == 1 << 20 and a.params["block_size"].minimum == 512
    assert (a.params["streams"].maximum, a.params["queue_depth"].maximum) == (256, 256)
    assert a.params["fsync"].default is True and a.params["direct"].default is False
    assert a.params["runtime"].kind == "duration" and a.params["runtime"].default == 0


def test_check_size_against_block_size_and_direct_alignment() -> None:
    a = EngineAdapter()
    assert a.check(params(mode="write", size=64 << 20)) == []
    assert a.check(params(mode="write", size=(64 << 20) + 4096)) == [
        ("size", "67112960 is not a multiple of block_size 1048576")]
    problems = a.check(params(mode="read", block_size=1000, size=1_000_000, direct=True))
    assert [k for k, _ in problems] == ["block_size"]
    assert "multiple of 512" in problems[0][1]
    assert a.check(params(mode="read", block_size=1000, size=1_000_000, direct=False)) == []


# --- argv -----------------------------------------------------------------------------------

def test_write_argv_creates_its_file_without_a_prepare_step() -> None:
    c = EngineAdapter().build_command(params(mode="write", size=64 << 20), TARGET)
    assert c.argv == (
        "/usr/bin/python3", "-m", "disklab.engine", "--mode", "write",
        "--file", "/mnt/t/disklab-c1-r1-0", "--block-size", "1048576", "--size", "67108864",
        "--queue-depth", "1", "--fsync",
    )
    assert c.cwd == "/mnt/t"
    assert c.files == ("/mnt/t/disklab-c1-r1-0",)
    assert c.planned_bytes == 64 << 20
    assert c.prepare == () and c.reads_after_prepare is False


def test_read_argv_has_a_prepare_step_and_one_file_per_stream() -> None:
    c = EngineAdapter().build_command(
        params(mode="randread", block_size=4096, size=16 << 20, streams=3, queue_depth=8,
               direct=True, runtime=30.0), TARGET)
    files = ("/mnt/t/disklab-c1-r1-0", "/mnt/t/disklab-c1-r1-1", "/mnt/t/disklab-c1-r1-2")
    assert c.files == files
    layout = ("/usr/bin/python3", "-m", "disklab.engine", "--mode", "randread",
              "--file", files[0], "--file", files[1], "--file", files[2],
              "--block-size", "4096", "--size", "16777216", "--direct")
    assert c.prepare == ((*layout, "--prepare"),)
    assert c.argv == (*layout, "--queue-depth", "8", "--fsync", "--runtime", "30")
    assert c.planned_bytes == 3 * (16 << 20)
    assert c.reads_after_prepare is True


def test_rewrite_and_randwrite_lay_out_first_but_do_not_read_it() -> None:
    a = EngineAdapter()
    for mode in ("rewrite", "randwrite"):
        c = a.build_command(params(mode=mode, size=8 << 20, sync=True, fsync=False), TARGET)
        assert len(c.prepare) == 1 and c.prepare[0][-1] == "--prepare"
        assert c.reads_after_prepare is False
        assert "--sync" in c.argv and "--fsync" not in c.argv


# --- results --------------------------------------------------------------------------------

def test_write_two_streams_summary() -> None:
    metrics = EngineAdapter().parse_result(
        output("write_1m_s32m_streams2_qd4_direct_fsync_ext4"), params(mode="write"))
    # {"type":"summary","mode":"write","bytes":67108864,"ops":64,...,"bw":778060127.73528,
    #  "iops":742.0159604409027,"lat_ns":{"mean":5818679.890625,"p50":6029157.0,
    #  "p99":16126457.0,"p99.9":16126457.0,...}
    assert values(metrics) == {
        "write": 778060127.73528,
        "write:iops": 742.0159604409027,
        "write:lat_mean": 5818679.890625,
        "write:lat_p50": 6029157.0,
        "write:lat_p99": 16126457.0,
        "write:lat_p99.9": 16126457.0,
        # two streams: the slowest, fastest and mean stream (these two ran alike)
        "write:min_proc": 389030063.86764,
        "write:max_proc": 389030063.86764,
        "write:avg_proc": 389030063.86764,
    }
    units = {m.name: m.unit for m in metrics}
    assert (units["write"], units["write:iops"], units["write:lat_p99"]) == ("B/s", "op/s", "ns")
    assert all(m.note is None for m in metrics)
    # "streams":[{...,"bw":389030063.86764,...},{...,"bw":389030063.86764,...}]
    streams = [(m.name, m.value, m.params) for m in metrics if m.params is not None]
    assert streams == [("write:stream", 389030063.86764, {"stream": 0}),
                       ("write:stream", 389030063.86764, {"stream": 1})]


def test_a_slow_and_a_fast_stream_each_over_its_own_time() -> None:
    name = "write_4k-1m_s32m_streams2_qd1_direct_fsync_ext4"
    metrics = EngineAdapter().parse_result(output(name), params(mode="write", streams=2))
    v = values(metrics)
    # "streams":[{...,"block_size":4096,...,"seconds":1.298488522000298,...,
    #   "bw":25841146.40328896,...},{...,"block_size":1048576,...,"seconds":0.034139682999921206,
    #   ...,"bw":982857163.6144788,...}]
    assert v["write:min_proc"] == 25841146.40328896
    assert v["write:max_proc"] == 982857163.6144788
    assert v["write:avg_proc"] == pytest.approx((25841146.40328896 + 982857163.6144788) / 2)
    assert [(m.value, m.params) for m in metrics if m.name == "write:stream"] == [
        (25841146.40328896, {"stream": 0}), (982857163.6144788, {"stream": 1})]
    # "bytes":67108864,...,"seconds":1.298488522000298,"bw":51682292.80657792: the aggregate
    # is the total over the wall time, neither a sum nor a share of the streams' rates
    assert v["write"] == 51682292.80657792
    summary = json.loads(fixture_text("engine", f"{name}.jsonl").splitlines()[-1])
    assert v["write"] == pytest.approx(summary["bytes"] / summary["seconds"])
    first = min(one["start"] for one in summary["streams"])
    last = max(one["end"] for one in summary["streams"])
    assert summary["seconds"] == pytest.approx(last - first)
    for one in summary["streams"]:
        assert one["bw"] == pytest.approx(one["bytes"] / one["seconds"])
    assert v["write"] < 0.1 * sum(m.value for m in metrics if m.name == "write:stream")


def test_per_stream_block_sizes_argv_and_checks() -> None:
    a = EngineAdapter()
    p = params(mode="write", size=32 << 20, streams=2, stream_block_sizes="4k, 1m")
    assert a.check(p) == []
    c = a.build_command(p, TARGET)
    assert c.argv[c.argv.index("--block-size"):c.argv.index("--size")] == (
        "--block-size", "4096", "--block-size", "1048576")
    assert a.build_command(dict(p, stream_block_sizes="4k 1m"), TARGET).argv == c.argv
    assert a.check(dict(p, streams=3)) == [
        ("stream_block_sizes",
         "2 block sizes for 3 streams: give one per stream, in one string ('4k 1m')")]
    assert a.check(dict(p, stream_block_sizes="4k,fast"))[0][0] == "stream_block_sizes"
    assert a.check(dict(p, stream_block_sizes="4k,256")) == [
        ("stream_block_sizes", "'256' is below the minimum 512 bytes")]
    assert a.check(dict(p, stream_block_sizes="4k,3m")) == [
        ("size", "33554432 is not a multiple of stream_block_sizes 3145728")]
    assert a.check(dict(p, stream_block_sizes="4k,1536", direct=True, size=3 << 20)) == []
    assert a.check(dict(p, stream_block_sizes="4k,1000", direct=False, size=4096000)) == []
    assert [k for k, _ in a.check(dict(p, stream_block_sizes="4k,1000", direct=True,
                                       size=4096000))] == ["stream_block_sizes"]
    assert a.params["stream_block_sizes"].default is None  # cases without it read as before


def test_plan_names_the_key_and_line_of_a_bad_stream_block_size(tmp_path: Path) -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(f'name = "m"\n[target]\ndirectory = "{tmp_path}"\n[[test]]\n'
                   'tool = "engine"\nmode = "write"\nsize = "32m"\nstreams = 2\n'
                   'stream_block_sizes = "4k fast"\n')
    (problem,) = e.value.problems
    assert (problem.key, problem.line) == ("test[1].stream_block_sizes", 9)
    assert "'fast' is not a size" in problem.message


def test_randread_is_named_random_read() -> None:
    metrics = EngineAdapter().parse_result(
        output("randread_4k_s16m_qd1_direct_ext4"), params(mode="randread"))
    # "bw":50202289.55169369,"iops":12256.418347581468,"lat_ns":{"mean":78875.10986328125,
    # "p50":65833.0,"p99":268855.0,"p99.9":2950384.0,"max":3623496.0}
    assert values(metrics) == {
        "random_read": 50202289.55169369,
        "random_read:iops": 12256.418347581468,
        "random_read:lat_mean": 78875.10986328125,
        "random_read:lat_p50": 65833.0,
        "random_read:lat_p99": 268855.0,
        "random_read:lat_p99.9": 2950384.0,
    }
    assert all(m.params is None for m in metrics)  # one stream: no per-stream rows


def test_sigterm_summary_is_flagged_partial() -> None:
    out = output("randread_4k_s16m_qd1_runtime30_direct_sigterm-after-1s_ext4", 143)
    a = EngineAdapter()
    # ..."bw":50187125.31700821,"iops":12252.716141847708,...,"partial":true}
    for metrics in (a.parse_result(out, params(mode="randread")),
                    a.parse_partial(out, params(mode="randread"))):
        v = values(metrics)
        assert v["random_read"] == 50187125.31700821
        assert v["random_read:iops"] == 12252.716141847708
        assert {m.note for m in metrics} == {"partial"}


def test_partial_from_the_last_interval_line_when_there_is_no_summary() -> None:
    text = fixture_text("engine",
                        "randread_4k_s16m_qd1_runtime30_direct_sigterm-after-1s_ext4.jsonl")
    # the first four lines; the 4th is
    # {"type":"interval","elapsed":1.000215,"bytes":50438144,"ops":12314,...}
    cut = "".join(text.splitlines(keepends=True)[:4]) + '{"type":"interv'  # killed mid-line
    metrics = EngineAdapter().parse_partial(ToolOutput(stdout=cut, exit_status=-9),
                                            params(mode="randread"))
    assert [(m.name, m.unit, m.note) for m in metrics] == [
        ("random_read", "B/s", "partial"), ("random_read:iops", "op/s", "partial")]
    assert metrics[0].value == pytest.approx(50438144 / 1.000215)
    assert metrics[1].value == pytest.approx(12314 / 1.000215)


def test_no_space_error_surfaces_the_engines_message() -> None:
    out = output("error_enospc_write_1m_s128m_direct_ext4-64m", 1)
    a = EngineAdapter()
    with pytest.raises(ToolError) as e:
        a.parse_result(out, params(mode="write", size=128 << 20))
    # {"type":"error","message":"no space left in /tmp/engcap/small/mnt-ext4 (ext4 at
    #  /tmp/engcap/small/mnt-ext4): 0 B (0 bytes) free"}
    assert str(e.value) == ("no space left in /tmp/engcap/small/mnt-ext4 "
                            "(ext4 at /tmp/engcap/small/mnt-ext4): 0 B (0 bytes) free")
    # what was written before: "bw":1407923895.9169958 ... "partial":true
    partial = a.parse_partial(out, params(mode="write", size=128 << 20))
    assert values(partial)["write"] == 1407923895.9169958
    assert {m.note for m in partial} == {"partial"}


def test_o_direct_refusal_names_the_filesystem() -> None:
    out = output("error_odirect_refused_write_1m_ramfs", 1)
    with pytest.raises(ToolError, match=r"^ramfs at /tmp/engcap/ramfs refuses O_DIRECT \(EINVAL\)"):
        EngineAdapter().parse_result(out, params(mode="write", direct=True))
    assert EngineAdapter().parse_partial(out, params(mode="write")) == []


def test_prepare_output_alone_is_no_result() -> None:
    with pytest.raises(ParseError) as e:
        EngineAdapter().parse_result(output("prepare_randread_4k_s16m_direct_ext4"),
                                     params(mode="randread"))
    assert (e.value.tool, e.value.line) == ("engine", None)
    assert "summary" in e.value.expected


def test_a_line_that_is_not_json_is_a_parse_error_with_its_line_number() -> None:
    text = fixture_text("engine", "randread_4k_s16m_qd1_direct_ext4.jsonl")
    lines = text.splitlines()
    bad = "\n".join([lines[0], "Traceback (most recent call last):", *lines[1:]])
    with pytest.raises(ParseError) as e:
        EngineAdapter().parse_result(ToolOutput(stdout=bad), params(mode="randread"))
    assert (e.value.tool, e.value.line, e.value.got) == (
        "engine", 2, "Traceback (most recent call last):")
    with pytest.raises(ParseError) as e:
        EngineAdapter().parse_result(ToolOutput(stdout='[1, 2]\n'), params(mode="read"))
    assert e.value.line == 1


def test_a_summary_missing_a_figure_is_a_parse_error() -> None:
    text = '{"type":"summary","mode":"read","bytes":1,"ops":1}\n'
    with pytest.raises(ParseError) as e:
        EngineAdapter().parse_result(ToolOutput(stdout=text), params(mode="read"))
    assert e.value.line == 1
    assert EngineAdapter().parse_partial(ToolOutput(stdout=text), params(mode="read")) == []


# --- progress -------------------------------------------------------------------------------

def test_progress_from_interval_lines() -> None:
    parser = EngineAdapter().progress_parser(params(mode="randread", size=16 << 20))
    lines = fixture_text("engine", "randread_4k_s16m_qd1_direct_ext4.jsonl").splitlines()
    first = parser.feed("stdout", lines[0])
    # {"type":"interval","elapsed":0.200224,"bytes":9170944,...}
    assert first is not None
    assert (first.done_bytes, first.total_bytes, first.phase) == (9170944, 16 << 20, "randread")
    assert first.rate == pytest.approx(9170944 / 0.200224)
    second = parser.feed("stdout", lines[1])
    # {"type":"interval","elapsed":0.334776,"bytes":16777216,...}: rate over that interval
    assert second is not None and second.done_bytes == 16777216
    assert second.rate == pytest.approx((16777216 - 9170944) / (0.334776 - 0.200224))
    assert parser.feed("stdout", lines[2]) is None  # the summary
    assert parser.feed("stderr", lines[0]) is None
    assert parser.feed("stdout", '{"type":"interval","elapsed":') is None


def test_time_based_progress_projects_the_total_from_the_rate() -> None:
    parser = EngineAdapter().progress_parser(params(mode="randread", size=16 << 20,
                                                    runtime=30.0))
    line = fixture_text("engine",
                        "randread_4k_s16m_qd1_runtime30_direct_sigterm-after-1s_ext4.jsonl").splitlines()[3]
    # {"type":"interval","elapsed":1.000215,"bytes":50438144,"ops":12314,...}
    u = parser.feed("stdout", line)
    assert u is not None and u.done_bytes == 50438144
    assert u.total_bytes == int(50438144 * 30 / 1.000215)
    assert u.message == "1 of 30 s"


# --- the engine's pure parts ----------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 1000, 4096, 65537, 300007])
def test_grid_order_visits_every_block_once_all_over_the_file(n: int) -> None:
    order = GridOrder(n, seed=7)
    seen = [order[i] for i in range(n)]
    assert sorted(seen) == list(range(n))
    if n >= 1000:
        steps = [abs(b - a) for a, b in pairwise(seen)]
        assert sum(steps) / len(steps) > n / 5  # a random order averages n / 3
        assert sum(1 for s in steps if s == 1) < n / 100  # next to each other: rarely


def test_block_orders() -> None:
    assert list(block_order(5, False, 1)) == [0, 1, 2, 3, 4]
    table = block_order(1000, True, 1)
    assert sorted(table) == list(range(1000)) and list(table) != list(range(1000))
    assert list(block_order(1000, True, 1)) == list(table)  # seeded: the same every run
    assert list(block_order(1000, True, 2)) != list(table)
    assert isinstance(block_order(TABLE_LIMIT + 1, True, 1), GridOrder)


def test_latency_figures_nearest_rank() -> None:
    samples = [array("q", range(1, 501)), array("q", range(501, 1001))]  # 1..1000 ns
    f = latency_figures(samples, total_ns=500500, ops=1000, max_ns=1000)
    assert f == {"mean": 500.5, "p50": 500.0, "p99": 990.0, "p99.9": 999.0, "max": 1000.0}
    assert latency_figures([], 0, 0, 0)["p50"] is None


# --- hostile input --------------------------------------------------------------------------

def _json_values() -> st.SearchStrategy[object]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    return st.recursive(scalars, lambda kids: st.lists(kids, max_size=3)
                        | st.dictionaries(st.text(max_size=6), kids, max_size=3), max_leaves=8)


SUMMARY_KEYS = ["mode", "bw", "iops", "lat_ns", "streams", "partial", "bytes", "ops"]


def _check_hostile(text: str) -> None:
    a = EngineAdapter()
    out = ToolOutput(stdout=text, exit_status=1)
    try:
        metrics = a.parse_result(out, params(mode="read"))
    except (ParseError, ToolError):
        metrics = []
    for m in [*metrics, *a.parse_partial(out, params(mode="read"))]:
        assert m.value is not None and math.isfinite(m.value)
        assert m.unit in {"B/s", "op/s", "ns"}
    parser = a.progress_parser(params(mode="read", size=1 << 20, runtime=30.0))
    for line in text.splitlines():
        u = parser.feed("stdout", line)
        assert u is None or (u.done_bytes is not None and u.done_bytes >= 0)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(SUMMARY_KEYS), _json_values(), max_size=8),
       st.sampled_from(["summary", "interval", "error", "prepared"]))
def test_hostile_json_objects_give_metrics_or_a_parse_error(doc: dict, kind: str) -> None:
    _check_hostile(json.dumps({"type": kind, **doc}) + "\n")


@settings(max_examples=examples(200), deadline=None)
@given(st.text(max_size=300))
def test_random_text_never_escapes(text: str) -> None:
    _check_hostile(text)


def test_every_cut_of_a_real_output_is_handled() -> None:
    text = fixture_text("engine", "write_1m_s32m_streams2_qd4_direct_fsync_ext4.jsonl")
    for end in range(0, len(text), 7):
        _check_hostile(text[:end])
    _check_hostile('{"type":"summary","mode":"read","bw":Infinity,"iops":1}\n')
    _check_hostile('{"type":"interval","elapsed":1e-300,"bytes":1e308,"ops":1}\n')
    _check_hostile("[" * 100_000 + "\n")


def test_the_io_path_is_passed_checked_and_read_back() -> None:
    """io = auto is the engine's default (no flag); psync, aio and uring are passed; aio or
    uring without direct is refused naming `io`; the path the summary says ran is in every
    metric's params (the library reads a case asked with auto back as what ran)."""
    a = EngineAdapter()
    assert a.params["io"].choices == ("auto", "psync", "aio", "uring")
    assert a.params["io"].default is None
    argv = a.build_command(params(mode="write", size=1 << 20), TARGET).argv
    assert "--io" not in argv
    argv = a.build_command(params(mode="write", size=1 << 20, io="auto"), TARGET).argv
    assert "--io" not in argv
    for io in ("psync", "aio", "uring"):
        argv = a.build_command(params(mode="write", size=1 << 20, io=io, direct=True),
                               TARGET).argv
        assert argv[argv.index("--io") + 1] == io
    for io in ("aio", "uring"):
        problems = a.check(params(mode="write", size=1 << 20, io=io))
        assert [k for k, _ in problems] == ["io"]
        assert problems[0][1].startswith(f"{io} needs direct = true")
        assert a.check(params(mode="write", size=1 << 20, io=io, direct=True)) == []
    summary = {"type": "summary", "mode": "randread", "bw": 4e8, "iops": 1e5, "lat_ns": {},
               "streams": [{"bw": 2e8}, {"bw": 2e8}], "io": "aio", "partial": False}
    metrics = a.parse_result(ToolOutput(stdout=json.dumps(summary)),
                             params(mode="randread", streams=2))
    assert metrics and all((m.params or {}).get("io") == "aio" for m in metrics)
    assert [m.params for m in metrics if m.name == "random_read:stream"] == [
        {"stream": 0, "io": "aio"}, {"stream": 1, "io": "aio"}]
    # pread/pwrite, the path of every run before the choice: not written in, so a session
    # recorded today lines up with older ones in a comparison
    summary["io"] = "psync"
    metrics = a.parse_result(ToolOutput(stdout=json.dumps(summary)),
                             params(mode="randread", streams=2))
    assert metrics and all("io" not in (m.params or {}) for m in metrics)
    # io_uring is written in like AIO: a library tells the two asynchronous paths apart
    summary["io"] = "uring"
    metrics = a.parse_result(ToolOutput(stdout=json.dumps(summary)),
                             params(mode="randread", streams=2))
    assert metrics and all((m.params or {}).get("io") == "uring" for m in metrics)
