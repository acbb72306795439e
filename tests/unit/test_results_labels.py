"""core.results.labels: a case is named by what differs among the cases shown, and values
come in the order people read them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from disklab.core.results.labels import case_labels, case_titles, ordered
from disklab.core.results.pivot import build_pivot

FIO = {"rw": "write", "bs": 4096, "direct": True, "size": 128 << 20, "runtime": 0.0,
       "rwmixread": 70, "numjobs": 1}


def test_a_label_is_what_differs_and_the_heading_what_is_set() -> None:
    rows = [{"tool": "fio", "params": {**FIO, "iodepth": d}} for d in (1, 16)]
    labels = case_labels(rows)
    assert [labels.label(r) for r in rows] == ["iodepth=1", "iodepth=16"]
    # fio's defaults (runtime 0, rwmixread 70, one job) are not said; bs says what the test is
    assert labels.heading == "every case: rw=write bs=4k direct=True size=128m"
    # a parameter at its default is said when another case differs from it
    rows.append({"tool": "fio", "params": {**FIO, "iodepth": 1, "runtime": 30.0}})
    labels = case_labels(rows)
    assert [labels.label(r) for r in rows] == ["runtime=0.0 iodepth=1",
                                               "runtime=0.0 iodepth=16",
                                               "runtime=30.0 iodepth=1"]


def test_labels_follow_the_plans_axis_order_and_skip_what_is_replaced() -> None:
    rows = [{"tool": "engine", "params": {"mode": "write", "block_size": b, "streams": s}}
            for s in (1, 4) for b in (4096, 1 << 20)]
    labels = case_labels(rows)
    assert labels.keys == ("block_size", "streams")
    assert labels.label(rows[3]) == "block_size=1m streams=4"
    mixed = {"mode": "write", "block_size": 1 << 20, "streams": 2,
             "stream_block_sizes": "4k 1m"}
    rows = [{"tool": "engine", "params": mixed},
            {"tool": "engine", "params": {**mixed, "stream_block_sizes": None}}]
    labels = case_labels(rows)
    assert [labels.label(r) for r in rows] == ["stream_block_sizes=4k 1m", "block_size=1m"]
    labels = case_labels(rows[:1])  # one case, its block_size replaced: said nowhere
    assert labels.heading == "every case: mode=write streams=2 stream_block_sizes=4k 1m"


def test_case_titles_for_the_run_page() -> None:
    from disklab.core.vocab.model import Case

    cases = [Case(f"c{d}", i, "as is", "fio", 0, {**FIO, "iodepth": d})
             for i, d in enumerate((16, 1))]
    titles, heading = case_titles(cases)
    assert titles == ["fio iodepth=16", "fio iodepth=1"]
    assert heading.startswith("every case: rw=write bs=4k")


def test_values_in_the_order_people_read_them() -> None:
    assert ordered([1, 16, 2, 32, 4, 64, 8]) == [1, 2, 4, 8, 16, 32, 64]
    assert ordered([1 << 20, 4096, 65536]) == [4096, 65536, 1 << 20]
    assert ordered(["1m", "4k", "64k"]) == ["4k", "64k", "1m"]  # sizes as typed
    assert ordered([True, False]) == [False, True]
    assert ordered(["b", "all", "a"]) == ["b", "a", "all"]  # named first, as first seen
    assert ordered(["ext4 journal", "ext2", None, "ext3"]) == ["ext4 journal", "ext2", "ext3",
                                                              None]


def test_a_pivot_orders_rows_by_the_first_key_then_the_next() -> None:
    rows = [{"config": c, "tool": "iozone", "metric": "write", "unit": "B/s", "mean": 1.0,
             "n": 1, "params": {"record_size": r}}
            for c in ("Disk - 128MB", "Disk - 16MB") for r in (1 << 20, 4096, 65536)]
    p = build_pivot(rows, ["record_size", "config"], ["test"])
    assert p.rows == ("record_size=4k / Disk - 128MB", "record_size=4k / Disk - 16MB",
                      "record_size=64k / Disk - 128MB", "record_size=64k / Disk - 16MB",
                      "record_size=1m / Disk - 128MB", "record_size=1m / Disk - 16MB")
    p = build_pivot(rows, ["config", "record_size"], ["test"])
    assert p.rows[:3] == ("Disk - 128MB / record_size=4k", "Disk - 128MB / record_size=64k",
                          "Disk - 128MB / record_size=1m")


def test_a_parameter_another_tool_lacks_is_not_a_difference() -> None:
    """The SAN study runs the engine and dd: dd has no queue depth or runtime, so they label
    no dd case, and the engine's unset runtime is not said."""
    engine = [{"tool": "engine", "params": {"mode": "write", "block_size": 1 << 20,
                                            "queue_depth": q, "runtime": 0.0}}
              for q in (1, 4)]
    dd = [{"tool": "dd", "params": {"mode": "write", "block_size": 1 << 20}}]
    labels = case_labels(engine + dd)
    assert [labels.label(r) for r in engine + dd] == ["queue_depth=1", "queue_depth=4", ""]
    assert labels.heading == "every case: mode=write block_size=1m"


def test_ordering_survives_odd_values() -> None:
    """Imported parameters can be anything: nan, infinities, huge ints, sizes that overflow,
    text that looks like a number; none breaks the order or raises."""
    odd = ["b", "nan", float("nan"), "inf", 10**400, "99999999999999999999999t", "-3", 5,
           "4 k", "all", None, "a"]
    got = ordered(odd)
    assert got[:4] == ["-3", 5, "4 k", 10**400]  # the numbers, by value
    assert got[-2:] == ["all", None] and len(got) == len(odd)
    assert got[4:6] == ["b", "nan"]  # then text, as first seen


VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8),
                   st.sampled_from(["4k", "all", "1m", "nan", "a+b"]),
                   st.lists(st.text(max_size=3), max_size=2))
KEYS = st.sampled_from(["block_size", "bs", "iodepth", "runtime", "stream_block_sizes",
                        "mode", "target", "x"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["fio", "engine", "dd", "nosuch"]),
                          st.dictionaries(KEYS, VALUES, max_size=5)), max_size=6))
def test_labels_and_order_take_any_parameters(cases: list) -> None:
    rows = [{"tool": tool, "params": params} for tool, params in cases]
    labels = case_labels(rows)
    texts = [labels.label(r) for r in rows]
    assert all(isinstance(t, str) for t in texts)
    for key in labels.keys:  # a label names only what differs
        assert key not in labels.common
    for r in rows:
        ordered(list(r["params"].values()))
