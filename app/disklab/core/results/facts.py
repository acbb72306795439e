"""What a session ran on, as the Library lists it: the device and the filesystem.

A directory target's session carries them in its host facts (system.host.host_facts). An image
or a format target's filesystem is made by the run itself, once per configuration, so the host
facts taken before it have neither; the plan's [target] names the device (or the image) and
each configuration's read-back (ConfigApplied) names the filesystem it really got.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from typing import Any


def _plan_target(plan_text: str | None) -> dict[str, Any]:
    if not plan_text:
        return {}
    try:
        target = tomllib.loads(plan_text).get("target")
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return {}
    return target if isinstance(target, dict) else {}


def session_device(session: Mapping[str, Any]) -> str:
    """The device a session measured: the host facts' kernel name and model, else the plan's
    device (a format or device target) or 'image FILE' (a scratch image); '' when unknown."""
    dev = (session.get("host") or {}).get("device") or {}
    shown = " ".join(p for p in (str(dev.get("name") or ""), str(dev.get("model") or "")) if p)
    if shown:
        return shown
    shown = _target_device(_plan_target(session.get("plan_text")))
    if shown:
        return shown
    # several targets ([targets.NAME]): each one's device, by name ('a: /dev/sdb, b: ...')
    named = (session.get("host") or {}).get("targets") or _plan_targets(session.get("plan_text"))
    parts = []
    for name, facts in named.items() if isinstance(named, dict) else ():
        if not isinstance(facts, dict):
            continue
        if "kind" in facts:  # the host facts the runner recorded: kind and path
            kind, path = str(facts.get("kind") or ""), facts.get("path")
            text = (f"image {path}" if kind == "image" else str(path or "")) if path else ""
        else:
            text = _target_device(facts)
        if text:
            parts.append(f"{name}: {text}")
    return ", ".join(parts)


def _target_device(target: Mapping[str, Any]) -> str:
    """The device of one [target] table: a format or device target's path, 'image FILE'."""
    for kind in ("format", "device"):
        value = target.get(kind)
        if isinstance(value, str):
            return value
        if isinstance(value, dict) and isinstance(value.get("path"), str):
            return str(value["path"])
    image = target.get("image")
    path = image.get("path") if isinstance(image, dict) else image
    return f"image {path}" if isinstance(path, str) else ""


def _plan_targets(plan_text: str | None) -> dict[str, Any]:
    """A plan's [targets.NAME] tables ({} for none or an unreadable plan)."""
    if not plan_text:
        return {}
    try:
        targets = tomllib.loads(plan_text).get("targets")
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return {}
    return targets if isinstance(targets, dict) else {}


def session_filesystems(session: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> str:
    """The filesystems a session ran on: the host facts' fstype (a directory target), else
    each configuration's as read back, in order ('ext4, xfs'); '' when unknown."""
    fs = ((session.get("host") or {}).get("filesystem") or {}).get("fstype")
    if fs:
        return str(fs)
    seen: list[str] = []
    for e in events:
        if e.get("kind") in ("config_applied", "ConfigApplied"):
            readback = e.get("readback") or {}
            name = readback.get("fs") or readback.get("fstype")
            if name and str(name) not in seen:
                seen.append(str(name))
    return ", ".join(seen)
