"""Taking up an incomplete session again, in place, with the plan it was started with.

A long matrix killed at hour 7 (SIGKILL, a power cut, a cancel) must not start from zero. A
resume runs exactly the case x repeat pairs whose run is not complete ('ok'), in the same
session, so that the session's figures are those of one plan on one machine and one target.
That is only true when the machine and the target are still the ones the session ran on: the
session records their identity when it starts (`identities`), and a resume compares it with what
is there now and refuses, saying what changed, when they differ. Facts that change the figures
without changing the identity (a new kernel, another tool version) are said as warnings.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from disklab.core.library import Library
from disklab.core.library.schema import RESUMABLE
from disklab.core.library.writer import to_json
from disklab.core.plan.matrix import expand
from disklab.core.plan.parse import parse_plan
from disklab.core.system.devices import device_for_path, identity
from disklab.core.system.host import host_facts
from disklab.core.system.mountinfo import filesystem_of
from disklab.core.system.sysfs import SECTOR, SYS_CLASS_BLOCK, read
from disklab.core.vocab.errors import DisklabError, PlanError, ResumeError
from disklab.core.vocab.model import Case, Plan, Target

MACHINE_ID = "/etc/machine-id"
UDEV_DATA = Path("/run/udev/data")  # udev's database: b<major>:<minor> per block device
# host facts that change the figures but not which machine it is: a warning when they differ
COMPARABLE_FACTS = ("kernel", "cpu_model", "cpu_count", "memory_bytes")


@dataclass(frozen=True)
class Resumption:
    """A session that may be resumed: its plan (as it checks now) and the runs to do."""

    session_id: int
    name: str
    plan: Plan
    runs: tuple[tuple[str, int], ...]  # (case id, repeat) without a complete result, run order
    complete: int  # runs kept as they are
    previous_status: str
    warnings: tuple[str, ...] = ()  # the plan's warnings now, and the facts that changed
    tools: Mapping[str, str | None] | None = None  # the tools' versions the session recorded


# --- what the session records when it starts ---------------------------------------------------

def _filesystem(path: str) -> dict[str, Any]:
    """The filesystem holding `path`: type, source, mountpoint, and the identity of its block
    device ('PATH SERIAL SIZE': another image on the same loop number differs)."""
    fs = filesystem_of(path)
    out: dict[str, Any] = {k: fs.get(k) for k in ("fstype", "source", "mountpoint")}
    source = str(fs.get("source") or "")
    if source.startswith("/dev/"):
        out["device"] = quiet_identity(source)
    return out


def quiet_identity(source: str) -> str | None:
    """'PATH SERIAL SIZE' of the block device under a filesystem, in the form
    devices.identity gives it, read from sysfs and udev's database alone: recording it starts
    no process and opens no device (devices.identity settles udev, lists every device with
    lsblk and probes the device with blkid, which a directory target never needs)."""
    dev = device_for_path(source)
    if dev is None:
        return None
    disk = dev.parent or dev.name
    if disk.startswith("loop"):
        serial = _loop_serial(disk)
    else:
        udev = _udev_properties(dev.devno)
        serial = (udev.get("ID_SCSI_SERIAL") or udev.get("ID_SERIAL_SHORT")
                  or _sysfs_serial(dev.name) or udev.get("ID_WWN_WITH_EXTENSION")
                  or udev.get("ID_WWN") or (_sysfs_serial(disk) if disk != dev.name else None))
    if serial and disk != dev.name:
        serial = f"{serial}#{dev.name}"
    sectors = (read(SYS_CLASS_BLOCK / dev.name / "size") or "0").strip()
    dm_name = (read(SYS_CLASS_BLOCK / dev.name / "dm" / "name") or "").strip()
    path = f"/dev/mapper/{dm_name}" if dm_name else dev.path
    size = int(sectors) * SECTOR if sectors.isdigit() else 0
    return f"{path} {(serial or '-').replace(' ', chr(92) + '040')} {size}"


def _udev_properties(devno: str) -> dict[str, str]:
    """udev's properties of a block device (empty without a udev database)."""
    text = read(UDEV_DATA / f"b{devno}") or ""
    return dict(line[2:].split("=", 1) for line in text.splitlines()
                if line.startswith("E:") and "=" in line)


def _sysfs_serial(name: str) -> str | None:
    """A device's serial as the kernel shows it (virtio, NVMe, SCSI)."""
    for rel in ("serial", "device/serial", "device/vpd_pg80"):
        text = read(SYS_CLASS_BLOCK / name / rel)
        if text:
            return "".join(ch for ch in text if ch.isprintable()).strip() or None
    return None


def _loop_serial(loop: str) -> str | None:
    """A loop device's backing file and its inode: another image on the same number differs."""
    back = (read(SYS_CLASS_BLOCK / loop / "loop" / "backing_file") or "").strip()
    back = back.removesuffix(" (deleted)")
    if not back:
        return None
    try:
        return f"{back}#{os.stat(back).st_ino}"
    except OSError:
        return f"{back}#0"


def target_identity(target: Target) -> dict[str, Any]:
    """What makes the target the same one later: a directory's existence and filesystem, the
    filesystem that holds an image, a device's path, serial and size."""
    if target.kind == "directory":
        return {"directory": os.path.realpath(target.path),
                "exists": os.path.isdir(target.path), **_filesystem(target.path)}
    if target.kind == "image":
        return {"image": target.path,
                "holder": _filesystem(os.path.dirname(target.path) or ".")}
    try:
        return {"device": identity(target.path)}
    except DisklabError as e:
        return {"device": None, "error": str(e)}


def host_identity() -> dict[str, Any]:
    """Which machine this is: its hostname and systemd's machine id (absent when unreadable)."""
    out: dict[str, Any] = {"hostname": socket.gethostname()}
    machine = (read(MACHINE_ID) or "").strip()
    if machine:
        out["machine_id"] = machine
    return out


# --- what a resume checks ----------------------------------------------------------------------

def _differences(recorded: Mapping[str, Any], now: Mapping[str, Any], prefix: str) -> list[str]:
    """'what: was X, is now Y' for each key recorded that reads otherwise now."""
    out = []
    for key, was in recorded.items():
        if key == "error":
            continue
        new = now.get(key)
        if isinstance(was, Mapping) and isinstance(new, Mapping):
            out += _differences(was, new, f"{prefix}{key} ")
        elif was != new:
            out.append(f"{prefix}{key} was {was!r}, is now {new!r}")
    return out


def _target_changes(host: Mapping[str, Any], plan: Plan) -> list[str]:
    recorded = dict((host.get("target") or {}).get("identity") or {})
    if not recorded and plan.target.kind == "directory" and host.get("filesystem"):
        # recorded before identities were: the filesystem facts say the same
        recorded = {k: host["filesystem"].get(k) for k in ("fstype", "source", "mountpoint")}
    return _differences(recorded, target_identity(plan.target), "the target's ")


def _host_changes(host: Mapping[str, Any]) -> list[str]:
    now = host_identity()
    recorded = {k: host[k] for k in ("hostname", "machine_id") if k in host}
    return _differences(recorded, now, "the host's ")


def _fact_warnings(host: Mapping[str, Any]) -> list[str]:
    now = host_facts(None)
    return [f"the host's {key} changed since the session started ({host[key]!r} -> "
            f"{now.get(key)!r}): the resumed runs' figures may differ from the earlier ones"
            for key in COMPARABLE_FACTS if key in host and host[key] != now.get(key)]


def _same_cases(library: Library, session_id: int, cases: Sequence[Case]) -> str | None:
    """Why the plan's cases now are not the ones the session recorded, or None."""
    stored = {c["case_id"]: (c["config"], c["tool"], c["params"])
              for c in library.cases(session_id)}
    now = {c.id: (c.config, c.tool, json.loads(to_json(dict(c.params)))) for c in cases}
    if stored == now:
        return None
    missing = sorted(set(stored) - set(now))
    new = sorted(set(now) - set(stored))
    changed = sorted(k for k in set(stored) & set(now) if stored[k] != now[k])
    parts = [f"{label}: {', '.join(ids[:3])}{' …' if len(ids) > 3 else ''}"
             for label, ids in (("no longer made", missing), ("new", new),
                                ("other parameters", changed)) if ids]
    return "the plan now expands to other cases than the session recorded (" + \
        "; ".join(parts) + ")"


def prepare_resume(library: Library, ref: str | int,
                   library_path: str | None = None) -> Resumption:
    """Check that session `ref` can be resumed here and now; what to run. ResumeError says why
    not: its status, its plan that no longer checks, another machine, another target, other
    cases, or nothing left to run."""
    session = library.find_session(ref)
    sid, status = int(session["id"]), str(session["status"])
    what = f"session {sid} ({session['name']!r})"
    if status not in RESUMABLE:
        why = {"finished": "it finished: every run has a complete result",
               "running": "it is still running",
               "imported": "it was imported: there is no plan to run"}.get(status, status)
        raise ResumeError(f"cannot resume {what}: {why} (only {', '.join(RESUMABLE)} "
                          "sessions resume)")
    text = session.get("plan_text") or ""
    if not text.strip():
        raise ResumeError(f"cannot resume {what}: it recorded no plan")
    host = session.get("host") or {}
    target = host.get("target") or {}
    target_dir = None
    if target.get("kind") == "directory":
        target_dir = str(target.get("path"))
        if not os.path.isdir(target_dir):
            raise ResumeError(f"cannot resume {what}: its target directory {target_dir} is gone")
    try:
        checked = parse_plan(text, path=session.get("plan_path"), target_dir=target_dir,
                             library=library_path)
    except PlanError as e:
        raise ResumeError(f"cannot resume {what}: its plan does not check now: " +
                          "; ".join(str(p) for p in e.problems)) from e
    plan = checked.plan
    if target and (target.get("kind"), target.get("path")) != (plan.target.kind,
                                                               plan.target.path):
        raise ResumeError(f"cannot resume {what}: it ran on the {target.get('kind')} "
                          f"{target.get('path')}, its plan now names the {plan.target.kind} "
                          f"{plan.target.path}")
    changed = _host_changes(host) + _target_changes(host, plan)
    if changed:
        raise ResumeError(f"cannot resume {what}: not the same machine and target as when it "
                          f"ran ({'; '.join(changed)})")
    cases = expand(plan)
    other = _same_cases(library, sid, cases)
    if other:
        raise ResumeError(f"cannot resume {what}: {other}")
    if int(session["repeats"]) != plan.repeats:
        raise ResumeError(f"cannot resume {what}: it ran {session['repeats']} repeat(s), its "
                          f"plan now says {plan.repeats}")
    complete = {(r["case_id"], r["repeat"]) for r in library.runs(sid) if r["status"] == "ok"}
    runs = tuple((case.id, repeat) for label in plan.sections()
                 for repeat in range(1, plan.repeats + 1)
                 for case in cases
                 if case.config == label and (case.id, repeat) not in complete)
    if not runs:
        raise ResumeError(f"cannot resume {what}: every case x repeat already has a complete "
                          "result")
    warnings = tuple(str(w) for w in checked.warnings) + tuple(_fact_warnings(host))
    return Resumption(session_id=sid, name=str(session["name"]), plan=plan, runs=runs,
                      complete=len(complete), previous_status=status, warnings=warnings,
                      tools=host.get("tools"))
