"""Issue 3, done-when: the first reference experiment's iozone runs at small scale (256 MB and
75 MB files, 4096k records, -t 1, 6 and 7, with and without -o -e), a bonnie++ run and a fio
sequential and random run, through `disklab run` on a scratch filesystem; `disklab show` holds
exactly the numbers each tool printed in its transcript.

That reference form (six iozone cases) is the long form, in `make test-long`. iozone's throughput
mode (-t) spends about 13 s per case in its own fixed waits whatever the size, so `make test`
runs a short form: four cases that still give -t 1, 6 and 7 and both -o -e and none (-t 1 with
and without, -t 6 without, -t 7 with), at a quarter of the file sizes; what is checked, the
figures in the library against each transcript, is the same."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core import proc
from disklab.core.library import Library

pytestmark = [pytest.mark.root, pytest.mark.slow]

PLAN = """\
name = "reference tools"
repeats = 1

[target]
directory = "{dir}"

{iozone}[[test]]
tool = "bonnie"
size = "256m"
files = 1
fast = true

[[test]]
tool = "fio"
rw = ["write", "randread"]
bs = ["1m"]
size = "64m"
ioengine = "psync"
direct = true
"""

def iozone(file_size: str, threads: str, sync: bool) -> str:
    """One iozone test of the plan: write and read at 4096k records, -o -e when `sync`."""
    flag = str(sync).lower()
    return (f'[[test]]\ntool = "iozone"\ntests = ["write", "read"]\nrecord_size = "4096k"\n'
            f'file_size = "{file_size}"\nthreads = {threads}\nsync = {flag}\nfsync = {flag}\n\n')


# the reference's: 256 MB at -t 1, 75 MB at -t 6 and 7, each without and with -o -e
REFERENCE = "".join(iozone(size, threads, sync) for size, threads in (("256m", "1"),
                                                                        ("75m", "[6, 7]"))
                    for sync in (False, True))
# every thread count and both -o -e settings in four cases, at a quarter of the sizes
SHORT = (iozone("64m", "1", False) + iozone("64m", "1", True) + iozone("16m", "6", False)
         + iozone("16m", "7", True))

# the iozone tests of the plan and how many iozone cases they make
FORMS = (pytest.param((SHORT, 4), id="short"),
         pytest.param((REFERENCE, 6), id="reference", marks=pytest.mark.long))

CHILDREN = re.compile(r"Children see throughput for\s+(\d+) (initial writers|readers)\s+=\s+"
                      r"([0-9.]+) kB/sec")


@pytest.mark.parametrize("form", FORMS)
def test_iozone_bonnie_fio_through_disklab_run(scratch_fs, tmp_path: Path,
                                               form: tuple[str, int]) -> None:
    iozone, iozone_cases = form
    for exe in ("iozone", "bonnie++", "fio"):
        assert proc.which(exe), f"{exe} missing: make test installs it"
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(dir=scratch_fs.mountpoint, iozone=iozone))
    library = tmp_path / "l.sqlite3"
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "run", str(plan),
                           "--library", str(library), "--json"], capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, done.stderr + done.stdout[-2000:]

    with Library.open(library) as lib:
        (session,) = lib.list_sessions()
        sid = session["id"]
        results = lib.results(sid)
        cases = {c["case_id"]: c for c in lib.cases(sid)}
        checked = {"iozone": 0, "fio": 0, "bonnie": 0}
        for case_id, case in cases.items():
            text = "\n".join(t for _, s, t in lib.transcript(sid, case_id, 1)
                             if s in ("stdout", "stderr"))
            mine = {r["metric"]: r for r in results if r["case_id"] == case_id}
            if case["tool"] == "iozone":
                printed = {("write" if k == "initial writers" else "read"): float(v)
                           for n, k, v in CHILDREN.findall(text)}
                assert set(printed) == {"write", "read"}, text[-2000:]
                for name, kb in printed.items():
                    assert mine[name]["mean"] == pytest.approx(kb * 1024, rel=1e-9)
                    assert mine[name]["params"]["threads"] == case["params"]["threads"]
                checked["iozone"] += 1
            elif case["tool"] == "fio":
                result = "\n".join(t for _, s, t in lib.transcript(sid, case_id, 1)
                                   if s == "result")
                job = json.loads(result[result.index("{"):])["jobs"][0]
                direction = "write" if case["params"]["rw"] == "write" else "read"
                assert mine[direction]["mean"] == job[direction]["bw_bytes"]
                assert mine[f"{direction}:iops"]["mean"] == pytest.approx(job[direction]["iops"])
                checked["fio"] += 1
            elif case["tool"] == "bonnie":
                csv_line = next(x for x in text.splitlines() if re.match(r"^1\.9\d,", x))
                fields = csv_line.split(",")
                if fields[11].startswith("+"):  # "+++++": too fast to measure
                    assert mine["block_write"]["mean"] is None
                else:
                    assert mine["block_write"]["mean"] == int(fields[11]) * 1024
                checked["bonnie"] += 1
        assert checked == {"iozone": iozone_cases, "fio": 2, "bonnie": 1}
    assert sorted(p.name for p in scratch_fs.mountpoint.iterdir()) == ["lost+found"]
