"""The live plots' curves per target: in a run on several targets, each target's share of the
device rates and the tool's own rate on it get a curve, and the targets' device total one named
"all". Here, apart from the plots' drawing and time range, because only a run on several
targets has them and they come and go with the run."""

from __future__ import annotations

from typing import Any, Protocol

from disklab.core.results.charts import PALETTE
from disklab.gui.plot_series import LIVE_SERIES, series_scale

TARGET_SEP = ":"  # device_write_bps:a is target a's share of device_write_bps (several targets)
TOTAL = "all"  # the targets' total, sampled by the monitor over distinct devices (:all)
DEVICE_SERIES = ("device_write_bps", "device_read_bps")
PER_TARGET = (*DEVICE_SERIES, "tool_bps")  # series a target may split


class Plots(Protocol):
    """What TargetCurves needs of the live plots (gui/plots.LivePlots), which compose it."""

    plots: dict[str, Any]
    curves: dict[str, Any]
    buffers: dict[str, Any]
    gaps: dict[str, Any]

    def add_curve(self, series: str, plot_key: str, name: str, colour: int,
                  dashed: bool = False) -> Any: ...

    def add_buffer(self, series: str) -> None: ...

    def point(self, series: str, t: float, y: float) -> None: ...


class TargetCurves:
    """The per-target series of one LivePlots: their curves made on the first non-zero value,
    the tool's rate per target from its byte counts, and all of them gone at clear()."""

    def __init__(self, plots: Plots) -> None:
        self.plots = plots
        self.names: list[str] = []  # targets seen in this run's series, in order
        self._progress: dict[str, tuple[str, float, int]] = {}  # target -> (case, t, bytes)

    def progress(self, case_id: str, target: str, t: float, done_bytes: int) -> None:
        """A target's bytes so far in a case (Progress with `target`): its rate since the
        previous report of the same case is the tool's own rate on that target."""
        last = self._progress.get(target)
        self._progress[target] = (case_id, t, done_bytes)
        if last is None or last[0] != case_id or t <= last[1] or done_bytes < last[2]:
            return
        rate = (done_bytes - last[2]) / (t - last[1])
        self.point(f"tool_bps{TARGET_SEP}{target}", t, rate)

    def point(self, series: str, t: float, value: float) -> None:
        """A per-target (or total) point; its curve appears with its first non-zero value (a
        write-only run shows no read curves per target). The monitor sums the distinct devices
        for "all" (two targets on one filesystem are one disk's bytes); the tool's own rates
        have no total curve (targets report at different times)."""
        base, _sep, target = series.partition(TARGET_SEP)
        plot_key, label, _unit = LIVE_SERIES[base]
        if plot_key not in self.plots.plots:
            return
        self.plots.add_buffer(series)
        y = value / series_scale(base)
        if series not in self.plots.curves and y > 0:
            self._curve(series, base, target, label)
        self.plots.point(series, t, y)

    def _curve(self, series: str, base: str, target: str, label: str) -> None:
        """A target's curve: a colour per target (the total black), dashed for reads and the
        tool's own report. The case's single device curve steps aside (in a placed case it is
        one target's device): "all", the targets' sum, says the whole."""
        if target != TOTAL and target not in self.names:
            self.names.append(target)
        colour = len(PALETTE) - 1 if target == TOTAL else 4 + self.names.index(target)
        name = f"{'tool' if base == 'tool_bps' else label} {target}"
        plot_key = LIVE_SERIES[base][0]
        self.plots.add_curve(series, plot_key, name, colour, dashed=base != "device_write_bps")
        own = self.plots.curves.get(base) if base in DEVICE_SERIES else None
        if own is not None and own.isVisible():
            own.setVisible(False)
            self.plots.plots[plot_key].legend.removeItem(own)

    def clear(self) -> None:
        """Every per-target curve and series gone, the case's own device curves back, as a
        one-target run has them."""
        plots = self.plots
        for series in [s for s in plots.curves if TARGET_SEP in s]:
            curve = plots.curves.pop(series)
            plots.plots[curve.plot].removeItem(curve)
        for series in [s for s in plots.buffers if TARGET_SEP in s]:
            del plots.buffers[series], plots.gaps[series]
        for series in DEVICE_SERIES:
            own = plots.curves.get(series)
            if own is not None and not own.isVisible():
                own.setVisible(True)
                plots.plots["device"].legend.addItem(own, own.name())
        self.names.clear()
        self._progress.clear()
