"""Memory cgroups of cases with a page-cache limit: made here by the case's tag, removed by
tool_cleanup or the helper's end; cgroup_remove removes only a group this helper made, or one a
dead helper of this user recorded (never a cgroup that is not DiskLab's own)."""

from __future__ import annotations

import contextlib

from disklab.core.helper_client.protocol import (
    CgroupCreate,
    CgroupRemove,
    GroupCreated,
    GroupRemoved,
)
from disklab.core.root_helper.state import Session
from disklab.core.system import cgroups
from disklab.core.vocab.errors import DisklabError, RequestError, SafetyError, ToolError


def create(s: Session, r: CgroupCreate) -> GroupCreated:
    """A memory cgroup limited to `limit` bytes for the case `tag`: its steps run in it."""
    if r.limit < cgroups.MIN_LIMIT:
        raise RequestError(f"a page-cache limit of {r.limit} bytes is below the minimum "
                           f"{cgroups.MIN_LIMIT}")
    controller = cgroups.find_memory_controller()
    if controller is None:
        raise ToolError("no memory cgroup controller is available: the page cache cannot "
                        "be limited")
    name = cgroups.group_name(r.tag)
    entry = s.builtin("mkdir", str(controller.base / name))
    try:
        path = cgroups.create_group(controller, name, r.limit)
    except DisklabError as e:
        entry.update(returncode=None, error=str(e))
        raise
    for file, value in controller.limit_files(r.limit):
        s.builtin("write", str(path / file), value)
    s.held.groups[r.tag] = str(path)
    s.save()
    return GroupCreated(str(path), controller.to_json())


def remove(s: Session, r: CgroupRemove) -> GroupRemoved:
    """Remove a DiskLab memory cgroup this helper (or a dead one of this user) made."""
    path = str(cgroups.check_group(r.path))
    tags = [t for held in (s.held, s.inherited) for t, p in held.groups.items() if p == path]
    if not tags:
        raise SafetyError(f"{r.path}: not a cgroup this helper made; not removing it")
    removed = cgroups.remove_group(path)
    if removed:
        s.builtin("rmdir", path)
    for held in (s.held, s.inherited):
        for tag in tags:
            held.groups.pop(tag, None)
    s.save()
    return GroupRemoved(removed)


def remove_case_group(s: Session, tag: str) -> str | None:
    """Remove the group of case `tag` (tool_cleanup); its path when it could not be removed."""
    path = s.held.groups.pop(tag, None)
    if path is None:
        return None
    s.save()
    try:
        cgroups.remove_group(path)
        s.builtin("rmdir", path)
        return None
    except DisklabError:
        return path


def close(s: Session) -> None:
    for tag in list(s.held.groups):
        with contextlib.suppress(Exception):
            remove_case_group(s, tag)
