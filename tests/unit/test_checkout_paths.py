"""A fresh clone runs its tests whole: no test reads a path outside the checkout and its
temporary directories. A test that names the build machine's own layout (a folder beside the
checkout, a home directory) finds nothing on another machine and skips or fails there; what a
test reads is copied under tests/fixtures with its source and licence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
TESTS = CHECKOUT / "tests"
# recorded outputs name the paths of the machine they were captured on (/mnt/scratch/fs): data
RECORDED = TESTS / "fixtures"

# the shared material beside the checkout, or a climb joined on as a path part (`/ ".."`);
# a "../" inside a value is hostile input to a program that must refuse it, and is let be
BESIDE = re.compile(r"""\.\./shared\b|/\s*["']\.\.["']|["']shared["']\s*/""")
# a home or work directory of a machine: /work/..., /home/..., /Users/...
HOMES = re.compile(r"""(?<![\w.~-])/(?:work|home|Users)/""")
# a climb from the test file: Path(__file__)[.resolve()] then .parents[N] / .parent steps
CLIMB = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?((?:\.parents\[\d+\]|\.parent\b)+)")
STEP = re.compile(r"\.parents\[(\d+)\]|\.parent\b")


def levels_up(steps: str) -> int:
    """How many folders up from the file `.parents[N]` and `.parent` steps lead (the file's own
    folder is 1: a file at tests/gui/x.py stays in the checkout up to 3)."""
    return sum(int(n) + 1 if n else 1 for n in STEP.findall(steps))


def outside_paths(text: str, relative: Path) -> list[str]:
    """Each place in `text` (a file at `relative` in the checkout) that names a path outside
    the checkout, as 'line N: the words'."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        named = [m.group(0) for m in (*BESIDE.finditer(line), *HOMES.finditer(line))]
        named += [m.group(0) for m in CLIMB.finditer(line)
                  if levels_up(m.group(1)) > len(relative.parts)]
        found += [f"line {n}: {what}" for what in named]
    return found


def test_the_checker_sees_each_way_out_and_lets_the_machines_own_paths_be() -> None:
    here = Path("tests/gui/test_x.py")
    out = ['SWEEP = Path("/work/shared/fixtures/fio-plot-sweep")',
           'SWEEP = Path(__file__).resolve().parents[3] / "shared" / "fixtures"',
           'SWEEP = Path(__file__).parents[2].parent / "fixtures"',
           "# the studies' presets (../shared/studies)",
           'ROOT / ".." / "x"', 'open("/home/anna/fio.json")']
    for line in out:
        assert outside_paths(line, here), line
    inside = ['ROOT = Path(__file__).resolve().parents[2]', 'FIXTURES / "fio-plot-sweep"',
              'Path("/var/tmp/disklab-x.img")', 'Path("/proc/self/mountinfo")',
              'image=f"{w.user.home}/../../etc/x"', 'Path("/run/sshd")', '"/tmp/a"',
              '"/root/disklab-evil"', 'Path(__file__).parent / "fixtures"']
    assert [line for line in inside if outside_paths(line, here)] == []


def test_no_test_names_a_path_outside_the_checkout() -> None:
    me = Path(__file__).resolve()
    files = [p for p in sorted(TESTS.rglob("*")) if p.is_file() and p != me
             and RECORDED not in p.parents and "__pycache__" not in p.parts]
    assert len(files) > 100  # the test files themselves, not an empty folder
    found = {}
    for path in files:
        relative = path.relative_to(CHECKOUT)
        named = outside_paths(path.read_text(errors="replace"), relative)
        if named:
            found[relative.as_posix()] = named
    assert not found, "copy what a test reads under tests/fixtures: " + repr(found)


@pytest.mark.parametrize("folder", sorted(p.name for p in RECORDED.iterdir() if p.is_dir()))
def test_every_copied_fixture_folder_says_where_it_comes_from(folder: str) -> None:
    assert (RECORDED / folder / "README.md").is_file()
