"""The live plots made when first shown, so the window appears without them and numpy.

Importing the plotting stack is most of what importing the GUI takes (bench figure 6, `python -X
importtime`: pyqtgraph with numpy 0.5 s of 0.77 s), and only the Run page's live plots need it
(the Library's and Compare's charts are SVG: gui/chart.py). The Run page holds a `Deferred` in
their place: a plain QWidget that builds the real one (importing `disklab.gui.plots` then) right
after it was first painted (empty, with the window's first frame), or the first time anything
asks it for more than it records. Until then it keeps what it was handed that must not be lost:
the samples and markers of a run started before the Run page was shown are replayed into the
live plots when they are made, so the plots hold the whole run. Past RECORD_LIMIT recorded calls
(a long run watched from another page) the real widget is made anyway, hidden, so the record
never grows without bound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QVBoxLayout, QWidget

RECORD_LIMIT = 20_000  # calls kept before the real widget is made (~15 min of a run's samples)
SHOWN_MS = 250  # made this long after being shown at the latest, painted or not


class Deferred(QWidget):
    """Stands in for the widget `make()` returns, inside a layout of its own.

    `recorded`: methods that, before the widget exists, are kept and replayed on it in order;
    `dropped`: methods that do nothing before (a redraw of plots nobody has seen); `reset`: a
    method that drops what was recorded (and is itself not replayed: the new widget is empty
    already); `attributes`: plain attributes set on the stand-in and handed on. Anything else
    asked of the stand-in makes the widget and is answered by it."""

    def __init__(self, make: Callable[[], QWidget], recorded: frozenset[str] = frozenset(),
                 dropped: frozenset[str] = frozenset(), reset: str | None = None,
                 attributes: dict[str, Any] | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.__dict__["_d"] = {"make": make, "real": None, "calls": [], "recorded": recorded,
                               "dropped": dropped, "reset": reset,
                               "attributes": dict(attributes or {})}

    @property
    def made(self) -> bool:
        """Whether the real widget exists (for tests: nothing was imported before)."""
        return self._d["real"] is not None

    def real(self) -> QWidget:
        """The real widget, made now if it was not, with everything recorded replayed."""
        d = self._d
        if d["real"] is None:
            real = d["make"]()
            for name, value in d["attributes"].items():
                setattr(real, name, value)
            self.layout().addWidget(real)
            d["real"] = real
            calls, d["calls"] = d["calls"], []
            for name, args, kwargs in calls:
                getattr(real, name)(*args, **kwargs)
            if calls and hasattr(real, "redraw"):
                real.redraw()  # what was replayed, drawn in the first paint
        return d["real"]

    def showEvent(self, event: Any) -> None:
        """Made soon after being shown even if never painted (no room in its layout yet):
        the paint below is the usual way, this a fallback a moment later."""
        if self._d["real"] is None:
            QTimer.singleShot(SHOWN_MS, self, self.real)  # none once deleted
        super().showEvent(event)

    def paintEvent(self, event: Any) -> None:
        """Shown for the first time: the window's frame is drawn without the widget (an empty
        area), and the widget is made right after it, in the next lap of the event loop, so
        the window appears before the plots and numpy are imported (the Run page is the first
        page)."""
        d = self._d
        if d["real"] is None and not d.get("asked"):
            d["asked"] = True
            QTimer.singleShot(0, self, self.real)
        super().paintEvent(event)

    def __getattr__(self, name: str) -> Any:
        # only for names the stand-in itself does not have
        d = self.__dict__.get("_d")
        if d is None or name.startswith("__"):
            raise AttributeError(name)
        if d["real"] is None:
            if name.startswith("_"):  # no probing of privates makes the widget
                raise AttributeError(name)
            if name in d["attributes"]:
                return d["attributes"][name]
            if name in d["recorded"]:
                return lambda *args, **kwargs: self._record(name, args, kwargs)
            if name in d["dropped"]:
                return lambda *args, **kwargs: None
            if name == d["reset"]:
                return lambda *args, **kwargs: d["calls"].clear()
        return getattr(self.real(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__.get("_d")
        if d is not None and name in d["attributes"]:
            d["attributes"][name] = value
            if d["real"] is not None:
                setattr(d["real"], name, value)
            return
        super().__setattr__(name, value)

    def _record(self, name: str, args: tuple, kwargs: dict) -> None:
        calls = self._d["calls"]
        calls.append((name, args, kwargs))
        if len(calls) > RECORD_LIMIT:
            self.real()


def live_plots() -> Deferred:
    """The Run page's live plots (gui/plots.LivePlots), made when the page is first shown."""

    def make() -> QWidget:
        from disklab.gui.plots import LivePlots
        return LivePlots()

    return Deferred(make, recorded=frozenset({"add_sample", "add_marker",
                                              "add_target_progress"}),
                    dropped=frozenset({"redraw"}), reset="clear",
                    attributes={"driven": False, "live_gap_ms": 1000})
