"""page_cache_limit in a plan: its values, the memory controller it needs, and the page-cache
warning measured against the limit. The controller is found by the real finder, pointed at a
directory laid out as /proc and /sys are (the "missing" case) or at this machine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.plan.parse import parse_plan
from disklab.core.system.cgroups import find_memory_controller, group_name
from disklab.core.vocab.errors import PlanError

PLAN = """\
name = "limited"
{top}
[target]
directory = "{directory}"

[[test]]
tool = "engine"
mode = "read"
size = "200m"
{test}
"""


def plan(directory: Path, top: str = 'page_cache_limit = "128m"', test: str = "") -> str:
    return PLAN.format(directory=directory, top=top, test=test)


def fake_root(tmp_path: Path, mountinfo: str, cgroup: str) -> Path:
    """A directory with proc/self/mountinfo and proc/self/cgroup, as the finder reads them."""
    root = tmp_path / "root"
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/mountinfo").write_text(mountinfo)
    (root / "proc/self/cgroup").write_text(cgroup)
    return root


# this machine's kind of layout, without the v1 memory hierarchy: nothing can limit memory
NO_MEMORY = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""


def test_bad_values_name_the_key_and_line(tmp_path: Path) -> None:
    text = plan(tmp_path, top='page_cache_limit = "lots"',
                test='page_cache_limit = "1k"')
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    problems = {(p.key, p.line): p.message for p in e.value.problems}
    assert "is not a size" in problems[("page_cache_limit", 2)]
    assert "below the minimum 32m" in problems[("test[1].page_cache_limit", 10)]


def test_cli_plan_validate_exits_2_on_a_bad_limit(tmp_path: Path) -> None:
    path = tmp_path / "plan.toml"
    path.write_text(plan(tmp_path, top="page_cache_limit = true"))
    done = subprocess.run([sys.executable, "-m", "disklab.cli.main", "plan", "validate",
                           str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "line 2: page_cache_limit: True is not a size" in done.stderr
    assert "Traceback" not in done.stderr


def test_no_memory_controller_is_an_error_naming_the_key(tmp_path: Path) -> None:
    root = fake_root(tmp_path, NO_MEMORY, "1:cpu:/\n0::/\n")
    (root / "sys/fs/cgroup/unified").mkdir(parents=True)
    (root / "sys/fs/cgroup/unified/cgroup.controllers").write_text("cpu io pids\n")
    assert find_memory_controller(root) is None
    with pytest.raises(PlanError) as e:
        parse_plan(plan(tmp_path, top="", test='page_cache_limit = "256m"'),
                   cgroup_root=str(root))
    (problem,) = e.value.problems
    assert (problem.key, problem.line) == ("test[1].page_cache_limit", 10)
    assert "no memory cgroup controller is available" in problem.message
    # an empty directory (no /proc at all) is missing too
    assert find_memory_controller(tmp_path / "nothing") is None


def test_a_v2_memory_controller_is_found_and_groups_go_beside_this_process(
        tmp_path: Path) -> None:
    mountinfo = "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
    root = fake_root(tmp_path, mountinfo, "0::/user.slice/session-1.scope\n")
    top = root / "sys/fs/cgroup"
    own = top / "user.slice/session-1.scope"
    own.mkdir(parents=True)
    for d in (top, top / "user.slice", own):
        (d / "cgroup.controllers").write_text("cpu io memory pids\n")
    (own / "cgroup.subtree_control").write_text("\n")
    found = find_memory_controller(root)
    assert found is not None and found.version == 2
    # the session's own group holds processes: v2 allows no children with controllers there
    assert found.base == top / "user.slice"
    assert found.limit_files(128 << 20) == [("memory.high", "134217728"),
                                            ("memory.max", "134217728")]
    (own / "cgroup.subtree_control").write_text("memory\n")
    found = find_memory_controller(root)
    assert found is not None and found.base == own


def test_this_machine_has_a_memory_controller_and_a_limited_plan_is_valid(
        tmp_path: Path) -> None:
    found = find_memory_controller()
    if found is None:
        pytest.skip("no memory cgroup controller on this machine")
    assert found.base.is_dir() and found.mountpoint in (found.base, *found.base.parents)
    checked = parse_plan(plan(tmp_path))
    assert checked.plan.page_cache_limit == 128 << 20
    assert checked.plan.page_cache_limit_of(0) == 128 << 20
    assert group_name("abc-r1", 42) == "disklab-42-abc-r1"
    assert group_name("a/b c", 42) == "disklab-42-a_b_c"


def test_the_page_cache_warning_compares_the_file_with_the_limit(tmp_path: Path) -> None:
    if find_memory_controller() is None:
        pytest.skip("no memory cgroup controller on this machine")
    warned = [w.message for w in parse_plan(plan(tmp_path)).warnings]
    assert any("below 2 x page_cache_limit (256m)" in w for w in warned), warned
    # a per-test limit overrides the plan's: 200m is more than 2 x 64m, no warning
    quiet = parse_plan(plan(tmp_path, test='page_cache_limit = "64m"'))
    assert quiet.plan.tests[0].page_cache_limit == 64 << 20
    assert not any("page cache" in w.message for w in quiet.warnings)
    # without a limit, RAM is the measure again
    unlimited = parse_plan(plan(tmp_path, top=""))
    assert any("below 2 x RAM" in w.message for w in unlimited.warnings)


IOZONE_THREADS = """\
name = "threads share one cgroup"
page_cache_limit = "256m"
[target]
directory = "{directory}"

[[test]]
tool = "iozone"
auto = false
tests = ["write", "read"]
file_size = "256m"
record_size = "1m"
threads = {threads}
"""


@pytest.mark.parametrize(("threads", "warned"), [(1, True), (4, False), (8, False)])
def test_the_page_cache_warning_counts_every_thread_of_a_case(
        tmp_path: Path, threads: int, warned: bool) -> None:
    """4 iozone threads on 256m files touch 1 GiB, which a 256m limit cannot hold: no warning
    (the journal-size study's 4- and 8-thread runs were warned about falsely)."""
    if find_memory_controller() is None:
        pytest.skip("no memory cgroup controller on this machine")
    checked = parse_plan(IOZONE_THREADS.format(directory=tmp_path, threads=threads))
    cache = [w.message for w in checked.warnings if "page cache" in w.message]
    assert bool(cache) is warned, cache
    if warned:
        assert "on a 256m file, below 2 x page_cache_limit (512m)" in cache[0]


def test_the_page_cache_warning_counts_engine_streams(tmp_path: Path) -> None:
    if find_memory_controller() is None:
        pytest.skip("no memory cgroup controller on this machine")
    two = parse_plan(plan(tmp_path, top='page_cache_limit = "256m"', test="streams = 2"))
    assert [w.message for w in two.warnings if "page cache" in w.message] == [
        "buffered test (direct = false) on 2 files of 200m (400m), below 2 x page_cache_limit "
        "(512m): its read figures will come from the page cache"]
    three = parse_plan(plan(tmp_path, top='page_cache_limit = "256m"', test="streams = 3"))
    assert not [w for w in three.warnings if "page cache" in w.message]


PLACED = """\
name = "placed streams share one cgroup"
page_cache_limit = "256m"
[targets.a]
directory = "{a}"
[targets.b]
directory = "{b}"

[[test]]
tool = "engine"
mode = "read"
size = "200m"
on = ["a", "a+b"]
"""


def test_the_page_cache_warning_counts_the_streams_of_a_placement(tmp_path: Path) -> None:
    if find_memory_controller() is None:
        pytest.skip("no memory cgroup controller on this machine")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    checked = parse_plan(PLACED.format(a=tmp_path / "a", b=tmp_path / "b"))
    # the first placement (one stream on a) is warned about; a+b reads 400m, also below 512m
    cache = [w.message for w in checked.warnings if "page cache" in w.message]
    assert cache and "on a 200m file" in cache[0]
    wide = parse_plan(PLACED.format(a=tmp_path / "a", b=tmp_path / "b")
                      .replace('on = ["a", "a+b"]', 'on = "a+b+a"'))
    assert not [w for w in wide.warnings if "page cache" in w.message]
