"""The helper's typed protocol, without root: every request validated on arrival (type, range,
shape, unknown or missing argument), one answer type per request, the client and the helper
importing the one protocol module, and the package kept small (no class over 400 lines, no
function over 80)."""

from __future__ import annotations

import ast
import json
from dataclasses import asdict, fields
from pathlib import Path
from types import SimpleNamespace

import pytest

import disklab
from disklab.core.helper_client import protocol as p
from disklab.core.vocab.errors import RequestError

APP = Path(disklab.__file__).resolve().parent
PACKAGES = (APP / "core" / "root_helper", APP / "core" / "helper_client")


def parse(message: object) -> p.Request:
    return p.parse_line(json.dumps(message).encode())[1]


def test_every_request_has_an_answer_and_round_trips() -> None:
    assert set(p.REQUESTS) == set(p.ANSWERS)
    attach = p.Attach("/var/tmp/x.img", 1 << 20)
    assert parse(json.loads(p.encode(3, attach))) == attach
    assert p.parse_line(p.encode(3, attach).encode())[0] == 3
    start = p.ToolStart("fio", {"rw": "read"}, "case-1", "/tmp/d", directories={"a": "/tmp/d"})
    assert parse({"id": 1, "op": "tool_start", "args": asdict(start)}) == start


@pytest.mark.parametrize(("message", "words"), [
    ({"id": 1, "op": "attach", "args": {"image": "x.img", "size": 1}}, "absolute, normalised"),
    ({"id": 1, "op": "attach", "args": {"image": "/a/../etc/x", "size": 1}}, "normalised"),
    ({"id": 1, "op": "attach", "args": {"image": "/a/x", "size": 0}}, "out of range"),
    ({"id": 1, "op": "attach", "args": {"image": "/a/x", "size": True}}, "wrong type"),
    ({"id": 1, "op": "attach", "args": {"image": "/a/x"}}, "missing argument 'size'"),
    ({"id": 1, "op": "attach", "args": {"image": "/a/x", "size": 1, "mode": 4}},
     "unknown argument 'mode'"),
    ({"id": 1, "op": "wipefs", "args": {"device": "/etc/passwd"}}, "not a /dev path"),
    ({"id": 1, "op": "scheduler", "args": {"device": "/dev/sda", "name": "a;b"}},
     "not a scheduler name"),
    ({"id": 1, "op": "tool_start", "args": {"tool": "fio", "params": {}, "tag": "../x",
                                            "directory": "/d"}}, "plain file-name part"),
    ({"id": 1, "op": "tool_start", "args": {"tool": "fio", "params": {}, "tag": "t",
                                            "directory": "/d", "directories": {"A/": "/d"}}},
     "not a target name"),
    ({"id": "1", "op": "ping"}, "id is an integer"),
    ({"id": 1, "op": "format_everything"}, "unknown operation"),
    ({"id": 1, "op": "ping", "as": "root"}, "unknown request key"),
])
def test_a_request_outside_its_shape_is_refused_by_name(message: object, words: str) -> None:
    with pytest.raises(RequestError, match=words):
        parse(message)


def test_oversized_deep_and_malformed_lines_are_one_error_each() -> None:
    for line, words in ((b"[" * 200_000, "one JSON object"),
                        (b'{"id": 1, "op": "ping", "args": {"a": ' + b"[" * 20 + b"]" * 20
                         + b"}}", "nests at most"),
                        (b"x" * (p.MAX_LINE + 1), "at most"),
                        (b'{"id": 1, "op": "tool_read", "args": {"run": 1, "wait": NaN}}',
                         "out of range")):
        with pytest.raises(RequestError, match=words):
            p.parse_line(line)


def test_answers_are_typed() -> None:
    pong = p.answer_of("ping", {"pid": 1, "uid": 0, "protocol": p.PROTOCOL, "workdir": "/w",
                                "served_uid": 1000})
    assert isinstance(pong, p.Pong) and pong.served_uid == 1000
    with pytest.raises(RequestError, match="wrong type"):  # a helper's answer is checked too
        p.answer_of("attach", {"device": "/dev/loop0", "image": "/x", "created": "yes",
                               "direct_io": True, "inode": 1, "identity": "i"})
    for op, cls in p.ANSWERS.items():
        assert issubclass(cls, p.Answer) and op == p.REQUESTS[op].OP
        assert all(f.default is not None for f in fields(cls))


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_client_and_helper_share_one_protocol_module() -> None:
    helper = set().union(*(_imports(f) for f in PACKAGES[0].glob("*.py")))
    client = set().union(*(_imports(f) for f in PACKAGES[1].glob("*.py")))
    assert "disklab.core.helper_client.protocol" in helper
    assert "disklab.core.helper_client.protocol" in client
    assert not {m for m in helper if m.startswith("disklab.core.helper_client.")
                and not m.startswith("disklab.core.helper_client.protocol")}
    assert not {m for m in client if m.startswith("disklab.core.root_helper")}
    assert not (APP / "core" / "privhelper.py").exists()


def test_no_class_over_400_lines_no_function_over_80() -> None:
    too_long = []
    for package in PACKAGES:
        for path in package.glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                    limit = 400 if isinstance(node, ast.ClassDef) else 80
                    if lines > limit:
                        too_long.append(f"{path.name}:{node.name} {lines}")
    assert too_long == []


def test_a_refusal_answers_the_request_it_refuses() -> None:
    """A request refused for its arguments is answered with its own id: a client waits for
    that id, and an answer without it left `disklab run --library lib.sqlite3` waiting for
    ever. The client also takes an id-less refusal as the answer to the line it just sent."""
    from disklab.core.helper_client.client import _refused_unread
    from disklab.core.root_helper.helper import handle
    line = p.encode(7, p.Attach("/var/tmp/x.img", 1 << 20)).replace("/var/tmp/x.img", "x.img")
    with pytest.raises(RequestError) as refused:
        p.parse_line(line.encode())
    assert refused.value.request_id == 7  # type: ignore[attr-defined]
    session = SimpleNamespace(ran=[])  # refused before the session is used: no root needed
    answer = handle(session, line.encode())  # type: ignore[arg-type]
    assert answer["id"] == 7 and answer["ok"] is False and "absolute" in answer["error"]
    assert _refused_unread({"id": None, "ok": False, "error": "a request is a JSON object"})
    assert not _refused_unread({"id": 3, "ok": False}) and not _refused_unread({"id": None})
