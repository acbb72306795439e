"""The Test matrix page's parameter panel: the fields of the test shown, one per parameter of
its tool (a choice as an editable drop-down, the rest as text: 'a, b' makes an axis), its
targets (`on`), its raw-device switch and fio's hosts, the tool's own options as rows of name
and value (`[test.fio_options]`, the names offered from the installed tool's list), each
problem of the last check under its field. The page owns the draft: an edit is handed to it as
(key, text, multi), the options as the whole table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from disklab.core import tools
from disklab.core.plan.draft import field_text
from disklab.core.plan.parse import RAW_TOOLS
from disklab.core.plan.targets import PLACED_TOOLS
from disklab.core.plan.tool_options import tool_options
from disklab.core.tools.base import REQUIRED, ParamSpec
from disklab.gui.invalid_mark import mark_invalid
from disklab.gui.threads import run_in_background

AXIS = "|"  # between an option's values: fio's own values hold commas (cpus_allowed=0,2)


class ParamsPanel(QGroupBox):
    """The fields (`edits` by key, `errors` under them, `raw_box`) of one test at a time."""

    edited = Signal(str, str, bool)  # key, text, multi: typed or picked
    raw_toggled = Signal(bool)
    options_edited = Signal(str, object)  # the options table's key, {name: value} (TOML)

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Parameters (a, b, c = one case per value)", parent)
        lay = QVBoxLayout(self)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.host = QWidget()
        self.form = QFormLayout(self.host)
        # a row too wide for the panel puts its field under its label: never cut off at 1280 px
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.scroll.setWidget(self.host)
        lay.addWidget(self.scroll)
        self.edits: dict[str, QLineEdit] = {}
        self.errors: dict[str, QLabel] = {}
        self.raw_box: QCheckBox | None = None  # `raw`: the test runs on the target's device
        # the tool's own options: (name field, value field) per row, the last one empty
        self.option_rows: list[tuple[QLineEdit, QLineEdit]] = []
        self._options_table = ""
        self._completer = QCompleter([], self)
        self._completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self._completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self._completer.activated.connect(lambda _t: self._options_changed())

    def show_test(self, test: dict[str, Any] | None,
                  streams: Callable[[], list[str]]) -> bool:
        """The fields of `test` (none: an empty panel); `streams`: the names a stream may run
        on (the Target page's). False when there are no fields to mark (no test, or a tool
        DiskLab does not know)."""
        while self.form.rowCount():
            self.form.removeRow(0)
        self.edits.clear()
        self.errors.clear()
        self.raw_box = None
        self.option_rows = []
        self._options_table = ""
        if test is None:
            return False
        try:
            adapter = tools.get_adapter(str(test.get("tool")))
        except KeyError:
            self.form.addRow(QLabel(f"unknown tool {test.get('tool')!r}"))
            return False
        if test.get("tool") in PLACED_TOOLS:  # where its streams run: first, it is the study
            self._on_field(test, streams())
        if test.get("tool") in RAW_TOOLS:
            self._raw_field(test)
        for key, spec in adapter.params.items():
            self._param_row(key, spec, test)
        if test.get("tool") == "fio":  # the machines the job runs on at once (Hosts page)
            self._hosts_field(test)
        if adapter.options_table:
            self._options_fields(adapter.name, adapter.options_table, test)
        return True

    # --- the tool's own options ([test.fio_options])
    def _options_fields(self, tool: str, table: str, test: dict[str, Any]) -> None:
        """A heading, a row per option the test has and an empty one to add the next; the
        names the installed tool lists are offered as one types (read off the GUI thread)."""
        self._options_table = table
        heading = QLabel(f"{tool}'s own options ({table}): name and value; "
                         f"'0 {AXIS} 50' is an axis")
        heading.setWordWrap(True)
        self.form.addRow(heading)
        options = test.get(table)
        for name, value in (options.items() if isinstance(options, dict) else ()):
            self._option_row(str(name), option_text(value))
        self._option_row("", "")
        self._error_row(table)
        run_in_background(lambda: tool_options(tool), self._offer_names, owner=self,
                          latest="options")

    def _offer_names(self, listed: Any, error: Exception | None) -> None:
        if error is None and listed:
            self._completer.setModel(QStringListModel([name for name, _what in listed],
                                                      self._completer))

    def _option_row(self, name: str, value: str) -> None:
        name_edit, value_edit = QLineEdit(name), QLineEdit(value)
        name_edit.setPlaceholderText("option")
        value_edit.setPlaceholderText("value")
        name_edit.setCompleter(self._completer)
        name_edit.setToolTip("one of the tool's own options (fio's names: io_size, "
                             "buffer_compress_percentage, norandommap...); checked by the "
                             "tool itself before anything runs")
        value_edit.setToolTip(f"its value; 0 {AXIS} 50 makes an axis (one case per value); "
                              "true/false, or empty, for a switch")
        row = QWidget()
        lay = QHBoxLayout(row)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(name_edit, 3)
        lay.addWidget(value_edit, 2)
        name_edit.textEdited.connect(lambda _t, e=name_edit: self._option_typed(e))
        value_edit.textEdited.connect(lambda _t: self._options_changed())
        # the row's position among the option rows (the last is the empty one)
        self.form.insertRow(self._options_end(), "", row)
        self.option_rows.append((name_edit, value_edit))
        if name:
            self.edits[f"{self._options_table}.{name}"] = name_edit

    def _options_end(self) -> int:
        """The form row after the last option row (before the options' problem line)."""
        if not self.option_rows:
            return self.form.rowCount()
        last = self.option_rows[-1][0].parentWidget()
        row, _role = self.form.getWidgetPosition(last)
        return row + 1

    def _option_typed(self, edit: QLineEdit) -> None:
        """A name typed (each key, as every field's): in the empty row, another empty row
        under it for the next one."""
        if edit is self.option_rows[-1][0] and edit.text().strip():
            self._option_row("", "")
        self._options_changed()

    def options(self) -> dict[str, Any]:
        """The rows as the plan's table: {name: value}, a value with '|' a list (an axis)."""
        table: dict[str, Any] = {}
        for name_edit, value_edit in self.option_rows:
            name = name_edit.text().strip()
            if name:
                table[name] = option_value(value_edit.text())
        return table

    def _options_changed(self) -> None:
        self.edits = {k: e for k, e in self.edits.items()
                      if not k.startswith(f"{self._options_table}.")}
        for name_edit, _value in self.option_rows:
            if name_edit.text().strip():
                self.edits[f"{self._options_table}.{name_edit.text().strip()}"] = name_edit
        self.options_edited.emit(self._options_table, self.options())

    def _param_row(self, key: str, spec: ParamSpec, test: dict[str, Any]) -> None:
        """A parameter's field, its default as the placeholder, its help, range and choices
        in the tooltip, and the line for its problem under it."""
        field, edit = _param_field(key, spec, test)
        default = "required" if spec.default is REQUIRED else "not set" \
            if spec.default is None else field_text(
                list(spec.default) if isinstance(spec.default, tuple) else spec.default,
                spec.multi)
        edit.setPlaceholderText(default)
        tip = f"{spec.help or key}\n{key}: {spec.kind}"
        if spec.choices:
            tip += f"\nchoices: {', '.join(spec.choices)}"
            if spec.multi:
                tip += "\nseveral at once: write,read; an axis: write,read | write"
        if spec.minimum is not None or spec.maximum is not None:
            tip += f"\nrange: {spec.minimum} … {spec.maximum}"
        edit.setToolTip(tip)
        field.setToolTip(tip)
        edit.textEdited.connect(lambda text, k=key, m=spec.multi: self.edited.emit(k, text, m))
        # its plain name, the tool's own beside it: "queue depth (iodepth)"; the kind of
        # value is in the tooltip, not in the name ("mode", not "mode (choice)")
        name = f"{spec.label} ({key})" if spec.label else key
        self.form.addRow(name, field)
        self.edits[key] = edit
        self._error_row(key)

    def _error_row(self, key: str) -> None:
        err = QLabel()
        err.setWordWrap(True)
        err.setStyleSheet("color:#d33")
        err.hide()
        self.form.addRow("", err)
        self.errors[key] = err

    def _hosts_field(self, test: dict[str, Any]) -> None:
        """fio's `hosts`: 'h1,h2' runs on both at once, 'h1 | h1,h2' is an axis (the scaling
        curve), as a multi parameter is written; empty: this machine."""
        edit = QLineEdit(field_text(test["hosts"], True) if "hosts" in test else "")
        edit.setPlaceholderText("this machine")
        edit.setToolTip("[hosts.*] of the Hosts page the job runs on at once (fio --client)\n"
                        "several at once: h1,h2; an axis: h1 | h1,h2 | h1,h2,h3")
        edit.textEdited.connect(lambda text: self.edited.emit("hosts", text, True))
        self.form.addRow("hosts (fio --client)", edit)
        self.edits["hosts"] = edit

    def _raw_field(self, test: dict[str, Any]) -> None:
        """`raw`: the test runs on the target's block device itself, before any configuration
        is made (an image's loop device, a format target's device): the raw-device section."""
        box = QCheckBox("before the filesystems")
        # as wide as its words: a click beside them would not tick it
        box.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        box.setChecked(test.get("raw") is True)
        box.setToolTip("raw = true: read and write the image's loop device or the format "
                       "target's device itself, in a section of its own (\"raw device\") run "
                       "before any configuration is made; one stream")
        box.toggled.connect(self.raw_toggled)
        self.form.addRow("raw device", box)
        self.raw_box = box

    def _on_field(self, test: dict[str, Any], streams: list[str]) -> None:
        """`on`: the targets a test's streams run on, one name per stream joined by '+'
        ('a+b' one stream on each, 'a+a' two on a); 'a, a+b' is an axis. Empty: the plan's
        only target (or its first)."""
        edit = QLineEdit(field_text(test["on"]) if "on" in test else "")
        edit.setCursorPosition(0)  # a long axis shows its start, not its end
        edit.setPlaceholderText(streams[0] if len(streams) > 1 else "the target")
        edit.setToolTip("the targets this test's streams run on (Target page): a+b is one "
                        "stream on each, a+a two on a; an axis: a, a+b, a+a\n"
                        + ("targets: " + ", ".join(streams) if len(streams) > 1 else
                           "add targets on the Target page to spread streams over them"))
        edit.textEdited.connect(lambda text: self.edited.emit("on", text, False))
        self.form.addRow("on (targets)", edit)
        self.edits["on"] = edit
        self._error_row("on")

    def mark(self, by_field: dict[str, str]) -> None:
        """The last check's problems of this test (field -> message) at their fields; an
        option's ('fio_options.io_sise') at its row, said under the options."""
        if self._options_table:
            said = [f"{k.partition('.')[2]}: {m}" for k, m in by_field.items()
                    if k.startswith(f"{self._options_table}.")]
            by_field = {**by_field, self._options_table:
                        "\n".join(said) or by_field.get(self._options_table, "")}
        for key, edit in self.edits.items():
            message = by_field.get(key)
            mark_invalid(edit, bool(message))
            err = self.errors.get(key)
            if err is not None:
                err.setText(message or "")
                err.setVisible(bool(message))
        table_error = self.errors.get(self._options_table)
        if self._options_table and table_error is not None:
            table_error.setText(by_field[self._options_table])
            table_error.setVisible(bool(by_field[self._options_table]))
        if self.raw_box is not None:
            mark_invalid(self.raw_box, "raw" in by_field)
            self.raw_box.setToolTip(by_field.get("raw", self.raw_box.toolTip()))

    def focus(self, key: str) -> bool:
        """The focus in a field, scrolled into view and its text selected; False if the test
        shown has no such field."""
        edit = self.edits.get(key)
        if edit is None:
            return False
        self.scroll.ensureWidgetVisible(edit)
        edit.setFocus()
        edit.selectAll()
        return True


def option_text(value: Any) -> str:
    """An option's TOML value as its field shows it: a list as 'a | b'."""
    if isinstance(value, list):
        return f" {AXIS} ".join(field_text(v) for v in value)
    return field_text(value)


def option_value(text: str) -> Any:
    """An option's field -> its TOML value: numbers and true/false typed, 'a | b' a list;
    commas are the value's own (fio's cpus_allowed=0,2, bs=4k,64k). An empty field sets a
    switch (true: norandommap); on an option that is not one the check asks for a value at
    the row."""
    parts = [p.strip() for p in text.split(AXIS) if p.strip()]
    values = [_typed(p) for p in parts]
    if not values:
        return True
    return values[0] if len(values) == 1 else values


def _typed(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _param_field(key: str, spec: ParamSpec, test: dict[str, Any]) -> tuple[QWidget, QLineEdit]:
    """A parameter's field and its text: a choice (or yes/no) is a drop-down of its valid
    values, still editable, since 'a, b' makes it an axis; the rest a text field."""
    text = field_text(test[key], spec.multi) if key in test else ""
    choices = spec.choices or (("true", "false") if spec.kind == "bool" else ())
    if not choices:
        edit = QLineEdit(text)
        edit.setCursorPosition(0)  # a long axis shows its start, not its end
        return edit, edit
    combo = QComboBox()
    combo.setEditable(True)
    # as wide as the panel gives it, not as its longest choice demands
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(8)
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    combo.addItems(["", *choices])  # "": the default (the field's placeholder)
    combo.setCurrentText(text)
    edit = combo.lineEdit()
    edit.setCursorPosition(0)
    # a value picked from the list is typed into the plan like a typed one
    combo.textActivated.connect(lambda value, e=edit: e.textEdited.emit(value))
    return combo, edit
