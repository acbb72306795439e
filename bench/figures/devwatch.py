"""A block-device write watcher, run as a process of its own beside DiskLab: it polls each
device's `/sys/dev/block/M:m/stat` every ~0.5 ms and writes a line (to a file in /dev/shm)
whenever a device's count of written sectors changes ("TIME INDEX SECTORS", TIME from
time.time(), as DiskLab's events).

Why a process: the figures that read it (8, 9) run DiskLab's runner in the bench's own process,
where a sampling thread would wait for the GIL (5 ms switch interval) and blur what it times. Why
the device: it is what the storage sees, independent of what the tool says of itself.
Stopped with SIGTERM (it then flushes what it has and exits).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

WRITE_SECTORS = 6  # field of /sys/block/X/stat: sectors written (512 bytes each)
POLL = 0.0005


def stat_path(mountpoint: Path) -> str:
    """The stat file of the block device mounted at `mountpoint`."""
    source = subprocess.run(["findmnt", "-n", "-o", "SOURCE", "--target", str(mountpoint)],
                            check=True, capture_output=True, text=True).stdout.strip()
    rdev = os.stat(source).st_rdev
    return f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}/stat"


class Watcher:
    """The watcher process over some devices; `stop()` returns their changes as
    [(t, index, sectors written)] in time order."""

    def __init__(self, paths: Sequence[str]):
        self.paths = list(paths)
        # a file in RAM, not a pipe: a pipe nobody reads during the run fills (64 KiB) and
        # would stop the watcher in write()
        fd, name = tempfile.mkstemp(prefix="disklab-bench-devwatch-", dir="/dev/shm")
        os.close(fd)
        self.log = Path(name)
        self.proc = subprocess.Popen([sys.executable, __file__, name, *self.paths],
                                     stdout=subprocess.PIPE, text=True)
        if self.proc.stdout:
            self.proc.stdout.readline()  # "watching": the first sample is in the file

    def stop(self) -> list[tuple[float, int, int]]:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.communicate(timeout=30)
        text = self.log.read_text()
        self.log.unlink(missing_ok=True)
        changes = []
        for line in text.splitlines():
            t, i, sectors = line.split()
            changes.append((float(t), int(i), int(sectors)))
        return changes


def first_write(changes: Sequence[tuple[float, int, int]], index: int, after: float,
                until: float, at_least: int) -> float | None:
    """When device `index` had written `at_least` bytes more than it had at `after` (the
    first sample that shows it), within [after, until]; None if it never did."""
    base = None
    for t, i, sectors in changes:
        if i != index:
            continue
        if t <= after:
            base = sectors
            continue
        if t > until:
            break
        if base is None:
            base = sectors  # no sample before `after`: the first one is the baseline
            continue
        if (sectors - base) * 512 >= at_least:
            return t
    return None


def _watch(log: str, paths: list[str]) -> None:
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_a: running.__setitem__(0, False))
    files = [open(p, "rb", buffering=0) for p in paths]  # noqa: SIM115 (held for the loop)
    last = [-1] * len(files)
    out = open(log, "w")  # noqa: SIM115 (held for the loop)
    first = True
    parent = os.getppid()
    while running[0] and os.getppid() == parent:  # a bench killed with SIGKILL: end too
        now = time.time()
        for i, f in enumerate(files):
            f.seek(0)
            sectors = int(f.read().split()[WRITE_SECTORS])
            if sectors != last[i]:
                last[i] = sectors
                out.write(f"{now:.6f} {i} {sectors}\n")
        if first:  # the parent waits for this: the watch has begun
            out.flush()
            print("watching", flush=True)
            first = False
        time.sleep(POLL)
    out.close()


if __name__ == "__main__":
    _watch(sys.argv[1], sys.argv[2:])
