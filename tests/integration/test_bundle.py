"""Sessions that travel: a bundle of a real recorded run imported on "another machine" (a
second XDG_DATA_HOME) gives the same figures, host facts and transcripts; twice is once; a
newer format is refused in one line; another library merges; two hosts' sessions compare with
the host facts that differ above the table."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from disklab.core.library import Library, schema
from disklab.core.vocab.model import Case, Metric
from tests.helpers import engine_plan, record_session


def disklab(*args: str, data: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DISKLAB_LIBRARY"}
    if data is not None:
        env["XDG_DATA_HOME"] = str(data)
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args], env=env,
                          capture_output=True, text=True, timeout=300)


def shown(session: str, data: Path) -> dict:
    done = disklab("show", session, "--json", data=data)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_real_session_travels_whole_in_a_bundle_and_twice_is_once(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    work = tmp_path / "work"
    work.mkdir()
    plan = tmp_path / "p.toml"
    plan.write_text(engine_plan(work, name="travel", runtime="1s"))
    ran = disklab("run", str(plan), data=here)
    assert ran.returncode == 0, ran.stderr
    bundle = tmp_path / "s.disklab"
    done = disklab("export", "travel", "--format", "bundle", "-o", str(bundle), data=here)
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".s.disklab")] == []

    first = disklab("import", str(bundle), data=there)
    assert first.returncode == 0, first.stderr
    again = disklab("import", str(bundle), data=there)
    assert again.returncode == 0 and "already in the library" in again.stdout

    a, b = shown("travel", here), shown("travel", there)
    assert b["results"] == a["results"] and b["results"]
    assert b["session"]["host"] == a["session"]["host"] and a["session"]["host"]["hostname"]
    assert b["session"]["uuid"] == a["session"]["uuid"]
    assert b["session"]["plan_text"] == a["session"]["plan_text"]
    with Library.open(here / "disklab" / "library.sqlite3") as src, \
            Library.open(there / "disklab" / "library.sqlite3") as dst:
        assert len(dst.list_sessions()) == 1
        sa, sb = src.find_session("travel")["id"], dst.find_session("travel")["id"]
        runs_a, runs_b = src.runs(sa), dst.runs(sb)
        assert [(r["case_id"], r["argv"], r["status"]) for r in runs_b] == \
            [(r["case_id"], r["argv"], r["status"]) for r in runs_a]
        for r in runs_a:
            assert dst.transcript(sb, r["case_id"], r["repeat"]) == \
                src.transcript(sa, r["case_id"], r["repeat"])
        assert [(s["series"], s["t"], s["value"]) for s in dst.samples(sb)] == \
            [(s["series"], s["t"], s["value"]) for s in src.samples(sa)]
        assert len(src.samples(sa)) > 0
        assert dst.events(sb) == src.events(sa)


def test_a_bundle_from_a_newer_disklab_is_refused_in_one_line(tmp_path: Path) -> None:
    bundle = tmp_path / "new.disklab"
    db = sqlite3.connect(bundle)
    db.execute("CREATE TABLE session (id INTEGER PRIMARY KEY)")
    db.execute(f"PRAGMA user_version = {schema.CURRENT + 1}")
    db.commit()
    db.close()
    done = disklab("import", str(bundle), data=tmp_path)
    assert done.returncode == 2
    *made, refused = done.stderr.splitlines()  # the library is made to merge into: said
    assert [m.split(" at ")[0] for m in made] in ([], ["disklab: created a new library"])
    assert "Traceback" not in done.stderr
    assert "newer DiskLab" in refused and "upgrade" in refused


def _two_hosts(tmp_path: Path) -> tuple[Path, Path]:
    """Two libraries, each a session of one case recorded on its own host."""
    case = Case("c-dd-1", 0, "as is", "dd", 0, {"bs": 1048576})
    paths = []
    for name, host, kernel, values in (("laptop", "laptop", "6.1.0", (100.0, 110.0, 105.0)),
                                       ("array", "array1", "6.12.9", (200.0, 210.0, 190.0))):
        path = tmp_path / f"{name}.sqlite3"
        with Library.open(path) as lib:
            record_session(lib, [(case, [(Metric("write", v, "B/s"),) for v in values])],
                           name=name, host={"hostname": host, "kernel": kernel,
                                            "cpu_count": 4})
        paths.append(path)
    return paths[0], paths[1]


def test_merging_another_library_then_comparing_two_hosts_names_what_differs(
        tmp_path: Path) -> None:
    laptop, array = _two_hosts(tmp_path)
    merged = disklab("import", str(array), "--library", str(laptop))
    assert merged.returncode == 0, merged.stderr
    assert disklab("import", str(array), "--library", str(laptop)).returncode == 0
    with Library.open(laptop) as lib:
        assert sorted(s["name"] for s in lib.list_sessions()) == ["array", "laptop"]
    done = disklab("compare", "laptop", "array", "--library", str(laptop))
    assert done.returncode == 0, done.stderr
    head = done.stdout.split("|")[0]
    assert "hostname" in head and "laptop" in head and "array1" in head
    assert "6.1.0" in head and "6.12.9" in head
    assert "cpu_count" not in head  # the same on both: not said
