"""Test matrix page: tools, their parameters as editable lists, repeats; the plan's size and cost.

A field holding 'a, b' is a matrix axis (the plan's TOML list). The plan is checked by
core.run.summary.check_plan in the thread pool (the check probes the target for O_DIRECT), 300 ms
after the last edit, and the page shows the cases, bytes to write, an estimated duration (the
line `disklab plan validate` prints) and every warning or problem with its key. A problem of a
test parameter is also shown at its field, and a click on a listed problem goes to its field
(on this page, or through the window on the page that has it).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from disklab.core import tools
from disklab.core.installed import tool_rows
from disklab.core.plan.draft import PlanDraft, field_text, parse_field
from disklab.core.plan.keys import PlanKey
from disklab.core.plan.parse import RAW_TOOLS
from disklab.core.plan.targets import PLACED_TOOLS
from disklab.core.resources import preset_paths
from disklab.core.run.summary import ASSUMED_RATE, PlanSummary, check_plan, summary_text
from disklab.core.tools.base import REQUIRED, ParamSpec
from disklab.core.vocab.errors import Problem
from disklab.gui.pages.target import mark_invalid
from disklab.gui.state import Workbench
from disklab.gui.threads import run_in_background

FIELD_KEYS = ("name", "repeats", "drop_caches", "stop_on_failure")


class MatrixPage(QWidget):
    title = "Test matrix"
    checked = Signal(object)  # PlanSummary

    def __init__(self, wb: Workbench, parent: QWidget | None = None):
        super().__init__(parent)
        self.wb = wb
        self.summary = PlanSummary()
        self.assumed_rate = ASSUMED_RATE
        self._checking = False
        self._again = False
        lay = QVBoxLayout(self)

        top = QHBoxLayout()
        self.preset = QComboBox()
        self.preset.addItem("(choose a preset)", None)
        for p in preset_paths():
            self.preset.addItem(p.stem, str(p))
        load = QPushButton("Load preset")
        load.clicked.connect(lambda: self.load_file(self.preset.currentData()))
        open_btn = QPushButton("Open plan…")
        open_btn.clicked.connect(self._open)
        save_btn = QPushButton("Save plan…")
        save_btn.clicked.connect(self._save)
        top.addWidget(QLabel("Preset"))
        top.addWidget(self.preset, 1)
        for b in (load, open_btn, save_btn):
            top.addWidget(b)
        lay.addLayout(top)

        meta = QHBoxLayout()
        self.name = QLineEdit()
        self.repeats = QSpinBox()
        self.repeats.setRange(1, 100)
        self.drop = QCheckBox("drop caches between cases")
        self.stop = QCheckBox("stop on the first failure")
        meta.addWidget(QLabel("Name"))
        meta.addWidget(self.name, 2)
        meta.addWidget(QLabel("Repeats"))
        meta.addWidget(self.repeats)
        meta.addWidget(self.drop)
        meta.addWidget(self.stop)
        lay.addLayout(meta)

        split = QSplitter()
        tools_box = QGroupBox("Tools")
        tl = QVBoxLayout(tools_box)
        self.tools = QListWidget()
        tl.addWidget(self.tools)
        add = QPushButton("&Add a test with this tool")
        add.clicked.connect(lambda: self.add_test(self._current_tool()))
        tl.addWidget(add)
        split.addWidget(tools_box)

        tests_box = QGroupBox("Tests ([[test]] tables)")
        tsl = QVBoxLayout(tests_box)
        self.tests = QListWidget()
        self.tests.currentRowChanged.connect(self._show_test)
        tsl.addWidget(self.tests)
        row = QHBoxLayout()
        dup = QPushButton("Duplicate")
        dup.clicked.connect(self.duplicate_test)
        rm = QPushButton("Remove")
        rm.clicked.connect(self.remove_test)
        row.addWidget(dup)
        row.addWidget(rm)
        tsl.addLayout(row)
        split.addWidget(tests_box)

        params_box = QGroupBox("Parameters (a, b, c = one case per value)")
        pl = QVBoxLayout(params_box)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        self.params_scroll = scroll
        self.params_host = QWidget()
        self.params_form = QFormLayout(self.params_host)
        # a row too wide for the panel puts its field under its label: never cut off at 1280 px
        self.params_form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        scroll.setWidget(self.params_host)
        pl.addWidget(scroll)
        split.addWidget(params_box)
        # the tools' names whole (iozone's title is the longest), the parameters widest
        self.tools.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tools.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        split.setSizes([250, 200, 550])
        lay.addWidget(split, 1)

        sum_box = QGroupBox("Before you start")
        sl = QVBoxLayout(sum_box)
        self.summary_label = QLabel("…")
        self.summary_label.setWordWrap(True)
        sl.addWidget(self.summary_label)
        self.problems = QListWidget()
        self.problems.setMaximumHeight(130)
        self.problems.setWordWrap(True)
        self.problems.setToolTip("click a problem to go to its field")
        self.problems.itemClicked.connect(self._problem_clicked)
        self.problems.itemActivated.connect(self._problem_clicked)
        sl.addWidget(self.problems)
        lay.addWidget(sum_box)

        self.param_edits: dict[str, QLineEdit] = {}
        self.raw_box: QCheckBox | None = None  # `raw`: the test runs on the target's device
        self.param_errors: dict[str, QLabel] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(300)
        self._timer.timeout.connect(self.validate)
        self.name.textEdited.connect(lambda t: self._set("name", t))
        self.repeats.valueChanged.connect(lambda v: self._set("repeats", v))
        self.drop.toggled.connect(lambda v: self._set("drop_caches", v))
        self.stop.toggled.connect(lambda v: self._set("stop_on_failure", v))
        wb.draft_changed.connect(self._draft_changed)
        self._fill_tools()
        self.load_draft()

    # --- tools
    def _fill_tools(self) -> None:
        self.tools.clear()
        try:
            rows = tool_rows()
        except Exception as e:  # a broken adapter must not take the page down
            rows = []
            self.tools.addItem(f"(tools unavailable: {e})")
        for r in rows:
            item = QListWidgetItem(r.label)
            item.setData(Qt.ItemDataRole.UserRole, r.name)
            if not r.installed:
                item.setForeground(QColor(140, 140, 140))
                item.setToolTip(f"install it with: {r.install_hint}")
            else:
                item.setToolTip(r.title)
            self.tools.addItem(item)
        if self.tools.count():
            self.tools.setCurrentRow(0)

    def _current_tool(self) -> str | None:
        item = self.tools.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item else None

    # --- draft
    def _set(self, key: str, value: Any) -> None:
        self.wb.draft.set(key, value)
        self._changed()

    def _changed(self) -> None:
        self._timer.start()

    def _draft_changed(self) -> None:
        self.load_draft()

    def load_draft(self) -> None:
        d = self.wb.draft
        for w in (self.name, self.repeats, self.drop, self.stop):
            w.blockSignals(True)
        self.name.setText(str(d.get("name", "")))
        self.repeats.setValue(int(d.get("repeats", 1) or 1))
        self.drop.setChecked(bool(d.get("drop_caches", False)))
        self.stop.setChecked(bool(d.get("stop_on_failure", False)))
        for w in (self.name, self.repeats, self.drop, self.stop):
            w.blockSignals(False)
        row = self.tests.currentRow()
        self.tests.blockSignals(True)
        self.tests.clear()
        for i, t in enumerate(d.tests):
            self.tests.addItem(self._test_title(i, t))
        self.tests.blockSignals(False)
        if d.tests:
            self.tests.setCurrentRow(min(max(row, 0), len(d.tests) - 1))
        self._show_test(self.tests.currentRow())
        self._changed()

    def _test_title(self, i: int, t: dict[str, Any]) -> str:
        axes = [k for k, v in t.items() if isinstance(v, list) and k != "tool"]
        return f"{i + 1}. {t.get('tool', '?')}" + (f" ({', '.join(axes)})" if axes else "")

    def add_test(self, tool: str | None) -> None:
        if not tool:
            return
        self.wb.draft.tests.append({"tool": tool})
        self.wb.touch()
        self.tests.setCurrentRow(len(self.wb.draft.tests) - 1)
        # typing goes on where the test needs it: its first required parameter
        adapter = tools.get_adapter(tool)
        first = next((k for k, s in adapter.params.items() if s.default is REQUIRED),
                     next(iter(self.param_edits), None))
        if first in self.param_edits:
            self.param_edits[first].setFocus()

    def duplicate_test(self) -> None:
        row = self.tests.currentRow()
        tests = self.wb.draft.tests
        if 0 <= row < len(tests):
            tests.insert(row + 1, dict(tests[row]))
            self.wb.touch()
            self.tests.setCurrentRow(row + 1)

    def remove_test(self) -> None:
        row = self.tests.currentRow()
        tests = self.wb.draft.tests
        if 0 <= row < len(tests):
            del tests[row]
            self.wb.touch()

    def _show_test(self, row: int) -> None:
        while self.params_form.rowCount():
            self.params_form.removeRow(0)
        self.param_edits.clear()
        self.param_errors.clear()
        self.raw_box = None
        tests = self.wb.draft.tests
        if not 0 <= row < len(tests):
            return
        test = tests[row]
        try:
            adapter = tools.get_adapter(str(test.get("tool")))
        except KeyError:
            self.params_form.addRow(QLabel(f"unknown tool {test.get('tool')!r}"))
            return
        if test.get("tool") in PLACED_TOOLS:  # where its streams run: first, it is the study
            self._on_field(test)
        if test.get("tool") in RAW_TOOLS:
            self._raw_field(test)
        for key, spec in adapter.params.items():
            field, edit = self._param_field(key, spec, test)
            default = "required" if spec.default is REQUIRED else "not set" \
                if spec.default is None else field_text(
                    list(spec.default) if isinstance(spec.default, tuple) else spec.default,
                    spec.multi)
            edit.setPlaceholderText(default)
            tip = spec.help or key
            if spec.choices:
                tip += f"\nchoices: {', '.join(spec.choices)}"
                if spec.multi:
                    tip += "\nseveral at once: write,read; an axis: write,read | write"
            if spec.minimum is not None or spec.maximum is not None:
                tip += f"\nrange: {spec.minimum} … {spec.maximum}"
            edit.setToolTip(tip)
            field.setToolTip(tip)
            edit.textEdited.connect(lambda text, k=key, m=spec.multi: self._param(k, text, m))
            # its plain name, the tool's own beside it: "queue depth (iodepth)"
            name = f"{spec.label} ({key})" if spec.label else f"{key} ({spec.kind})"
            self.params_form.addRow(name, field)
            self.param_edits[key] = edit
            err = QLabel()
            err.setWordWrap(True)
            err.setStyleSheet("color:#d33")
            err.hide()
            self.params_form.addRow("", err)
            self.param_errors[key] = err
        if test.get("tool") == "fio":  # the machines the job runs on at once (Hosts page)
            self._hosts_field(test)
        self._mark_fields()

    def _param_field(self, key: str, spec: ParamSpec,
                     test: dict[str, Any]) -> tuple[QWidget, QLineEdit]:
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

    def _hosts_field(self, test: dict[str, Any]) -> None:
        """fio's `hosts`: 'h1,h2' runs on both at once, 'h1 | h1,h2' is an axis (the scaling
        curve), as a multi parameter is written; empty: this machine."""
        edit = QLineEdit(field_text(test["hosts"], True) if "hosts" in test else "")
        edit.setPlaceholderText("this machine")
        edit.setToolTip("[hosts.*] of the Hosts page the job runs on at once (fio --client)\n"
                        "several at once: h1,h2; an axis: h1 | h1,h2 | h1,h2,h3")
        edit.textEdited.connect(lambda text: self._param("hosts", text, True))
        self.params_form.addRow("hosts (fio --client)", edit)
        self.param_edits["hosts"] = edit

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
        box.toggled.connect(self._raw_toggled)
        self.params_form.addRow("raw device", box)
        self.raw_box = box

    def _raw_toggled(self, checked: bool) -> None:
        row = self.tests.currentRow()
        tests = self.wb.draft.tests
        if not 0 <= row < len(tests):
            return
        if checked:
            tests[row]["raw"] = True
        else:
            tests[row].pop("raw", None)
        self._changed()

    def _on_field(self, test: dict[str, Any]) -> None:
        """`on`: the targets a test's streams run on, one name per stream joined by '+'
        ('a+b' one stream on each, 'a+a' two on a); 'a, a+b' is an axis. Empty: the plan's
        only target (or its first)."""
        streams = self.wb.draft.stream_target_names()
        edit = QLineEdit(field_text(test["on"]) if "on" in test else "")
        edit.setCursorPosition(0)  # a long axis shows its start, not its end
        edit.setPlaceholderText(streams[0] if len(streams) > 1 else "the target")
        edit.setToolTip("the targets this test's streams run on (Target page): a+b is one "
                        "stream on each, a+a two on a; an axis: a, a+b, a+a\n"
                        + ("targets: " + ", ".join(streams) if len(streams) > 1 else
                           "add targets on the Target page to spread streams over them"))
        edit.textEdited.connect(lambda text: self._param("on", text, False))
        self.params_form.addRow("on (targets)", edit)
        self.param_edits["on"] = edit
        err = QLabel()
        err.setWordWrap(True)
        err.setStyleSheet("color:#d33")
        err.hide()
        self.params_form.addRow("", err)
        self.param_errors["on"] = err

    def _param(self, key: str, text: str, multi: bool) -> None:
        row = self.tests.currentRow()
        tests = self.wb.draft.tests
        if not 0 <= row < len(tests):
            return
        value = parse_field(text, multi)
        if value in ("", []):
            tests[row].pop(key, None)
        else:
            tests[row][key] = value
        item = self.tests.item(row)
        if item is not None:
            item.setText(self._test_title(row, tests[row]))
        self._changed()

    def set_param(self, key: str, text: str) -> None:
        """Type into a parameter field (tests and keyboard users alike)."""
        edit = self.param_edits[key]
        edit.setText(text)
        edit.textEdited.emit(text)

    # --- files
    def load_file(self, path: str | None) -> None:
        if not path:
            return
        try:
            draft = PlanDraft.load(path)
        except (OSError, ValueError) as e:
            QMessageBox.warning(self, "Cannot open the plan", f"{path}: {e}")
            return
        index = self.preset.findData(str(path))
        if index >= 0:
            self.preset.setCurrentIndex(index)
        self.wb.set_draft(draft)

    def _open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open plan", "", "Plans (*.toml)")
        self.load_file(path)

    def _save(self) -> bool:
        """Save to the plan's own file without asking (a plan opened or saved before), or ask
        where (a new plan, a shipped preset). True when saved. Close's "Save" opened a file
        dialog on the same file and then "Replace?": three dialogs for one save."""
        path = self.wb.draft.path
        if path and path not in {str(p) for p in preset_paths()}:
            try:
                self.wb.draft.save(path)
            except OSError as e:
                QMessageBox.warning(self, "Not saved", f"Cannot write {path}: {e}")
                return False
            self.wb.draft_saved.emit()
            return True
        return self._save_as()

    def _save_as(self) -> bool:
        """Ask where to save the plan (the file dialog asks before replacing a file)."""
        start = self.wb.draft.path or f"{self.wb.draft.get('name', 'plan')}.toml"
        if start in {str(p) for p in preset_paths()}:  # a shipped preset is not saved over
            start = f"{self.wb.draft.get('name', 'plan')}.toml"
        path, _ = QFileDialog.getSaveFileName(self, "Save plan", start, "Plans (*.toml)")
        if not path:
            return False
        self.wb.draft.save(path)
        self.wb.draft_saved.emit()
        return True

    # --- checking
    def validate(self) -> None:
        if self._checking:
            self._again = True
            return
        self._checking = True
        text = self.wb.draft.to_text()
        library = str(self.wb.library_path)
        run_in_background(lambda: check_plan(text, library), self._checked, self)

    def _checked(self, summary: PlanSummary | None, error: Exception | None) -> None:
        self._checking = False
        if self._again:  # edited while checking: this verdict is stale, check the new text
            self._again = False
            self.validate()
            return
        if error is not None:
            summary = PlanSummary(errors=[f"cannot check the plan: {error}"])
        assert summary is not None
        self.summary = summary
        self.problems.clear()
        problems = summary.problems or [Problem("", e) for e in summary.errors]
        errors = [p for p in problems if p.severity == "error"]
        warnings = [p for p in problems if p.severity != "error"]
        for p in errors + warnings:
            if p.key == "test" and not self.wb.draft.tests:  # a new plan: what to do next
                item = QListWidgetItem("next: choose a tool on the left and press "
                                       "'Add a test with this tool'")
                item.setForeground(QColor(40, 90, 160))
            else:
                where = f"line {p.line}: " if p.line else ""
                item = QListWidgetItem(f"{p.severity}: {p.key}: {p.message}" if p.key else
                                       f"{p.severity}: {where}{p.message}")
                item.setForeground(QColor(200, 50, 50) if p.severity == "error"
                                   else QColor(190, 120, 0))
                if where:
                    item.setToolTip(f"{where.rstrip(': ')} of the plan's TOML; click to go to "
                                    "the field")
            item.setData(Qt.ItemDataRole.UserRole, p.key)
            self.problems.addItem(item)
        if not summary.problems:  # an exception, not a verdict
            for w in summary.warnings:
                item = QListWidgetItem(f"warning: {w}")
                item.setForeground(QColor(190, 120, 0))
                self.problems.addItem(item)
        # the same line `disklab plan validate` prints (core.run.summary.summary_text)
        if summary.errors and errors and all(p.key == "test" for p in errors) \
                and not self.wb.draft.tests:
            self.summary_label.setText("No tests yet.")
        else:
            self.summary_label.setText(summary_text(summary, self.assumed_rate))
        self._mark_fields()
        self.checked.emit(summary)
        self.wb.plan_checked.emit(summary)

    # --- problems at their fields
    def _mark_fields(self) -> None:
        """The last check's problems of the test shown, at its parameter fields; the plan's
        own keys (name, repeats...) at theirs."""
        row = self.tests.currentRow()
        by_field: dict[str, str] = {}
        for p in self.summary.problems:
            key = PlanKey.parse(p.key)
            if key.field and key.of("test") == row and p.severity == "error":
                by_field.setdefault(key.field, p.message)
        for key, edit in self.param_edits.items():
            message = by_field.get(key)
            mark_invalid(edit, bool(message))
            err = self.param_errors.get(key)
            if err is not None:
                err.setText(message or "")
                err.setVisible(bool(message))
        if self.raw_box is not None:
            mark_invalid(self.raw_box, "raw" in by_field)
            self.raw_box.setToolTip(by_field.get("raw", self.raw_box.toolTip()))
        top = {p.key: p.message for p in self.summary.problems if p.severity == "error"}
        for key, widget in (("name", self.name), ("repeats", self.repeats)):
            mark_invalid(widget, key in top)
            widget.setToolTip(top.get(key, ""))

    def _problem_clicked(self, item: QListWidgetItem) -> None:
        key = item.data(Qt.ItemDataRole.UserRole)
        if not key:
            return
        if key.startswith(("target", "config")):
            self.wb.problem_requested.emit(str(key))  # the window shows that page
        else:
            self.focus_problem(str(key))

    def focus_problem(self, key: str) -> None:
        """Select the test a key names and put the focus in its field (test[2].block_size),
        or on the plan's own field (name, repeats...); 'test' alone: the tools to add one."""
        planned = PlanKey.parse(key)
        row = planned.of("test")
        if row is not None:
            if 0 <= row < self.tests.count():
                self.tests.setCurrentRow(row)
            field = planned.field
            edit = self.param_edits.get(field or "")
            if edit is not None:
                self.params_scroll.ensureWidgetVisible(edit)
                edit.setFocus()
                edit.selectAll()
            else:
                self.tests.setFocus()
            return
        widget = {"name": self.name, "repeats": self.repeats, "drop_caches": self.drop,
                  "stop_on_failure": self.stop}.get(key.split(".")[0])
        (widget or self.tools).setFocus()

