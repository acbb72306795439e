"""What a script and a newcomer read (issue 46): sessions --json has each session's uuid;
presets, plan validate and plan show have --json; presets fit 80 columns on a pipe; the quick
preset's description agrees with its estimate, and its runs are long enough for a verdict
(every row said "too short to judge: 0.22 s")."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from disklab.core.library import Library


def disklab(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in {**os.environ, **(env or {})}.items()
                               if k != "COLUMNS"})


def test_presets_fit_80_columns_on_a_pipe_and_have_json() -> None:
    table = disklab("presets")
    assert table.returncode == 0, table.stderr
    assert max(len(line) for line in table.stdout.splitlines()) <= 80
    doc = json.loads(disklab("presets", "--json").stdout)
    assert doc["format"] == "disklab.presets"
    quick = next(p for p in doc["presets"] if p["name"] == "quick")
    assert "half a minute" in quick["description"] and 15 <= quick["estimate_s"] <= 45


def test_presets_json_gives_whole_descriptions() -> None:
    """The JSON gave descriptions cut at 110 characters with an ellipsis, as the table does;
    a script reads the whole first sentence."""
    doc = json.loads(disklab("presets", "--json").stdout)
    quick = next(p for p in doc["presets"] if p["name"] == "quick")
    assert len(quick["description"]) > 110 and quick["description"].endswith(".")
    assert not any(p["description"].endswith("…") for p in doc["presets"])
    assert "…" in disklab("presets").stdout  # the table still shortens them


def test_plan_validate_and_show_have_json(tmp_path: Path) -> None:
    valid = disklab("plan", "validate", "quick", "--json", "--library", str(tmp_path / "l"))
    doc = json.loads(valid.stdout)
    assert valid.returncode == 0 and doc["valid"] is True and doc["runs"] == 8
    assert doc["tools"][0]["tool"] == "engine"
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[target]\ndirectory = "/tmp"\n[[test]]\ntool = "engine"\n'
                   'mode = "write"\nblock_size = "banana"\nsize = "1m"\n')
    invalid = disklab("plan", "validate", str(bad), "--json")
    doc = json.loads(invalid.stdout)
    assert invalid.returncode == 2 and doc["valid"] is False
    assert any(p["key"].endswith("block_size") and p["line"] == 7 for p in doc["problems"])
    invalid_show = disklab("plan", "show", str(bad), "--json")
    doc = json.loads(invalid_show.stdout)  # was text: 'plan show --json' of a bad plan
    assert invalid_show.returncode == 2 and doc["valid"] is False, invalid_show.stdout
    assert any(p["key"].endswith("block_size") and p["line"] == 7 for p in doc["problems"])
    shown = json.loads(disklab("plan", "show", "quick", "--json").stdout)
    assert shown["format"] == "disklab.plan" and len(shown["cases"]) == 4
    assert all("--runtime" in c["argv"] for c in shown["cases"])


def test_the_quick_preset_gives_verdicts_and_sessions_json_has_uuids(tmp_path: Path) -> None:
    library = tmp_path / "l.sqlite3"
    work = tmp_path / "work"
    work.mkdir()
    ran = disklab("run", "quick", "--target", str(work), "--library", str(library), "-q")
    assert ran.returncode == 0, ran.stderr
    shown = json.loads(disklab("show", "1", "--json", "--library", str(library)).stdout)
    kinds = {v["kind"] for r in shown["results"] for v in r["limited_by"]}
    assert kinds and "too_short" not in kinds, kinds
    listed = json.loads(disklab("sessions", "--json", "--library", str(library)).stdout)
    (session,) = listed["sessions"]
    assert re.fullmatch(r"[0-9a-f]{32}", session["uuid"])
    with Library.open(library) as lib:
        assert lib.db.execute("SELECT uuid FROM session").fetchone()[0] == session["uuid"]
