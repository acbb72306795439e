"""`disklab devices [--json]`: every block device with its safety class and the reasons.

The class is what `plan validate` and `run` will say about a device: system, mounted and member
are refused for any destructive use; has-data and free need the plan's confirm.
"""

from __future__ import annotations

import argparse
import json
import sys

from disklab.cli.output import print_table
from disklab.core.system.devices import list_devices
from disklab.core.units import human_bytes


def _library(args: argparse.Namespace) -> str | None:
    """The library whose filesystem counts as `system` (it must never be formatted)."""
    if getattr(args, "library", None):
        return str(args.library)
    try:
        from disklab.core.library import default_library_path
    except ImportError:
        return None
    return str(default_library_path())


def devices(args: argparse.Namespace) -> int:
    found = list_devices(_library(args))
    if getattr(args, "json", False):
        json.dump([d.to_json() for d in found], sys.stdout, indent=1)
        print()
        return 0
    rows = [["PATH", "SIZE", "MODEL", "FSTYPE", "MOUNTPOINTS", "SAFETY", "REASONS"]]
    for d in found:
        rows.append([
            d.path,
            human_bytes(d.size) if d.size else "0",
            d.model or "-",
            d.fstype or d.pttype or "-",
            ",".join(d.mountpoints) or "-",
            d.safety,
            "; ".join(d.reasons) or "-",
        ])
    print_table(rows)
    return 0
