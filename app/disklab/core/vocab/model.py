"""Frozen data shapes shared by every layer: the plan, its cases, and the metrics a tool gives.

Only immutable data crosses threads (rule 5), so everything here is a frozen dataclass. Parameter
values are plain scalars (int, float, str, bool); sizes are ints in bytes after the plan is loaded.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from disklab.core.vocab.units import format_size

Scalar = int | float | str | bool

# Canonical units (DESIGN.md): throughput B/s, op/s, latency ns, CPU %.
UNIT_THROUGHPUT = "B/s"
UNIT_OPS = "op/s"
UNIT_NS = "ns"
UNIT_PERCENT = "%"


@dataclass(frozen=True)
class Target:
    """Where the tests run: a directory as it is, a raw device, a scratch image DiskLab
    attaches, or a device DiskLab formats per configuration."""

    kind: str  # "directory", "device", "image" or "format"
    path: str
    size: int | None = None  # image size in bytes
    confirm: str | None = None
    # GPT partitions DiskLab makes on an image or format target (0: none): each one is a
    # target of its own, named <target>1..N (disklab.core.plan.targets)
    partitions: int = 0

    @property
    def destructive(self) -> bool:
        return self.kind in ("device", "format")

    @property
    def needs_root(self) -> bool:
        """Root's work: attaching, formatting and mounting, and raw I/O on a device node."""
        return self.kind != "directory"


@dataclass(frozen=True)
class FsConfig:
    """One filesystem configuration to compare; 'as is' for a directory target."""

    label: str
    fs: str | None = None  # None: use the filesystem as it is
    mkfs: Mapping[str, Any] = field(default_factory=dict)
    mount: tuple[str, ...] = ()
    readahead: int | None = None
    scheduler: str | None = None
    # mkfs option naming a second device DiskLab wipes (journal_device, log_device) -> the
    # plan's 'PATH SERIAL SIZE' for it: every device written to is confirmed like the target.
    confirms: Mapping[str, str] = field(default_factory=dict)
    # the named targets (and partitions) this configuration is applied to; (): every one
    targets: tuple[str, ...] = ()

    @property
    def as_is(self) -> bool:
        return self.fs is None


AS_IS = FsConfig(label="as is")


@dataclass(frozen=True)
class TestSpec:
    """A [[test]] table: a tool and its parameters; a tuple value is a matrix axis."""

    __test__ = False  # not a pytest class

    index: int  # position among the plan's [[test]] tables
    tool: str
    # key -> value; for a key in `axes` the value is the tuple of the axis' values. A `multi`
    # parameter's own value is a tuple of strings (iozone tests = ("write", "read")).
    params: Mapping[str, Any]
    line: int | None = None
    axes: tuple[str, ...] = ()
    # groups of axes that advance together (zip = [["sync", "fsync"]]) instead of multiplying
    zips: tuple[tuple[str, ...], ...] = ()
    page_cache_limit: int | None = None  # bytes; overrides the plan's for this table's cases
    # raw = true: on an image or format target, the cases run on the target's block device
    # itself, in a section of their own (RAW_SECTION) before any configuration is made
    raw: bool = False


# The label of a plan's raw-device section: the runs of its `raw = true` tests, grouped and
# compared as a configuration is (the SAN study measures the LUN, then the filesystem on it).
RAW_SECTION = "raw device"
# a plan's `order`: every repeat of a configuration before the next, or interleaved by repeat
ORDERS = ("configuration", "interleaved")
RAW_KEY = "raw"  # the [[test]] key that puts a test in that section


# Pivot keys every result row has (besides its parameters, which are keys too): a plan's
# [report] table, `disklab compare --rows/--columns` and the Compare page choose among them.
PIVOT_KEYS = (
    "config", "tool", "test", "figure", "metric", "session", "target", "host", "on", "hosts")


@dataclass(frozen=True)
class Report:
    """A plan's [report] table: the pivot table its sessions are shown in first, as the study
    that the plan runs was written (rows = journal size, columns = iozone test). Empty `metrics`
    means each test's own headline figure."""

    rows: tuple[str, ...] = ("config",)
    columns: tuple[str, ...] = ("test",)
    metrics: tuple[str, ...] = ()
    # the cell every other is compared with, as `disklab compare --baseline` takes it
    # ('config=ext4 no journal'): each cell only against the one with every other key the same
    baseline: str | None = None
    where: tuple[tuple[str, str], ...] = ()  # (key, value) filters, as --where KEY=VALUE
    title: str = ""  # which table of the study the report reproduces, shown above it
    chart: str = ""  # "lines", "bars" or "heatmap" ('' : as the data asks)
    x: str = ""  # the key a line chart sweeps ('' : the first numeric key with several values)
    units: str = ""  # "si" or "iec": what its sessions are written in ('': --units or SI)


@dataclass(frozen=True)
class Host:
    """A [hosts.NAME] table: a machine that runs `fio --server`, either started by the user
    ("running": DiskLab connects to address:port as it is) or by DiskLab over SSH ("ssh": the
    server listens on the remote's loopback only and is reached through an SSH port forward).
    `directory` is where fio writes on that machine."""

    name: str
    address: str
    port: int = 8765
    start: str = "running"  # "running" or "ssh"
    directory: str = "/tmp"
    user: str | None = None  # ssh only; default: the user's SSH config
    ssh_port: int | None = None
    ssh_config: str | None = None  # ssh -F FILE; default: the user's own
    line: int | None = None


@dataclass(frozen=True)
class HostEndpoint:
    """Where the fio client reaches one host's server now (a forwarded local port for an SSH
    host), and where fio writes there."""

    name: str
    address: str
    port: int
    directory: str


@dataclass(frozen=True)
class Plan:
    """A whole plan as loaded from TOML; `source` keeps the text so that a session can be re-run."""

    name: str
    target: Target
    tests: tuple[TestSpec, ...]
    configs: tuple[FsConfig, ...] = (AS_IS,)
    repeats: int = 1
    drop_caches: bool = False
    stop_on_failure: bool = False
    # ORDERS: "configuration" runs every repeat of a configuration before the next;
    # "interleaved" each configuration's repeat r before any repeat r + 1, so that a change of
    # the machine during the session lands on every configuration alike, not on the last ones
    order: str = "configuration"
    source: str = ""
    path: str | None = None
    # bytes of page cache each tool may keep (its memory cgroup's limit); None: no limit
    page_cache_limit: int | None = None
    hosts: tuple[Host, ...] = ()  # [hosts.*]: machines a fio test's `hosts` parameter names
    # [targets.a], [targets.b]...: name -> Target, in plan order; `target` is the first. Empty
    # for a plan with one [target] (disklab.core.plan.targets.named_targets names it "target").
    targets: Mapping[str, Target] = field(default_factory=dict)
    # the plan's [report] table: the pivot its sessions open with (Compare, compare, HTML)
    report: Report | None = None

    @property
    def raw_section(self) -> bool:
        """Whether the plan starts with a raw-device section: tests with raw = true on an
        image or format target (on a device target every test is raw already)."""
        return self.target.kind in ("image", "format") and any(t.raw for t in self.tests)

    def rounds(self) -> Iterator[tuple[str, int]]:
        """(section label, repeat) in run order: the raw-device section's repeats first, then
        the configurations, each whole (order "configuration") or interleaved by repeat."""
        labels = self.sections()
        raw = labels[:1] if self.raw_section else ()
        configs = labels[len(raw):]
        repeats = range(1, self.repeats + 1)
        yield from ((label, r) for label in raw for r in repeats)
        if self.order == "interleaved":
            yield from ((label, r) for r in repeats for label in configs)
        else:
            yield from ((label, r) for label in configs for r in repeats)

    def sections(self) -> tuple[str, ...]:
        """The labels the runs are grouped under, in run order: the raw-device section, then
        each configuration."""
        return ((RAW_SECTION,) if self.raw_section else ()) + tuple(c.label for c in self.configs)

    def section_tests(self, label: str) -> tuple[TestSpec, ...]:
        """The tests run in one section: the raw ones in the raw-device section, the others
        (every test when there is no such section) in each configuration."""
        if not self.raw_section:
            return self.tests
        return tuple(t for t in self.tests if t.raw == (label == RAW_SECTION))

    def page_cache_limit_of(self, test_index: int) -> int | None:
        """The page-cache limit of the cases of one [[test]] table: its own, else the plan's."""
        for spec in self.tests:
            if spec.index == test_index and spec.page_cache_limit is not None:
                return spec.page_cache_limit
        return self.page_cache_limit


@dataclass(frozen=True)
class Case:
    """One point of configs x tests x parameter grid; runs `repeats` times. The id is stable."""

    id: str
    index: int
    config: str  # FsConfig label
    tool: str
    test_index: int
    params: Mapping[str, Any]  # Scalar, or a tuple of str for `multi` parameters

    def title(self) -> str:
        def show(k: str, v: Any) -> str:
            if isinstance(v, int) and not isinstance(v, bool) and k in SIZE_KEYS:
                return f"{k}={format_size(v)}"
            if isinstance(v, tuple):
                return f"{k}={','.join(map(str, v))}"
            return f"{k}={v}"

        return f"{self.tool} " + " ".join(
            show(k, v) for k, v in self.params.items() if v is not None)


# Parameter keys whose values are sizes in bytes (for display in the plan's spelling).
SIZE_KEYS = frozenset(
    {"block_size", "size", "record_size", "file_size", "bs", "min_file_size", "max_file_size",
     "ram", "max_record_size", "min_record_size",
     "io_size", "io_limit", "offset", "offset_increment"}  # fio options DiskLab reads as bytes
)


@dataclass(frozen=True)
class Metric:
    """One figure a tool reported. value None means 'not measured' and `note` says why.

    `params` is set when one output holds several parameter points (iozone auto mode, one row
    per file size and record size; fio per-job rows): the point's own parameters, which override
    the case's in the library.
    """

    name: str
    value: float | None
    unit: str
    note: str | None = None
    params: Mapping[str, Scalar] | None = None


@dataclass(frozen=True)
class ProgressUpdate:
    """What an adapter reads from one line of live output; the runner adds case and timing."""

    done_bytes: int | None = None
    total_bytes: int | None = None
    phase: str | None = None
    message: str | None = None
    rate: float | None = None  # B/s as the tool reports it now
    target: str | None = None  # the named target this line is about (several targets)
