"""`plan validate` refuses at validation what failed at run time before (issue 32's soak): a
bonnie++ user or group this machine does not have, and a target directory on a filesystem
that is the kernel's interface (/sys, /proc), not storage."""

from __future__ import annotations

import pwd
import tempfile
from pathlib import Path

import pytest

from disklab.core.plan.parse import parse_plan
from disklab.core.vocab.errors import PlanError


def bonnie_plan(directory: str, user: str) -> str:
    return (f'name = "b"\n[target]\ndirectory = "{directory}"\n[[test]]\ntool = "bonnie"\n'
            f'size = "64M"\nram = "32M"\nuser = "{user}"\n')


def problems(text: str) -> list[str]:
    with pytest.raises(PlanError) as e:
        parse_plan(text)
    return [str(p) for p in e.value.problems]


def test_a_bonnie_user_or_group_this_machine_lacks_is_refused(tmp_path: Path) -> None:
    assert problems(bonnie_plan(str(tmp_path), "nosuchuser")) == [
        "line 8: test[1].user: no user 'nosuchuser' on this machine (bonnie++ -u runs as it)"]
    [line] = problems(bonnie_plan(str(tmp_path), "root:nosuchgroup"))
    assert "no group 'nosuchgroup'" in line
    [line] = problems(bonnie_plan(str(tmp_path), "a b;rm"))
    assert "not a user name or uid" in line
    someone = pwd.getpwall()[-1]
    shared = Path(tempfile.mkdtemp(prefix="disklab-test-", dir="/var/tmp"))
    try:  # a directory every user can write (where bonnie++ -u USER makes its files)
        shared.chmod(0o1777)
        for user in (someone.pw_name, str(someone.pw_uid),
                     f"{someone.pw_name}:{someone.pw_gid}"):
            assert parse_plan(bonnie_plan(str(shared), user)).plan.tests
    finally:
        shared.rmdir()


@pytest.mark.parametrize("directory", ["/sys", "/proc", "/sys/kernel"])
def test_a_target_on_a_pseudo_filesystem_is_refused(directory: str) -> None:
    [line] = problems(bonnie_plan(directory, "root"))
    assert line.startswith("line 3: target.directory: ") and "not storage" in line
