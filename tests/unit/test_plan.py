"""Plans: every problem reported at once with key and line; cases and ids stable."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from disklab.cli.main import main
from disklab.core import tools
from disklab.core.plan.matrix import expand
from disklab.core.plan.parse import case_params, parse_plan
from disklab.core.tools.base import REQUIRED
from disklab.core.vocab.errors import PlanError

GOOD = """\
name = "quick look"
repeats = 2
drop_caches = false
stop_on_failure = false

[target]
directory = "{dir}"

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = ["1m", "64k"]
size = "256m"
streams = 1
queue_depth = 1
direct = true

[[test]]
tool = "dd"
mode = ["write", "read"]
block_size = "1m"
size = "256m"
direct = true
"""


def test_the_issue_plan_gives_six_cases_in_nested_loop_order(tmp_path: Path) -> None:
    checked = parse_plan(GOOD.format(dir=tmp_path))
    cases = expand(checked.plan)
    assert [(c.tool, c.params["mode"], c.params.get("block_size")) for c in cases] == [
        ("engine", "write", 1 << 20),
        ("engine", "write", 64 << 10),
        ("engine", "read", 1 << 20),
        ("engine", "read", 64 << 10),
        ("dd", "write", 1 << 20),
        ("dd", "read", 1 << 20),
    ]
    assert cases[0].params["size"] == 256 << 20
    assert len({c.id for c in cases}) == 6


def test_case_ids_survive_reordering_the_tests(tmp_path: Path) -> None:
    text = GOOD.format(dir=tmp_path)
    first, second = text.split("[[test]]")[1:]
    swapped = text.split("[[test]]")[0] + "[[test]]" + second + "\n[[test]]" + first
    ids = {c.id for c in expand(parse_plan(text).plan)}
    assert ids == {c.id for c in expand(parse_plan(swapped).plan)}


def test_all_problems_are_reported_with_key_and_line(tmp_path: Path) -> None:
    text = textwrap.dedent(f"""\
        name = "bad"
        repeats = 1

        [target]
        directory = "{tmp_path}"

        [[test]]
        tool = "engine"
        mode = "write"
        size = "12q"
        streams = -1
        colour = "blue"

        [[test]]
        tool = "nosuchtool"
        """)
    with pytest.raises(PlanError) as info:
        parse_plan(text)
    found = {(p.key, p.line) for p in info.value.problems}
    assert ("test[1].size", 10) in found
    assert ("test[1].streams", 11) in found
    assert ("test[1].colour", 12) in found
    assert ("test[2].tool", 15) in found
    messages = "\n".join(str(p) for p in info.value.problems)
    assert "'12q' is not a size" in messages
    assert "-1 is below the minimum 1" in messages
    assert "unknown tool 'nosuchtool'" in messages


def test_missing_target_and_target_not_a_directory(tmp_path: Path) -> None:
    a_file = tmp_path / "f"
    a_file.write_text("x")
    with pytest.raises(PlanError) as info:
        parse_plan('[[test]]\ntool = "dd"\nmode = "write"\nsize = "1m"\n')
    assert [p.key for p in info.value.problems] == ["target"]
    with pytest.raises(PlanError) as info:
        parse_plan(f'[target]\ndirectory = "{a_file}"\n[[test]]\ntool = "dd"\n'
                   'mode = "write"\nsize = "1m"\n')
    (problem,) = info.value.problems
    assert problem.key == "target.directory" and problem.line == 2
    assert "is not a directory" in problem.message


def test_syntax_error_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(PlanError) as info:
        parse_plan('name = "x"\nrepeats = = 2\n')
    assert info.value.problems[0].line == 2


def test_buffered_small_file_warns_about_the_page_cache(tmp_path: Path) -> None:
    text = GOOD.format(dir=tmp_path).replace("direct = true", "direct = false")
    checked = parse_plan(text)
    warnings = [str(w) for w in checked.warnings]
    assert any("page cache" in w and "test[1]" in w for w in warnings)
    assert any("page cache" in w and "test[2]" in w for w in warnings)


def test_library_on_the_target_filesystem_warns(tmp_path: Path) -> None:
    checked = parse_plan(GOOD.format(dir=tmp_path), library=str(tmp_path / "lib.sqlite3"))
    assert any("library" in str(w) and "--library" in str(w) for w in checked.warnings)


def test_validate_exits_2_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                             ) -> None:
    plan = tmp_path / "bad.toml"
    plan.write_text(f'[target]\ndirectory = "{tmp_path}/nope"\n[[test]]\ntool = "engine"\n'
                    'mode = "write"\nsize = "12q"\n')
    library = tmp_path / "lib" / "library.sqlite3"
    assert main(["plan", "validate", str(plan), "--library", str(library)]) == 2
    assert main(["run", str(plan), "--library", str(library)]) == 2
    err = capsys.readouterr().err
    assert "line 2: target.directory" in err
    assert "line 6: test[1].size: '12q' is not a size" in err
    assert not library.exists() and not library.parent.exists()


def test_plan_show_prints_each_argv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "p.toml"
    plan.write_text(GOOD.format(dir=tmp_path))
    assert main(["plan", "show", str(plan), "--library", str(tmp_path / "l.db")]) == 0
    out = capsys.readouterr().out
    assert "oflag=direct" in out and "iflag=direct" in out
    assert "-m disklab.engine" in out
    assert out.count("run: ") == 6


def test_case_params_recheck_what_the_privileged_helper_receives() -> None:
    from disklab.core.plan.parse import case_params

    params = case_params("engine", {"mode": "read", "size": 8 << 20})
    assert params["block_size"] == 1 << 20 and params["streams"] == 1  # defaults filled in
    assert case_params("engine", {"mode": "read", "size": "8m"})["size"] == 8 << 20
    with pytest.raises(PlanError) as missing:
        case_params("engine", {"mode": "sideways"})
    assert {p.key for p in missing.value.problems} == {"mode", "size"}
    with pytest.raises(PlanError, match="one stream"):
        case_params("engine", {"mode": "write", "size": 8 << 20, "streams": 2}, device=True)
    with pytest.raises(PlanError, match="unknown tool"):
        case_params("rm", {})


def test_a_journal_device_without_confirm_is_an_error_at_its_key_and_line(tmp_path: Path
                                                                          ) -> None:
    """Also when written as a [config.mkfs] table: the line is the option's own."""
    text = textwrap.dedent(f"""\
        [target]
        image = {{ path = "{tmp_path}/t.img", size = "1g" }}

        [[config]]
        label = "j"
        fs = "ext4"

        [config.mkfs]
        block_size = "4k"
        journal_device = "/dev/null"

        [[test]]
        tool = "engine"
        mode = "write"
        size = "1m"
        """)
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    messages = [str(p) for p in e.value.problems]
    assert any(m.startswith("line 10: config[1].mkfs.journal_device: journal_device /dev/null "
                            "is wiped and formatted") and "`disklab devices`" in m
               for m in messages), messages
    assert "line 10: config[1].mkfs.journal_device: /dev/null is not a block device" in messages
    assert len(messages) == 2


def test_an_image_target_without_root_pkexec_or_sudo_is_an_error(tmp_path: Path,
                                                                  monkeypatch) -> None:
    """A user who is not root and has neither pkexec nor sudo cannot attach an image: the plan
    says so at target.image before anything runs (the user and the PATH are set, the check is
    the loader's own)."""
    text = f"""
name = "x"
[target]
image = {{ path = "{tmp_path / 'x.img'}", size = "1g" }}
[[test]]
tool = "engine"
mode = "write"
block_size = "1m"
size = "16m"
"""
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    assert any(p.key == "target.image" and "root, pkexec or sudo" in p.message
               for p in e.value.problems)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # sudo is installed here: then it can
    problems = []
    try:
        parse_plan(text)
    except PlanError as err:
        problems = [p.message for p in err.problems]
    assert not any("root, pkexec or sudo" in m for m in problems)


@pytest.mark.parametrize("tool", ["engine", "dd", "fio", "iozone", "bonnie"])
def test_the_helper_accepts_every_case_the_loader_made(tool: str, tmp_path: Path) -> None:
    """The privileged helper re-checks a case's parameters as the client sends them (the
    Case's own, optional ones unset included, through JSON as the client sends them): what the
    loader accepted, it accepts."""
    adapter = tools.get_adapter(tool)
    required = {k: s for k, s in adapter.params.items() if s.default is REQUIRED}
    values = {"engine": {"mode": "write", "block_size": "1m", "size": "16m"},
              "dd": {"mode": "write", "block_size": "1m", "size": "16m"},
              "fio": {"rw": "read", "bs": "4k", "size": "16m"},
              "iozone": {"tests": ["write"], "record_size": "64k", "file_size": "1m"},
              "bonnie": {"size": "64m"}}[tool]
    assert set(required) <= set(values)
    body = "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in values.items())
    text = f'name = "x"\n[target]\ndirectory = "{tmp_path}"\n[[test]]\ntool = "{tool}"\n{body}\n'
    try:
        checked = parse_plan(text, library=None)
    except PlanError as e:  # a tool that is not installed here: nothing to re-check
        pytest.skip(str(e))
    for case in expand(checked.plan):
        sent = json.loads(json.dumps(dict(case.params)))
        assert json.loads(json.dumps(case_params(case.tool, sent))) == sent
