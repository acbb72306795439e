"""Configurations page: the filesystem configurations to compare, in order.

Each configuration is a [[config]] table of the plan (label, fs, mkfs options, mount options,
read-ahead, scheduler). The form shows the options of the chosen filesystem, taken from
core.fs.options (MKFS_OPTIONS, MOUNT_OPTIONS), so the page offers exactly what the core can
apply; each field's problem from config_from_toml is shown at that field, and the commands of
core.fs.commands.setup_commands (what the privileged helper will run, and what `disklab plan
show` prints) are previewed live.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from disklab.core.fs.commands import (
    preview_device,
    preview_mountpoint,
)
from disklab.core.fs.options import (
    DEVICE_OPTIONS,
    FILESYSTEMS,
    MKFS_OPTIONS,
    MOUNT_FIELDS,
    MOUNT_OPTIONS,
    SCHEDULERS,
    MountOption,
    config_from_toml,
    device_options,
)
from disklab.core.plan.draft import _scalar
from disklab.core.plan.keys import PlanKey
from disklab.core.plan.setup_preview import config_commands
from disklab.core.vocab.errors import ConfigError
from disklab.gui.device_confirm import DeviceConfirms
from disklab.gui.invalid_mark import mark_invalid
from disklab.gui.state import Workbench

AS_IS = "as is (no format)"


def target_device(target: Mapping[str, Any]) -> str:
    """The device the draft's [target] table formats, as the core shows it before a run."""
    kind = next((k for k in ("format", "image", "device", "directory") if k in target), None)
    path = target.get(kind) if kind else None
    return preview_device(kind, path if isinstance(path, str) else None)


def config_field(table: Mapping[str, Any], key: str) -> str:
    """The form field of a key inside one [[config]] table: 'mount[2]' is the field of the
    option it holds ('mount.commit' for 'commit=-5') when that option has its own field, else
    the other options' field 'mount'."""
    i = PlanKey.parse(key).of("mount")
    if i is None or PlanKey.parse(key).rest:
        return "mount" if key.startswith("mount") else key
    mount = table.get("mount")
    if isinstance(mount, list) and 0 <= i < len(mount):
        name = str(mount[i]).split("=", 1)[0].strip()
        if name in MOUNT_FIELDS:
            return f"mount.{name}"
    return "mount"


def check_config(table: dict[str, Any], index: int, device: str, mountpoint: str
                 ) -> tuple[list[str], dict[str, str]]:
    """(command lines to preview, {field key: problem}) for one [[config]] table: the commands
    of setup_commands(config, device, mountpoint), one line each, as `disklab plan show`
    prints them (core.plan.setup_preview.config_commands).

    Field keys are 'label', 'fs', 'mkfs.NAME', 'mount.NAME' (an option with its own field:
    commit, data...), 'mount' (the other options), 'readahead', 'scheduler'."""
    config, problems = config_from_toml(table, index)
    errors: dict[str, str] = {}
    prefix = f"config[{index}]."
    for key, message in problems:
        errors.setdefault(config_field(table, key.removeprefix(prefix)), message)
    if config is None:
        return [], errors
    for name in device_options(config):
        if name not in config.confirms:
            errors.setdefault(f"mkfs.{name}", "this device is wiped too: press Enter in the "
                              "field to confirm it by typing its path")
    try:
        return config_commands(config, device, mountpoint), errors
    except ConfigError as e:  # already in errors, but say it here too
        return [f"(cannot build the commands: {e})"], errors


def mount_widget(opt: MountOption, current: str | None, value: str) -> QWidget:
    """The field of a mount option, by its declared kind: a flag is a check box, a choice a
    drop-down of its valid values (editable where other values are valid too), a number a
    text field that says its range."""
    if opt.kind == "flag":
        box = QCheckBox()
        box.setChecked(current is not None)
        return box
    if opt.choices:
        combo = QComboBox()
        combo.setEditable(opt.kind == "text")
        combo.addItems(["", *opt.choices])
        combo.setCurrentText(value)
        return combo
    edit = QLineEdit(value)
    edit.setPlaceholderText(f"default ({opt.minimum}–{opt.maximum})"
                            if opt.kind == "int" else "default")
    return edit


class ConfigsPage(QWidget):
    title = "Configurations"

    def __init__(self, wb: Workbench, parent: QWidget | None = None):
        super().__init__(parent)
        self.wb = wb
        self.fields: dict[str, QWidget] = {}
        self.errors: dict[str, QLabel] = {}
        self.problems: dict[str, str] = {}
        # external journal/log device fields: confirmed by their path typed back, or refused
        self.confirms = DeviceConfirms(self, lambda: str(self.wb.library_path))
        lay = QVBoxLayout(self)
        intro = QLabel("<b>Filesystem configurations to compare.</b> Each case of the test "
                       "matrix runs once per configuration: DiskLab formats and mounts the "
                       "target for each, reads back what applied, and tears it down.")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        self.note = QLabel()
        self.note.setWordWrap(True)
        lay.addWidget(self.note)
        body = QHBoxLayout()
        left = QVBoxLayout()
        self.list = QListWidget()
        self.list.currentRowChanged.connect(self._show)
        left.addWidget(self.list, 1)
        buttons = QHBoxLayout()
        self.add_btn = QPushButton("Add")
        self.dup_btn = QPushButton("Duplicate")
        self.del_btn = QPushButton("Remove")
        self.up_btn = QPushButton("↑")
        self.down_btn = QPushButton("↓")
        for b, fn in ((self.add_btn, lambda: self.add_config()), (self.dup_btn, self.duplicate),
                      (self.del_btn, self.remove), (self.up_btn, lambda: self.move(-1)),
                      (self.down_btn, lambda: self.move(1))):
            b.clicked.connect(fn)
            buttons.addWidget(b)
        left.addLayout(buttons)
        body.addLayout(left, 1)

        right = QVBoxLayout()
        self.form_box = QGroupBox("Configuration")
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        self.form_scroll = scroll
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        scroll.setWidget(self.form_host)
        fl = QVBoxLayout(self.form_box)
        fl.addWidget(scroll)
        right.addWidget(self.form_box, 1)
        right.addWidget(QLabel("Will run (for each configuration, on the target device):"))
        self.preview = QPlainTextEdit()
        self.preview.setReadOnly(True)
        self.preview.setMaximumHeight(110)
        self.preview.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        right.addWidget(self.preview)
        body.addLayout(right, 3)
        lay.addLayout(body, 1)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(200)
        self._timer.timeout.connect(self._store)
        self._loading = False
        wb.draft_changed.connect(self.load_draft)
        self.load_draft()

    # --- list
    def _configs(self) -> list[dict[str, Any]]:
        return self.wb.draft.configs

    def load_draft(self) -> None:
        if self._loading:
            return
        self.list.blockSignals(True)
        row = self.list.currentRow()
        self.list.clear()
        self.note.setText("Add the configurations to compare; with none, the target's filesystem "
                          "is used as it is. Formatting needs a scratch image or a device target.")
        for c in self._configs():
            self.list.addItem(str(c.get("label", "?")))
        self._mark_list()
        self.list.blockSignals(False)
        if self.list.count():
            self.list.setCurrentRow(min(max(row, 0), self.list.count() - 1))
            self._show(self.list.currentRow())
        else:
            self._build_form(None)

    def add_config(self, config: dict[str, Any] | None = None) -> None:
        configs = self._configs()
        configs.append(config or {"label": f"ext4 #{len(configs) + 1}", "fs": "ext4",
                                  "mount": ["noatime"]})
        self.wb.touch()
        self.list.setCurrentRow(len(configs) - 1)

    def duplicate(self) -> None:
        row = self.list.currentRow()
        configs = self._configs()
        if 0 <= row < len(configs):
            c = copy.deepcopy(configs[row])
            c["label"] = f"{c.get('label', 'config')} copy"
            configs.insert(row + 1, c)
            self.wb.touch()
            self.list.setCurrentRow(row + 1)

    def remove(self) -> None:
        row = self.list.currentRow()
        configs = self._configs()
        if 0 <= row < len(configs):
            del configs[row]
            self.wb.touch()

    def move(self, step: int) -> None:
        row = self.list.currentRow()
        configs = self._configs()
        new = row + step
        if 0 <= row < len(configs) and 0 <= new < len(configs):
            configs[row], configs[new] = configs[new], configs[row]
            self.wb.touch()
            self.list.setCurrentRow(new)

    # --- form
    def _show(self, row: int) -> None:
        configs = self._configs()
        self._build_form(configs[row] if 0 <= row < len(configs) else None)

    def _add_field(self, key: str, label: str, widget: QWidget, tip: str = "") -> None:
        if tip:
            widget.setToolTip(tip)
        self.form.addRow(label, widget)
        err = QLabel()
        err.setStyleSheet("color:#d33")
        err.setWordWrap(True)
        err.hide()
        self.form.addRow("", err)
        self.fields[key] = widget
        self.errors[key] = err
        if isinstance(widget, QLineEdit):
            widget.textEdited.connect(self._timer.start)
        elif isinstance(widget, QCheckBox):
            widget.toggled.connect(self._timer.start)
        elif isinstance(widget, QComboBox):
            widget.currentTextChanged.connect(self._timer.start)

    def _build_form(self, c: dict[str, Any] | None) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields.clear()
        self.errors.clear()
        if c is None:
            self.preview.setPlainText("")
            return
        fs = c.get("fs")
        label = QLineEdit(str(c.get("label", "")))
        self._add_field("label", "Label", label, "the name of this configuration in results")
        fs_box = QComboBox()
        fs_box.addItems([AS_IS, *FILESYSTEMS])
        fs_box.setCurrentText(fs or AS_IS)
        self._add_field("fs", "Filesystem", fs_box)
        fs_box.currentTextChanged.connect(self._fs_changed)
        mkfs = dict(c.get("mkfs") or {})
        self.device_confirms = {}
        for name in DEVICE_OPTIONS:
            value = mkfs.get(name)
            if isinstance(value, Mapping):
                mkfs[name] = value.get("path")
                if value.get("path") and value.get("confirm"):
                    self.device_confirms[name] = (str(value["path"]), str(value["confirm"]))
        if fs:
            self.form.addRow(QLabel("<b>mkfs</b>"))
            for name, opt in MKFS_OPTIONS.items():
                if fs not in opt.fs:
                    continue
                value = mkfs.get(name)
                if opt.kind == "bool":
                    w: QWidget = QCheckBox()
                    w.setChecked(bool(value))
                elif opt.kind == "choice" or opt.choices:
                    w = QComboBox()
                    w.addItems(["", *map(str, opt.choices)])
                    w.setCurrentText("" if value is None else str(value))
                else:
                    w = QLineEdit("" if value is None else str(value))
                    w.setPlaceholderText("default")
                    if name in DEVICE_OPTIONS:
                        w.setPlaceholderText("none (a device: wiped, confirmed by its path)")
                        w.editingFinished.connect(lambda n=name: self.confirm_device(n))
                self._add_field(f"mkfs.{name}", name.replace("_", " "), w, opt.help)
            self.form.addRow(QLabel("<b>mount</b>"))
        mount = [str(o) for o in c.get("mount") or []]
        rest = list(mount)
        for name in MOUNT_FIELDS:  # the options with a field of their own (core's table)
            opt = MOUNT_OPTIONS[name]
            if not fs or fs not in opt.fs:
                continue
            current = next((o for o in mount if o == name or o.startswith(name + "=")), None)
            if current is not None:
                rest.remove(current)
            value = current.split("=", 1)[1] if current and "=" in current else ""
            self._add_field(f"mount.{name}", opt.label, mount_widget(opt, current, value),
                            f"mount -o {name}")
        if fs:
            other = QLineEdit(", ".join(rest))
            other.setPlaceholderText("other mount options, comma separated")
            self._add_field("mount", "other options", other,
                            "known: " + ", ".join(sorted(
                                n for n, o in MOUNT_OPTIONS.items() if fs in o.fs)))
        self.form.addRow(QLabel("<b>device</b>"))
        ra = QLineEdit("" if c.get("readahead") is None else str(c.get("readahead")))
        ra.setPlaceholderText("leave as is")
        self._add_field("readahead", "read-ahead (512-byte sectors)", ra,
                        "blockdev --setra; 256 = 128 KiB, 8192 = 4 MiB")
        sched = QComboBox()
        sched.addItems(["", *SCHEDULERS])
        sched.setCurrentText(str(c.get("scheduler") or ""))
        self._add_field("scheduler", "I/O scheduler", sched)
        self._check(c)

    def _fs_changed(self, text: str) -> None:
        row = self.list.currentRow()
        configs = self._configs()
        label = self.fields.get("label")
        if 0 <= row < len(configs) and isinstance(label, QLineEdit):
            # the label the page gave ("ext4 #3") follows the filesystem chosen ("xfs #3");
            # a label the user typed stays
            old = str(configs[row].get("fs") or AS_IS)
            number = label.text().removeprefix(f"{old} #")
            if number != label.text() and number.isdigit():
                label.setText(f"{text or AS_IS} #{number}")
        self._store()
        # rebuild after this signal returns: the combo box emitting it is part of the form
        QTimer.singleShot(0, lambda: self._show(self.list.currentRow()))

    def table_from_form(self) -> dict[str, Any]:
        """The [[config]] table the form shows."""
        def text(key: str) -> str:
            w = self.fields.get(key)
            if isinstance(w, QLineEdit):
                return w.text().strip()
            if isinstance(w, QComboBox):
                return w.currentText().strip()
            return ""

        fs_text = text("fs")
        fs = None if fs_text in ("", AS_IS) else fs_text
        c: dict[str, Any] = {"label": text("label") or "config"}
        if fs:
            c["fs"] = fs
        mkfs: dict[str, Any] = {}
        mount: list[str] = []
        for key, w in self.fields.items():
            if key.startswith("mkfs."):
                name = key[5:]
                if isinstance(w, QCheckBox):
                    if w.isChecked():
                        mkfs[name] = True
                elif name in DEVICE_OPTIONS and text(key):
                    mkfs[name] = self.confirms.value(name, text(key))
                elif text(key):
                    mkfs[name] = _scalar(text(key))
            elif key.startswith("mount."):
                name = key[6:]
                if isinstance(w, QCheckBox):
                    if w.isChecked():
                        mount.append(name)
                elif text(key):
                    mount.append(f"{name}={text(key)}")
        mount += [o.strip() for o in text("mount").split(",") if o.strip()]
        if fs and mkfs:
            c["mkfs"] = mkfs
        if fs and mount:
            c["mount"] = mount
        if text("readahead"):
            c["readahead"] = _scalar(text("readahead"))
        if text("scheduler"):
            c["scheduler"] = text("scheduler")
        return c

    def _store(self) -> None:
        row = self.list.currentRow()
        configs = self._configs()
        if not 0 <= row < len(configs) or "label" not in self.fields:
            return
        c = self.table_from_form()
        configs[row] = c
        item = self.list.item(row)
        if item is not None:
            item.setText(c["label"])
        self._check(c)
        self._mark_list()
        self._loading = True
        try:
            self.wb.touch()
        finally:
            self._loading = False

    def _check(self, c: dict[str, Any]) -> None:
        row = max(self.list.currentRow(), 0)
        lines, self.problems = check_config(c, row + 1, target_device(self.wb.draft.target),
                                            preview_mountpoint())
        self.problems.update(self.confirms.problems(self._device_text))
        for err in self.errors.values():
            err.hide()
        for key, w in self.fields.items():
            mark_invalid(w, key in self.problems)
        for key, message in self.problems.items():
            err = self.errors.get(key) or self.errors.get(key.split(".")[0]) \
                or self.errors.get("label")
            if err is not None:
                err.setText(message)
                err.show()
        self.preview.setPlainText("\n".join(lines) if lines else
                                  "(fix the marked fields to see the commands)")

    def _mark_list(self) -> None:
        """A configuration with problems is red in the list, its first problem in the tooltip:
        what is wrong in another configuration shows without opening it."""
        for i, c in enumerate(self._configs()):
            item = self.list.item(i)
            if item is None:
                continue
            _config, problems = config_from_toml(c, i + 1)
            item.setForeground(QColor(200, 40, 40) if problems else self.palette().text().color())
            item.setToolTip(f"{problems[0][0]}: {problems[0][1]}" if problems else "")

    def confirm_device(self, name: str) -> None:
        """An external journal/log device is destroyed like the target: refused devices are
        said at the field; any other is kept only once its path is typed back
        (device_confirm.DeviceConfirms)."""
        if self.confirms.ask(name, self._device_text(name) or ""):
            self._store()

    def _device_text(self, name: str) -> str | None:
        """The path typed in an external device's field (mkfs.<name>), None without one."""
        w = self.fields.get(f"mkfs.{name}")
        return w.text().strip() if isinstance(w, QLineEdit) else None

    def focus_problem(self, key: str) -> None:
        """Select the configuration a plan key names (config[2].mkfs.journal_size) and put the
        focus in its field."""
        planned = PlanKey.parse(key)
        row = planned.of("config")
        if row is None:
            self.list.setFocus()
            return
        if 0 <= row < self.list.count():
            self.list.setCurrentRow(row)
            table = self._configs()[row]
        else:
            table = {}
        field = config_field(table, planned.rest) if planned.rest else "label"
        w = self.fields.get(field) or self.fields.get(field.split(".")[0]) \
            or self.fields.get("label")
        if w is not None:
            self.form_scroll.ensureWidgetVisible(w)
            w.setFocus()

    def set_field(self, key: str, value: Any) -> None:
        """Change one form field as a user would (tests, keyboard users)."""
        w = self.fields[key]
        if isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, QComboBox):
            w.setCurrentText(str(value))
        elif isinstance(w, QLineEdit):
            w.setText(str(value))
            w.textEdited.emit(str(value))
        self._store()
