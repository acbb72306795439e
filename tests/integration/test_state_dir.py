"""Crash-recovery records live in the XDG state directory ($XDG_STATE_HOME/disklab), not beside
the library: a run started with any library finds and cleans what a killed run left there."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from disklab.core.fs.apply import STATE_PREFIX
from disklab.core.library import Library
from disklab.core.plan.parse import parse_plan
from disklab.core.run.recorded import RecordedRun
from disklab.core.system.directories import state_dir
from disklab.core.vocab.events import Notice
from tests.helpers import engine_plan


def test_state_dir_is_the_xdg_state_directory(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert state_dir() == tmp_path / "state" / "disklab"
    assert state_dir().is_dir()


def test_a_run_cleans_records_left_in_the_state_directory(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    left = state_dir() / f"{STATE_PREFIX}999999999.json"
    # a killed run's record (its pid is gone) with a step DiskLab no longer knows: recovery
    # reports it and removes the record without touching the system
    left.write_text(json.dumps({"version": 1, "pid": 999999999, "create_time": 1.0,
                                "started": 1.0, "steps": [{"kind": "nothing-to-undo"}]}))
    work = tmp_path / "work"
    work.mkdir()
    checked = parse_plan(engine_plan(work, runtime="0.2s"), path=str(tmp_path / "p.toml"))
    library_dir = tmp_path / "lib"
    with Library.open(library_dir / "library.sqlite3") as lib, \
            RecordedRun(checked.plan, lib) as run:
        notices = [e.message for e in run if isinstance(e, Notice)]
    assert run.status == "finished"
    assert any("cleaned up after an earlier run" in m and "pid 999999999" in m for m in notices)
    assert not left.exists()
    assert not list(library_dir.glob(f"{STATE_PREFIX}*")), "nothing beside the library"
    assert os.listdir(state_dir()) == []
