"""The one interface every tool adapter implements (DESIGN.md rules 3 and 10).

Adapters are pure: they turn parameters into an argv, and a tool's output into metrics and
progress. They do no I/O and read no clock, so they are tested on recorded real outputs.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from disklab.core.vocab.errors import ParseError
from disklab.core.vocab.model import HostEndpoint, Metric, ProgressUpdate, Scalar

REQUIRED: Any = object()  # ParamSpec.default for a parameter the plan must give

# Upper bounds every numeric parameter gets, so that a plan cannot ask for what no machine holds
# (or what a float or SQLite's 64-bit INTEGER cannot carry): the plan checker refuses a value
# beyond its ParamSpec.maximum with the TOML key and line.
MAX_FILE = 1 << 50  # bytes of one test file: 1 PiB, beyond any disk tested, far below 2**63
MAX_BLOCK = 1 << 30  # bytes of one I/O: each tool allocates this much per job and queue slot
MAX_SECONDS = 7 * 24 * 3600.0  # one case's run or ramp time: a week
MAX_COUNT = 2**31 - 1  # counts the tools read into a C int (fio's fsync=N)


@dataclass(frozen=True)
class ParamSpec:
    """What a plan may give for one parameter of a tool, so that plans are checked generically.

    kind: "size" (bytes; '4096k'), "int", "float", "bool", "choice", "duration" (seconds; '30s'),
    "str". A list in the plan is a matrix axis, except for `multi` parameters, whose value is
    itself a list of choices (iozone's tests = ["write", "read"] is one run with -i 0 -i 1); for
    those a list of lists is the axis.
    """

    kind: str
    default: Any = REQUIRED
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    multi: bool = False
    help: str = ""
    label: str = ""  # its plain name ("queue depth"), shown beside the tool's own (iodepth)


@dataclass(frozen=True)
class Capabilities:
    """What a tool can do, read by the plan loader (direct = true needs direct_io), by the
    registry's interface check and by `disklab tools --json`."""

    needs_root: bool = False
    needs_pty: bool = False
    live_progress: bool = False  # prints progress of its own (else only the sampler shows rates)
    direct_io: bool = False
    tests: tuple[str, ...] = ()  # canonical test names it offers
    # streams spread over several targets by a test's `on` ("a+b"): the plan's targets check,
    # the schema's `on` key
    placeable: bool = False
    # works on a block device without a filesystem (a test's `raw = true`, a device target)
    raw_device: bool = False
    # `disklab import` reads its saved outputs: sniff() recognises them and parse_result()
    # reads them without the plan's parameters; the `--tool` choices of `disklab import`
    importable: bool = False


@dataclass(frozen=True)
class RunTarget:
    """What an adapter needs to know about where a case runs. Facts, read by the runner."""

    directory: str  # where test files go (and the tool's cwd)
    tag: str  # unique per case and repeat, for test file names
    device: str | None = None  # a raw block device under test (target kind "device")
    ram_bytes: int = 0
    is_root: bool = False
    python: str = "python3"  # interpreter for the built-in engine
    # fio servers a case with a `hosts` parameter runs on (fio --client), by host name
    hosts: tuple[HostEndpoint, ...] = ()
    # several targets (a test's `on`): target name -> the directory its streams' files go to
    directories: Mapping[str, str] = field(default_factory=dict)

    @property
    def stem(self) -> str:
        """What every file of this case and repeat is named from, disklab-TAG: one spelling
        for every adapter, so that a case's files are told apart from any other's."""
        return f"disklab-{self.tag}"

    def file(self, suffix: str = "", directory: str | None = None) -> str:
        """A file of this case: DIRECTORY/disklab-TAG + `suffix`, in the target's directory
        unless another (a placed stream's target) is given."""
        return f"{self.directory if directory is None else directory}/{self.stem}{suffix}"


@dataclass(frozen=True)
class Command:
    """How to run one case. `prepare` steps run first and are not measured (e.g. lay out the file
    a read test reads); `files` are removed afterwards whatever happens."""

    argv: tuple[str, ...]
    cwd: str | None = None
    files: tuple[str, ...] = ()
    result_file: str | None = None  # the tool writes its results here (fio --output)
    planned_bytes: int | None = None  # bytes the measured step moves, for progress and ETA
    prepare: tuple[tuple[str, ...], ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    needs_pty: bool = False
    # the measured step reads what `prepare` wrote: the runner drops caches in between
    reads_after_prepare: bool = False
    # (path, text) files the runner writes before the measured step (fio --client's job
    # files: the client sends a job file's text to each server); they are in `files` too
    inputs: tuple[tuple[str, str], ...] = ()
    # several processes started together behind a barrier (dd on several targets): each
    # (target name, argv); `argv` is then only what the transcript shows. The runner writes
    # the streams' start and end times to `result_file` as JSON.
    group: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class ToolOutput:
    """Everything a finished (or killed) tool left behind, for parse_result."""

    stdout: str
    stderr: str = ""
    result_file: str | None = None  # contents of Command.result_file, if any
    exit_status: int | None = 0


@dataclass(frozen=True)
class Measured:
    """One figure's measured interval as its tool timed it: the figure's name (its metrics'
    names before ':', "write" for write and write:cpu), from `start` to `end` in wall-clock
    seconds (the transcript's lines are stamped so): what a verdict of what limited that
    figure judges, not the whole run's sleeps, set-up and other tests. `moved`: the bytes
    the figure moved as its tool counted them, where the tool says (iozone's file size times
    its processes), so that a figure shorter than a sample can still be judged against the
    bytes the device moved over the samples it shares with its neighbours."""

    name: str
    start: float
    end: float
    moved: float | None = None


class ProgressParser:
    """Reads a tool's live output line by line (lines split on \\r and \\n).

    Stateful because some tools say what phase they are in only by what they printed before
    (iozone). The default reads nothing; adapters override feed().
    """

    def feed(self, stream: str, line: str) -> ProgressUpdate | None:
        return None

    def feed_many(self, stream: str, line: str) -> list[ProgressUpdate]:
        """Every update one line gives: the case's, and with several targets one per target
        (ProgressUpdate.target) where the tool says; by default feed()'s one."""
        update = self.feed(stream, line)
        return [] if update is None else [update]


class ToolAdapter(ABC):
    """Base of the adapters in disklab.core.tools. Subclasses set the class attributes."""

    name: ClassVar[str]  # as in a plan's `tool = ...`
    title: ClassVar[str]  # for people
    executable: ClassVar[str]  # looked up on PATH ("" for the built-in engine)
    package: ClassVar[str]  # Debian package that provides it
    capabilities: ClassVar[Capabilities]
    params: ClassVar[Mapping[str, ParamSpec]]
    # where the tool stands in every list of tools (`disklab tools`, the schema, the window's
    # choice of tool, the order `disklab import` sniffs in): lowest first
    rank: ClassVar[int] = 100
    # a [[test]]'s sub-table of the tool's own options, passed through beside `params`
    # ([test.fio_options]); "": the tool takes its `params` only
    options_table: ClassVar[str] = ""

    def option_value(self, name: str, value: Any) -> Any:
        """One pass-through option's canonical value; ValueError says why it is not taken
        (the option itself, or its value). By default none is."""
        raise ValueError(f"{self.name} takes its parameters only")

    def options_check_argv(self, params: Mapping[str, Any]) -> tuple[str, ...] | None:
        """argv that asks the tool itself whether it takes a case's options (fio
        --parse-only), run by the plan check before anything runs; None: nothing to ask."""
        return None

    def options_verdict(self, text: str, names: list[str]) -> list[tuple[str | None, str]]:
        """The tool's refusals in that check's output as (option name or None, its words)."""
        return []

    def options_list_argv(self) -> tuple[str, ...] | None:
        """argv that lists the tool's own options (fio --cmdhelp=all), for completion."""
        return None

    def options_list(self, text: str) -> list[tuple[str, str]]:
        """(name, what it does) of the options that listing offers and DiskLab takes."""
        return []

    def options_lookup_argvs(self, name: str,
                             params: Mapping[str, Any]) -> tuple[tuple[str, ...], ...]:
        """argvs that ask the tool about one option its listing lacks (an alias, an engine's
        option), in turn until one knows it."""
        return ()

    def options_lookup(self, text: str) -> str | None:
        """The tool's own name of the option one of those answers describes, or None."""
        return None

    def options_switch(self, text: str) -> bool:
        """Whether that answer describes a switch (an option set by true, or no value)."""
        return False

    def paced_seconds(self, params: Mapping[str, Any]) -> float | None:
        """How long a case lasts when the tool paces it (a rate limit), or None: its
        device's speed decides."""
        return None

    def version_argv(self) -> tuple[str, ...] | None:
        """argv that prints the version (None: no such thing)."""
        return None

    def builtin_version(self) -> str | None:
        """The version of a tool that ships with DiskLab (the built-in engine), without running
        anything; None for a tool found on PATH (version_argv asks it)."""
        return None

    def parse_version(self, text: str) -> str | None:
        return text.strip().splitlines()[0] if text.strip() else None

    def check(self, params: Mapping[str, Scalar]) -> list[tuple[str, str]]:
        """Cross-parameter problems of one case as (key, message). Single values are already
        checked against `params` specs."""
        return []

    def advice(self, params: Mapping[str, Scalar]) -> list[tuple[str, str]]:
        """What the tool will ignore or do otherwise than the case says, as (key, message):
        warnings of the plan check (`disklab plan validate` and the Test matrix alike), not
        errors, since the tool runs the case all the same."""
        return []

    def is_buffered(self, params: Mapping[str, Scalar]) -> bool:
        """True when the case goes through the page cache (so small files measure memory)."""
        return not bool(params.get("direct", False))

    def reads(self, params: Mapping[str, Scalar]) -> bool:
        """True when the case reads (so a buffered one may read from the page cache, which the
        plan check warns of); a write-only case has no read figure to mislead. Default: it
        may read."""
        return True

    def writes(self, params: Mapping[str, Scalar]) -> bool:
        """True when the case writes its target; a read-only case's writes (dd's to
        /dev/null) never reach a device, so they must not read as "absorbed by the page
        cache". Default: it may write."""
        return True

    def file_size(self, params: Mapping[str, Scalar]) -> int | None:
        """Size of the file one stream works on, for the 2 x RAM page-cache warning."""
        size = params.get("size") or params.get("file_size")
        return int(size) if isinstance(size, int) else None

    def space_bytes(self, params: Mapping[str, Scalar]) -> int | None:
        """Bytes of test files one case has on the target at once (all its streams), checked
        against the target's free space before anything runs; None: unknown."""
        return self.file_size(params)

    def moved_bytes(self, params: Mapping[str, Scalar]) -> int | None:
        """Bytes one size-based case moves when that is more than its files hold (fio's
        io_size, loops), for the checks that count what is written; None: its files."""
        return None

    def ios(self, params: Mapping[str, Scalar], test: str) -> int | None:
        """The I/Os of direction `test` ('read', 'write') one run of a case makes, all its
        streams, when its parameters fix them: the count a latency percentile is taken over
        (a p99.9 of 256 writes is their slowest one). None: not fixed (time-based) or not
        known."""
        return None

    def buffer_bytes(self, params: Mapping[str, Scalar]) -> int | None:
        """Bytes of I/O buffers the tool allocates for one case (block size x queue slots x
        jobs), checked against the machine's RAM before anything runs; None: small."""
        return None

    def uses_direct_io(self, params: Mapping[str, Scalar]) -> bool:
        return bool(params.get("direct", False))

    def placed_params(self, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """A placed case's parameters as its command runs them (default: as given). Why: a
        tool that starts one process per stream of `on` (iozone -t N -F one file on each
        target) runs N processes whatever the plan's `threads` says, and a case, its rows and
        its labels must say what ran."""
        return params

    @abstractmethod
    def build_command(self, params: Mapping[str, Scalar], target: RunTarget) -> Command:
        """argv (a list, never a shell string) and files of one case."""

    @abstractmethod
    def parse_result(self, output: ToolOutput, params: Mapping[str, Scalar]) -> list[Metric]:
        """Metrics from a finished tool's output. Raises ParseError (tool, line, expected)."""

    def parse_partial(self, output: ToolOutput, params: Mapping[str, Scalar]) -> list[Metric]:
        """What a killed or failed tool printed before it died; never raises."""
        try:
            return self.parse_result(output, params)
        except Exception:
            return []

    def progress_parser(self, params: Mapping[str, Scalar]) -> ProgressParser:
        return ProgressParser()

    def saved_output(self, text: str) -> ToolOutput:
        """A saved output file as parse_result reads it (`disklab import`): by default what the
        tool printed on stdout; a tool that reports on stderr (dd) overrides this."""
        return ToolOutput(stdout=text)

    def measured(self, lines: Sequence[tuple[float, str, str]], params: Mapping[str, Any]
                 ) -> list[Measured] | None:
        """Each figure's measured interval from a run's transcript ((t, stream, text) lines,
        as the library keeps them); None when the tool gives no boundary between its figures
        (the run is the one interval of them all)."""
        return None

    def device_evidence(self, text: str) -> dict[str, float]:
        """What a saved output says of the device it ran on, for `disklab import`'s verdict of
        what limited it: 'busy_pct' (the device's busy time over the run) and 'in_flight'
        (its mean requests in flight) when the tool reports them (fio's disk_util); nothing
        by default."""
        return {}

    def sniff(self, text: str) -> bool:
        """True when `text`, a whole saved output, is this tool's: how `disklab import` finds
        the adapter when --tool is not given. False by default: output that cannot be imported
        (the built-in engine's is only ever read from a run)."""
        return False


PLACEMENT_KEY = "on"  # a test's placement parameter: "a+b" = a stream on a, one on b


def placement(params: Mapping[str, Any]) -> list[str]:
    """The target names of a case's streams, one per stream ("a+a+b" -> [a, a, b]); [] when
    the case has no placement (it runs on the one target)."""
    value = params.get(PLACEMENT_KEY)
    return [n for n in value.split("+") if n] if isinstance(value, str) else []


def stream_directories(params: Mapping[str, Any], target: RunTarget) -> list[tuple[str, str]]:
    """(target name, directory) of each stream of a placed case, in `on` order; a name the
    runner gave no directory for falls back to the case's directory."""
    return [(name, target.directories.get(name, target.directory))
            for name in placement(params)]


ALL_TARGETS = "all"  # the `target` of a placed case's aggregate rows
UNIT_SECONDS_NS = "ns"


@dataclass(frozen=True)
class StreamFigures:
    """What one stream of a placed case moved, and when: seconds from the group's common
    start (`start` None when the tool does not say; its streams then count as starting
    together, behind the tool's own barrier)."""

    target: str
    nbytes: float
    start: float | None
    end: float


def placement_metrics(name: str, streams: list[StreamFigures], unit: str,
                      note: str | None = None,
                      extra: Mapping[str, Scalar] | None = None) -> list[Metric]:
    """Per-target and aggregate figures of a placed case (several targets, `on`): for each
    target, the bytes its streams moved over the span from their first start to their last
    end; for "all", every byte over the wall time from the first start to the last end (not
    a sum of rates: a stream that ends early does not inflate it). Each also as NAME:bytes,
    and for "all" the wall time (NAME:wall) and, when the starts are known, the spread of
    the starts (NAME:start_skew), both in ns."""
    def span(group: list[StreamFigures]) -> float:
        first = min(s.start or 0.0 for s in group)
        return max(s.end for s in group) - first

    base = dict(extra or {})
    out: list[Metric] = []
    order = list(dict.fromkeys(s.target for s in streams))
    for target in [*order, ALL_TARGETS]:
        group = streams if target == ALL_TARGETS else [s for s in streams if s.target == target]
        nbytes = sum(s.nbytes for s in group)
        seconds = span(group)
        value = nbytes / seconds if seconds > 0 else None
        params = {**base, "target": target}
        out.append(Metric(name, value, unit, note if value is not None else
                          "no time measured", params))
        out.append(Metric(f"{name}:bytes", nbytes, "B", note, params))
        if target == ALL_TARGETS:
            out.append(Metric(f"{name}:wall", seconds * 1e9, UNIT_SECONDS_NS, note, params))
            starts = [s.start for s in streams if s.start is not None]
            if len(starts) == len(streams) and len(streams) > 1:
                out.append(Metric(f"{name}:start_skew", (max(starts) - min(starts)) * 1e9,
                                  UNIT_SECONDS_NS, note, params))
    return out


def json_lines(tool: str, stdout: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-empty stdout line of a tool of DiskLab's own that
    prints one JSON object with a "type" per line (the engine, the file-tree workload);
    ParseError naming the tool and line for a line that is not one."""
    docs = []
    for number, line in enumerate(stdout.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except (ValueError, RecursionError) as e:
            raise ParseError(tool, number, "a JSON object", line) from e
        if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
            raise ParseError(tool, number, 'a JSON object with a "type"', line)
        docs.append((number, doc))
    return docs
