"""`disklab compare` judges differences by Welch's t-test, on sessions the engine really ran on
ext4 filesystems on loop devices made here: the same plan twice is no significant difference in
the large majority of cells, ext4 data=journal against data=ordered on rewrite is, and the JSON
fields agree with a Welch test computed here from the library's per-repeat values by the
textbook formulas (the t distribution integrated numerically, not the incomplete beta DiskLab
uses). A session cancelled during its last repeat keeps its partial figures, shown but left out
of the means, the comparisons and the charts unless --include-partial."""

from __future__ import annotations

import json
import math
import re
import statistics
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from disklab.cli.main import main
from disklab.core.library import Library
from disklab.core.plan.parse import parse_plan
from disklab.core.results.compare import UNLIKE
from disklab.core.run.runner import run_plan
from disklab.core.vocab.events import CaseStarted
from tests.helpers import IS_ROOT, ScratchFs, engine_plan, make_scratch_fs, teardown

pytestmark = [pytest.mark.skipif(not IS_ROOT, reason="makes loop devices and mounts (root)"),
              pytest.mark.slow]

JOURNAL_PLAN = """\
name = "journal modes"
repeats = 5

[target]
image = {{ path = "{image}", size = "512m" }}

[[config]]
label = "ordered"
fs = "ext4"
mount = ["data=ordered"]

[[config]]
label = "journal"
fs = "ext4"
mount = ["data=journal"]

[[test]]
tool = "engine"
mode = "rewrite"
block_size = "1m"
size = "128m"
direct = false
fsync = true
"""


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ScratchFs]]:
    base = tmp_path_factory.mktemp("significance")
    fs = make_scratch_fs(base)
    try:
        yield base, fs
    finally:
        teardown(fs)


@pytest.fixture(scope="module")
def same_twice(scratch: tuple[Path, ScratchFs]) -> tuple[Path, int, int]:
    """Two sessions of the same engine plan (3 repeats) on the same directory, through
    `disklab run` as a user runs them."""
    base, fs = scratch
    library = base / "lib.sqlite3"
    plan = base / "same.toml"
    plan.write_text(engine_plan(fs.mountpoint, name="same", repeats=3, runtime="0.5s"))
    ids = []
    for _ in range(2):
        assert main(["run", str(plan), "--library", str(library)]) == 0
        with Library.open(library) as lib:
            ids.append(int(lib.list_sessions()[0]["id"]))
    return library, ids[0], ids[1]


# --- Welch, from the formulas -----------------------------------------------------------------

def t_pdf(x: float, df: float) -> float:
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    return c * (1 + x * x / df) ** (-(df + 1) / 2)


def t_cdf_simpson(t: float, df: float, steps: int = 4000) -> float:
    """P(T <= t) by Simpson's rule on the density from 0 to |t| (the density is symmetric)."""
    a = abs(t)
    h = a / steps
    s = t_pdf(0, df) + t_pdf(a, df)
    s += sum((4 if i % 2 else 2) * t_pdf(i * h, df) for i in range(1, steps))
    half = s * h / 3
    return 0.5 + half if t >= 0 else 0.5 - half


def independent_welch(a: list[float], b: list[float]) -> dict[str, float]:
    """a against the baseline b: difference, se, Welch-Satterthwaite df, t, two-sided p."""
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    t = (ma - mb) / se
    return {"delta": ma - mb, "se": se, "df": df, "t": t,
            "p": 2 * (1 - t_cdf_simpson(abs(t), df)) if abs(t) < 60 else 0.0}


def raw_values(library: Path, session_id: int) -> dict[str, list[float]]:
    """Per metric, the per-repeat values the library stored (every run of these sessions
    completed)."""
    with Library.open(library) as lib:
        assert all(r["status"] == "ok" for r in lib.runs(session_id))
        return {r["metric"]: [v for v in r["values"] if v is not None]
                for r in lib.results(session_id)}


def compare_json(capsys: pytest.CaptureFixture[str], library: Path, *refs: str,
                 extra: tuple[str, ...] = ()) -> dict[str, Any]:
    return json.loads(run_cli(capsys, "compare", *refs, "--format", "json", "--library",
                              str(library), *extra))


# --- the tests --------------------------------------------------------------------------------

# alone: the first test of the module makes `same_twice`, whose two sessions must see the same
# machine (another test starting between them made 5 of 12 cells differ, with -n 2)
@pytest.mark.alone
def test_the_same_plan_twice_is_no_significant_difference(same_twice, capsys) -> None:
    library, a, b = same_twice
    doc = compare_json(capsys, library, str(a), str(b))
    assert doc["alpha"] == 0.05 and doc["confidence"] == 0.95
    assert doc["excluded"]["runs"] == 0
    cells = [c for c in doc["cells"] if c["configuration"] == f"{b} same"]
    assert len(cells) >= 6
    for c in cells:  # the fields a script reads, in every compared cell
        assert {"mean", "stddev", "n", "cv", "delta", "delta_pct", "delta_ci_low", "delta_ci_high",
                "p_value", "significant", "better"} <= c.keys()
        assert c["n"] == 3 and c["better"] in ("higher", "lower")
    tested = [c for c in cells if c["p_value"] is not None]
    assert len(tested) == len(cells)
    significant = [c for c in tested if c["significant"]]
    # Most cells: no difference. Not all: a session differs from the next one by more than its
    # repeats differ from each other. The page-cache reads here (~11 GB/s, the engine's loop in
    # C) measured +5.0, +8.5 and +12.7 % from one session to the next in 3 pairs of sessions,
    # the repeats' CV 0.7-9 %; Welch rightly calls such a step significant when the repeats are
    # tight, and then every cell of that test moves together (its rate and latencies). One test
    # of the two may so differ; a comparison that called noise a difference would flag both.
    tests = {c["test"].split(":")[0] for c in significant}
    assert len(tests) <= 1 and len(significant) <= len(tested) // 2, significant
    md = run_cli(capsys, "compare", str(a), str(b), "--library", str(library))
    assert "no significant difference" in md and "Welch's t-test" in md
    assert "(higher is better)" in md.splitlines()[0]


def test_json_agrees_with_an_independent_welch_test(same_twice, capsys) -> None:
    library, a, b = same_twice
    base, other = raw_values(library, a), raw_values(library, b)
    doc = compare_json(capsys, library, str(a), str(b))
    checked = 0
    for c in doc["cells"]:
        metric = c["test"].split()[1]
        values = (base if c["configuration"] == f"{a} same" else other)[metric]
        assert c["n"] == len(values) == 3
        assert c["mean"] == pytest.approx(statistics.fmean(values), rel=1e-12)
        assert c["stddev"] == pytest.approx(statistics.stdev(values), rel=1e-9)
        assert c["cv"] == pytest.approx(statistics.stdev(values) / statistics.fmean(values),
                                        rel=1e-9)
        higher = not (c["unit"] == "ns" or "lat" in metric)
        assert c["better"] == ("higher" if higher else "lower")
        if c["configuration"] == f"{a} same":
            assert c["p_value"] is None and c["significant"] is False
            continue
        w = independent_welch(values, base[metric])
        assert c["delta"] == pytest.approx(w["delta"], rel=1e-9, abs=1e-9)
        assert c["delta_pct"] == pytest.approx(100 * w["delta"] / statistics.fmean(base[metric]))
        assert c["p_value"] == pytest.approx(w["p"], abs=1e-6)
        # the interval: the difference ± q se, q the 97.5 % point of t with Welch's df
        q = (c["delta_ci_high"] - c["delta"]) / w["se"]
        assert c["delta"] - c["delta_ci_low"] == pytest.approx(c["delta_ci_high"] - c["delta"],
                                                               rel=1e-9)
        assert t_cdf_simpson(q, w["df"]) == pytest.approx(0.975, abs=1e-6)
        excludes_zero = c["delta_ci_low"] > 0 or c["delta_ci_high"] < 0
        assert c["significant"] == (w["p"] < 0.05 and excludes_zero)
        if c["significant"]:
            assert c["verdict"] == ("better" if (w["delta"] > 0) == higher else "worse")
        else:
            assert c["verdict"] == "no significant difference"
        checked += 1
    assert checked >= 6


def test_alpha_is_the_users(same_twice, capsys) -> None:
    library, a, b = same_twice
    loose = compare_json(capsys, library, str(a), str(b), extra=("--alpha", "0.5"))
    strict = compare_json(capsys, library, str(a), str(b), extra=("--alpha", "0.001"))
    assert loose["alpha"] == 0.5 and strict["alpha"] == 0.001
    pairs = zip(loose["cells"], strict["cells"], strict=True)
    for lo, st in pairs:
        if lo["p_value"] is not None:
            assert lo["significant"] == (lo["p_value"] < 0.5 and (lo["delta_ci_low"] > 0 or
                                                                   lo["delta_ci_high"] < 0))
            assert st["significant"] == (st["p_value"] < 0.001)
            assert (lo["delta_ci_high"] - lo["delta_ci_low"]
                    < st["delta_ci_high"] - st["delta_ci_low"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as bad:
        main(["compare", str(a), str(b), "--alpha", "2", "--library", str(library)])
    assert bad.value.code == 2 and "--alpha" in capsys.readouterr().err


def test_data_journal_against_ordered_on_rewrite_is_significant(scratch, capsys) -> None:
    base, _fs = scratch
    library = base / "journal.sqlite3"
    plan = base / "journal.toml"
    plan.write_text(JOURNAL_PLAN.format(image=base / "journal.img"))
    assert main(["run", str(plan), "--library", str(library)]) == 0
    with Library.open(library) as lib:
        sid = int(lib.list_sessions()[0]["id"])
    # one session with two configurations compares its configurations
    doc = compare_json(capsys, library, str(sid))
    ordered, journal = f"{sid} journal modes / ordered", f"{sid} journal modes / journal"
    assert doc["rows"] == [ordered, journal] and doc["baseline"] == ordered
    cell = next(c for c in doc["cells"]
                if c["configuration"] == journal and c["test"].split()[1] == "rewrite")
    assert cell["n"] == 5 and cell["better"] == "higher"
    assert cell["p_value"] < 0.05 and cell["delta_ci_high"] < 0 and cell["ratio_high"] < 1
    # worse; or, when the two were limited by different things (the kinds of their verdicts
    # differ), marked so instead of coloured: either way never "better" or "no difference"
    base = next(c for c in doc["cells"] if c["configuration"] == ordered
                and c["test"] == cell["test"])
    judged = cell["limited_by"] is not None and base["limited_by"] is not None
    kinds = {x["kind"] for x in cell["limited_by"] or []}
    base_kinds = {x["kind"] for x in base["limited_by"] or []}
    md = run_cli(capsys, "compare", str(sid), "--library", str(library))
    if not judged or kinds == base_kinds:
        assert cell["significant"] is True and cell["verdict"] == "worse", cell["shown"]
        assert ": worse" in md
    else:  # a marked cell is called neither significant nor worse (test_verdicts_measured)
        assert cell["significant"] is False and cell["verdict"] == UNLIKE, (kinds, base_kinds)
        assert UNLIKE in md


# --- runs that did not complete ---------------------------------------------------------------

@pytest.fixture(scope="module")
def cancelled(scratch: tuple[Path, ScratchFs], same_twice) -> tuple[Path, int, int]:
    """A session of 3 repeats cancelled 0.6 s into its last write: that run's partial figures
    are in the library with the run's status; the session before it is complete."""
    _base, fs = scratch
    library, a, _b = same_twice
    checked = parse_plan(engine_plan(fs.mountpoint, name="cut short", repeats=3,
                                     runtime="1.5s"))
    cancel = threading.Event()
    lib = Library.open(library)
    rec = lib.recorder()
    try:
        for ev in run_plan(checked.plan, cancel=cancel):
            rec.handle(ev)
            if isinstance(ev, CaseStarted) and ev.repeat == 3:
                threading.Timer(0.6, cancel.set).start()
    finally:
        rec.close()
        lib.close()
    assert rec.session_id is not None
    return library, int(rec.session_id), a


def test_a_cancelled_run_is_left_out_of_the_means_by_default(cancelled, capsys) -> None:
    library, sid, other = cancelled
    with Library.open(library) as lib:
        runs = lib.runs(sid)
        cut = [r for r in runs if r["status"] not in ("ok", "imported")]
        assert [(r["repeat"], r["status"]) for r in cut] in ([(3, "cancelled")], [(3, "failed")])
        status = cut[0]["status"]
        write = next(r for r in lib.results(sid) if r["metric"] == "write")
    values = write["values"]
    assert len(values) == 3 and all(v is not None for v in values)  # the partial one is kept

    doc = json.loads(run_cli(capsys, "show", str(sid), "--json", "--library", str(library)))
    assert doc["excluded"]["runs"] == 1 and doc["excluded"]["reasons"] == {status: 1}
    assert doc["excluded"]["included"] is False
    row = next(r for r in doc["results"] if r["metric"] == "write")
    assert row["n"] == 2 and row["mean"] == pytest.approx(statistics.fmean(values[:2]))
    assert row["values"] == values
    assert row["excluded"] == [{"repeat": 3, "status": status, "value": values[2]}]

    text = run_cli(capsys, "show", str(sid), "--library", str(library))
    assert f"1 run excluded from the means, comparisons and charts (1 {status})" in text
    assert re.search(rf"repeat 3 {status}: [0-9.]+ MB/s, not in the mean", text)

    cmp = compare_json(capsys, library, str(other), str(sid))
    assert cmp["excluded"]["runs"] == 1 and cmp["excluded"]["reasons"] == {status: 1}
    cell = next(c for c in cmp["cells"]
                if c["configuration"] == f"{sid} cut short" and c["test"].split()[1] == "write")
    assert cell["n"] == 2 and cell["excluded"] == 1
    assert cell["excluded_why"] == f"1 run excluded ({status})"
    assert cell["mean"] == pytest.approx(statistics.fmean(values[:2]))
    md = run_cli(capsys, "compare", str(other), str(sid), "--library", str(library))
    assert "1 run excluded from the means" in md and f"1 run excluded ({status})" in md
    svg_dir = Path(library).parent / "cut-svg"
    run_cli(capsys, "export", str(sid), "--format", "svg", "-o", f"{svg_dir}/", "--library",
            str(library))
    assert any(f"1 run excluded ({status}) from the means" in p.read_text()
               for p in svg_dir.glob("*.svg"))

    out = Path(library).parent / "cut.csv"
    run_cli(capsys, "export", str(sid), "--format", "csv", "-o", str(out), "--library",
            str(library))
    csv_text = out.read_text()
    assert f",3 {status}," in csv_text


def test_include_partial_counts_them(cancelled, capsys) -> None:
    library, sid, other = cancelled
    with Library.open(library) as lib:
        values = next(r for r in lib.results(sid) if r["metric"] == "write")["values"]
    doc = json.loads(run_cli(capsys, "show", str(sid), "--json", "--include-partial",
                             "--library", str(library)))
    assert doc["excluded"]["runs"] == 1 and doc["excluded"]["included"] is True
    row = next(r for r in doc["results"] if r["metric"] == "write")
    assert row["n"] == 3 and row["mean"] == pytest.approx(statistics.fmean(values))
    text = run_cli(capsys, "show", str(sid), "--include-partial", "--library", str(library))
    assert "their partial figures are included in the means" in text
    cmp = compare_json(capsys, library, str(other), str(sid), extra=("--include-partial",))
    cell = next(c for c in cmp["cells"]
                if c["configuration"] == f"{sid} cut short" and c["test"].split()[1] == "write")
    assert cell["n"] == 3 and cell["excluded"] == 0
    assert cmp["excluded"]["included"] is True
