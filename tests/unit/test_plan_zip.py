"""Paired axes: `zip = [["sync", "fsync"]]` in a [[test]] makes the named lists advance together
instead of multiplying; a bad zip is exit 2 with its key and line; zipped cases keep their ids."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from disklab.cli.main import main
from disklab.core.plan.matrix import expand
from disklab.core.plan.parse import parse_plan
from disklab.core.vocab.errors import PlanError

ENGINE = """\
[target]
directory = "{dir}"

[[test]]
tool = "engine"
mode = ["write", "read"]
block_size = ["4k", "64k", "1m"]
size = ["16m", "64m", "256m"]
queue_depth = [1, 4]
direct = true
{zip}
"""

IOZONE = """\
[target]
directory = "{dir}"

[[test]]
tool = "iozone"
tests = ["write"]
file_size = "4m"
record_size = ["4k", "64k"]
sync = [true, false]
fsync = [true, false]
zip = [["sync", "fsync"]]
"""


def cases(tmp_path: Path, zip_line: str) -> list[dict]:
    plan = parse_plan(ENGINE.format(dir=tmp_path, zip=zip_line)).plan
    return [dict(c.params) for c in expand(plan)]


def test_zipped_lists_advance_together_instead_of_multiplying(tmp_path: Path) -> None:
    product = cases(tmp_path, "")
    assert len(product) == 2 * 3 * 3 * 2
    zipped = cases(tmp_path, 'zip = [["block_size", "size"]]')
    assert len(zipped) == 2 * 3 * 2  # block size and file size in step: 3 points, not 9
    assert {(c["block_size"], c["size"]) for c in zipped} == {
        (4 << 10, 16 << 20), (64 << 10, 64 << 20), (1 << 20, 256 << 20)}
    # the group stands where its first member is written: mode, then (block_size, size), then qd
    assert [(c["mode"], c["block_size"], c["queue_depth"]) for c in zipped[:4]] == [
        ("write", 4 << 10, 1), ("write", 4 << 10, 4), ("write", 64 << 10, 1),
        ("write", 64 << 10, 4)]
    two = cases(tmp_path, 'zip = [["block_size", "size"], ["mode", "queue_depth"]]')
    assert [(c["mode"], c["queue_depth"]) for c in two] == [("write", 1)] * 3 + [("read", 4)] * 3
    flat = cases(tmp_path, 'zip = ["block_size", "size"]')  # one group, without the brackets
    assert flat == zipped


def test_zipped_cases_keep_the_ids_of_the_same_product_cases(tmp_path: Path) -> None:
    def ids(zip_line: str) -> dict[tuple, str]:
        plan = parse_plan(ENGINE.format(dir=tmp_path, zip=zip_line)).plan
        return {tuple(sorted(c.params.items())): c.id for c in expand(plan)}

    product, zipped = ids(""), ids('zip = [["block_size", "size"]]')
    assert zipped.items() <= product.items()
    assert zipped == ids('zip = [["block_size", "size"]]')  # re-read: the same ids


@pytest.mark.parametrize(("zip_line", "message"), [
    ('zip = [["mode", "block_size"]]', "zipped lists must be equally long: mode has 2, "
                                       "block_size has 3"),
    ('zip = [["block_size", "direct"]]', "'direct' is not a list (a matrix axis) in this test"),
    ('zip = [["block_size", "nonsense"]]', "'nonsense' is not a parameter of this test"),
    ('zip = [["block_size", "size"], ["size", "mode"]]', "'size' is in more than one zip group"),
    ('zip = [["block_size"]]', "['block_size']: a group zips at least two list parameters"),
    ('zip = "block_size"', "must be a list of groups of parameter names"),
])
def test_a_bad_zip_names_its_key_and_line(tmp_path: Path, zip_line: str, message: str) -> None:
    with pytest.raises(PlanError) as e:
        parse_plan(ENGINE.format(dir=tmp_path, zip=zip_line))
    problems = [str(p) for p in e.value.problems]
    assert f"line 11: test[1].zip: {message}" in "\n".join(problems), problems


def test_validate_exits_2_on_a_bad_zip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "zip.toml"
    plan.write_text(ENGINE.format(dir=tmp_path, zip='zip = [["mode", "size"]]'))
    assert main(["plan", "validate", str(plan), "--library", str(tmp_path / "l.db")]) == 2
    err = capsys.readouterr().err
    assert "line 11: test[1].zip: zipped lists must be equally long" in err
    assert "Traceback" not in err


@pytest.mark.skipif(shutil.which("iozone") is None, reason="iozone is not installed")
def test_plan_show_pairs_iozone_o_and_e(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    plan = tmp_path / "iozone.toml"
    plan.write_text(IOZONE.format(dir=tmp_path))
    assert main(["plan", "show", str(plan), "--library", str(tmp_path / "l.db")]) == 0
    out = capsys.readouterr().out
    assert "test[1]: sync, fsync advance together (zip): sync=true fsync=true; " \
           "sync=false fsync=false" in out
    runs = [line.split()[1:] for line in out.splitlines() if line.startswith("  run:")]
    assert len(runs) == 4  # 2 record sizes x 2 zipped points, not 2 x 2 x 2
    flags = [("-o" in argv, "-e" in argv) for argv in runs]
    assert flags == [(True, True), (False, False)] * 2  # -o -e together, or neither
    assert [re.search(r"-r (\S+)", " ".join(a)).group(1) for a in runs] == ["4k", "4k", "64k",
                                                                             "64k"]
