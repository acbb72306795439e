"""What the live rates of a run can and cannot see, said where they are shown.

The "Application" rate is the tool's process tree's rchar + wchar (/proc/<pid>/io): the bytes
passed to read()/write() and their relatives. I/O submitted another way is not counted there:
fio's libaio (io_submit) and io_uring engines and its mmap engine (page faults and memcpy)
move gigabytes while rchar and wchar stay at a few hundred bytes a second. A page that showed
658 B/s beside a fio run writing 70 MiB/s misled; it must say that the figure cannot see the
tool's I/O, and the device rate and the tool's own report are then the ones to read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# fio engines whose I/O does not go through read()/write(): rchar/wchar do not see it
UNCOUNTED_FIO_ENGINES = {
    "libaio": "io_submit",
    "io_uring": "io_uring submission queues",
    "mmap": "memory-mapped copies",
}


# a tool whose other end is a pseudo-device: rchar/wchar count its copies from or to it (dd
# reads /dev/zero as fast as it writes the file), which are not I/O on the target
PSEUDO_ENDS = {"dd": {"write": ("app_rchar_bps", "dd's reads of /dev/zero"),
                      "read": ("app_wchar_bps", "dd's writes to /dev/null")}}


def app_rate_pseudo_end(tool: str, params: Mapping[str, Any]) -> tuple[str, str] | None:
    """The Application series that counts a tool's copies of a pseudo-device, not its I/O on
    the target, and what it counts ('app_rchar_bps', "dd's reads of /dev/zero"); None for a
    tool whose reads and writes are both its I/O."""
    return PSEUDO_ENDS.get(tool, {}).get(str(params.get("mode") or ""))


def app_rate_blind_spot(tool: str, params: Mapping[str, Any]) -> str | None:
    """Why the Application rate (rchar + wchar) does not count this case's I/O, or None when
    it does."""
    if tool != "fio":
        return None
    engine = str(params.get("ioengine") or "")
    how = UNCOUNTED_FIO_ENGINES.get(engine)
    if how is None:
        return None
    return (f"fio's {engine} engine submits its I/O by {how}, which the kernel's rchar/wchar "
            "do not count: read the Device rate and the tool's own report")
