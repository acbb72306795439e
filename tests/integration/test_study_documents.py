"""What the documents of a study say, through the CLI (issue 49, point 9): the HTML of a
session carries its [report] title, Markdown writes 'p < 0.05' as it is (never '&lt;'), and
iozone's per-process figures that are not a spread are flagged wherever they are compared
(text, Markdown, JSON), as `disklab show` flags them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import FIXTURES

TITLED = """\
name = "titled study"
repeats = 2
[target]
directory = "{directory}"
[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = "1m"
size = "4m"
direct = false
[report]
title = "Table 3: write then read (p < 0.05)"
rows = ["mode"]
columns = ["config"]
"""
DEGENERATE = FIXTURES / "iozone" / "throughput_t2_r1m_s4m_degenerate.txt"


def disklab(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "disklab", *argv], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def titled(tmp_path: Path) -> Path:
    """A real engine session whose plan's [report] has a title, in its own library."""
    target = tmp_path / "t"
    target.mkdir()
    plan = tmp_path / "titled.toml"
    plan.write_text(TITLED.format(directory=target))
    library = tmp_path / "lib.sqlite3"
    done = disklab("run", "--library", str(library), str(plan))
    assert done.returncode == 0, done.stderr[-2000:]
    return library


def test_the_session_html_says_its_report_title(titled: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.html"
    done = disklab("export", "1", "--format", "html", "-o", str(out), "--library", str(titled))
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    said = "Table 3: write then read (p &lt; 0.05)"  # HTML's own escape of '<'
    assert f"<title>DiskLab session 1: titled study — {said}</title>" in page
    assert f"<h1>DiskLab session 1: titled study — {said}</h1>" in page


def test_markdown_writes_p_below_alpha_as_it_is(titled: Path) -> None:
    done = disklab("compare", "1", "--rows", "config", "--columns", "mode", "--baseline",
                   "mode=write", "--format", "md", "--library", str(titled))
    assert done.returncode == 0, done.stderr
    assert "Welch's t-test, p < 0.05)" in done.stdout
    assert "&lt;" not in done.stdout
    head = disklab("compare", "1", "--format", "md", "--library", str(titled)).stdout
    assert head.startswith("## Table 3: write then read (p < 0.05)\n")


def test_degenerate_per_process_figures_are_flagged_where_compared(tmp_path: Path) -> None:
    library = str(tmp_path / "lib.sqlite3")
    done = disklab("import", "--library", library, str(DEGENERATE))
    assert done.returncode == 0, done.stderr
    shown = " ".join(disklab("show", "1", "--library", library).stdout.split())
    note = "iozone printed min = max > avg per process"
    assert note in shown  # as `show` has it
    for fmt in ("text", "md"):
        out = disklab("compare", "1", "--metric", "min_proc", "--format", fmt,
                      "--library", library)
        assert out.returncode == 0, out.stderr
        text = " ".join(out.stdout.split())
        # write's flagged, rewrite's not (3449 and 2201 MiB/s: the default units are SI)
        assert "3616 ‡" in text and "2308 ‡" not in text, text
        assert f"‡ {note}" in text
    doc = json.loads(disklab("compare", "1", "--metric", "min_proc", "--format", "json",
                             "--library", library).stdout)
    write, rewrite = doc["cells"][0]
    assert any(n.startswith(note) for n in write["notes"]) and rewrite["notes"] == []
    assert note in doc["note"]
