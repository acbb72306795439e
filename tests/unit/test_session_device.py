"""The Library's device column for a session of several targets (issue 29, point 8): it was
empty; each target's device (or image) is named."""

from __future__ import annotations

from disklab.core.results.facts import session_device

PLAN = """
name = "two luns"
[targets.a]
image = { path = "/var/tmp/a.img", size = "1g" }
[targets.b]
format = "/dev/loop7"
confirm = "x"
"""


def test_several_targets_name_each_device() -> None:
    # as recorded by the runner (host facts), and from the plan alone (an older session)
    host = {"targets": {"a": {"kind": "image", "path": "/var/tmp/a.img"},
                        "b": {"kind": "format", "path": "/dev/loop7"}}}
    assert session_device({"host": host, "plan_text": PLAN}) == (
        "a: image /var/tmp/a.img, b: /dev/loop7")
    assert session_device({"host": {}, "plan_text": PLAN}) == (
        "a: image /var/tmp/a.img, b: /dev/loop7")


def test_one_target_as_before() -> None:
    plan = '[target]\nimage = { path = "/var/tmp/s.img", size = "1g" }\n'
    assert session_device({"host": {}, "plan_text": plan}) == "image /var/tmp/s.img"
    assert session_device({"host": {"device": {"name": "sda", "model": "X"}}}) == "sda X"
