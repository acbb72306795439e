"""PlanKey: the one reading of a plan key (issue 29: no plan-key regexes in the pages)."""

from __future__ import annotations

import pytest

from disklab.core.plan.keys import PlanKey


@pytest.mark.parametrize("text, section, index, rest, field", [
    ("name", "name", None, "", ""),
    ("test[2].block_size", "test", 2, "block_size", "block_size"),
    ("test[12]", "test", 12, "", ""),
    ("config[1].mkfs.journal_size", "config", 1, "mkfs.journal_size", "mkfs"),
    ("targets.a.image", "targets", None, "a.image", "a"),
    ("mount[3]", "mount", 3, "", ""),
    ("hosts.h1.address", "hosts", None, "h1.address", "h1"),
])
def test_keys_parse_and_print_back(text: str, section: str, index: int | None, rest: str,
                                   field: str) -> None:
    key = PlanKey.parse(text)
    assert (key.section, key.index, key.rest, key.field) == (section, index, rest, field)
    assert str(key) == text


def test_the_row_a_key_names() -> None:
    assert PlanKey.parse("test[2].bs").of("test") == 1
    assert PlanKey.parse("test[2].bs").of("config") is None
    assert PlanKey.parse("config").of("config") is None
