"""What changed on the machine between two sessions: the facts each recorded, compared.

A session records the host's facts when it starts (core.system.host: kernel, the target's
filesystem and its mount options, the device's model, firmware, scheduler and read-ahead, free
space, DiskLab's version; the tools' versions) and each configuration's read-back (what the
kernel applied: ConfigApplied). A step in a figure is explained, as far as the records go, by
the facts that differ between the last session before it and the first after it.

Facts that move with every session and explain nothing are not compared (MOVING: the dirty
threshold follows the free memory, the Python executable's path follows the install); free
space is said only when it moved by more than FREE_SPACE_MOVE of the filesystem (a case's
files come and go; a filesystem filling up changes its figures).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from disklab.core.vocab.units import format_size

# host keys compared, in the order a line names them, with how people call them
HOST_FACTS: tuple[tuple[str, str], ...] = (
    ("kernel", "kernel"), ("kernel_version", "kernel build"),
    ("disklab_version", "DiskLab"), ("distribution", "distribution"),
    ("cpu_model", "CPU"), ("cpu_count", "CPUs"), ("memory_bytes", "memory"),
    ("python", "Python"),
)
# the device's facts (and the disk under a loop device's image: "backing")
DEVICE_FACTS: tuple[tuple[str, str], ...] = (
    ("model", "model"), ("vendor", "vendor"), ("firmware", "firmware"),
    ("revision", "revision"), ("serial", "serial"), ("scheduler", "scheduler"),
    ("read_ahead_kb", "read_ahead_kb"), ("rotational", "rotational"),
    ("logical_block_size", "logical block size"),
    ("physical_block_size", "physical block size"), ("size", "size"),
    ("loop_direct_io", "loop direct I/O"),
)
FILESYSTEM_FACTS: tuple[tuple[str, str], ...] = (
    ("fstype", "filesystem"), ("options", "mount options"),
    ("super_options", "superblock options"),
)
MOVING = ("dirty_threshold_bytes", "python_executable", "free_bytes")
FREE_SPACE_MOVE = 0.01  # of the filesystem's size
NOTHING = "nothing recorded changed"


def _text(value: Any, key: str) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int) and key in ("memory_bytes", "size", "free_bytes"):
        return format_size(value)
    return str(value)


def _pairs(was: Mapping[str, Any], now: Mapping[str, Any], facts: tuple[tuple[str, str], ...],
           prefix: str) -> Iterator[dict[str, Any]]:
    for key, words in facts:
        a, b = was.get(key), now.get(key)
        if a != b and not (a is None and b is None):
            yield {"fact": f"{prefix}{key}", "words": f"{prefix.replace('.', ' ')}{words}"
                   .strip(), "before": a, "after": b,
                   "text": f"{_text(a, key)} to {_text(b, key)}"}


def _free_space(was: Mapping[str, Any], now: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    a, b = was.get("free_bytes"), now.get("free_bytes")
    size = now.get("fs_size_bytes") or was.get("fs_size_bytes")
    if isinstance(a, int) and isinstance(b, int) and size and \
            abs(a - b) > FREE_SPACE_MOVE * size:
        yield {"fact": "free_bytes", "words": "free space", "before": a, "after": b,
               "text": f"{_text(a, 'free_bytes')} to {_text(b, 'free_bytes')}"}


def _flat(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for k in sorted(value, key=str):
            yield from _flat(value[k], f"{prefix}.{k}" if prefix else str(k))
    else:
        yield prefix, value


def _readback(was: Mapping[str, Any], now: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Each configuration's read-back that differs (what the kernel applied)."""
    a, b = dict(_flat(was)), dict(_flat(now))
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            yield {"fact": f"readback.{key}", "words": f"applied {key}",
                   "before": a.get(key), "after": b.get(key),
                   "text": f"{_text(a.get(key), key)} to {_text(b.get(key), key)}"}


def differences(was: Mapping[str, Any], now: Mapping[str, Any],
                readback_was: Mapping[str, Any] | None = None,
                readback_now: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The recorded facts that differ between two sessions' host records (and read-backs):
    each {fact, words, before, after, text}; [] when nothing recorded changed."""
    out = list(_pairs(was, now, HOST_FACTS, ""))
    tools_a, tools_b = was.get("tools") or {}, now.get("tools") or {}
    for name in sorted(set(tools_a) | set(tools_b)):
        if tools_a.get(name) != tools_b.get(name):
            out.append({"fact": f"tools.{name}", "words": name, "before": tools_a.get(name),
                        "after": tools_b.get(name),
                        "text": f"{tools_a.get(name)} to {tools_b.get(name)}"})
    out += _pairs(was.get("filesystem") or {}, now.get("filesystem") or {},
                  FILESYSTEM_FACTS, "")
    # a directory's device, else a device or image target's (host.target_device_facts)
    dev_a = was.get("device") or was.get("target_device") or {}
    dev_b = now.get("device") or now.get("target_device") or {}
    out += _pairs(dev_a, dev_b, DEVICE_FACTS, "")
    out += _pairs(dev_a.get("backing") or {}, dev_b.get("backing") or {}, DEVICE_FACTS,
                  "backing.")
    out += _free_space(was, now)
    said = {(repr(d["before"]), repr(d["after"])) for d in out}
    out += [d for d in _readback(readback_was or {}, readback_now or {})
            if (repr(d["before"]), repr(d["after"])) not in said]  # the mount's, said once
    return out


def line(diffs: list[dict[str, Any]]) -> str:
    """'kernel 6.1.0-13 to 6.1.0-15, read_ahead_kb 128 to 16', or NOTHING."""
    if not diffs:
        return NOTHING
    return ", ".join(f"{d['words']} {d['text']}" for d in diffs)


def readbacks(events: list[dict[str, Any]]) -> dict[str, Any]:
    """A session's read-back per configuration, from its ConfigApplied events."""
    return {str(e.get("config")): e.get("readback") or {}
            for e in events if e.get("kind") == "ConfigApplied"}
