"""One plan, two sections: `raw = true` tests run on an image or format target's block device
before any configuration is made (the SAN study's section 1 on the LUN, then its filesystem
sections), so the whole study is one plan and one session."""

from __future__ import annotations

from pathlib import Path

import pytest

from disklab.core.plan.matrix import expand, run_count
from disklab.core.plan.parse import parse_plan
from disklab.core.vocab.errors import PlanError
from disklab.core.vocab.model import RAW_SECTION

PLAN = """\
name = "LUN, then filesystem"
repeats = 2
[target]
image = {{ path = "{d}/lun.img", size = "512m" }}

[[config]]
label = "xfs"
fs = "xfs"

[[config]]
label = "ext4"
fs = "ext4"

[[test]]
tool = "engine"
raw = true
mode = ["write", "read"]
block_size = "320k"
size = "8000k"
queue_depth = [1, 4]
direct = true

[[test]]
tool = "dd"
raw = true
mode = "write"
block_size = "320k"
size = "8000k"
direct = true

[[test]]
tool = "engine"
mode = "write"
block_size = ["64k", "1m"]
size = "8m"
streams = 5
direct = true
"""


def test_raw_tests_run_once_on_the_device_before_every_configuration(tmp_path: Path) -> None:
    plan = parse_plan(PLAN.format(d=tmp_path)).plan
    assert plan.sections() == (RAW_SECTION, "xfs", "ext4")
    cases = expand(plan)
    assert [c.config for c in cases] == [RAW_SECTION] * 5 + ["xfs"] * 2 + ["ext4"] * 2
    assert {c.tool for c in cases if c.config == RAW_SECTION} == {"engine", "dd"}
    assert all(c.params["streams"] == 5 for c in cases if c.config != RAW_SECTION)
    assert run_count(plan) == len(cases) * 2


def test_raw_tests_on_a_plan_without_a_device_are_refused(tmp_path: Path) -> None:
    text = PLAN.format(d=tmp_path).replace(
        f'image = {{ path = "{tmp_path}/lun.img", size = "512m" }}', f'directory = "{tmp_path}"')
    text = text[:text.index("[[config]]")] + text[text.index("[[test]]"):]
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    assert "test[1].raw: a directory target has no device of its own" in str(e.value)


@pytest.mark.parametrize(("change", "key", "words"), [
    (('raw = true\nmode = ["write", "read"]', 'raw = "yes"\nmode = ["write", "read"]'),
     "test[1].raw", "'yes' is not true or false"),
    (('label = "xfs"', f'label = "{RAW_SECTION}"'), "config[1].label",
     "names the raw-device section"),
    (('streams = 5\ndirect = true\n', 'streams = 5\ndirect = true\nraw = true\n'), "test[3]",
     "a raw device is one stream"),
])
def test_a_raw_section_is_checked_by_key(tmp_path: Path, change: tuple[str, str], key: str,
                                         words: str) -> None:
    text = PLAN.format(d=tmp_path)
    assert change[0] in text
    with pytest.raises(PlanError) as e:
        parse_plan(text.replace(change[0], change[1], 1))
    assert any(p.key == key and words in p.message for p in e.value.problems), e.value.problems


def test_a_tool_that_needs_a_filesystem_cannot_be_raw(tmp_path: Path) -> None:
    text = PLAN.format(d=tmp_path) + ('\n[[test]]\ntool = "tree"\nraw = true\ndirs = 1\n'
                                      'files_per_dir = 2\nfile_size = "4k"\n')
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    assert any(p.key == "test[4].tool" and "tree needs a filesystem" in p.message
               for p in e.value.problems), e.value.problems


def test_without_raw_tests_a_plan_has_its_configurations_only(tmp_path: Path) -> None:
    text = PLAN.format(d=tmp_path).replace("raw = true\n", "")
    plan = parse_plan(text).plan
    assert plan.sections() == ("xfs", "ext4")
    assert RAW_SECTION not in {c.config for c in expand(plan)}
