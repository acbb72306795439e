"""The privileged helper's protocol: one dataclass per request and one per answer, shared by the
client (core.helper_client.client) and the helper (core.root_helper.helper), so that both speak
the same words and neither builds a request from loose keyword dictionaries.

On the wire a request is one JSON line {"id": N, "op": NAME, "args": {...}}; the answer is
{"id": N, "ok": true, "result": {...}, "ran": [...]} or {"id": N, "ok": false, "error": TEXT,
"kind": ERROR CLASS, "ran": [...]}. `parse_line` turns a line into a request dataclass and
refuses, with one RequestError, anything that is not exactly one: a line over MAX_LINE bytes,
nesting deeper than MAX_DEPTH, an unknown operation or argument, a value of the wrong type,
out of its range, or not of its shape (an absolute normalised path, a /dev path, a plain
file-name tag). The helper validates on arrival, before any work; the client validates what it
sends too, so that a mistake is found on its own side first.
"""

from __future__ import annotations

import json
import os
import re
import types
import typing
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from disklab.core.vocab.errors import RequestError

PROTOCOL = 2
MAX_LINE = 256 * 1024  # bytes of one request line (a plan's largest parameter table is ~10 KiB)
MAX_DEPTH = 12  # nesting of lists and objects in one request (a config table is ~4 deep)
MAX_PATH = 4096
MAX_IMAGE = 1 << 50  # 1 PiB: more is a typo, not an image
READ_WAIT_MAX = 2.0  # seconds a tool_read waits at most (the helper serves one at a time)
STOP_GRACE_MAX = 60.0

TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")  # a case's file-name tag: no path in it
TOOL = re.compile(r"[a-z][a-z0-9_+-]{0,31}")
TARGET_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")  # as core.plan.targets.NAME
SCHEDULER = re.compile(r"[a-z0-9_-]{1,32}")
FSTYPE = re.compile(r"[a-z0-9_.]{1,32}")
DEVICE = re.compile(r"/dev/[A-Za-z0-9][A-Za-z0-9_.:+@-]*(?:/[A-Za-z0-9][A-Za-z0-9_.:+@\\-]*)*")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# --- shapes: a field's metadata "check" ---------------------------------------------------------

def _path(name: str, value: str) -> None:
    """An absolute, normalised path: no '..', '.', '//' or trailing '/', no control character."""
    if (not value.startswith("/") or len(value) > MAX_PATH or CONTROL.search(value)
            or os.path.normpath(value) != value or value.startswith("//")):
        raise RequestError(f"argument {name!r}: {value[:200]!r} is not an absolute, normalised "
                           "path")


def _device(name: str, value: str) -> None:
    _path(name, value)
    if not DEVICE.fullmatch(value):
        raise RequestError(f"argument {name!r}: {value[:200]!r} is not a /dev path")


def _pattern(regex: re.Pattern[str], what: str) -> typing.Callable[[str, str], None]:
    def check(name: str, value: str) -> None:
        if not regex.fullmatch(value):
            raise RequestError(f"argument {name!r}: {value[:200]!r} is not {what}")
    return check


def _text(limit: int) -> typing.Callable[[str, str], None]:
    def check(name: str, value: str) -> None:
        if len(value) > limit or CONTROL.search(value):
            raise RequestError(f"argument {name!r}: over {limit} characters, or a control "
                               "character")
    return check


def _range(low: float, high: float) -> typing.Callable[[str, float], None]:
    def check(name: str, value: float) -> None:
        if not low <= value <= high:  # NaN fails both
            raise RequestError(f"argument {name!r}: {value!r} is out of range {low:g}..{high:g}")
    return check


def _paths_of(check: typing.Callable[[str, str], None], most: int
              ) -> typing.Callable[[str, Any], None]:
    def each(name: str, value: Any) -> None:
        items = list(value.values() if isinstance(value, dict) else value)
        if len(items) > most:
            raise RequestError(f"argument {name!r}: more than {most} entries")
        for item in items:
            check(name, item)
        if isinstance(value, dict):
            for key in value:
                if not TARGET_NAME.fullmatch(key):
                    raise RequestError(f"argument {name!r}: {key[:100]!r} is not a target name")
    return each


PATH = {"check": _path}
DEV = {"check": _device}
TAGGED = {"check": _pattern(TAG, "a plain file-name part")}
CONFIRM = {"check": _text(512)}
FSTYPED = {"check": _pattern(FSTYPE, "a filesystem type")}
DIRECTORIES = {"check": _paths_of(_path, 64)}
RUN = {"check": _range(1, 1 << 31)}


# --- requests -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Request:
    """A request: OP names it on the wire; its fields are its arguments."""

    OP: ClassVar[str] = ""


@dataclass(frozen=True)
class Ping(Request):
    OP: ClassVar[str] = "ping"


@dataclass(frozen=True)
class Classify(Request):
    OP: ClassVar[str] = "classify"
    path: str = field(metadata=DEV)
    library_path: str | None = field(default=None, metadata=PATH)


@dataclass(frozen=True)
class Identity(Request):
    OP: ClassVar[str] = "identity"
    path: str = field(metadata=DEV)


@dataclass(frozen=True)
class Attach(Request):
    """A new sparse image file, made by the helper (never an existing file), on a free loop
    device (docs/helper-contract.md, point 2)."""

    OP: ClassVar[str] = "attach"
    image: str = field(metadata=PATH)
    size: int = field(metadata={"check": _range(1, MAX_IMAGE)})
    library_path: str | None = field(default=None, metadata=PATH)


@dataclass(frozen=True)
class Detach(Request):
    OP: ClassVar[str] = "detach"
    image: str = field(metadata=PATH)
    device: str | None = field(default=None, metadata=DEV)
    remove_image: bool = False


@dataclass(frozen=True)
class Wipefs(Request):
    OP: ClassVar[str] = "wipefs"
    device: str = field(metadata=DEV)
    confirm: str | None = field(default=None, metadata=CONFIRM)
    library_path: str | None = field(default=None, metadata=PATH)


@dataclass(frozen=True)
class Mkfs(Request):
    OP: ClassVar[str] = "mkfs"
    config: dict[str, Any] = field()
    device: str = field(metadata=DEV)
    confirm: str | None = field(default=None, metadata=CONFIRM)
    library_path: str | None = field(default=None, metadata=PATH)
    journal_confirm: str | None = field(default=None, metadata=CONFIRM)


@dataclass(frozen=True)
class Mount(Request):
    """Mount at `mountpoint`, which must be a new directory directly in the helper's work
    directory (Pong.workdir): the helper makes it."""

    OP: ClassVar[str] = "mount"
    config: dict[str, Any] = field()
    device: str = field(metadata=DEV)
    mountpoint: str = field(metadata=PATH)
    library_path: str | None = field(default=None, metadata=PATH)


@dataclass(frozen=True)
class Umount(Request):
    OP: ClassVar[str] = "umount"
    mountpoint: str = field(metadata=PATH)
    device: str | None = field(default=None, metadata=DEV)
    lazy: bool = False
    remove_dir: bool = False
    library_path: str | None = field(default=None, metadata=PATH)


@dataclass(frozen=True)
class Setra(Request):
    OP: ClassVar[str] = "setra"
    device: str = field(metadata=DEV)
    sectors: int = field(metadata={"check": _range(0, 1 << 24)})


@dataclass(frozen=True)
class Scheduler(Request):
    OP: ClassVar[str] = "scheduler"
    device: str = field(metadata=DEV)
    name: str = field(metadata={"check": _pattern(SCHEDULER, "a scheduler name")})


@dataclass(frozen=True)
class DropCaches(Request):
    OP: ClassVar[str] = "drop_caches"


@dataclass(frozen=True)
class Readback(Request):
    OP: ClassVar[str] = "readback"
    device: str = field(metadata=DEV)
    mountpoint: str | None = field(default=None, metadata=PATH)
    fstype: str | None = field(default=None, metadata=FSTYPED)


@dataclass(frozen=True)
class Partition(Request):
    OP: ClassVar[str] = "partition"
    device: str = field(metadata=DEV)
    count: int = field(metadata={"check": _range(1, 16)})
    confirm: str | None = field(default=None, metadata=CONFIRM)
    library_path: str | None = field(default=None, metadata=PATH)


@dataclass(frozen=True)
class Unpartition(Request):
    OP: ClassVar[str] = "unpartition"
    device: str = field(metadata=DEV)
    partitions: list[str] | None = field(default=None, metadata={"check": _paths_of(_device, 16)})


@dataclass(frozen=True)
class ToolStart(Request):
    OP: ClassVar[str] = "tool_start"
    tool: str = field(metadata={"check": _pattern(TOOL, "a tool name")})
    params: dict[str, Any] = field()
    tag: str = field(metadata=TAGGED)
    directory: str = field(metadata=PATH)
    step: int = field(default=-1, metadata={"check": _range(-1, 64)})
    device: str | None = field(default=None, metadata=DEV)
    confirm: str | None = field(default=None, metadata=CONFIRM)
    library_path: str | None = field(default=None, metadata=PATH)
    directories: dict[str, str] | None = field(default=None, metadata=DIRECTORIES)


@dataclass(frozen=True)
class ToolRead(Request):
    OP: ClassVar[str] = "tool_read"
    run: int = field(metadata=RUN)
    wait: float = field(default=0.0, metadata={"check": _range(0.0, 3600.0)})


@dataclass(frozen=True)
class ToolTree(Request):
    OP: ClassVar[str] = "tool_tree"
    run: int = field(metadata=RUN)


@dataclass(frozen=True)
class ToolStop(Request):
    OP: ClassVar[str] = "tool_stop"
    run: int = field(metadata=RUN)
    grace: float = field(default=5.0, metadata={"check": _range(0.0, 3600.0)})


@dataclass(frozen=True)
class ToolClose(Request):
    OP: ClassVar[str] = "tool_close"
    run: int = field(metadata=RUN)


@dataclass(frozen=True)
class ToolCleanup(Request):
    OP: ClassVar[str] = "tool_cleanup"
    tag: str = field(metadata=TAGGED)


@dataclass(frozen=True)
class CgroupCreate(Request):
    OP: ClassVar[str] = "cgroup_create"
    tag: str = field(metadata=TAGGED)
    limit: int = field(metadata={"check": _range(1, 1 << 50)})


@dataclass(frozen=True)
class CgroupRemove(Request):
    OP: ClassVar[str] = "cgroup_remove"
    path: str = field(metadata=PATH)


REQUESTS: dict[str, type[Request]] = {cls.OP: cls for cls in (
    Ping, Classify, Identity, Attach, Detach, Wipefs, Mkfs, Mount, Umount, Setra, Scheduler,
    DropCaches, Readback, Partition, Unpartition, ToolStart, ToolRead, ToolTree, ToolStop,
    ToolClose, ToolCleanup, CgroupCreate, CgroupRemove)}


# --- answers ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Answer:
    """A request's result (the "result" object of an ok answer)."""


@dataclass(frozen=True)
class Done(Answer):
    """An operation with nothing to tell but its commands (wipefs, mkfs, setra, drop_caches)."""


@dataclass(frozen=True)
class Pong(Answer):
    pid: int
    uid: int
    protocol: int
    workdir: str
    served_uid: int


@dataclass(frozen=True)
class Classified(Answer):
    device: dict[str, Any]


@dataclass(frozen=True)
class Identified(Answer):
    identity: str


@dataclass(frozen=True)
class Attached(Answer):
    device: str
    image: str
    created: bool
    direct_io: bool
    inode: int
    identity: str


@dataclass(frozen=True)
class Detached(Answer):
    detached: list[str]
    removed: bool
    pending: list[str]


@dataclass(frozen=True)
class Mounted(Answer):
    mountpoint: str
    created: bool


@dataclass(frozen=True)
class Unmounted(Answer):
    removed_dir: bool


@dataclass(frozen=True)
class SchedulerSet(Answer):
    previous: str


@dataclass(frozen=True)
class ReadBack(Answer):
    readback: dict[str, Any]


@dataclass(frozen=True)
class Partitioned(Answer):
    partitions: list[str]
    identities: dict[str, str]


@dataclass(frozen=True)
class Unpartitioned(Answer):
    left: list[str]


@dataclass(frozen=True)
class ToolStarted(Answer):
    run: int
    pid: int
    argv: list[str]
    cwd: str | None
    result_file: str | None
    files: list[str]


@dataclass(frozen=True)
class ToolLines(Answer):
    lines: list[Any]  # [t, stream, text, terminator]
    done: bool
    returncode: int | None
    signal: int | None
    dropped: int


@dataclass(frozen=True)
class ToolTreeCounters(Answer):
    tree: dict[str, Any]  # pid -> [create_time, ppid, read_bytes, write_bytes, rchar, wchar, cpu]
    finals: dict[str, Any]  # pid -> [read_bytes, write_bytes, rchar, wchar, cpu]


@dataclass(frozen=True)
class ToolStopped(Answer):
    survivors: list[int]


@dataclass(frozen=True)
class ToolClosed(Answer):
    stdout: str
    stderr: str
    tail: str
    returncode: int | None
    signal: int | None
    survivors: list[int]
    result_file: str | None


@dataclass(frozen=True)
class CaseCleaned(Answer):
    left: list[str]


@dataclass(frozen=True)
class GroupCreated(Answer):
    path: str
    controller: dict[str, Any]


@dataclass(frozen=True)
class GroupRemoved(Answer):
    removed: bool


ANSWERS: dict[str, type[Answer]] = {
    "ping": Pong, "classify": Classified, "identity": Identified, "attach": Attached,
    "detach": Detached, "wipefs": Done, "mkfs": Done, "mount": Mounted, "umount": Unmounted,
    "setra": Done, "scheduler": SchedulerSet, "drop_caches": Done, "readback": ReadBack,
    "partition": Partitioned, "unpartition": Unpartitioned, "tool_start": ToolStarted,
    "tool_read": ToolLines, "tool_tree": ToolTreeCounters, "tool_stop": ToolStopped,
    "tool_close": ToolClosed, "tool_cleanup": CaseCleaned, "cgroup_create": GroupCreated,
    "cgroup_remove": GroupRemoved,
}


# --- validation ---------------------------------------------------------------------------------

T = TypeVar("T")


def _type_ok(value: Any, hint: Any) -> bool:
    """`value` is of the (simple) type `hint`: str, int, float, bool, None, list[X],
    dict[str, X], X | None, Any."""
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_type_ok(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_type_ok(v, item) for v in value)
    if origin is dict:
        _key, item = typing.get_args(hint)
        return isinstance(value, dict) and all(
            isinstance(k, str) and _type_ok(v, item) for k, v in value.items())
    return False


def build(cls: type[T], args: Any) -> T:
    """An instance of the dataclass `cls` from a JSON object, every field checked: no unknown
    key, no missing one, each of its type and shape. RequestError names the first wrong one."""
    if not isinstance(args, dict):
        raise RequestError("args must be an object")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(str(k)[:64] for k in args if k not in known)
    if unknown:
        raise RequestError(f"{getattr(cls, 'OP', '') or cls.__name__}: unknown argument "
                           f"{unknown[0]!r}")
    values: dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name not in args or (args[f.name] is None and f.default is not MISSING):
            if f.default is MISSING:
                raise RequestError(f"missing argument {f.name!r}")
            values[f.name] = f.default
            continue
        value = args[f.name]
        if not _type_ok(value, hints[f.name]):
            raise RequestError(f"argument {f.name!r}: {str(value)[:100]!r} has the wrong type")
        check = f.metadata.get("check")
        if check is not None and value is not None:
            check(f.name, value)
        values[f.name] = float(value) if hints[f.name] is float else value
    return cls(**values)


def depth_of(value: Any) -> int:
    """How deeply lists and objects nest in a parsed JSON value (iterative: no recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            stack += [(v, level + 1) for v in (item.values() if isinstance(item, dict) else item)]
    return deepest


def parse_line(line: bytes) -> tuple[Any, Request]:
    """(the request's id, the request) of one line; RequestError for anything else. A line whose
    id was read carries it on the error (`request_id`), so the refusal answers that request: a
    client waiting for its id would otherwise wait for ever (a relative library path did so).
    Before the id is read it is unknown, and the answer's is None."""
    if len(line) > MAX_LINE:
        raise RequestError(f"a request line is at most {MAX_LINE} bytes")
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        raise RequestError("a request is one JSON object per line") from None
    if not isinstance(message, dict):
        raise RequestError("a request is a JSON object")
    if depth_of(message) > MAX_DEPTH:
        raise RequestError(f"a request nests at most {MAX_DEPTH} levels")
    unknown = set(message) - {"id", "op", "args"}
    if unknown:
        raise RequestError(f"unknown request key {sorted(map(str, unknown))[0][:64]!r}")
    op = message.get("op")
    cls = REQUESTS.get(op) if isinstance(op, str) else None
    if cls is None:
        raise RequestError(f"unknown operation {str(op)[:64]!r} (allowed: {', '.join(REQUESTS)})")
    rid = message.get("id")
    if rid is not None and not _type_ok(rid, int):
        raise RequestError("a request's id is an integer")
    try:
        return rid, build(cls, message.get("args") or {})
    except RequestError as e:
        e.request_id = rid  # type: ignore[attr-defined]
        raise


def request_of(op: str, args: dict[str, Any]) -> Request:
    """The request `op` with `args` (the keyword form of Privileged.request), validated."""
    cls = REQUESTS.get(op)
    if cls is None:
        raise RequestError(f"unknown operation {op!r} (allowed: {', '.join(REQUESTS)})")
    return build(cls, args)


def encode(rid: int, request: Request) -> str:
    return json.dumps({"id": rid, "op": request.OP, "args": asdict(request)})


def answer_of(op: str, result: Any) -> Answer:
    """The typed result of an ok answer to `op`."""
    return build(ANSWERS[op], result or {})
