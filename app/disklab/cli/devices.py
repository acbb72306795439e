"""`disklab devices [--json]`: every block device with its safety class and the reasons.

The class is what `plan validate` and `run` will say about a device: system, mounted and member
are refused for any destructive use; has-data and free need the plan's confirm, which is shown
here exactly as the plan must give it ("PATH SERIAL SIZE", under "confirm" in --json), for a
target and for an external journal or log device alike.
"""

from __future__ import annotations

import argparse
import json
import sys

from disklab.cli.arguments import DevicesArgs, typed
from disklab.cli.output import print_table
from disklab.core.system.devices import Device, device_note, identity_of, list_devices
from disklab.core.system.directories import library_path
from disklab.core.vocab.jsonformat import versioned
from disklab.core.vocab.units import human_bytes


def devices(args: argparse.Namespace) -> int:
    # the library's filesystem counts as `system`: it must never be formatted
    a = typed(DevicesArgs, args)
    found = list_devices(str(library_path(a.library)))
    confirms = {d.path: identity_of(d) for d in found}
    if a.json:
        json.dump(versioned("disklab.devices", {"devices": [
            {**d.to_json(), "safety": safety_word(d), "confirm": confirms[d.path],
             "unusable": d.unusable}
            for d in found]}), sys.stdout, indent=1)
        print()
        return 0
    print_table(device_rows(found))
    print("\nconfirm strings (copy one into the plan next to the device it confirms):")
    for d in found:
        if d.refused:
            print(f"  {d.path}: refused ({d.safety}): no confirm is accepted")
        elif d.unusable is not None:
            print(f"  {d.path}: unusable ({d.unusable})")
        else:
            print(f'  {d.path}: confirm = "{confirms[d.path]}"')
    return 0


def device_rows(found: list[Device]) -> list[list[str]]:
    """The table's rows, as the window's device list says them: a device nothing can be
    done with (size 0, read-only) is SAFETY 'unusable' with the reason, not 'free'."""
    rows = [["PATH", "SIZE", "MODEL", "FSTYPE", "MOUNTPOINTS", "SAFETY", "REASONS"]]
    for d in found:
        rows.append([
            d.path,
            human_bytes(d.size) if d.size else "0",
            d.model or "-",
            d.fstype or d.pttype or "-",
            ",".join(d.mountpoints) or "-",
            safety_word(d),
            device_note(d) or "-",
        ])
    return rows


def safety_word(d: Device) -> str:
    """The SAFETY the table, the JSON and the window say: the class, or 'unusable' for a
    device nothing can be done with that no class refuses already."""
    return d.safety if d.unusable is None or d.refused else "unusable"
