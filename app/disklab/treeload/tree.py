"""Making and removing the tree, with the counters the progress lines and the timings read.

Single-threaded on purpose: the study timed one `dd` after another and one `rm -Rf`, and the
user and system seconds of this process are then the tool's own, as `time` reported them.
"""

from __future__ import annotations

import os
import resource
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from disklab.core.system.syncfs import syncfs


@dataclass
class Shape:
    """D directories x N files of S bytes, each written B bytes at a time."""

    root: str
    dirs: int
    files_per_dir: int
    file_size: int
    block_size: int

    @property
    def planned_files(self) -> int:
        return self.dirs * self.files_per_dir

    def dir_path(self, d: int) -> str:
        return os.path.join(self.root, f"d{d:06d}")

    def file_path(self, d: int, f: int) -> str:
        return os.path.join(self.dir_path(d), f"f{f:08d}")


@dataclass
class Counters:
    """What the running phase has done, read by the progress lines (same thread, between
    files)."""

    phase: str = ""
    files: int = 0
    bytes: int = 0
    started: float = 0.0
    halt: list[bool] = field(default_factory=lambda: [False])


@dataclass(frozen=True)
class Timing:
    """One phase as `time` reports it, plus what it moved."""

    phase: str
    seconds: float
    user: float
    sys: float
    files: int
    bytes: int
    complete: bool

    def as_dict(self) -> dict[str, object]:
        s = max(self.seconds, 1e-9)
        return {"type": "phase", "phase": self.phase, "seconds": self.seconds,
                "user": self.user, "sys": self.sys, "files": self.files, "bytes": self.bytes,
                "files_per_s": self.files / s, "bw": self.bytes / s,
                "complete": self.complete}


def _usage() -> tuple[float, float]:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime, u.ru_stime


Tick = Callable[[], None]  # called after each file: prints a progress line now and then
Work = Callable[["Counters", Tick], bool]


def timed(name: str, counters: Counters, work: Work, tick: Tick) -> Timing:
    """Run `work(counters, tick)` as phase `name`: wall, user and system seconds around it."""
    counters.phase, counters.files, counters.bytes = name, 0, 0
    user0, sys0 = _usage()
    counters.started = time.perf_counter()
    complete = work(counters, tick)
    seconds = time.perf_counter() - counters.started
    user1, sys1 = _usage()
    return Timing(name, seconds, user1 - user0, sys1 - sys0, counters.files, counters.bytes,
                  complete)


def create(shape: Shape, counters: Counters, tick: Tick, sync: bool) -> bool:
    """Write the tree as `dd if=/dev/zero of=F bs=B` would, file after file; syncfs at the end
    when `sync` (inside the timing). False when halted before the end."""
    os.makedirs(shape.root, exist_ok=True)
    block = bytes(shape.block_size)
    full, rest = divmod(shape.file_size, shape.block_size)
    for d in range(shape.dirs):
        os.mkdir(shape.dir_path(d))
        for f in range(shape.files_per_dir):
            if counters.halt[0]:
                return False
            fd = os.open(shape.file_path(d, f), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                for _ in range(full):
                    counters.bytes += os.write(fd, block)
                if rest:
                    counters.bytes += os.write(fd, block[:rest])
            finally:
                os.close(fd)
            counters.files += 1
            tick()
    if sync:
        syncfs(shape.root)
    return True


def delete(shape: Shape, counters: Counters, tick: Tick, sync: bool) -> bool:
    """Remove the tree as `rm -Rf` does (unlink every file, then its directory); syncfs at the
    end when `sync`. Counts each file's size as it goes (from lstat, as rm does). Runs to the
    end even when halted: a stopped delete still leaves nothing behind."""
    if not os.path.isdir(shape.root):
        return True
    parent = os.path.dirname(shape.root) or "."
    for entry in sorted(os.scandir(shape.root), key=lambda e: e.name):
        if entry.is_dir(follow_symlinks=False):
            for f in sorted(os.scandir(entry.path), key=lambda e: e.name):
                counters.bytes += f.stat(follow_symlinks=False).st_size
                os.unlink(f.path)
                counters.files += 1
                tick()
            os.rmdir(entry.path)
        else:
            os.unlink(entry.path)
    os.rmdir(shape.root)
    if sync:
        syncfs(parent)
    return True


def remove_quietly(root: str) -> None:
    """Remove whatever is left of the tree (after a stop or an error); never raises."""
    shutil.rmtree(root, ignore_errors=True)
