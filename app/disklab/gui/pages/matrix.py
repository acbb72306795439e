"""Test matrix page: tools, their parameters as editable lists, repeats; the plan's size and cost.

A field holding 'a, b' is a matrix axis (the plan's TOML list). The plan is checked by
core.plan in the thread pool (the check probes the target for O_DIRECT), 300 ms after the last
edit, and the page shows the cases, bytes to write, an estimated duration and every warning or
problem with its key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
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
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from disklab.core.units import MiB, human_bytes
from disklab.gui.draft import PlanDraft, field_text, parse_field, presets
from disklab.gui.state import Workbench
from disklab.gui.threads import run_in_background


@dataclass
class PlanSummary:
    """What the check found: counts, bytes, and problems/warnings as text."""

    cases: int = 0
    runs: int = 0
    bytes: int = 0
    runtime: float = 0.0  # seconds of time-bound cases (runtime = ...)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    plan: Any = None  # the checked core Plan, when there are no errors
    needs_password: bool = False  # sudo will want one for the privileged helper


def check_plan(text: str, library: str | None) -> PlanSummary:
    """core.plan's verdict on a plan text (runs in the thread pool)."""
    from disklab.core.errors import PlanError
    from disklab.core.matrix import expand
    from disklab.core.plan import parse_plan
    from disklab.core.privilege import password_needed
    from disklab.core.runner import plan_runs

    summary = PlanSummary()
    try:
        checked = parse_plan(text, library=library)
    except PlanError as e:
        summary.errors = [str(p) for p in e.problems]
        return summary
    summary.plan = checked.plan
    summary.warnings = [str(w) for w in checked.warnings]
    summary.cases = len(expand(checked.plan))
    runs = plan_runs(checked.plan)
    summary.runs = len(runs)
    summary.bytes = sum(r.command.planned_bytes or 0 for r in runs)
    summary.runtime = sum(float(r.case.params.get("runtime") or 0) for r in runs)
    summary.needs_password = password_needed(checked.plan)
    return summary


def estimate_seconds(summary: PlanSummary, rate: float) -> float:
    """Bytes at an assumed rate; a time-bound case (runtime = ...) lasts at least its runtime."""
    return max(summary.bytes / rate if rate else 0.0, summary.runtime)


def tool_rows() -> list[dict[str, Any]]:
    """Each tool with an adapter: name, title, installed, how to install."""
    from disklab.core import tools
    from disklab.core.proc import which

    rows = []
    for name in tools.tool_names():
        try:
            adapter = tools.get_adapter(name)
        except Exception:
            continue
        installed = not adapter.executable or which(adapter.executable) is not None
        rows.append({"name": name, "title": adapter.title, "installed": installed,
                     "package": adapter.package, "adapter": adapter})
    return rows


class MatrixPage(QWidget):
    title = "Test matrix"
    checked = Signal(object)  # PlanSummary

    def __init__(self, wb: Workbench, parent: QWidget | None = None):
        super().__init__(parent)
        self.wb = wb
        self.summary = PlanSummary()
        self.assumed_rate = 200 * MiB
        self._checking = False
        self._again = False
        lay = QVBoxLayout(self)

        top = QHBoxLayout()
        self.preset = QComboBox()
        self.preset.addItem("(choose a preset)", None)
        for p in presets():
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
        add = QPushButton("Add a test with this tool")
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
        self.params_host = QWidget()
        self.params_form = QFormLayout(self.params_host)
        scroll.setWidget(self.params_host)
        pl.addWidget(scroll)
        split.addWidget(params_box)
        split.setSizes([200, 260, 420])
        lay.addWidget(split, 1)

        sum_box = QGroupBox("Before you start")
        sl = QVBoxLayout(sum_box)
        self.summary_label = QLabel("…")
        self.summary_label.setWordWrap(True)
        sl.addWidget(self.summary_label)
        self.problems = QListWidget()
        self.problems.setMaximumHeight(130)
        self.problems.setWordWrap(True)
        sl.addWidget(self.problems)
        lay.addWidget(sum_box)

        self.param_edits: dict[str, QLineEdit] = {}
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
            item = QListWidgetItem(f"{r['name']} — {r['title']}")
            item.setData(Qt.ItemDataRole.UserRole, r["name"])
            if not r["installed"]:
                item.setForeground(QColor(140, 140, 140))
                item.setText(f"{r['name']} — not installed")
                item.setToolTip(f"install it with: sudo apt install {r['package']}")
            else:
                item.setToolTip(r["title"])
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
        tests = self.wb.draft.tests
        if not 0 <= row < len(tests):
            return
        test = tests[row]
        try:
            from disklab.core import tools
            from disklab.core.tools.base import REQUIRED

            adapter = tools.get_adapter(str(test.get("tool")))
        except (KeyError, ImportError):
            self.params_form.addRow(QLabel(f"unknown tool {test.get('tool')!r}"))
            return
        for key, spec in adapter.params.items():
            edit = QLineEdit(field_text(test[key], spec.multi) if key in test else "")
            default = "required" if spec.default is REQUIRED else field_text(
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
            edit.textEdited.connect(lambda text, k=key, m=spec.multi: self._param(k, text, m))
            self.params_form.addRow(f"{key} ({spec.kind})", edit)
            self.param_edits[key] = edit

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

    def _save(self) -> None:
        start = self.wb.draft.path or f"{self.wb.draft.get('name', 'plan')}.toml"
        path, _ = QFileDialog.getSaveFileName(self, "Save plan", start, "Plans (*.toml)")
        if path:
            self.wb.draft.save(path)

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
        for e in summary.errors:
            item = QListWidgetItem(f"error: {e}")
            item.setForeground(QColor(200, 50, 50))
            self.problems.addItem(item)
        for w in summary.warnings:
            item = QListWidgetItem(f"warning: {w}")
            item.setForeground(QColor(190, 120, 0))
            self.problems.addItem(item)
        if summary.errors:
            self.summary_label.setText(f"<b>{len(summary.errors)} problem(s)</b> to fix before "
                                       "the plan can run.")
        else:
            seconds = estimate_seconds(summary, self.assumed_rate)
            self.summary_label.setText(
                f"<b>{summary.cases} case(s)</b> × {self.wb.draft.get('repeats', 1)} "
                f"repeat(s) = {summary.runs} run(s); about {human_bytes(summary.bytes)} moved; "
                f"estimated {format_duration(seconds)} at "
                f"{self.assumed_rate / MiB:.0f} MiB/s.")
        self.checked.emit(summary)


def format_duration(seconds: float) -> str:
    if seconds is None:
        return ""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def preset_path(name: str) -> Path | None:
    for p in presets():
        if p.stem == name:
            return p
    return None
