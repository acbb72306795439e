"""Several targets in a plan: `[targets.NAME]`, the placement axis `on`, configurations limited
to some targets, partitions; every mistake is exit 2 naming the key and its line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from disklab.cli.main import main
from disklab.core.plan.matrix import expand, run_count
from disklab.core.plan.parse import parse_plan
from disklab.core.plan.targets import stream_targets
from disklab.core.run.planning import plan_runs

TWO = """\
name = "two"
[targets.a]
directory = "{a}"
[targets.b]
directory = "{b}"

[[test]]
tool = "{tool}"
{params}
on = {on}
"""

PARAMS = {
    "iozone": 'tests = ["write", "read"]\nfile_size = "4m"\nrecord_size = "64k"',
    "engine": 'mode = "write"\nsize = "4m"',
    "dd": 'mode = "write"\nsize = "4m"',
    "fio": 'rw = "write"\nsize = "4m"\nbs = "1m"',
}


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name in "ab":
        out[name] = tmp_path / name
        out[name].mkdir()
    return out


def plan_text(dirs: dict[str, Path], tool: str = "engine", on: str = '["a", "a+b", "a+a"]'
              ) -> str:
    return TWO.format(tool=tool, params=PARAMS[tool], on=on, **dirs)


def test_on_is_an_axis_and_a_plain_parameter(dirs: dict[str, Path]) -> None:
    plan = parse_plan(plan_text(dirs)).plan
    cases = expand(plan)
    assert [c.params["on"] for c in cases] == ["a", "a+b", "a+a"]
    assert len({c.id for c in cases}) == 3
    assert list(plan.targets) == ["a", "b"]
    assert plan.target.path == str(dirs["a"])  # the first target stands for the plan's


@pytest.mark.parametrize("tool", sorted(PARAMS))
def test_each_tool_puts_one_stream_on_each_named_target(dirs: dict[str, Path],
                                                        tool: str) -> None:
    plan = parse_plan(plan_text(dirs, tool, '"a+b+b"')).plan
    (run,) = list(plan_runs(plan))
    command = run.command
    argvs = [argv for _name, argv in command.group] or [command.argv]
    words = " ".join(" ".join(a) for a in argvs)
    # one file per stream: one on a, two on b
    assert len(re.findall(re.escape(str(dirs["a"])) + r"/disklab-\S+", words)) == 1, words
    if tool == "fio":  # --directory per job, --filename in it
        assert words.count(f"--directory={dirs['b']}") == 2
    else:
        assert len(re.findall(re.escape(str(dirs["b"])) + r"/disklab-\S+", words)) == 2, words
    data = [f for f in command.files if not f.endswith(".json")]
    assert len(data) == 3 and len(set(data)) == 3
    if tool == "dd":  # three processes, released together by the runner
        assert [name for name, _argv in command.group] == ["a", "b", "b"]


BAD = [
    ('on = ["a", "c"]', "test[1].on", "'c' in 'c' is not a target of this plan"),
    ('on = "a+"', "test[1].on", "has an empty name"),
    ('on = ["a", "b+zz"]', "test[1].on", "'zz' in 'b+zz' is not a target"),
    ('on = 3', "test[1].on", "not a placement"),
]


@pytest.mark.parametrize(("line", "key", "message"), BAD)
def test_bad_placements(dirs: dict[str, Path], tmp_path: Path, line: str, key: str | None,
                        message: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    text = plan_text(dirs).replace('on = ["a", "a+b", "a+a"]', line)
    plan = tmp_path / "plan.toml"
    plan.write_text(text)
    status = main(["plan", "validate", str(plan), "--library", str(tmp_path / "l.db")])
    err = capsys.readouterr().err
    if key is None:
        assert status == 0, err
        return
    assert status == 2
    number = text.splitlines().index(line) + 1
    assert f"line {number}: {key}: " in err and message in err, err
    assert "Traceback" not in err


def test_other_plan_errors_name_their_key(dirs: dict[str, Path], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        # a tool that cannot spread its streams
        plan_text(dirs).replace('tool = "engine"\nmode = "write"\nsize = "4m"',
                                'tool = "bonnie"\nsize = "64m"'): ("test[1].on", "bonnie"),
        # partitions on a directory
        plan_text(dirs).replace(f'directory = "{dirs["b"]}"',
                                f'directory = "{dirs["b"]}"\npartitions = 2'):
            ("targets.b.partitions", "image or format"),
        # two targets on one path
        plan_text(dirs).replace(str(dirs["b"]), str(dirs["a"])): ("targets.", "another target"),
        # both [target] and [targets]
        f'[target]\ndirectory = "{dirs["a"]}"\n' + plan_text(dirs): ("targets", "not both"),
        # a bad name
        plan_text(dirs).replace("[targets.b]", "[targets.B2]").replace('"a+b"', '"a"'):
            ("targets.B2", "not a target name"),
        # the aggregate's name: its rows would be the placed case's "all" rows
        plan_text(dirs).replace("[targets.b]", "[targets.all]").replace('"a+b"', '"a"'):
            ("targets.all", "aggregate"),
        # a missing directory, told at the target's own key
        plan_text(dirs).replace(str(dirs["b"]), str(tmp_path / "nowhere")):
            ("targets.b.directory", "does not exist"),
    }
    for text, (key, message) in cases.items():
        plan = tmp_path / "plan.toml"
        plan.write_text(text)
        assert main(["plan", "validate", str(plan), "--library", str(tmp_path / "l.db")]) == 2
        err = capsys.readouterr().err
        assert key in err and message in err, (key, err)
        assert re.search(r"line \d+: " + re.escape(key), err), err


IMAGES = """\
[targets.a]
image = {{ path = "{tmp}/a.img", size = "256m" }}
[targets.p]
image = {{ path = "{tmp}/p.img", size = "256m" }}
partitions = 3

[[config]]
label = "all"
fs = "ext4"

[[config]]
label = "some"
fs = "ext4"
targets = {limit}

[[test]]
tool = "engine"
mode = "write"
size = "4m"
on = ["a", "p1+p2", "p3"]
"""


def test_partitions_are_targets_and_configs_can_be_limited(tmp_path: Path) -> None:
    plan = parse_plan(IMAGES.format(tmp=tmp_path, limit='["a", "p"]')).plan
    assert list(stream_targets(plan.targets)) == ["a", "p1", "p2", "p3"]
    assert plan.configs[1].targets == ("a", "p1", "p2", "p3")  # "p" stands for its partitions
    plan = parse_plan(IMAGES.format(tmp=tmp_path, limit='["p1", "p2"]')).plan
    runs = [(c.config, c.params["on"]) for c in expand(plan)]
    assert runs == [("all", "a"), ("all", "p1+p2"), ("all", "p3"), ("some", "p1+p2")]


def test_a_config_limited_to_unknown_targets_is_refused(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    plan = tmp_path / "plan.toml"
    text = IMAGES.format(tmp=tmp_path, limit='["q"]')
    plan.write_text(text)
    assert main(["plan", "validate", str(plan), "--library", str(tmp_path / "l.db")]) == 2
    err = capsys.readouterr().err
    number = next(i for i, line in enumerate(text.splitlines(), start=1)
                  if line.startswith("targets = "))
    assert f"line {number}: config[2].targets: 'q' is not a target" in err, err


def test_a_target_must_hold_the_files_placed_on_it(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    text = (IMAGES.format(tmp=tmp_path, limit='["a"]').replace('size = "4m"', 'size = "50m"')
            .replace('"p3"]', '"p3+p3"]'))
    plan = tmp_path / "plan.toml"
    plan.write_text(text)
    assert main(["plan", "validate", str(plan), "--library", str(tmp_path / "l.db")]) == 2
    err = capsys.readouterr().err
    # two 50 MiB files on p3, a third of a 256 MiB image: refused before anything is made
    assert "test[1].on: 'p3+p3' puts 105 MB of test files on p3, more than the size of" in err
    assert "/ 3 partitions (89.5 MB)" in err, err  # 100 MiB, 85.3 MiB
    plan.write_text(text.replace('"p3+p3"]', '"p3"]'))
    assert main(["plan", "validate", str(plan), "--library", str(tmp_path / "l.db")]) == 0


def test_runs_are_counted_as_expanded_with_limited_configs(tmp_path: Path) -> None:
    text = "repeats = 3\n" + IMAGES.format(tmp=tmp_path, limit='["p1", "p2"]')
    plan = parse_plan(text).plan
    # "all" runs the three placements, "some" only p1+p2: four cases, three rounds
    assert len(expand(plan)) == 4
    assert run_count(plan) == 12
