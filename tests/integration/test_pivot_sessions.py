"""The tables of several targets and several hosts, as `disklab compare --rows/--columns` lays
them out from a real session: dd placed "a" and "a+b" on two scratch directories (a row per
placement, a column per target and the aggregate "all"), and fio against two real fio servers on
127.0.0.41/.42 (the host-scaling table: a row per set of hosts, a column per host and "all")."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from disklab.core import proc
from disklab.core.resources import resource
from tests.helpers import loopback
from tests.integration.test_hosts import PORT, Server, fio_processes, start_server

pytestmark = [pytest.mark.slow]

PLACED = """\
name = "two targets"
repeats = 2

[targets.a]
directory = "{a}"
[targets.b]
directory = "{b}"

[[test]]
tool = "dd"
mode = "write"
block_size = "1m"
size = "4m"
on = ["a", "a+b"]

[report]
rows = ["on"]
columns = ["target"]
metrics = ["write"]
"""


def disklab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab.cli.main", *args],
                          capture_output=True, text=True, timeout=180)


def compare(library: Path, *args: str) -> dict[str, Any]:
    done = disklab("compare", "1", *args, "--format", "json", "--library", str(library))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout)


def figures(doc: dict[str, Any]) -> dict[tuple[str, str], float]:
    """(row, column) -> the cell's mean, for every filled cell."""
    return {(r, c): cell["mean"] for r, line in zip(doc["rows"], doc["cells"], strict=True)
            for c, cell in zip(doc["columns"], line, strict=True) if cell is not None}


def test_several_targets_give_the_placement_table(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(PLACED.format(a=a, b=b))
    library = tmp_path / "lib" / "lib.sqlite3"
    library.parent.mkdir()
    done = disklab("run", str(plan), "--library", str(library))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    doc = compare(library, "--rows", "on", "--columns", "test", "--metric", "write")
    assert doc["rows"] == ["on=a", "on=a+b"]
    # the target varies inside a placement: the pivot adds it to the columns and says so
    assert doc["added_keys"] == ["target"]
    cells = figures(doc)
    assert set(cells) == {("on=a", "write / target=a"), ("on=a", "write / target=all"),
                          ("on=a+b", "write / target=a"), ("on=a+b", "write / target=b"),
                          ("on=a+b", "write / target=all")}
    assert all(v > 0 for v in cells.values())
    # the plan's own [report] is the table `disklab compare` opens on
    opened = compare(library)
    assert opened["rows"] == ["on=a", "on=a+b"]
    assert opened["columns"] == ["target=a", "target=b", "target=all"]  # "all" after them
    # `disklab show --json`: a row per target and the aggregate
    shown = disklab("show", "1", "--json", "--library", str(library))
    assert shown.returncode == 0, shown.stderr
    targets = {(r["params"]["on"], r["params"]["target"]) for r in json.loads(shown.stdout)
               ["results"] if r["metric"] == "write"}
    assert targets == {("a", "a"), ("a", "all"), ("a+b", "a"), ("a+b", "b"), ("a+b", "all")}
    assert not [p for d in (a, b) for p in d.iterdir()]  # the runs' files are gone


@pytest.fixture
def two_servers(tmp_path: Path) -> Iterator[list[Server]]:
    if proc.which("fio") is None:
        pytest.skip("fio is not installed")
    started: list[Server] = []
    try:
        for i, address in enumerate((loopback(41), loopback(42)), start=1):
            started.append(start_server(f"h{i}", address, tmp_path))
        yield started
    finally:
        for s in started:
            s.kill()
        addresses = [s.address for s in started]
        deadline = time.monotonic() + 10
        while fio_processes(addresses) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert fio_processes(addresses) == []


def test_several_hosts_give_the_scaling_table(tmp_path: Path,
                                              two_servers: list[Server]) -> None:
    text = f'name = "two hosts"\n[target]\ndirectory = "{tmp_path}"\n'
    for s in two_servers:
        text += (f'[hosts.{s.name}]\naddress = "{s.address}"\nport = {PORT}\n'
                 f'start = "running"\ndirectory = "{s.directory}"\n')
    text += ('[[test]]\ntool = "fio"\nrw = "write"\nbs = "64k"\nsize = "8m"\n'
             'hosts = [["h1"], ["h1", "h2"]]\n')
    # the fio-host-scaling preset's table
    report = tomllib.loads(resource("presets", "fio-host-scaling.toml").read_text())["report"]
    assert report == {"rows": ["hosts"], "columns": ["host"], "metrics": ["write"]}
    text += '[report]\nrows = ["hosts"]\ncolumns = ["host"]\nmetrics = ["write"]\n'
    plan = tmp_path / "plan.toml"
    plan.write_text(text)
    library = tmp_path / "lib" / "lib.sqlite3"
    library.parent.mkdir()
    done = disklab("run", str(plan), "--library", str(library))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    doc = compare(library, "--rows", "hosts", "--columns", "host", "--metric", "write")
    assert doc["rows"] == ["hosts=h1", "hosts=h1+h2"]
    assert doc["columns"] == ["host=h1", "host=h2", "host=all"]  # the aggregate last
    cells = figures(doc)
    assert set(cells) == {("hosts=h1", "host=h1"), ("hosts=h1", "host=all"),
                          ("hosts=h1+h2", "host=h1"), ("hosts=h1+h2", "host=h2"),
                          ("hosts=h1+h2", "host=all")}
    assert all(v > 0 for v in cells.values())
    opened = compare(library)
    # the plan's [report] (the preset's): the same table
    assert (opened["rows"], opened["columns"]) == (doc["rows"], doc["columns"])
