"""The Run page's two progress bars: the whole session's (over every case x repeat, by time for
time-based cases, with the core's ETA: core.run.progress) and the running case's. Their words
are inside them, so no label beside them grows, and they are drawn in the refresh's one paint."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QWidget

from disklab.core.run.summary import format_duration
from disklab.core.vocab.events import Progress

BAR_STYLE = """
QProgressBar { border: 1px solid #8a8a8a; border-radius: 4px; background: #dfe3e8;
               color: #1a1a1a; text-align: center; min-height: 20px; max-height: 20px; }
QProgressBar::chunk { background: #6fa8dc; border-radius: 3px; }
"""  # a bar, even empty, never looks like a text field


class RunBars:
    """The overall bar and the case's bar, and the run count they speak of."""

    def __init__(self) -> None:
        self.overall = QProgressBar()
        self.case = QProgressBar()
        for bar in (self.overall, self.case):
            bar.setRange(0, 1000)
            bar.setStyleSheet(BAR_STYLE)
        self.run_count = 0  # the session's runs (case x repeat) and the one going
        self.run_index = 0
        self.idle()

    def layout(self) -> QHBoxLayout:
        """The two bars side by side, the overall one wider."""
        bars = QHBoxLayout()
        bars.addWidget(self.overall, 3)
        bars.addWidget(self.case, 2)
        return bars

    def idle(self) -> None:
        """Nothing of a previous run in them."""
        self.overall.setValue(0)
        self.overall.setFormat("overall: no run going")
        self.case.setValue(0)
        self.case.setFormat("case: –")

    def setting_up(self) -> None:
        """The run was handed to the worker: not "no run going" beside Running."""
        self.overall.setFormat("overall: setting up")

    def case_starting(self, number: int) -> None:
        self.case.setValue(0)
        self.case.setFormat(f"case {number}: starting")

    def show(self, ev: Progress) -> None:
        """A progress event drawn with the window's next paint (see _quiet)."""
        with _quiet(self.case), _quiet(self.overall):
            self._set(ev)

    def _set(self, ev: Progress) -> None:
        fraction = ev.fraction
        if fraction is None and ev.total_bytes and ev.done_bytes is not None:
            fraction = min(1.0, ev.done_bytes / ev.total_bytes)
        if fraction is not None:
            self.case.setValue(int(1000 * fraction))
        eta = f" · ETA {format_duration(ev.eta)}" if ev.eta is not None else ""
        phase = f" · {ev.phase}" if ev.phase and ev.phase != "done" else ""
        share = f" {fraction * 100:.0f} %" if fraction is not None else ""
        self.case.setFormat(f"case{share}{phase} · {format_duration(ev.elapsed)}{eta}")
        if ev.overall is not None:
            self.overall.setValue(int(1000 * ev.overall))
            runs = ev.runs_done if ev.runs_done is not None else self.run_index
            text = f"overall {ev.overall * 100:.0f} % · {runs} of {self.run_count} runs done"
            if ev.overall_eta is not None:
                text += f" · ETA {format_duration(ev.overall_eta)}"
            self.overall.setFormat(text)

    def ended(self, status: str, total: int, complete: int, cancelled: int,
              failed: int) -> None:
        """The overall bar once the session ended: its complete runs, and those cancelled or
        failed, counted as such (not "6 of 8 runs done" with one of them cancelled).
        `total`: the session's runs when no case said how many (0 runs counted)."""
        text = f"{status} · {complete} of {self.run_count or total} runs complete"
        if cancelled:
            text += f" · {cancelled} cancelled"
        if failed:
            text += f" · {failed} failed"
        self.overall.setFormat(text)


@contextlib.contextmanager
def _quiet(widget: QWidget) -> Iterator[None]:
    """Changes to `widget` drawn with the window's next paint, not at once: QProgressBar's
    setValue repaints synchronously, and each such repaint was a paint and flush of its own,
    with the page's and the window's backgrounds under it, twice per bar per refresh (bench
    figure 2: 125 bar paints in 30 s for 30 refreshes)."""
    widget.setUpdatesEnabled(False)
    try:
        yield
    finally:
        widget.setUpdatesEnabled(True)  # posts one update(): painted with everything else
