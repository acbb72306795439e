"""The privileged helper: `python -I -m disklab.core.root_helper`, run as root once per session.

It speaks the JSON lines of core.helper_client.protocol on stdin/stdout: each line is parsed and
validated into one request dataclass before any work, handled by the module of its subject
(loops, partitions, filesystems, queue, toolruns, groups), and answered on one line with the
commands it ran. A line that is not a valid request gets one error answer; nothing a client
sends ends the helper but the end of its input.

It is started through trust.boot, which checks that it runs only its own code before this
module (and through it the handler modules) is imported: when it does not, its one line is
{"ready": false, "error": WHY} and it exits. It knows the user it serves
from PKEXEC_UID / SUDO_UID (paths.served_user), never from the client. When its client goes
away (end of input, or its death signal), it stops every tool, unmounts what it mounted,
detaches what it attached, removes what it made, and ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import IO, Any

from disklab.core.helper_client.protocol import (
    MAX_LINE,
    PROTOCOL,
    Answer,
    Pong,
    Request,
    parse_line,
)
from disklab.core.root_helper import (
    filesystems,
    groups,
    loops,
    partitions,
    paths,
    queue,
    toolruns,
    trust,
)
from disklab.core.root_helper.ending import ENDING
from disklab.core.root_helper.state import Session
from disklab.core.vocab.errors import ConfigError, DisklabError, PlanError, RequestError

SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
REFUSED_EXIT = 3


def ping(s: Session, r: Request) -> Pong:
    return Pong(os.getpid(), os.geteuid(), PROTOCOL, s.workdir, s.user.uid)


HANDLERS: dict[str, Callable[[Session, Any], Answer]] = {
    "ping": ping,
    "classify": loops.classify,
    "identity": loops.identity,
    "attach": loops.attach,
    "detach": loops.detach,
    "wipefs": filesystems.wipefs,
    "mkfs": filesystems.mkfs,
    "mount": filesystems.mount,
    "umount": filesystems.umount,
    "readback": filesystems.readback,
    "setra": queue.setra,
    "scheduler": queue.scheduler,
    "drop_caches": queue.drop_caches,
    "partition": partitions.partition,
    "unpartition": partitions.unpartition,
    "tool_start": toolruns.start,
    "tool_read": toolruns.read,
    "tool_tree": toolruns.tree,
    "tool_stop": toolruns.stop,
    "tool_close": toolruns.close_run,
    "tool_cleanup": toolruns.cleanup,
    "cgroup_create": groups.create,
    "cgroup_remove": groups.remove,
}


def handle(s: Session, line: bytes) -> dict[str, Any]:
    """One request line -> its answer (never raises)."""
    s.ran = []
    rid = None
    try:
        rid, request = parse_line(line)
        result = HANDLERS[request.OP](s, request)
        return {"id": rid, "ok": True, "result": asdict(result), "ran": s.ran}
    except ConfigError as e:
        return {"id": rid, "ok": False, "kind": "ConfigError", "error": str(e),
                "problems": e.problems, "ran": s.ran}
    except PlanError as e:
        return {"id": rid, "ok": False, "kind": "PlanError", "error": str(e),
                "problems": [[p.key, p.message] for p in e.problems], "ran": s.ran}
    except (DisklabError, OSError) as e:
        rid = getattr(e, "request_id", rid)  # a request refused by its arguments: its own id
        return {"id": rid, "ok": False, "kind": type(e).__name__, "error": str(e), "ran": s.ran}
    except Exception as e:  # a bug must not kill the session's only root process
        return {"id": rid, "ok": False, "kind": "InternalError",
                "error": f"{type(e).__name__}: {e}", "ran": s.ran}


def lines(inp: IO[bytes]) -> Any:
    """The input's lines; one over MAX_LINE bytes is read to its end and given as one
    oversized line (the answer is then one error, and the next line is read as a request)."""
    while not ENDING.stop:  # the death signal: what the dead client sent is not served
        line = inp.readline(MAX_LINE + 1)
        if not line or ENDING.stop:
            return
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while True:
                rest = inp.readline(MAX_LINE + 1)
                if not rest or rest.endswith(b"\n"):
                    break
        yield line


def serve(inp: IO[bytes], out: IO[str], session: Session | None = None) -> None:
    s = session or Session(paths.served_user(os.environ))
    loops.undo_dead(s)  # a killed helper's attach, answered or not: undone before anything
    try:
        out.write(json.dumps({"ready": True, "pid": os.getpid(), "uid": os.geteuid(),
                              "protocol": PROTOCOL, "workdir": s.workdir,
                              "served_uid": s.user.uid}) + "\n")
        out.flush()
        for line in lines(inp):
            if not line.strip():
                continue
            with ENDING.request():
                answer = handle(s, line)
            out.write(json.dumps(answer, default=str) + "\n")
            out.flush()
    finally:  # the client has gone (or SIGTERM): nothing it started may run on as root
        close(s)


def close(s: Session) -> None:
    """The end of the session: stop every tool, unmount, detach and remove what it made, then
    its work directory (never a directory something is still mounted on). Each step is
    written to the record first, so that a teardown that dies or hangs says where. Never
    raises."""
    for part in (toolruns.close, groups.close, filesystems.close, queue.close,
                 partitions.close, loops.close):
        with contextlib.suppress(Exception):
            s.closing_step(part.__module__.rsplit(".", 1)[-1])
            part(s)
    s.closing_step("workdirs")
    busy = False
    with contextlib.suppress(OSError):
        busy = any(os.path.ismount(os.path.join(s.workdir, n)) for n in os.listdir(s.workdir))
    if not busy:
        shutil.rmtree(s.workdir, ignore_errors=True)
    for dead in s.inherited.workdirs:  # a killed helper's, once what was mounted in it is gone
        with contextlib.suppress(OSError):
            for name in os.listdir(dead):
                os.rmdir(os.path.join(dead, name))
            os.rmdir(dead)
    if not s.held.undoable:
        s.forget_records()


def main() -> int:
    """Checks that it runs only its own code, then serves stdin until it ends."""
    os.chdir("/")
    os.umask(0o022)
    user = paths.served_user(os.environ)
    lang = os.environ.get("LANG", "C.UTF-8")
    os.environ.clear()  # what its commands inherit: a fixed system PATH and the locale
    os.environ.update(PATH=SAFE_PATH, LANG=lang)
    # The protocol owns the real stdout; anything printed by accident goes to stderr.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    why = trust.refusal()  # trust.boot checked before this module was imported; once more
    if why:
        print(f"disklab helper: refusing to serve as root: {why}", file=sys.stderr)
        out.write(json.dumps({"ready": False, "kind": "HelperRefused", "error": why}) + "\n")
        out.flush()
        return REFUSED_EXIT
    # Die with the client (a killed DiskLab must not leave a root process behind).
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
    ENDING.install()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the client; it tears down
    serve(sys.stdin.buffer, out, Session(user))
    return 0


__all__ = ["HANDLERS", "RequestError", "close", "handle", "main", "serve"]
