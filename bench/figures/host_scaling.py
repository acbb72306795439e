"""Figure 8: several hosts. A fio job run through DiskLab (a plan with [hosts.*] and the fio
`hosts` parameter: fio --client, core/tools/fio/client.py) against 1, 2, 4 and 8 fio servers
this figure starts on loopback addresses 127.0.0.101-108 (each server in a directory on a
scratch ext4 of its own, on a loop device of its own), recorded into a real library.

- aggregate write throughput per host count (report: every server shares this machine's disk
  and 2 vCPUs, so this is the shape of the scaling curve on one box, not a cluster's);
- the verdict: what DiskLab stored for `host = all` equals fio's own total as the client
  printed it, read here from the run's transcript in the library (the terse report's "All
  clients" line, or with one host its only job line; field 48, write KiB/s, x 1024). Exact
  equality: DiskLab stores what fio printed;
- the time from Start (the case's CaseStarted event) to the first byte on every host: a
  watcher process (devwatch.py) polls each host's device every ~0.5 ms; a host's first byte is
  the first sample at which its device has written >= 256 KiB more than at Start (O_DIRECT 1 MiB
  writes: the first data write, not a journal commit). Reported: the last host's first byte
  after Start (connecting, sending the job, each server setting up) and the spread between the
  first and the last host (the synchronisation of the start, judged at 8 hosts over 3 runs:
  < 100 ms. Why 100 ms: fio's "All clients" is every host's bytes over the whole run's time, so
  hosts that start s apart in a time-based run of T seconds understate it by about s / T; at
  the shipped host-scaling preset's 10 s that is 1 %, the resolution the other figures ask).

Every server this figure started is stopped by its pid; the scratch filesystems are undone by
bench/scratch.py.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from disklab.core.library import Library
from disklab.core.plan.parse import parse_plan
from disklab.core.run.runner import run_plan
from disklab.core.vocab.events import CaseFailed, CaseStarted

from .common import judge
from .devwatch import Watcher, first_write, stat_path

ADDRESSES = tuple(f"127.0.0.{101 + i}" for i in range(8))
COUNTS = (1, 2, 4, 8)
FIRST_PORT = 8765
AT_LEAST = 256 << 10
SPREAD_MS = 100.0
REPEATS = 3  # runs per host count: the spread at 8 hosts is judged on their median's interval
TERSE_WRITE_KIB_S = 5 + 41 + 1  # terse v3: 5 head fields, 41 read fields, then write KiB, KiB/s
ALL_CLIENTS = "All clients"


def free_port(addresses: tuple[str, ...], first: int = FIRST_PORT) -> int:
    """A TCP port free on every address (bound and released, as tests/helpers.py checks)."""
    for port in range(first, first + 200):
        try:
            for address in addresses:
                with socket.socket() as s:
                    s.bind((address, port))
        except OSError:
            continue
        return port
    raise RuntimeError(f"no port free on {', '.join(addresses)} from {first}")


def _listening(address: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=0.5):
        return True
    return False


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM each server's process group (its id is the server's pid: a session of its own),
    then wait until the group is empty: a fio server forks a process per client connection,
    which outlives the server by a moment and holds its directory (the scratch filesystem
    would be busy at unmount). SIGKILL what is left after 10 s."""
    for p in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for p in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(max(0.1, deadline - time.monotonic()))
        while time.monotonic() < deadline and _group_alive(p.pid):
            time.sleep(0.05)
        if _group_alive(p.pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
        p.wait(10)
        while _group_alive(p.pid) and time.monotonic() < deadline + 10:
            time.sleep(0.05)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@contextlib.contextmanager
def fio_servers(directories: list[Path], port: int
                ) -> Iterator[list[int]]:
    """`fio --server=ADDR,PORT` per directory (its cwd), on 127.0.0.101..., each in a session
    of its own; stopped by their pids' process groups (_stop)."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for address, directory in zip(ADDRESSES, directories, strict=False):
            procs.append(subprocess.Popen(["fio", f"--server={address},{port}"],
                                          cwd=directory, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, start_new_session=True))
        deadline = time.monotonic() + 10
        for address in ADDRESSES[:len(directories)]:
            while not _listening(address, port):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no fio server listens at {address},{port}")
                time.sleep(0.05)
        yield [p.pid for p in procs]
    finally:
        _stop(procs)


def plan_text(directories: list[Path], port: int, work: Path, runtime: str, size: str) -> str:
    text = f'name = "bench host scaling"\nrepeats = {REPEATS}\n[target]\ndirectory = "{work}"\n'
    for i, (address, directory) in enumerate(zip(ADDRESSES, directories, strict=False)):
        text += (f'[hosts.h{i + 1}]\naddress = "{address}"\nport = {port}\n'
                 f'start = "running"\ndirectory = "{directory}"\n')
    axis = ", ".join("[" + ", ".join(f'"h{i + 1}"' for i in range(n)) + "]" for n in COUNTS)
    return text + (f'[[test]]\ntool = "fio"\nrw = "write"\nbs = "1m"\nsize = "{size}"\n'
                   f'runtime = "{runtime}"\ndirect = true\nhosts = [{axis}]\n')


def fio_total(result_lines: list[str], hosts: int) -> float:
    """fio's own total write rate in B/s from its terse report: the "All clients" line, or
    with one host (fio prints no total then) its only job line."""
    lines = [ln for ln in result_lines if ln.startswith("3;")]
    wanted = [ln for ln in lines if ln.split(";")[2] == ALL_CLIENTS] if hosts > 1 else lines
    if len(wanted) != 1:
        raise RuntimeError(f"{len(wanted)} total lines in fio's report of {hosts} hosts")
    return float(wanted[0].split(";")[TERSE_WRITE_KIB_S]) * 1024


def run(mounts: list[Path], runtime: str = "5s", size: str = "256m") -> list[dict]:
    port = free_port(ADDRESSES[:len(mounts)])
    stats = [stat_path(m) for m in mounts]
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="disklab-bench-hosts-") as tmp:
        work = Path(tmp)
        checked = parse_plan(plan_text(mounts, port, work, runtime, size))
        lib = Library.open(work / "library.sqlite3")
        rec = lib.recorder()
        starts: dict[tuple[str, int], float] = {}
        try:
            with fio_servers(mounts, port):
                watcher = Watcher(stats)
                try:
                    for event in run_plan(checked.plan):
                        rec.handle(event)
                        if isinstance(event, CaseStarted):
                            starts[(event.case.id, event.repeat)] = event.t
                        elif isinstance(event, CaseFailed):
                            raise RuntimeError(f"{event.error}\n{event.transcript_tail}")
                finally:
                    changes = watcher.stop()
            rec.close()
            sid = rec.session_id
            assert sid is not None
            rows = _rows(lib, sid, starts, changes)
        finally:
            lib.close()
    return rows


def _rows(lib: Library, sid: int, starts: dict[tuple[str, int], float],
          changes: list[tuple[float, int, int]]) -> list[dict]:
    results = lib.results(sid)
    out, equal = [], []
    lasts: dict[int, list[float]] = {}
    spreads: dict[int, list[float]] = {}
    for case in lib.cases(sid):
        hosts = len(str(case["params"]["hosts"]).split("+"))
        stored = [r for r in results if r["case_id"] == case["case_id"]
                  and r["metric"] == "write" and r["params"].get("host") == "all"]
        values = stored[0]["values"] if len(stored) == 1 else []
        for repeat in range(1, REPEATS + 1):
            transcript = [text for _t, stream, text
                          in lib.transcript(sid, case["case_id"], repeat) if stream == "result"]
            value = values[repeat - 1] if repeat <= len(values) else None
            equal.append((hosts, repeat, value, fio_total(transcript, hosts)))
            t0 = starts[(case["case_id"], repeat)]
            firsts = [first_write(changes, i, t0, t0 + 60, AT_LEAST) for i in range(hosts)]
            if all(f is not None for f in firsts):
                seen = [f for f in firsts if f is not None]
                lasts.setdefault(hosts, []).append((max(seen) - t0) * 1000)
                spreads.setdefault(hosts, []).append((max(seen) - min(seen)) * 1000)
        rates = [v / 2**20 for v in values if v is not None]
        out.append({"figure": f"8 aggregate write, {hosts} host(s)",
                    "value": f"{statistics.median(rates):,.0f} ({min(rates):,.0f}-"
                             f"{max(rates):,.0f}) MiB/s" if rates else "-",
                    "target": "report",
                    "verdict": "info: loopback servers sharing one machine's disk and CPUs",
                    "details": {"MiBps": [round(r, 1) for r in rates],
                                "start_to_last_first_byte_ms": [round(x, 1) for x in
                                                                lasts.get(hosts, [])],
                                "first_to_last_host_ms": [round(x, 1) for x in
                                                          spreads.get(hosts, [])]}})
    bad = [e for e in equal if e[2] != e[3]]
    out.append({"figure": "8 stored 'all' = fio's All clients",
                "value": f"{len(equal) - len(bad)}/{len(equal)} runs equal",
                "target": "all equal", "verdict": "ok" if equal and not bad else "short",
                "details": {"runs": [{"hosts": n, "repeat": r, "stored": v, "fio": p}
                                     for n, r, v, p in equal]}})
    every = [x for xs in lasts.values() for x in xs]
    if every:
        out.append({"figure": "8 Start to first byte on every host",
                    "value": f"{statistics.median(every):.0f} ({min(every):.0f}-"
                             f"{max(every):.0f}) ms",
                    "target": "report",
                    "verdict": "info: fio's client connecting, sending the job, servers set up",
                    "details": {str(k): [round(x, 1) for x in v] for k, v in lasts.items()}})
    most = max(spreads) if spreads else None
    if most is not None and len(spreads[most]) >= 2:
        value, v, interval = judge(spreads[most], SPREAD_MS, higher_is_better=False, digits=0)
        load, cpus = os.getloadavg()[0], os.cpu_count() or 1
        if v != "ok" and load > cpus:  # as figure 6: a wall time on an overloaded machine
            v = (f"unresolved: {interval[0]:.0f}-{interval[1]:.0f} ms at load average "
                 f"{load:.1f} on {cpus} CPUs ({most} servers and the client share them)")
        out.append({"figure": f"8 first byte, first host to last ({most} hosts)",
                    "value": f"{value} ms", "target": f"< {SPREAD_MS:.0f} ms", "verdict": v,
                    "details": {"interval": interval, "load": round(os.getloadavg()[0], 1),
                                **{str(k): [round(x, 1) for x in xs]
                                   for k, xs in spreads.items()}}})
    return out
