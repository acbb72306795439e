"""`disklab devices` says what the window says (issue 46): an unconfigured zram was SAFETY
`free` in the table and "refused (size 0)" on the line below, and "unusable" in the window."""

from __future__ import annotations

from disklab.cli.devices import device_rows
from disklab.core.system.devices import Device


def test_a_size_0_zram_is_unusable_with_its_reason() -> None:
    zram = Device(path="/dev/zram0", name="zram0", type="disk", size=0, safety="free")
    disk = Device(path="/dev/sdb", name="sdb", type="disk", size=1 << 30, safety="free")
    _header, zram_row, disk_row = device_rows([zram, disk])
    assert zram_row[5] == "unusable"
    assert zram_row[6] == "size 0: zram not set up (its disksize is 0): nothing to format"
    assert disk_row[5] == "free" and disk_row[6] == "-"


def test_devices_json_says_the_tables_safety(monkeypatch, capsys) -> None:
    """`devices --json` said "safety": "free" for the size-0 zram beside "unusable"."""
    import argparse
    import json

    from disklab.cli import devices

    zram = Device(path="/dev/zram0", name="zram0", type="disk", size=0, safety="free")
    disk = Device(path="/dev/sdb", name="sdb", type="disk", size=1 << 30, safety="free")
    monkeypatch.setattr(devices, "list_devices", lambda _library: [zram, disk])
    assert devices.devices(argparse.Namespace(json=True, library=None, command="devices")) == 0
    rows = {d["path"]: d for d in json.loads(capsys.readouterr().out)["devices"]}
    assert rows["/dev/zram0"]["safety"] == "unusable" and rows["/dev/zram0"]["unusable"]
    assert rows["/dev/sdb"]["safety"] == "free" and rows["/dev/sdb"]["unusable"] is None
