"""Which sessions are one history: the same plan, on the same target, on the same host.

The plan is its content, not its name: a plan renamed is the same plan, and two plans that
share a name but measure different things are two. Its text is read as TOML and hashed
without the keys that do not change what is measured (`name`, `[report]`, and the target
tables: where it runs is the series' second part, taken from what the session recorded).
The target is its identity as the library records it when a run starts
(core.run.resume.target_identity: a directory's real path and filesystem, a device's
'PATH SERIAL SIZE', an image's path and the filesystem holding it). The host is systemd's
machine id, else the hostname: sessions imported in a bundle from another machine keep
that machine's record, and so form their own series.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# plan keys that do not change what a session measures
UNMEASURED_KEYS = ("name", "report", "target", "targets")
# the sessions a history draws: complete ones (a failed or cancelled session's figures are
# partial, an interrupted one has none for some cases)
POINT_STATUSES = ("finished", "imported")


@dataclass(frozen=True)
class SeriesKey:
    """What one series' sessions share."""

    plan: str  # the plan's content hash (16 hex digits)
    target: str  # the target's identity, as text
    host: str  # the machine id, else the hostname

    def slug(self) -> str:
        """A short stable name: in file names and the systemd units of a schedule."""
        text = "\0".join((self.plan, self.target, self.host))
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def plan_hash(plan_text: str, name: str = "") -> str:
    """The plan's content hash: its TOML without UNMEASURED_KEYS, as canonical JSON. A text
    that is not TOML (an import's) hashes as it is, with the session's name (imports of one
    name on one machine are one series)."""
    try:
        data = tomllib.loads(plan_text)
    except tomllib.TOMLDecodeError:
        data = None
    if not data:
        body = f"{name}\0{plan_text}"
    else:
        body = json.dumps({k: v for k, v in data.items() if k not in UNMEASURED_KEYS},
                          sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def target_text(host: Mapping[str, Any]) -> str:
    """The target's identity as one line: kind, path and the recorded identity (the
    filesystem's source and type for a directory, the device's 'PATH SERIAL SIZE')."""
    target = host.get("target") or {}
    identity = dict(target.get("identity") or {})
    identity.pop("exists", None)
    if not target:  # an imported output: the directory the facts were read in, if any
        return str(host.get("directory") or "")
    return json.dumps({"kind": target.get("kind"), "path": target.get("path"), **identity},
                      sort_keys=True, default=str)


def target_words(host: Mapping[str, Any]) -> str:
    """The target as people read it: 'directory /mnt/scratch (ext4 on /dev/loop2)'."""
    target = host.get("target") or {}
    identity = target.get("identity") or {}
    where = f"{target.get('kind', 'target')} {target.get('path') or host.get('directory', '')}"
    fs = identity.get("fstype") or (host.get("filesystem") or {}).get("fstype")
    source = identity.get("source") or (host.get("filesystem") or {}).get("source")
    device = identity.get("device")
    if fs and source:
        return f"{where} ({fs} on {source})"
    if isinstance(device, str):
        return f"{where} ({device.split()[0]})"
    return where.strip()


def host_id(host: Mapping[str, Any]) -> str:
    return str(host.get("machine_id") or host.get("hostname") or "unknown host")


def key_of(session: Mapping[str, Any], plans: dict[str, str] | None = None,
           targets: dict[str, str] | None = None) -> SeriesKey:
    """The series a session belongs to (`plans`: plan texts already hashed, `targets`:
    targets already written as text, for many)."""
    host = session.get("host") or {}
    return SeriesKey(_plan_of(session, {} if plans is None else plans),
                     _target_of(host, targets), host_id(host))


def _target_of(host: Mapping[str, Any], targets: dict[str, str] | None) -> str:
    """target_text, once per target: the sessions of a series share it (their host records
    differ in free space), and the repr of JSON-read values tells them apart as JSON does."""
    if targets is None:
        return target_text(host)
    memo_key = repr((host.get("target"), host.get("directory")))
    text = targets.get(memo_key)
    if text is None:
        text = targets[memo_key] = target_text(host)
    return text


def _plan_of(session: Mapping[str, Any], plans: dict[str, str]) -> str:
    text = str(session.get("plan_text") or "")
    memo_key = text if text.strip() else f"\0{session.get('name')}"
    digest = plans.get(memo_key)
    if digest is None:
        digest = plans[memo_key] = plan_hash(text, str(session.get("name") or ""))
    return digest


def group(sessions: Iterable[Mapping[str, Any]], plans: dict[str, str] | None = None
          ) -> dict[SeriesKey, list[Mapping[str, Any]]]:
    """The sessions (complete ones: POINT_STATUSES) by series, each series oldest first as
    given (`plans`: plan texts already hashed)."""
    plans = {} if plans is None else plans
    out: dict[SeriesKey, list[Mapping[str, Any]]] = {}
    for s in sessions:
        if s.get("status") in POINT_STATUSES:
            out.setdefault(key_of(s, plans), []).append(s)
    return out


def series_for(sessions: Sequence[Mapping[str, Any]], ref: str
               ) -> tuple[list[SeriesKey], dict[SeriesKey, list[Mapping[str, Any]]]]:
    """The series `ref` names: a session's id or UUID (its one series, whatever its
    status) or a name (every series holding a session of that name). ([], ...) when no
    session matches. Only the sessions of the plans asked for are keyed whole (their target
    and host), each once."""
    plans: dict[str, str] = {}
    by_id = [s for s in sessions if str(s.get("id")) == ref or s.get("uuid") == ref]
    matched = by_id or [s for s in sessions if s.get("name") == ref]
    wanted_plans = {_plan_of(s, plans) for s in matched}
    keys_of: dict[int, SeriesKey] = {}
    grouped: dict[SeriesKey, list[Mapping[str, Any]]] = {}
    targets: dict[str, str] = {}
    for s in sessions:
        if _plan_of(s, plans) not in wanted_plans:
            continue
        key = keys_of[id(s)] = key_of(s, plans, targets)
        if s.get("status") in POINT_STATUSES:
            grouped.setdefault(key, []).append(s)
    keys: list[SeriesKey] = []
    for s in matched:
        key = keys_of[id(s)]
        if key not in keys:
            keys.append(key)
            grouped.setdefault(key, [])
    return keys, grouped
