"""Test matrix page: tools, their parameters as editable lists, repeats; the plan's size and cost.

A field holding 'a, b' is a matrix axis (the plan's TOML list). The plan is checked by
core.run.summary.check_plan in the thread pool (the check probes the target for O_DIRECT), 300 ms
after the last edit, and the page shows the cases, bytes to write, an estimated duration (the
line `disklab plan validate` prints) and every warning or problem with its key. A problem of a
test parameter is also shown at its field, and a click on a listed problem goes to its field
(on this page, or through the window on the page that has it).

The parameter panel (gui.params_panel) and the "Before you start" box (gui.plan_check_box) are
widgets of their own; this page keeps the draft's tests, the plan's files and the checks.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from disklab.core import tools
from disklab.core.installed import tool_rows
from disklab.core.plan.draft import PlanDraft, parse_field
from disklab.core.plan.keys import PlanKey
from disklab.core.resources import preset_paths
from disklab.core.run.summary import ASSUMED_RATE, PlanSummary, check_plan
from disklab.core.tools.base import REQUIRED
from disklab.gui.invalid_mark import mark_invalid
from disklab.gui.params_panel import ParamsPanel
from disklab.gui.plan_check_box import PlanCheckBox
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

        lay.addLayout(self._file_row())
        lay.addLayout(self._plan_row())

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

        self.params = ParamsPanel()
        self.params.edited.connect(self._param)
        self.params.raw_toggled.connect(self._raw_toggled)
        self.params.options_edited.connect(self._options)
        # the panel's parts, by the names the page's callers know
        self.params_scroll, self.params_host = self.params.scroll, self.params.host
        self.params_form = self.params.form
        self.param_edits, self.param_errors = self.params.edits, self.params.errors
        split.addWidget(self.params)
        # the tools' names whole (iozone's title is the longest), the parameters widest
        self.tools.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tools.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        split.setSizes([250, 200, 550])
        lay.addWidget(split, 1)

        self.check_box = PlanCheckBox()
        self.check_box.problem_clicked.connect(self._problem_clicked)
        self.summary_label, self.problems = self.check_box.summary_label, self.check_box.problems
        lay.addWidget(self.check_box)

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

    def _file_row(self) -> QHBoxLayout:
        """The presets, and the plan's files: load, open, save."""
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
        return top

    def _plan_row(self) -> QHBoxLayout:
        """The plan's own fields: its name, repeats, caches dropped, stop on a failure."""
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
        return meta

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

    @property
    def raw_box(self) -> QCheckBox | None:
        """The shown test's raw-device switch, if its tool has one."""
        return self.params.raw_box

    def _show_test(self, row: int) -> None:
        tests = self.wb.draft.tests
        test = tests[row] if 0 <= row < len(tests) else None
        if self.params.show_test(test, self.wb.draft.stream_target_names):
            self._mark_fields()

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

    def _options(self, table: str, options: dict[str, Any]) -> None:
        """The tool's own options of the test shown ([test.fio_options]), the whole table."""
        row = self.tests.currentRow()
        tests = self.wb.draft.tests
        if not 0 <= row < len(tests):
            return
        if options:
            tests[row][table] = options
        else:
            tests[row].pop(table, None)
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
        self.check_box.show_summary(summary, not self.wb.draft.tests, self.assumed_rate)
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
                by_field.setdefault(key.rest, p.message)  # fio_options.io_sise: its row
        self.params.mark(by_field)
        top = {p.key: p.message for p in self.summary.problems if p.severity == "error"}
        for key, widget in (("name", self.name), ("repeats", self.repeats)):
            mark_invalid(widget, key in top)
            widget.setToolTip(top.get(key, ""))

    def _problem_clicked(self, key: str) -> None:
        if key.startswith(("target", "config")):
            self.wb.problem_requested.emit(key)  # the window shows that page
        else:
            self.focus_problem(key)

    def focus_problem(self, key: str) -> None:
        """Select the test a key names and put the focus in its field (test[2].block_size),
        or on the plan's own field (name, repeats...); 'test' alone: the tools to add one."""
        planned = PlanKey.parse(key)
        row = planned.of("test")
        if row is not None:
            if 0 <= row < self.tests.count():
                self.tests.setCurrentRow(row)
            if not (self.params.focus(planned.rest) or self.params.focus(planned.field or "")):
                self.tests.setFocus()
            return
        widget = {"name": self.name, "repeats": self.repeats, "drop_caches": self.drop,
                  "stop_on_failure": self.stop}.get(key.split(".")[0])
        (widget or self.tools).setFocus()

