"""The Configurations page builds its mount fields from the core's declared options (issue 29:
the page restated core.fs.options' table): each option with a plain name gets its field, with
that name, for the filesystems that take it, a choice its valid values, a number its range."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLineEdit

from disklab.core.fs.options import MOUNT_FIELDS, MOUNT_OPTIONS
from disklab.core.fs.options import _check_mount_option as check
from disklab.core.plan.draft import PlanDraft
from tests.helpers import engine_plan


def _label(page, key: str) -> str:
    form: QFormLayout = page.form
    row, _role = form.getWidgetPosition(page.fields[key])
    return form.itemAt(row, QFormLayout.ItemRole.LabelRole).widget().text()


@pytest.mark.parametrize("fs", ["ext4", "xfs", "btrfs"])
def test_mount_fields_come_from_the_cores_table(qtbot, window, target_dir, fs: str) -> None:
    text = engine_plan(target_dir) + f'\n[[config]]\nlabel = "c"\nfs = "{fs}"\n'
    window.wb.set_draft(PlanDraft.from_text(text))
    page = window.configs
    window.show_page("configs")
    page.list.setCurrentRow(0)
    shown = [k.removeprefix("mount.") for k in page.fields if k.startswith("mount.")]
    assert shown == [n for n in MOUNT_FIELDS if fs in MOUNT_OPTIONS[n].fs]
    assert shown  # every filesystem has some
    for name in shown:
        opt = MOUNT_OPTIONS[name]
        widget = page.fields[f"mount.{name}"]
        assert _label(page, f"mount.{name}") == opt.label
        if opt.kind == "flag":
            assert isinstance(widget, QCheckBox)
        elif opt.choices:
            assert isinstance(widget, QComboBox)
            assert [widget.itemText(i) for i in range(1, widget.count())] == list(opt.choices)
        else:
            assert isinstance(widget, QLineEdit)
            assert f"{opt.minimum}–{opt.maximum}" in widget.placeholderText()


def test_the_declared_values_are_what_the_check_accepts() -> None:
    for name, opt in MOUNT_OPTIONS.items():
        fs = opt.fs[0]
        if opt.kind == "flag":
            assert check(fs, name) is None
            assert "takes no value" in (check(fs, f"{name}=1") or "")
            continue
        for value in opt.choices:  # every value offered is valid
            assert check(fs, f"{name}={value}") is None, (name, value)
        if opt.kind == "int":
            assert check(fs, f"{name}={opt.minimum}") is None
            assert check(fs, f"{name}={opt.maximum + 1}") is not None
        if opt.kind == "choice":
            assert "must be one of" in (check(fs, f"{name}=nonsense") or "")
