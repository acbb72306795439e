"""Comparisons: configurations (sessions, or the configurations inside them) x tests, each cell
mean ± stddev with its difference from a baseline, judged by Welch's t-test; and which
configuration values differ.

Both the Compare page and `disklab compare` build their comparison here (`comparison_for`), so
the window and the files it writes hold the same rows, columns, tests and verdicts. A cell is
"better" or "worse" only when the difference is significant (stats.Welch.significant at the
comparison's alpha); otherwise it says "no significant difference", or "one run: no test
possible" when either side has a single run.
"""

from __future__ import annotations

import dataclasses
import shlex
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from disklab.core.results.format import FigureLabels, format_fact
from disklab.core.results.labels import case_labels
from disklab.core.results.limit_words import limits_of, with_limits
from disklab.core.results.limits import Limit, session_limits
from disklab.core.results.partial import SessionResults, combined, session_results
from disklab.core.results.rows import is_headline, row_params, row_stats
from disklab.core.results.stats import ALPHA, Welch, cv, is_noisy, welch

# a cell's verdict against the baseline
BETTER = "better"
WORSE = "worse"
NO_DIFFERENCE = "no significant difference"
# a significant difference in a figure neither way of which is better (bytes moved: is_neutral)
DIFFERENT = "significantly different (neither way is better)"
SIGNIFICANT = (BETTER, WORSE, DIFFERENT)
ONE_RUN = "one run: no test possible"
BASELINE = "baseline"
# a cell and its baseline limited by different things (limits: CPU against nothing found, the
# page cache against the device): their difference says which limit, not which configuration
UNLIKE = "limited by something else than the baseline: not compared"


class ResultsSource(Protocol):
    """What a comparison reads from the library (core.library.Library has it)."""

    def session(self, session_id: int) -> dict[str, Any]: ...
    def results(self, session_id: int) -> list[dict[str, Any]]: ...
    def incomplete_runs(self, session_id: int, complete: frozenset[str]
                        ) -> list[dict[str, Any]]: ...
    def events(self, session_id: int) -> list[dict[str, Any]]: ...
    # what limits.session_limits reads (the verdicts of what limited each row)
    def limits(self, session_id: int, rules: int, judge: Callable[[], Any]) -> Any: ...
    def store_limits(self, session_id: int, rules: int, judge: Callable[[], Any]) -> None: ...
    def run_ends(self, session_id: int) -> list[dict[str, Any]]: ...
    def cases(self, session_id: int) -> list[dict[str, Any]]: ...
    def samples(self, session_id: int, case_id: str | None = None,
                series: str | None = None) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class Cell:
    """One configuration's mean of one test, and how it stands against the baseline's.

    `test` is Welch's test against the baseline (None for the baseline itself, or when either
    side has fewer than two runs); `verdict` one of BETTER, WORSE, NO_DIFFERENCE, ONE_RUN,
    BASELINE, or '' without a baseline figure; `excluded` the runs left out of the mean and
    `excluded_why` their statuses ('cancelled', 'failed'), one per run; `notes` what the tool's
    adapter said of the figure (iozone's per-process figures that are not a spread)."""

    mean: float | None
    stddev: float | None
    n: int
    unit: str
    delta: float | None = None  # mean - baseline mean, canonical unit
    delta_pct: float | None = None
    test: Welch | None = None
    verdict: str = ""
    excluded: int = 0
    excluded_why: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def against(self, delta: float | None, delta_pct: float | None, test: Welch | None,
                verdict: str) -> Cell:
        """This cell with its standing against the baseline (what dataclasses.replace does,
        at a tenth of its cost: a comparison of a 10,000-run session makes thousands, and a
        frozen dataclass's __init__ sets each field through object.__setattr__). The copy's
        fields are set before anyone holds it, so it is as immutable as the original."""
        new = object.__new__(Cell)
        fields = new.__dict__
        fields.update(self.__dict__)
        fields["delta"], fields["delta_pct"] = delta, delta_pct
        fields["test"], fields["verdict"] = test, verdict
        return new

    @property
    def cv(self) -> float | None:
        """The coefficient of variation (stddev / mean), None below two runs."""
        return cv(self.mean, self.stddev) if self.n >= 2 else None

    @property
    def noisy(self) -> bool:
        """CV above 10 % over three runs or more (stats.is_noisy)."""
        return is_noisy(self.mean, self.stddev, self.n)


@dataclass(frozen=True)
class Comparison:
    """Rows: configurations (session / config); columns: tests; cells: mean ± stddev."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: Mapping[tuple[str, str], Cell]
    baseline: str | None
    units: Mapping[str, str] = field(default_factory=dict)  # column -> canonical unit
    higher_is_better: Mapping[str, bool] = field(default_factory=dict)
    common: Mapping[str, Any] = field(default_factory=dict)  # parameters equal in every column
    metrics: Mapping[str, str] = field(default_factory=dict)  # column -> metric name
    alpha: float = ALPHA
    # the runs that did not complete, of every session compared (partial.SessionResults)
    incomplete: SessionResults = field(default_factory=lambda: SessionResults([]))
    # each cell's verdicts of what limited it (limit_words.with_limits rows), absent when not judged
    limits: Mapping[tuple[str, str], tuple[Limit, ...]] = field(default_factory=dict)
    # the configurations of the sessions compared that have no figure (every run failed), each
    # with why ('1 journal / data=journal: 3 runs failed')
    missing: tuple[str, ...] = ()


def unlike(cell: Cell, found: Sequence[Limit] | None, ref_found: Sequence[Limit] | None
           ) -> Cell:
    """A judged cell whose baseline was limited by something else (different kinds of
    verdict), marked UNLIKE instead of better or worse; as it is otherwise."""
    if found is None or ref_found is None or cell.verdict in ("", BASELINE):
        return cell
    if {x.kind for x in found} == {x.kind for x in ref_found}:
        return cell
    return cell.against(cell.delta, cell.delta_pct, cell.test, UNLIKE)


def better_is_higher(metric: str, unit: str) -> bool:
    """Throughput and IOPS are better higher; latencies, times and CPU use better lower."""
    name = metric.lower()
    return not (unit in ("ns", "s", "%") or "lat" in name or "time" in name)


def is_neutral(unit: str) -> bool:
    """Bytes moved (write:bytes) say how much work a run did, not how well: neither way is
    better."""
    return unit == "B"


def delta_pct(value: float | None, base: float | None) -> float | None:
    """Per cent change of `value` against `base`; None when either is missing or base is 0."""
    if value is None or not base:
        return None
    return 100.0 * (value - base) / base


def row_name(label: str, config: str, several: bool) -> str:
    """A comparison row: the session's label, with ' / config' when it has several."""
    return f"{label} / {config}" if several else label


def _sessions_configs(sessions: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]
                      ) -> list[tuple[str, Sequence[Mapping[str, Any]], bool]]:
    """(label, rows, whether the session has several configurations) per session."""
    return [(label, results, len({str(r.get("config") or "") for r in results}) > 1)
            for label, results in sessions]


def labelled_rows(sessions: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]
                  ) -> list[dict[str, Any]]:
    """Every results row of the sessions with its `config` replaced by its comparison row name
    (so charts of several sessions name their lines and bars as the comparison's rows)."""
    out = []
    for label, results in sessions:
        several = len({str(r.get("config") or "") for r in results}) > 1
        out += [{**r, "config": row_name(label, str(r.get("config") or ""), several)}
                for r in results]
    return out


def row_cell(row: Mapping[str, Any], unit: str) -> Cell:
    """A results row's cell, not yet judged: its mean, stddev, n and the runs left out. Its
    fields are set as Cell's __init__ would, without a frozen __init__'s object.__setattr__
    per field: a comparison of a 10,000-run session makes 6,000 of them."""
    mean, std, n = row_stats(row)
    excluded = row.get("excluded")
    left_out = tuple(str(e["status"]) for e in excluded) if excluded else ()
    notes = row.get("notes")
    cell = object.__new__(Cell)
    cell.__dict__.update(mean=mean, stddev=std, n=n, unit=unit, delta=None, delta_pct=None,
                         test=None, verdict="", excluded=len(left_out), excluded_why=left_out,
                         notes=tuple(map(str, notes)) if notes else ())
    return cell


def judged(cell: Cell, ref: Cell, higher_is_better: bool, alpha: float) -> Cell:
    """`cell` with its difference from the baseline's `ref` and Welch's verdict on it."""
    if ref.mean is None or cell.mean is None:
        return cell
    delta = cell.mean - ref.mean
    pct = delta_pct(cell.mean, ref.mean)
    if cell.n < 2 or ref.n < 2:
        return cell.against(delta, pct, None, ONE_RUN)
    test = welch(cell.mean, cell.stddev or 0.0, cell.n, ref.mean, ref.stddev or 0.0, ref.n,
                 alpha)
    if not test.significant:
        verdict = NO_DIFFERENCE
    elif is_neutral(cell.unit):
        verdict = DIFFERENT
    else:
        verdict = BETTER if (delta > 0) == higher_is_better else WORSE
    return cell.against(delta, pct, test, verdict)


def compare_results(sessions: Sequence[tuple[str, Sequence[Mapping[str, Any]]]],
                    baseline: str | None = None, all_metrics: bool = True,
                    alpha: float = ALPHA) -> Comparison:
    """Build the comparison from (session label, results rows) pairs.

    A session with one configuration is one row named after the session; with several, each
    configuration is a row 'session / config'. `baseline` names a row or a session (its first
    row); None takes the first row. Parameters equal in every row are left out of the column
    names (`Comparison.common` has them); `all_metrics=False` keeps the headline figures only
    (rows.is_headline). Every cell but the baseline's is tested against the baseline's at
    `alpha` (judged).
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1 (got {alpha})")
    # (row name, results row): the session's label given to each row without copying it
    every = [(row_name(label, str(r.get("config") or ""), several), r)
             for label, results, several in _sessions_configs(sessions)
             for r in results if all_metrics or is_headline(r)]
    labels = case_labels([r for _row, r in every])
    common = dict(labels.common)
    # a column is named by its tool, metric and the parameters that differ (labels.py)
    label_of = FigureLabels({k for _row, r in every for k in row_params(r)} - set(labels.keys))
    cells: dict[tuple[str, str], Cell] = {}
    rows: dict[str, None] = {}  # ordered sets: first seen first (a list's `in` made the
    columns: dict[str, None] = {}  # comparison of a 10,000-run session quadratic)
    units: dict[str, str] = {}
    better: dict[str, bool] = {}
    metrics: dict[str, str] = {}
    limited: dict[tuple[str, str], tuple[Limit, ...]] = {}
    for row, r in every:
        rows.setdefault(row)
        col = label_of(r)
        unit = str(r.get("unit", ""))
        if col not in columns:
            columns[col] = None
            metrics[col] = str(r.get("metric", ""))  # the label holds the metric
        if units.get(col) != unit:  # a column's unit is its last row's
            units[col] = unit
            better[col] = better_is_higher(metrics[col], unit)
        cells[(row, col)] = row_cell(r, unit)
        found = limits_of(r)
        if found is not None:
            limited[(row, col)] = found
    base = _baseline_row(list(rows), baseline)
    for (row, col), cell in list(cells.items()):
        ref = cells.get((base, col)) if base else None
        if ref is None:
            continue
        if row == base:
            cells[(row, col)] = cell.against(0.0 if cell.mean is not None else None,
                                        0.0 if cell.mean else None, cell.test, BASELINE)
        else:
            cells[(row, col)] = unlike(judged(cell, ref, better[col], alpha),
                                       limited.get((row, col)), limited.get((base, col)))
    return Comparison(tuple(rows), tuple(columns), cells, base, units, better, common, metrics,
                      alpha, limits=limited)


def _baseline_row(rows: list[str], baseline: str | None) -> str | None:
    """The row a baseline names: itself, a session's first row ('3 raid' of '3 raid / ext2'),
    or a configuration by its own name ('ext2'); the first row without one. ValueError naming
    the rows when it names none (a typo is not silently the first row)."""
    if not rows or not baseline:
        return rows[0] if rows else None
    if baseline in rows:
        return baseline
    named = [r for r in rows if r.startswith(f"{baseline} / ") or r.endswith(f" / {baseline}")]
    if not named:
        raise ValueError(f"--baseline {baseline!r}: no session or configuration of that name "
                         f"(rows: {', '.join(rows)})")
    return named[0]


def delta_class(comparison: Comparison, row: str, col: str) -> str:
    """'better', 'worse' or 'same' against the baseline, for colour coding: only a significant
    difference (Cell.verdict) is coloured."""
    cell = comparison.cells.get((row, col))
    if cell is None or cell.verdict not in (BETTER, WORSE):
        return "same"
    return cell.verdict


def session_label(session: Mapping[str, Any]) -> str:
    """A session as a comparison names it: 'id name'."""
    return f"{session['id']} {session['name']}"


def comparison_for(lib: ResultsSource, session_ids: Sequence[int],
                   baseline: int | str | None, all_metrics: bool = True, alpha: float = ALPHA,
                   include_partial: bool = False) -> tuple[Comparison, list[dict[str, Any]]]:
    """The comparison of library sessions, and the sessions. `baseline` is a session id (its
    first row) or a row's label; None: the first row. Runs that did not complete are left out
    of the means unless `include_partial` (partial.session_results); the comparison counts
    them."""
    sessions = [lib.session(sid) for sid in session_ids]
    base_label = baseline if isinstance(baseline, str) else None
    labelled = []
    counted = []
    for s in sessions:
        if s["id"] == baseline:
            base_label = session_label(s)
        results = session_results(lib, s["id"], include_partial)
        counted.append(results)
        labelled.append((session_label(s), with_limits(results.rows,
                                                       session_limits(lib, s["id"]))))
    c = compare_results(labelled, base_label, all_metrics, alpha)
    missing = tuple(m for s, (_l, rows) in zip(sessions, labelled, strict=True)
                    for m in missing_configs(lib, s, rows))
    return dataclasses.replace(c, incomplete=combined(counted), missing=missing), sessions


def missing_configs(lib: ResultsSource, session: Mapping[str, Any],
                    rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The session's configurations without a figure among `rows`, each with its runs'
    statuses ('1 journal / data=journal: 3 runs failed'): a configuration whose every run
    failed is named, not silently absent from a comparison."""
    shown = {str(r.get("config") or "") for r in rows}
    cases = lib.cases(session["id"])
    config_of = {str(c["case_id"]): str(c.get("config") or "") for c in cases}
    statuses: dict[str, dict[str, int]] = {}
    for run in lib.run_ends(session["id"]):
        config = config_of.get(str(run["case_id"]))
        if config is not None:
            counts = statuses.setdefault(config, {})
            counts[str(run.get("status"))] = counts.get(str(run.get("status")), 0) + 1
    out = []
    for config in dict.fromkeys(config_of.values()):
        if config in shown:
            continue
        why = ", ".join(f"{n} run{'s' if n > 1 else ''} {status}"
                        for status, n in statuses.get(config, {}).items()) or "no run"
        out.append(f"{session_label(session)} / {config}: {why}")
    return out


def applied_configs(lib: ResultsSource, session_id: int) -> dict[str, dict[str, Any]]:
    """ConfigApplied events' read-back per configuration label."""
    out = {}
    for e in lib.events(session_id):
        if e.get("kind") in ("config_applied", "ConfigApplied") and e.get("config"):
            out[str(e["config"])] = dict(e.get("readback") or {})
    return out


# Facts that differ between any two runs without saying anything about the configuration:
# where things were mounted (random temporary names), which loop device, the tools' raw output
# (whole dumpe2fs dumps: their parsed fields are compared instead), errors, sizes left free.
NOISE_KEYS = frozenset({"raw", "mountpoint", "mount_source", "source", "device", "devno",
                        "errors", "directory", "identity", "free_bytes", "fs_size_bytes",
                        "journal_devno", "journal_device", "backing", "mismatches", "uuid",
                        "free_blocks", "free_inodes", "mount_count", "last_mount",
                        "last_write", "created", "hostname", "label", "config", "commands"})


def is_noise(key: str) -> bool:
    """Whether a flattened fact ('readback.raw.dumpe2fs -h /dev/loop3') is noise (NOISE_KEYS
    anywhere in its path)."""
    return any(part in NOISE_KEYS for part in key.split("."))


def plan_configs(plan_text: str | None) -> dict[str, dict[str, Any]]:
    """The [[config]] tables of a recorded plan, by label, as the person wrote them (fs, mkfs
    and mount options): what was asked, next to what was read back."""
    if not plan_text:
        return {}
    try:
        doc = tomllib.loads(plan_text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return {}
    out: dict[str, dict[str, Any]] = {}
    configs = doc.get("config")
    for i, c in enumerate(configs if isinstance(configs, list) else [], start=1):
        if isinstance(c, dict):
            label = str(c.get("label") or f"config {i}")
            out[label] = {k: v for k, v in c.items() if k != "label"}
    return out


def command_facts(readback: Mapping[str, Any]) -> dict[str, str]:
    """The setup commands a configuration ran (mkfs, mount, ...) as text, one fact per tool
    ('command.mount': 'mount -t ext4 -o data=journal DEVICE MOUNTPOINT'), the scratch device
    and mountpoint written as DEVICE and MOUNTPOINT, so only a real difference differs."""
    device, mountpoint = readback.get("device"), readback.get("mountpoint")
    out: dict[str, str] = {}
    for argv in readback.get("commands") or []:
        if not isinstance(argv, list | tuple) or not argv:
            continue
        words = ["DEVICE" if w == device else "MOUNTPOINT" if w == mountpoint else str(w)
                 for w in argv]
        key = f"command.{words[0].rsplit('/', 1)[-1]}"
        out[key] = f"{out[key]}; {shlex.join(words)}" if key in out else shlex.join(words)
    return out


def config_facts(lib: ResultsSource, sessions: Sequence[Mapping[str, Any]], c: Comparison
                 ) -> dict[str, dict[str, Any]]:
    """Per comparison row: the configuration as the plan asked it ('plan.…'), as the kernel
    and the filesystem read it back ('readback.…', parsed fields, never raw dumps) and the
    host's filesystem and device; noise (is_noise) left out."""
    out: dict[str, dict[str, Any]] = {}
    for s in sessions:
        label = session_label(s)
        host = s.get("host") or {}
        base = {}
        for key in ("filesystem", "device"):
            if isinstance(host.get(key), dict):
                base.update(flatten(host[key], f"{key}."))
        applied = applied_configs(lib, s["id"])
        asked = plan_configs(s.get("plan_text"))
        for row in c.rows:
            if row == label or row.startswith(label + " / "):
                config = row.split(" / ", 1)[1] if " / " in row else None
                facts = dict(base)
                if config and config in asked:
                    facts.update(flatten(asked[config], "plan."))
                elif len(asked) == 1:
                    facts.update(flatten(next(iter(asked.values())), "plan."))
                readback = (applied.get(config) if config else None) or (
                    next(iter(applied.values())) if len(applied) == 1 else None)
                if readback is not None:
                    facts.update(flatten(readback, "readback."))
                    facts.update(command_facts(readback))
                out[row] = {k: v for k, v in facts.items() if not is_noise(k)}
    return out


def _items(value: Any) -> list[str] | None:
    """A value as a list of items when it is one: a list, or text of comma separated items
    ('rw,relatime,data=ordered', a feature list); None otherwise."""
    if isinstance(value, list | tuple):
        return [format_fact(v) for v in value]
    if isinstance(value, str) and "," in value and " " not in value.strip():
        return value.split(",")
    return None


def config_diff(configs: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, dict[str, str]]]:
    """Which configuration values differ: [(key, {row: value})] for keys not equal everywhere,
    nothing else. A list (mount options, filesystem features) shows only its items that are
    not in every configuration ('data=journal', not 'rw,relatime,...,data=journal'), the key
    then saying so ('readback.features (items not in all)').

    `configs` maps a row to its flattened facts (mkfs options, mount options, read-ahead, the
    filesystem as read back, the setup commands)."""
    keys: dict[str, None] = {}
    for facts in configs.values():
        keys.update(dict.fromkeys(facts))
    out = []
    for k in keys:
        raw = {row: facts.get(k) for row, facts in configs.items()}
        values = {row: format_fact(v) for row, v in raw.items()}
        if len(set(values.values())) <= 1:
            continue
        items = {row: _items(v) for row, v in raw.items()}
        if all(i is not None for i in items.values()):
            shared = set.intersection(*(set(i or []) for i in items.values()))
            if shared:
                values = {row: ",".join(x for x in i or [] if x not in shared) or "(none)"
                          for row, i in items.items()}
                k = f"{k} (items not in all)"
        out.append((k, values))
    return out


def flatten(facts: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested facts -> 'a.b' keys, for the config diff."""
    out: dict[str, Any] = {}
    for k, v in facts.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out
