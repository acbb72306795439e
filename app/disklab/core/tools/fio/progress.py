"""fio's live progress: the ETA line it prints on stdout with --eta=always, read into bytes
done, the phase (from its run-state letters) and the rate."""

from __future__ import annotations

import math
import re

from disklab.core.tools.base import ProgressParser
from disklab.core.vocab.model import ProgressUpdate

# The ETA line: `Jobs: 1 (f=1): [r(1)][60.0%][r=1258MiB/s][r=322k IOPS][eta 00m:02s]`, mixed jobs
# `[m(1)][-.-%][r=282MiB/s,w=123MiB/s][r=72.3k,w=31.4k IOPS]`, client mode `[r=1406M]`, and the
# first lines without anything after `Jobs: 1 (f=1)`.

_ETA = re.compile(
    r"Jobs: (?P<jobs>\d+) \(f=(?P<files>\d+)\)"
    r"(?:, [^:\[\]]*)?"  # a rate-limited job's ", 0B/s-16.0MiB/s" (fio's rate, rate_iops)
    r"(?:: \[(?P<states>[^\]]*)\])?"
    r"(?:\[(?P<pct>[0-9.]+|-\.-)%\])?"
    r"(?:\[(?P<rates>[rwt]=(?:(?! IOPS)[^\]])*)\])?"
    r"(?:\[(?P<iops>[^\]]*) IOPS\])?"
    r"(?:\[eta (?P<eta>[^\]]*)\])?"
)
_RATE = re.compile(r"(?P<dir>[rwt])=(?P<num>[0-9.]+)(?P<unit>[kKMGTP]?i?B?)(?:/s)?")
_RATE_SCALE = {
    "": 1, "B": 1, "k": 1024, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4,
    "P": 1024**5, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4, "PiB": 1024**5,
    "kB": 1000, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4, "PB": 1000**5,
}
# fio's run-state letters (backend.c): what the first busy job is doing
_STATE = {
    "R": "read", "r": "random read", "W": "write", "w": "random write", "M": "mixed",
    "m": "random mixed", "D": "trim", "d": "random trim", "F": "fsync", "f": "finishing",
    "V": "verify", "p": "ramp", "P": "starting", "C": "starting", "I": "starting",
    "_": "done", "E": "done", "X": "done", "K": "done",
}


def _eta_phase(states: str | None) -> str:
    if not states:
        return "starting"
    letters = [s.strip()[:1] for s in states.split(",") if s.strip()]
    for letter in letters:
        if _STATE.get(letter, "running") != "done":
            return _STATE.get(letter, "running")
    return "done"


class FioProgress(ProgressParser):
    """Reads the ETA lines fio prints on stdout with --eta=always."""

    def __init__(self, planned: int | None):
        self.planned = planned

    def feed(self, stream: str, line: str) -> ProgressUpdate | None:
        m = _ETA.search(line)
        if not m:
            return None
        done = None
        if m["pct"] and m["pct"] != "-.-" and self.planned:
            try:
                pct = float(m["pct"])
            except ValueError:
                pct = math.nan
            if 0.0 <= pct <= 100.0:
                done = int(self.planned * pct / 100.0)
        rate = None
        if m["rates"]:
            total = 0.0
            for r in _RATE.finditer(m["rates"]):
                scale = _RATE_SCALE.get(r["unit"])
                if scale is None:
                    continue
                total += float(r["num"]) * scale
            rate = total
        return ProgressUpdate(done_bytes=done, total_bytes=self.planned if done is not None
                              else None, phase=_eta_phase(m["states"]),
                              message=line[m.start():].strip(), rate=rate)
