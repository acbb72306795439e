"""core.history without a run: series keys, the step test, what changed, the document, the
schedule's units, and the CLI's answers. Real sessions: tests/integration/test_history.py."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from disklab.cli.main import main
from disklab.core.history import changes, facts, schedule
from disklab.core.history.build import build_history
from disklab.core.history.document import changes_lines, chart_spec, history_csv, history_json
from disklab.core.history.series import plan_hash
from disklab.core.library import Library, summary
from disklab.core.library.history import results_stamps
from disklab.core.results.svg import to_svg
from disklab.core.tools import get_adapter
from disklab.core.vocab.model import Case, Metric
from tests.helpers import engine_plan, record_session

PLAN = """name = "{name}"
repeats = 3
[target]
directory = "/mnt/x"
[[test]]
tool = "fio"
rw = "read"
bs = "4k"
"""


def _host(machine: str = "m1", **device: Any) -> dict[str, Any]:
    return {"hostname": f"host-{machine}", "machine_id": machine, "kernel": "6.1.0-13",
            "tools": {"fio": "fio-3.33"}, "dirty_threshold_bytes": random.randint(1, 10**9),
            "free_bytes": 10**9 + random.randint(0, 10**6), "fs_size_bytes": 4 * 10**9,
            "filesystem": {"fstype": "ext4", "options": "rw,relatime", "source": "/dev/loop9"},
            "device": {"name": "loop9", "read_ahead_kb": 128, "scheduler": "none", **device},
            "target": {"kind": "directory", "path": "/mnt/x",
                       "identity": {"directory": "/mnt/x", "fstype": "ext4",
                                    "source": "/dev/loop9", "exists": True}}}


def _record(lib: Library, reads: list[float], writes: list[float], host: dict[str, Any],
            start: float, name: str = "weekly") -> int:
    case = Case(id="c1", index=0, config="as is", tool="fio", test_index=0,
                params={"rw": "read", "bs": 4096})
    case2 = Case(id="c2", index=1, config="as is", tool="fio", test_index=1,
                 params={"rw": "write", "bs": 4096})
    return record_session(
        lib, [(case, [[Metric("read", v, "B/s")] for v in reads]),
              (case2, [[Metric("write", v, "B/s")] for v in writes])],
        name=name, host=host, plan_text=PLAN.format(name=name), start=start)


def _series(lib: Library, n: int, change_at: int | None, **changed: Any) -> list[int]:
    """n sessions a week apart; from `change_at` on the read figure falls to a fifth and the
    host records `changed` on the device."""
    rng = random.Random(7)
    ids = []
    for i in range(n):
        after = change_at is not None and i >= change_at
        level = 200e6 if after else 1000e6
        reads = [level * rng.gauss(1, 0.04) for _ in range(3)]
        writes = [400e6 * rng.gauss(1, 0.04) for _ in range(3)]
        host = _host(**(changed if after else {}))
        ids.append(_record(lib, reads, writes, host, start=1.7e9 + i * 7 * 86400))
    return ids


def test_plan_hash_is_the_content_not_the_name():
    a = plan_hash(PLAN.format(name="one"))
    assert a == plan_hash(PLAN.format(name="two") + "\n[report]\nrows = ['bs']\n")
    assert a != plan_hash(PLAN.format(name="one").replace('"4k"', '"8k"'))
    assert plan_hash("not toml [", "x") != plan_hash("not toml [", "y")


def test_bulk_stamps_are_the_summary_stamps(tmp_path: Path):
    with Library.open(tmp_path / "lib.sqlite") as lib:
        ids = _series(lib, 3, None)
        stamps = results_stamps(lib.db, ids)
        for sid in ids:
            assert stamps[sid] == summary.results_stamp(lib.db, lib.path, sid)


def test_a_step_is_found_where_it_is_and_nowhere_else():
    rng = random.Random(1)
    flat = [100 * rng.gauss(1, 0.03) for _ in range(10)]
    stepped = flat[:6] + [v * 0.7 for v in flat[6:]]
    m = changes.candidates(10) * 2
    assert changes.steps(flat, m) == []
    (step,) = changes.steps(stepped, m)
    assert step.at == 6 and step.n_before == 6 and step.n_after == 4
    assert step.pct_low < step.pct < step.pct_high < 0 and -35 < step.pct < -25
    assert step.p_adjusted < 0.05


def test_a_step_whose_size_is_unresolved_is_not_reported():
    """Eight quiet sessions, then two far apart (a percentile now a cache hit's, now a device
    read's): the pooled t is significant, but Welch's interval of the step holds "no
    change", so no change is said; two close sessions at the same level are one."""
    quiet = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01]
    m = changes.candidates(10)
    assert changes.steps([*quiet, 2.0, 4.0], m) == []
    (step,) = changes.steps([*quiet, 3.0, 3.05], m)
    assert step.at == 8 and step.pct_low > 0


def test_no_more_false_alarms_than_alpha():
    """The stated rate: over 600 histories of 10 sessions x 20 figures of pure noise (CV 10 %),
    the share with any change found is at most alpha = 0.05 (Bonferroni over every candidate
    point), within two standard errors of a count of 600 (0.009 each)."""
    rng = random.Random(3)
    alarms = 0
    for _ in range(600):
        figures = [[rng.gauss(100, 10) for _ in range(10)] for _ in range(20)]
        m = changes.candidates(10) * len(figures)
        alarms += any(changes.steps(f, m) for f in figures)
    assert alarms / 600 <= 0.05 + 2 * 0.009


def test_what_changed_names_the_fact_and_ignores_what_moves_anyway():
    was, now = _host(), _host(read_ahead_kb=16)
    now["kernel"] = "6.1.0-15"
    diffs = facts.differences(was, now)
    assert facts.line(diffs) == "kernel 6.1.0-13 to 6.1.0-15, read_ahead_kb 128 to 16"
    assert facts.line(facts.differences(_host(), _host())) == facts.NOTHING
    full = _host()
    full["free_bytes"] = 10**8  # a filesystem filling up: said
    assert "free space" in facts.line(facts.differences(_host(), full))


def test_history_finds_the_change_and_names_it(tmp_path: Path):
    with Library.open(tmp_path / "lib.sqlite") as lib:
        ids = _series(lib, 10, 6, read_ahead_kb=16)
        doc = history_json(build_history(lib, str(ids[0])))
    assert doc["format"] == "disklab.history" and doc["version"] == 1
    (series,) = doc["series"]
    assert [s["id"] for s in series["sessions"]] == ids
    (change,) = series["changes"]
    assert change["label"].startswith("fio read") and change["worse"]
    assert [s["id"] for s in change["between"]] == ids[5:7]
    assert change["what_changed_text"] == "read_ahead_kb 128 to 16"
    assert change["pct_ci_low"] < change["pct"] < change["pct_ci_high"] < 0


def test_another_hosts_sessions_form_their_own_series(tmp_path: Path):
    with Library.open(tmp_path / "lib.sqlite") as lib:
        ids = _series(lib, 5, None)
        other = [_record(lib, [900e6] * 3, [300e6] * 3, _host("m2"), start=1.8e9 + i)
                 for i in range(3)]
        mine = history_json(build_history(lib, str(ids[-1])))
        theirs = history_json(build_history(lib, str(other[0])))
        both = history_json(build_history(lib, "weekly"))
    assert [s["id"] for s in mine["series"][0]["sessions"]] == ids
    assert [s["id"] for s in theirs["series"][0]["sessions"]] == other
    assert theirs["series"][0]["host"] == "host-m2"
    assert sorted(len(s["sessions"]) for s in both["series"]) == [3, 5]


def test_exports_carry_the_points_and_the_chart_renders(tmp_path: Path):
    with Library.open(tmp_path / "lib.sqlite") as lib:
        ids = _series(lib, 8, 4, read_ahead_kb=16)
        h = build_history(lib, str(ids[0]))
    rows = history_csv(h).splitlines()
    assert len(rows) == 1 + 8 * 2
    s = h.series[0]
    spec = chart_spec(s, s.figures[0])
    assert len(spec.series[0].x) == 8 and len(spec.markers) == 1
    svg = to_svg(spec)
    assert svg.startswith("<svg") and spec.markers[0][1] in svg


def test_schedule_units_quote_what_systemd_reads(tmp_path: Path):
    u = schedule.units("abc", "0" * 32, tmp_path / "my 100% $lib.sqlite", "week", "plan 'a'")
    assert "OnCalendar=weekly" in u.timer and f"Unit={u.name}.service" in u.timer
    assert '"--library" "' in u.service and "my 100%% $$lib.sqlite" in u.service
    with pytest.raises(Exception, match="line break"):
        schedule.quoted("a\nb")
    written = schedule.write(u, tmp_path / "units")
    assert [p.suffix for p in written] == [".service", ".timer"]
    assert schedule.remove(u.name, tmp_path / "units") == written
    assert schedule.remove(u.name, tmp_path / "units") == []


def test_cli_history_json_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "lib.sqlite"
    with Library.open(path) as lib:
        ids = _series(lib, 6, 3, read_ahead_kb=16)
    assert main(["history", str(ids[0]), "--json", "--library", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["series"][0]["sessions"]) == 6
    assert main(["history", "nothing-here", "--library", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing-here" in err
    assert main(["history", "weekly", "--library", str(tmp_path / "none.sqlite")]) == 2


def test_cli_svg_of_several_charts_wants_a_directory(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "lib.sqlite"
    with Library.open(path) as lib:
        ids = _series(lib, 5, None)
    out = tmp_path / "one.svg"
    assert main(["history", str(ids[0]), "--format", "svg", "-o", str(out),
                 "--library", str(path)]) == 2
    assert not out.exists() and "directory" in capsys.readouterr().err
    assert main(["history", str(ids[0]), "--format", "svg", "-o", f"{tmp_path}/charts/",
                 "--library", str(path)]) == 0
    assert len(list((tmp_path / "charts").glob("*.svg"))) == 2


def test_rerun_refuses_a_target_that_is_another_one_now(tmp_path: Path):
    from disklab.core.history.rerun import rerun_plan
    from disklab.core.run.resume import target_identity
    from disklab.core.vocab.errors import DisklabError
    from disklab.core.vocab.model import Target

    target = tmp_path / "t"
    target.mkdir()
    plan = engine_plan(target, name="again")
    now = target_identity(Target(kind="directory", path=str(target)))
    host = {"target": {"kind": "directory", "path": str(target), "identity": now}}
    case = Case(id="c", index=0, config="as is", tool="engine", test_index=0, params={})
    runs = [(case, [[Metric("write", 1e8, "B/s")]])]
    with Library.open(tmp_path / "lib.sqlite") as lib:
        same = record_session(lib, runs, name="again", host=host, plan_text=plan)
        session, checked = rerun_plan(lib, str(same))
        assert session["id"] == same and checked.plan.target.path == str(target)
        moved = {**host, "target": {**host["target"],
                                    "identity": {**now, "fstype": "xfs", "source": "/dev/x"}}}
        other = record_session(lib, runs, name="moved", host=moved, plan_text=plan)
        with pytest.raises(DisklabError, match="fstype was 'xfs'"):
            rerun_plan(lib, str(other))


def _tails(lib: Library, size: int, p999: float, p50: float, start: float) -> int:
    """One session of a direct 64k fio write of `size` bytes: its bandwidth steady, its p50
    and p99.9 latencies as given (three repeats, 2 % apart)."""
    case = Case(id="w", index=0, config="as is", tool="fio", test_index=0,
                params={"rw": "write", "bs": 65536, "size": size, "direct": True})
    repeats = [[Metric("write", 300e6 * w, "B/s"), Metric("write:lat_p50", p50 * w, "s"),
                Metric("write:lat_p99.9", p999 * w, "s")] for w in (0.98, 1.0, 1.02)]
    return record_session(lib, [(case, repeats)], name="tails", host=_host(),
                          plan_text=PLAN.format(name="tails"), start=start)


@pytest.mark.parametrize(("size", "judged"), [(16 << 20, False), (1 << 30, True)])
def test_a_percentile_a_run_cannot_resolve_is_shown_not_judged(tmp_path: Path, size: int,
                                                              judged: bool):
    """16 MiB of 64k writes are 256 I/Os: their p99.9 is the slowest of them, and its step is
    shown, not reported (nor counted in the correction); 1 GiB (16,384 I/Os, 16 beyond the
    p99.9) is judged like any figure. The p50 is judged either way."""
    with Library.open(tmp_path / "lib.sqlite") as lib:
        ids = [_tails(lib, size, 2e-3 * (1.5 if i >= 6 else 1), 1e-3 * (1.3 if i >= 6 else 1),
                      1.7e9 + i * 86400) for i in range(10)]
        history = build_history(lib, str(ids[0]))
        doc = history_json(history)
    (series,) = doc["series"]
    figures = {f["metric"]: f for f in series["figures"]}
    changed = {c["label"].split()[1] for c in series["changes"]}
    assert "write:lat_p50" in changed and figures["write:lat_p50"]["not_judged"] == ""
    assert ("write:lat_p99.9" in changed) is judged
    if judged:
        assert figures["write:lat_p99.9"]["not_judged"] == ""
        assert series["tests"] == 3 * changes.candidates(10)
    else:
        assert figures["write:lat_p99.9"]["not_judged"] == (
            "not judged: 256 I/Os a run leave fewer than 10 beyond p99.9")
        assert series["tests"] == 2 * changes.candidates(10)
        (line,) = [x for x in changes_lines(history.series[0]) if x.startswith("not judged")]
        assert "fio write:lat_p99.9" in line


def test_the_ios_a_run_makes_by_its_tools_rules():
    fio, engine = get_adapter("fio"), get_adapter("engine")
    base = {"rw": "randrw", "bs": 4096, "size": 1 << 20, "numjobs": 2, "rwmixread": 70}
    assert fio.ios(base, "read") == 358  # 2 jobs x 256 I/Os, 70 % of them reads
    assert fio.ios(base, "write") == 153
    assert fio.ios({**base, "rw": "write", "io_size": 8 << 20}, "write") == 4096
    assert fio.ios({**base, "rw": "read", "runtime": 30.0}, "read") is None
    assert engine.ios({"mode": "read", "size": 1 << 20, "block_size": 4096}, "read") == 256
    assert engine.ios({"mode": "read", "size": 1 << 20, "stream_block_sizes": "4k 1m"},
                      "read") == 257
    assert engine.ios({"mode": "read", "size": 1 << 20, "runtime": 5.0}, "read") is None
