"""Target page: a directory on a mounted filesystem, a scratch image, or a block device.

The block devices are listed by gui/device_list.py (lsblk in the thread pool, each with its
safety verdict; one that cannot be used is shown disabled with the reason); choosing one asks
here for the device path typed back (a wrong path is said to be wrong). A choice that is not
complete yet (Block device with no device picked) stays chosen and is marked at its field: the
page never switches it back behind the user's back.

A plan may have several targets ([targets.a], [targets.b]...: the RAID study's LUNs): the list
at the top adds, renames and removes them, and the form below edits the one chosen there. A
test's `on` (Test matrix) places its streams on them ("a+b"); renaming a target renames it
there too. An image or a device may be split into GPT partitions (targets a1, a2...).
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from disklab.core.plan.draft import PlanDraft
from disklab.core.plan.targets import MAX_PARTITIONS
from disklab.core.run.summary import PlanSummary
from disklab.core.standard_set import standard_plan
from disklab.core.system.devices import Device, identity_of
from disklab.core.system.space import directory_space
from disklab.core.vocab.units import GiB, human_bytes, parse_size
from disklab.gui.device_confirm import ask_destroy
from disklab.gui.device_list import DeviceList
from disklab.gui.invalid_mark import mark_invalid
from disklab.gui.start_hint import StartHint
from disklab.gui.state import Workbench

DEFAULT_IMAGE_GIB = 4  # a new plan's scratch image size, GiB

class TargetPage(QWidget):
    title = "Target"
    devices_loaded = Signal()  # the device list's `loaded`, forwarded

    def __init__(self, wb: Workbench, parent: QWidget | None = None):
        super().__init__(parent)
        self.wb = wb
        self._confirmed: tuple[str, str] | None = None  # (device, identity) the user typed
        self.current: str | None = None  # the target edited: [targets.NAME]; None: [target]
        self._image_of: str | None = None  # the target whose image the image field holds
        self._draft_shown: object = None  # the draft the fields show (a new one resets them)
        lay = QVBoxLayout(self)
        self._build_top(lay)
        self._build_target_box(lay)
        self.device_list = DeviceList(wb)
        self.device_list.loaded.connect(self.devices_loaded)
        self.device_list.picked.connect(self._device_picked)
        lay.addWidget(self.device_list, 1)

        self.dir_edit.editingFinished.connect(self._apply)
        self.image_size.valueChanged.connect(self._apply)
        self.image_dir.editingFinished.connect(self._apply)
        self.partitions.valueChanged.connect(self._apply)
        self.target_list.currentIndexChanged.connect(self._target_chosen)
        self.add_button.clicked.connect(self.add_target)
        self.rename_button.clicked.connect(self._rename)
        self.remove_button.clicked.connect(self.remove_target)
        self.kind.idToggled.connect(lambda _i, on: on and self._apply())
        wb.draft_changed.connect(self.load_draft)
        wb.plan_checked.connect(self.show_problems)
        self.load_draft()
        self.refresh_devices()

    def _build_top(self, lay: QVBoxLayout) -> None:
        """The start hint, the one-click standard set and the row of target names."""
        self.start_hint = StartHint()  # no room until shown (show_start_hint)
        lay.addWidget(self.start_hint)
        intro = QLabel("<b>Where the tests run.</b> A directory on a mounted filesystem is never "
                       "formatted; a scratch image or a device is formatted for each "
                       "configuration.")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        quick = QHBoxLayout()
        self.standard_button = QPushButton("Run the standard set")
        self.standard_button.setToolTip(
            "One click to a first result: KDiskMark's four tests (SEQ1M Q8T1, SEQ1M Q1T1, "
            "RND4K Q32T1, RND4K Q1T1), read and write, on the target chosen below, by fio "
            "(or the built-in engine without fio); eight figures in MB/s and IOPS on the Run "
            "page, and a session in the Library like any other. Replaces the plan.")
        self.standard_button.clicked.connect(lambda: self.run_standard_set())
        quick.addWidget(self.standard_button)
        quick.addWidget(QLabel("KDiskMark's four tests, read and write, on this target"), 1)
        lay.addLayout(quick)

        names = QHBoxLayout()
        self.target_list = QComboBox()
        self.target_list.setMinimumContentsLength(12)
        self.target_list.setToolTip("the target the form below edits")
        self.add_button = QPushButton("&Add a target")
        self.add_button.setToolTip("several targets (LUNs, disks, directories) in one plan: a "
                                   "test's `on` places its streams on them (Test matrix)")
        self.rename_button = QPushButton("Rename…")
        self.remove_button = QPushButton("Remove")
        names.addWidget(QLabel("Targets"))
        names.addWidget(self.target_list)
        for b in (self.add_button, self.rename_button, self.remove_button):
            names.addWidget(b)
        names.addStretch(1)
        lay.addLayout(names)
        self.targets_note = QLabel()
        self.targets_note.setWordWrap(True)
        lay.addWidget(self.targets_note)

    def _build_target_box(self, lay: QVBoxLayout) -> None:
        """The form of the target edited: a directory, a scratch image or a block device."""
        box = QGroupBox("Target")
        self.box = box
        form = QFormLayout(box)
        self.kind = QButtonGroup(self)
        self.dir_radio = QRadioButton("&Directory")
        self.image_radio = QRadioButton("Scratch &image (a loop device DiskLab makes and "
                                        "removes)")
        self.device_radio = QRadioButton("&Block device (chosen below)")
        for i, r in enumerate((self.dir_radio, self.image_radio, self.device_radio)):
            self.kind.addButton(r, i)
        row = QHBoxLayout()
        self.dir_edit = QLineEdit()
        self.dir_edit.setPlaceholderText("/mnt/scratch")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row.addWidget(self.dir_edit, 1)
        row.addWidget(browse)
        form.addRow(self.dir_radio, row)
        self.dir_info = QLabel()
        form.addRow("", self.dir_info)
        self.image_size = QSpinBox()
        self.image_size.setRange(1, 4096)
        self.image_size.setValue(DEFAULT_IMAGE_GIB)
        self.image_size.setSuffix(" GiB")
        form.addRow(self.image_radio, self.image_size)
        self.image_dir = QLineEdit("/var/tmp/disklab-scratch.img")
        self.image_dir.setToolTip("a file DiskLab creates (sparse), attaches as a loop device "
                                  "with direct I/O, formats per configuration and removes")
        form.addRow("image file", self.image_dir)
        self.device_choice = QLabel("")
        self.device_choice.setWordWrap(True)
        form.addRow(self.device_radio, self.device_choice)
        self.partitions = QSpinBox()
        self.partitions.setRange(0, MAX_PARTITIONS)
        self.partitions.setSpecialValueText("none")
        self.partitions.setToolTip("split the image or device into this many GPT partitions "
                                   "(sgdisk), each a target of its own: a1, a2... for `on`")
        form.addRow("GPT partitions", self.partitions)
        # the plan check's problems with the target (target.*), at this box
        self.target_error = QLabel()
        self.target_error.setWordWrap(True)
        self.target_error.setTextFormat(Qt.TextFormat.RichText)
        self.target_error.hide()
        form.addRow("", self.target_error)
        lay.addWidget(box)

    def run_standard_set(self, **overrides: Any) -> None:
        """The standard set (core.standard_set) on the target chosen here, run at once as a
        plan of its own: the plan being edited stays the draft, with its tests and changes,
        for the next Start. `overrides` (size, runtime, repeats) make it smaller."""
        target = dict(self.wb.draft.target_table(self.current))
        text = PlanDraft(standard_plan(target, **overrides)).to_text()
        self.wb.page_requested.emit("run")
        self.wb.run_requested.emit(text)

    def show_start_hint(self, shown: bool) -> None:
        self.start_hint.show_hint(shown)

    def hideEvent(self, event: Any) -> None:
        self.start_hint.page_hidden(self)
        super().hideEvent(event)

    def show_problems(self, summary: PlanSummary) -> None:
        """The plan check's errors and warnings about the target, under the target's fields."""
        # no device picked: the line at the radio button says it already
        said = self.device_radio.isChecked() and self._confirmed is None
        lines = [f"<span style='color:#b36b00'>⚠ {html.escape(_named(p.key, p.message))}</span>"
                 if p.severity == "warning" else
                 f"<span style='color:#c33'>{html.escape(_named(p.key, p.message))}</span>"
                 for p in summary.problems if p.key.startswith("target")
                 and not (said and p.key in ("target.format", f"targets.{self.current}.format"))]
        self.target_error.setText("<br>".join(lines))
        self.target_error.setVisible(bool(lines))
        bad = any(p.key.startswith("target") and p.severity == "error"
                  for p in summary.problems)
        field = self._field()
        for w in (self.dir_edit, self.image_dir, self.device_list.table):
            mark_invalid(w, bad and w is field)

    def _field(self) -> QWidget | None:
        if self.image_radio.isChecked():
            return self.image_dir
        if self.device_radio.isChecked():
            return self.device_list.table
        return self.dir_edit

    def focus_problem(self, key: str) -> None:
        """Go to the field of a target.* problem (targets.NAME.*: that target's): mark it and
        give it the focus."""
        parts = key.split(".")
        if parts[0] == "targets" and len(parts) > 1 and parts[1] != self.current:
            index = self.target_list.findData(parts[1])
            if index >= 0:
                self.target_list.setCurrentIndex(index)
        field = self._field()
        if field is not None:
            mark_invalid(field, True)
            field.setFocus()

    # --- plan <-> form
    def load_draft(self) -> None:
        if not self.wb.draft.is_blank:
            self.start_hint.hide()
        names = self.wb.draft.target_names()
        if self.current not in names:
            self.current = names[0] if names else None
        self._fill_names(names)
        target = self.wb.draft.target_table(self.current)
        widgets = (self.dir_edit, self.image_size, self.image_dir, self.kind, self.partitions)
        for w in widgets:
            w.blockSignals(True)
        self.partitions.setValue(min(_whole(target.get("partitions")), MAX_PARTITIONS))
        if "format" not in target:
            self._confirmed = None  # a confirmation is of one target's device
        fresh = self.wb.draft is not self._draft_shown  # File > New or Open: a plan of its own
        if "image" not in target and (fresh or self._image_of != self.current):
            # another plan or target shown: not the last one's image (two targets on one file)
            self.image_dir.setText(scratch_image(self.current))
            self.image_size.setValue(DEFAULT_IMAGE_GIB)
        self._image_of, self._draft_shown = self.current, self.wb.draft
        if "image" in target:
            self.image_radio.setChecked(True)
            image = target["image"]
            if isinstance(image, dict):
                self.image_size.setValue(max(1, round(_gib(image.get("size", 4 * GiB)))))
                self.image_dir.setText(str(image.get("path", "/var/tmp/disklab-scratch.img")))
        elif "format" in target:
            self._confirmed = ((str(target["format"]), str(target.get("confirm", "")))
                               if target["format"] else None)
            self.device_radio.setChecked(True)
        else:
            self.dir_radio.setChecked(True)
            self.dir_edit.setText(str(target.get("directory", "")))
        for w in widgets:
            w.blockSignals(False)
        self._dir_info()
        self._device_info()
        self._partitions_enabled()

    def _fill_names(self, names: list[str]) -> None:
        """The list of targets (one entry, "the target", for a [target] plan) and the note
        on how tests use them."""
        self.target_list.blockSignals(True)
        self.target_list.clear()
        for name in names or [None]:
            self.target_list.addItem(name or "(the target)", name)
        self.target_list.setCurrentIndex(max(self.target_list.findData(self.current), 0))
        self.target_list.blockSignals(False)
        self.rename_button.setEnabled(bool(names))
        self.remove_button.setEnabled(len(names) > 1)
        self.box.setTitle(f"Target {self.current}" if self.current else "Target")
        if names:
            self.targets_note.setText(
                f"{len(names)} target{'s' if len(names) != 1 else ''}. A test's <b>on</b> "
                "(Test matrix) places its streams: "
                f"{html.escape(names[0])} runs one stream on {html.escape(names[0])}"
                + (f", {html.escape('+'.join(names[:2]))} one on each of "
                   f"{html.escape(' and '.join(names[:2]))}" if len(names) > 1 else "")
                + "; a list is an axis. A configuration applies to every target unless its "
                  "<b>targets</b> names some.")
        else:
            self.targets_note.setText("")
        self.targets_note.setVisible(bool(names))

    def _target_chosen(self, index: int) -> None:
        self.current = self.target_list.itemData(index)
        self.load_draft()

    def add_target(self) -> str:
        """Add a target to the plan and edit it (a [target] plan's becomes targets.a): typing
        goes on in its directory field."""
        name = self.wb.draft.add_target()
        self.current = name
        self._confirmed = None
        self.wb.touch()  # draft_changed -> load_draft shows the new one
        self.dir_edit.setFocus()
        return name

    def remove_target(self) -> None:
        if self.current is not None:
            self.wb.draft.remove_target(self.current)
            self.current = None
            self.wb.touch()

    def rename_target(self, new: str) -> str | None:
        """Rename the target edited (its `on` placements and configurations' `targets` too);
        why not, if it cannot be."""
        if self.current is None:
            return None
        why = self.wb.draft.rename_target(self.current, new)
        if why is None:
            self.current = new
            self.wb.touch()
        return why

    def _rename(self) -> None:
        new, ok = QInputDialog.getText(self, "Rename the target",
                                       "New name (tests' `on` placements follow it):",
                                       text=self.current or "")
        if ok:
            why = self.rename_target(new.strip())
            if why:
                self.targets_note.setText(f"<span style='color:#c33'>{html.escape(why)}</span>")
                self.targets_note.show()

    def _partitions_enabled(self) -> None:
        """Only an image or a device is split (sgdisk); a directory is not."""
        self.partitions.setEnabled(not self.dir_radio.isChecked())

    def _apply(self) -> None:
        target = self.wb.draft.target_table(self.current)
        target.clear()
        if self.image_radio.isChecked():
            target["image"] = {"path": self.image_dir.text().strip()
                               or "/var/tmp/disklab-scratch.img",
                               "size": f"{self.image_size.value()}g"}
        elif self.device_radio.isChecked():
            # no device picked yet: the choice stays, and the plan check marks it (an empty
            # `format` is an error at target.format) instead of falling back to a directory
            target["format"], target["confirm"] = self._confirmed or ("", "")
        else:
            target["directory"] = self.dir_edit.text().strip()
        if self.partitions.value() and not self.dir_radio.isChecked():
            target["partitions"] = self.partitions.value()
        self._dir_info()
        self._device_info()
        self._partitions_enabled()
        self.start_hint.hide()
        self.wb.touch()

    def _device_info(self) -> None:
        if not self.device_radio.isChecked():
            self.device_choice.setText("")
            self.device_choice.setStyleSheet("")
        elif self._confirmed is None:
            self.device_choice.setText("no device chosen yet: pick a usable one in the list "
                                       "below")
            self.device_choice.setStyleSheet("color:#c33")
        else:
            self.device_choice.setText(f"{self._confirmed[0]} (confirmed)")
            self.device_choice.setStyleSheet("")

    def set_image(self, path: str, size_gib: int) -> None:
        """Choose a scratch image (as the radio button and fields do)."""
        self.image_dir.setText(path)
        self.image_size.setValue(size_gib)
        self.image_radio.setChecked(True)
        self._apply()

    def set_directory(self, path: str) -> None:
        self.dir_radio.setChecked(True)
        self.dir_edit.setText(path)
        self._apply()

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Target directory", self.dir_edit.text())
        if path:
            self.set_directory(path)

    def _dir_info(self) -> None:
        path = self.dir_edit.text().strip()
        if not path:
            self.dir_info.setText("")
            return
        space = directory_space(path)
        if not space.exists:
            self.dir_info.setText(f"<span style='color:#c33'>{html.escape(path)} does not "
                                  "exist</span>")
        elif space.error:
            self.dir_info.setText(html.escape(space.error))
        else:
            self.dir_info.setText(f"free {human_bytes(space.free)} of {human_bytes(space.total)}"
                                  + ("" if space.writable else " — not writable"))

    # --- devices
    @property
    def devices(self) -> list[Device]:
        """The block devices of the last reading shown, in the list's order."""
        return self.device_list.devices

    def refresh_devices(self) -> None:
        self.device_list.refresh()

    def _device_picked(self, dev: Device) -> None:
        """A usable device chosen in the list: the target once its path is typed back."""
        confirmed, why = ask_destroy(self, dev, "mkfs and the tests")
        if not confirmed:
            self.device_list.table.clearSelection()
            if why:
                self.device_choice.setText(why)
                self.device_choice.setStyleSheet("color:#c33")
            return
        self._confirmed = (dev.path, identity_of(dev))
        self.device_radio.setChecked(True)
        self._apply()


def scratch_image(name: str | None) -> str:
    """The scratch image a target starts with when "Scratch image" is chosen: one of its
    own per named target (a new target took the first one's path: two targets on one file)."""
    return (f"/var/tmp/disklab-scratch-{name}.img" if name
            else "/var/tmp/disklab-scratch.img")


def _gib(value: Any) -> float:
    if isinstance(value, int):
        return value / GiB
    try:
        return parse_size(str(value)) / GiB
    except ValueError:
        return 4.0


def _named(key: str, message: str) -> str:
    """A problem of one of several targets (targets.b.format) names its target."""
    parts = key.split(".")
    return f"{parts[1]}: {message}" if parts[0] == "targets" and len(parts) > 1 else message


def _whole(value: Any) -> int:
    """A count from the plan as typed (0 when it is not a whole number: the check says so)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
