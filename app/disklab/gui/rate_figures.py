"""The Run page's three large live figures: what the tool's processes read and wrote, what
reached the device, and the rate the tool itself reports. Each one is the latest sample of its
series (added up over read and write), drawn once a refresh and only when it moved."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout

from disklab.core.vocab.units import human_rate

# the large live figures beside the plots: label, tooltip, the series added up
RATES = (
    ("Application", "What the tool's processes read and wrote through read()/write() "
     "(rchar + wchar of its process tree, page cache included)", ("app_rchar_bps",
                                                                   "app_wchar_bps")),
    ("Device", "What reached the disk under the target (/proc/diskstats)",
     ("device_read_bps", "device_write_bps")),
    ("Tool's report", "The rate the tool itself prints (fio status, engine intervals, "
     "dd progress); none for tools that print no rate", ("tool_bps",)),
)
APPLICATION = RATES[0][0]
NOT_SEEN = "not seen"  # the Application figure of a tool whose I/O rchar/wchar do not count
RATE_SERIES = frozenset(s for _t, _tip, series in RATES for s in series)
BLANK = "–"


class RateFigures:
    """The three figures (`labels`, by title) and the latest value of each series."""

    def __init__(self) -> None:
        self.labels: dict[str, QLabel] = {}
        self._rates: dict[str, float] = {}  # series -> latest value
        self._changed = False
        self._blind: str | None = None  # why the Application rate cannot see this case's I/O

    def layout(self) -> QHBoxLayout:
        """The figures in a row, each under its caption, at a fixed size: a new figure is a
        repaint of the label, never a new layout of the page (a label whose size hint moves
        makes its layout run again)."""
        rates = QHBoxLayout()
        big = QFont()
        big.setPointSizeF(big.pointSizeF() * 1.8)
        big.setBold(True)
        for title, tip, _series in RATES:
            box = QVBoxLayout()
            caption = QLabel(title)
            caption.setToolTip(tip)
            value = QLabel(BLANK)
            value.setFont(big)
            value.setToolTip(tip)
            value.setFixedSize(value.fontMetrics().horizontalAdvance("9999.9 MiB/s") + 4,
                               value.sizeHint().height())
            box.addWidget(caption)
            box.addWidget(value)
            rates.addLayout(box)
            self.labels[title] = value
        rates.addStretch(1)
        return rates

    def take(self, series: str, value: float) -> None:
        """A sample: kept if it is one of the figures' series, shown at the next refresh."""
        if series in RATE_SERIES:
            self._rates[series] = value
            self._changed = True

    def new_case(self, blind: str | None) -> None:
        """The figures are the new case's from now, not the last report of the case before
        while this one sets up. `blind`: why the Application figure cannot see its I/O."""
        self._rates.clear()
        self._changed = True
        self._blind = blind

    def clear(self) -> None:
        """Nothing of a previous run in them."""
        self._rates.clear()
        self._changed = False
        self.blank()

    def units_changed(self) -> None:
        """The figures shown written again in the units now chosen (human_rate); blank ones
        (a run ended) stay blank."""
        if self._rates and any(label.text() not in (BLANK, NOT_SEEN)
                               for label in self.labels.values()):
            self._changed = True
            self.show()

    def blank(self) -> None:
        for label in self.labels.values():
            label.setText(BLANK)

    def show(self) -> None:
        """The current rates, once per refresh and only when they moved."""
        if not self._changed:
            return
        self._changed = False
        for title, tip, series in RATES:
            values = [self._rates[s] for s in series if s in self._rates]
            text = human_rate(sum(values)) if values else BLANK
            label = self.labels[title]
            if title == APPLICATION:  # said, not a near-zero figure, when it cannot see
                text = NOT_SEEN if self._blind else text
                if label.toolTip() != (self._blind or tip):
                    label.setToolTip(self._blind or tip)
            if label.text() != text:
                label.setText(text)
