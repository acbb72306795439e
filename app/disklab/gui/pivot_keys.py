"""The Compare page's pivot choices: which keys its rows and columns go by and which metric
its cells show, offered on three combos (the plan's [report] keys first, then the keys that
vary among the rows) and read back as keys. Apart from the page, which builds and draws the
pivot, because what to offer is a subject of its own: it follows the rows compared, not the
page's widgets."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QComboBox

from disklab.core.results.pivot import valid_keys, value_of
from disklab.core.vocab.model import Report

MAIN_METRIC = "each test's main figure"

Keys = tuple[str, ...]


class PivotKeys:
    """The rows, columns and metric combos of one pivot: offer() fills them, chosen() reads
    them."""

    def __init__(self, rows: QComboBox, cols: QComboBox, metric: QComboBox) -> None:
        self.rows = rows
        self.cols = cols
        self.metric = metric

    def offer(self, report: Report | None, rows: list[dict[str, Any]]) -> None:
        """The keys the combos offer: the plan's [report] keys first (of the first session),
        then config, test, the keys that vary among the rows, then the rest; the metrics
        the rows have. The current choice is kept when it is still offered."""
        varying = [k for k in valid_keys(rows)
                   if len({repr(value_of(r, k)) for r in rows}) > 1]
        offered = list(dict.fromkeys(["config", "test", *varying, "tool", "metric"]))
        for combo, default in ((self.rows, report.rows if report else ("config",)),
                               (self.cols, report.columns if report else ("test",))):
            current = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            choices = [tuple(default)] + [(k,) for k in offered if (k,) != tuple(default)]
            for keys in choices:
                combo.addItem(" / ".join(keys), keys)
            i = combo.findData(current) if current is not None else -1
            combo.setCurrentIndex(max(i, 0))
            combo.blockSignals(False)
        current = self.metric.currentData()
        self.metric.blockSignals(True)
        self.metric.clear()
        if report and report.metrics:
            self.metric.addItem(", ".join(report.metrics), tuple(report.metrics))
        self.metric.addItem(MAIN_METRIC, ())
        suffixes = list(dict.fromkeys(str(r.get("metric", "")).partition(":")[2]
                                      for r in rows))
        for suffix in suffixes:
            if suffix:
                self.metric.addItem(suffix, (suffix,))
        i = self.metric.findData(current) if current is not None else -1
        self.metric.setCurrentIndex(max(i, 0))
        self.metric.blockSignals(False)

    def chosen(self) -> tuple[Keys, Keys, Keys]:
        """(rows, columns, metrics) as chosen; a column key that is also a row key is left
        out, and columns never end up empty."""
        rows = tuple(self.rows.currentData() or ("config",))
        cols = tuple(self.cols.currentData() or ("test",))
        cols = tuple(k for k in cols if k not in rows) or (
            ("test",) if "test" not in rows else ("config",))
        return rows, cols, tuple(self.metric.currentData() or ())
