"""Charts as SVG without Qt: what HTML reports inline and `disklab export --format svg` writes.

The window's Library and Compare pages show this very SVG (gui/chart.py); this renderer needs
nothing but the standard library, so a headless server writes the same charts.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from disklab.core.results.charts import PALETTE, ChartSpec
from disklab.core.results.format import number


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering lo..hi (1, 2, 5 x 10^n steps)."""
    if not math.isfinite(lo) or not math.isfinite(hi):
        return [0.0, 1.0]
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    v = math.floor(lo / step) * step
    ticks = [round(v, 12)]
    while ticks[-1] < hi:  # the last tick is at or above hi, so nothing is drawn off the axis
        v += step
        ticks.append(round(v, 12))
    return ticks


def log_ticks(lo: float, hi: float) -> list[float]:
    """A log axis' ticks from the decade at or below lo to the one at or above hi (1, 10,
    100 ...; with 1, 2 and 5 of each decade when it spans two decades or less)."""
    a = math.floor(math.log10(lo))
    b = max(math.ceil(math.log10(hi)), a + 1)
    steps = (1, 2, 5) if b - a <= 2 else (1,)
    ticks = [m * 10.0 ** e for e in range(a, b) for m in steps] + [10.0 ** b]
    return [float(f"{t:.12g}") for t in ticks]


def tick_text(v: float) -> str:
    """An axis label: whole numbers whole, others with three significant digits."""
    if v == int(v) and abs(v) < 1e7:
        return str(int(v))
    return f"{v:.3g}"


# Beyond the palette's colours a series differs by its dashes and marker too (the ninth
# series is the first's colour, dashed, with squares): no two series look the same.
DASHES = ("", "7 4", "2 3", "9 3 2 3")
MARKERS = ("circle", "square", "triangle", "diamond")


def series_style(k: int) -> tuple[str, str, str]:
    """The k-th series' colour, dash pattern ('' solid) and marker."""
    turn = k // len(PALETTE)
    return (PALETTE[k % len(PALETTE)], DASHES[turn % len(DASHES)],
            MARKERS[turn % len(MARKERS)])


def marker(shape: str, x: float, y: float, colour: str, r: float = 2.5) -> str:
    """A point's mark: a circle, square, triangle or diamond of radius about r."""
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{colour}"/>'
    if shape == "square":
        return (f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" '
                f'height="{2 * r:.1f}" fill="{colour}"/>')
    k = r * 1.4
    points = ((x, y - k), (x + k, y + k * 0.8), (x - k, y + k * 0.8)) if shape == "triangle" \
        else ((x, y - k), (x + k, y), (x, y + k), (x - k, y))
    return (f'<polygon points="{" ".join(f"{a:.1f},{b:.1f}" for a, b in points)}" '
            f'fill="{colour}"/>')


def _bar_paint(k: int) -> str:
    """A bar's fill attributes: the palette's colour, then (beyond it) a lighter fill with a
    solid or dashed outline of that colour."""
    colour, dash, _shape = series_style(k)
    if k < len(PALETTE):
        return f'fill="{colour}"'
    return (f'fill="{colour}" fill-opacity="0.35" stroke="{colour}" stroke-width="1.5"'
            + (f' stroke-dasharray="{dash}"' if dash else ""))


def _ink(colour: str) -> str:
    """Text colour that reads on a fill: black on light colours, white on dark ones."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#111111" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#ffffff"


# The size every exported chart has unless asked otherwise: PNG and SVG alike.
WIDTH, HEIGHT = 1000, 560
CHAR = 0.6  # average advance of a sans-serif character, in font sizes (a safe overestimate)


def text_width(text: str, size: float) -> float:
    """About how wide a text is drawn (px) at a font size: to lay out labels without overlap
    (an SVG writer cannot measure text; this errs wide)."""
    return len(text) * size * CHAR


def shorten(text: str, size: float, width: float) -> str:
    """`text` cut in its middle with '…' to fit `width`: the start and the end, where labels
    differ ('… record_size=4k'), both stay."""
    room = int(width / (size * CHAR))
    if len(text) <= room:
        return text
    if room < 5:
        return text[:max(room, 1)]
    head = (room - 1) // 2
    return text[:head] + "…" + text[len(text) - (room - 1 - head):]


def wrap(text: str, size: float, width: float, max_lines: int = 3) -> list[str] | None:
    """`text` broken at ' / ' and spaces into lines no wider than `width`; None when it needs
    more than `max_lines` lines or a word alone is too wide."""
    words = text.replace(" / ", " /\x00").replace(" ", "\x00").split("\x00")
    lines: list[str] = []
    for word in words:
        if text_width(word, size) > width:
            return None
        if lines and text_width(f"{lines[-1]} {word}", size) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines if len(lines) <= max_lines else None


def _legend(names: Sequence[str], width: float, size: float = 11
            ) -> list[tuple[float, int, str]]:
    """Legend entries laid out left to right, wrapping: (x offset, row, shown name), each
    entry as wide as its text, so no two overlap."""
    out: list[tuple[float, int, str]] = []
    x, row = 0.0, 0
    for name in names:
        shown = shorten(name, size, width - 20)
        w = 14 + text_width(shown, size) + 18
        if x > 0 and x + w > width:
            x, row = 0.0, row + 1
        out.append((x, row, shown))
        x += w
    return out


def _x_labels(categories: Sequence[str], slot: float, size: float = 11
              ) -> tuple[list[list[str]], bool, float]:
    """How the bar categories are written: wrapped lines each within its slot when they fit
    in three lines; else rotated 35° and shortened in the middle. (lines per label, rotated,
    the height they take)."""
    wrapped = [wrap(c, size, slot - 6) for c in categories]
    if all(w is not None for w in wrapped):
        lines = [w or [] for w in wrapped]
        return lines, False, size * 1.25 * max((len(w) for w in lines), default=1) + 6
    longest = 260.0
    shown = [[shorten(c, size, longest)] for c in categories]
    tallest = max((text_width(s[0], size) for s in shown), default=0.0)
    return shown, True, math.sin(math.radians(35)) * tallest + size + 8


def to_svg(spec: ChartSpec, width: int = WIDTH, height: int = HEIGHT) -> str:
    """The chart as a standalone SVG document of exactly width x height px (its viewBox the
    same), in plain coordinates: no transforms on shapes and no vector-effect, which librsvg
    (GNOME's viewer, GIMP, rsvg-convert, LibreOffice) draws differently from browsers. Bars
    carry their values; the value axis says which way is better; labels never overlap."""
    if spec.kind == "heatmap":
        return heatmap_svg(spec, width, height)
    box = _Layout.of(spec, width, height)
    f = _Frame.of(spec, box)
    parts = _head(spec, width, height) + _y_axis(spec, f)
    if spec.kind == "bar":
        parts += _bars(spec, f, box)
    else:
        parts += _lines(spec, f)
    parts += _foot(spec, f, box)
    parts.append("</svg>")
    return "\n".join(parts)


@dataclass
class _Layout:
    """Where a bar or line chart's parts go: margins, plot size, the x labels (a bar chart's
    categories, wrapped or slanted), the legend's rows and the note's lines."""

    width: int
    height: int
    left: float
    top: float
    right: float
    pw: float
    ph: float
    slot: float  # a bar chart's width per category
    xlines: list[list[str]]
    rotated: bool
    xlabel_h: float
    legend: list[tuple[float, int, str]]
    note_lines: list[str]

    @classmethod
    def of(cls, spec: ChartSpec, width: int, height: int) -> _Layout:
        left, right, top = 78, 24, 58
        legend = _legend([s.name for s in spec.series], width - left - right)
        legend_h = (max((r for _x, r, _n in legend), default=-1) + 1) * 18
        note_lines = wrap(spec.note, 10, width - left - right, 2) or (
            [shorten(spec.note, 10, width - left - right)] if spec.note else [])
        pw = width - left - right
        if spec.kind == "bar":
            slot = pw / max(len(spec.categories), 1)
            xlines, rotated, xlabel_h = _x_labels(spec.categories, slot)
            if rotated and xlines:  # the first label slants left: room for it in the margin
                reach = math.cos(math.radians(35)) * text_width(xlines[0][0], 11) - slot / 2
                left = max(left, min(int(reach) + 8, width // 3))
                pw = width - left - right
                slot = pw / max(len(spec.categories), 1)
        else:
            slot, xlines, rotated, xlabel_h = 0.0, [], False, 20.0
        bottom = xlabel_h + 22 + legend_h + 14 * len(note_lines) + 10
        ph = max(height - top - bottom, 60)
        return cls(width, height, left, top, right, pw, ph, slot, xlines, rotated, xlabel_h,
                   legend, note_lines)


@dataclass
class _Frame:
    """The plot's scales: values to pixels (a bar chart's x is the category index)."""

    left: float
    top: float
    pw: float
    ph: float
    ytop: float  # the value at the top of the y axis
    yticks: list[float]
    xmin: float
    xmax: float
    log_x: bool
    ybottom: float = 0.0  # the value at the axis' bottom (a log axis' lowest decade)
    log_y: bool = False

    @classmethod
    def of(cls, spec: ChartSpec, box: _Layout) -> _Frame:
        ys = [y + (s.err[i] if s.err else 0.0) for s in spec.series for i, y in enumerate(s.y)]
        ymax = max([*ys, 0.0]) or 1.0
        if spec.kind == "bar":
            ymax *= 1.12 if not spec.log_y else 1.6  # room for the values above the bars
        positive = [y for s in spec.series for y in s.y if y > 0]
        log_y = spec.log_y and bool(positive)
        yt = log_ticks(min(positive), ymax) if log_y else nice_ticks(0.0, ymax)
        if spec.kind == "bar":
            xmin, xmax = -0.5, max(len(spec.categories), 1) - 0.5
        else:
            xs_all = [x for s in spec.series for x in s.x] or [0.0, 1.0]
            if spec.log_x:
                xs_all = [math.log2(x) for x in xs_all if x > 0] or [0.0, 1.0]
            xmin, xmax = min(xs_all), max(xs_all)
            if xmax <= xmin:
                xmax = xmin + 1.0
            if spec.x_ticks:  # a swept value at each end: room for its point and whisker
                pad = (xmax - xmin) * 0.04
                xmin, xmax = xmin - pad, xmax + pad
        return cls(box.left, box.top, box.pw, box.ph, yt[-1] or 1.0, yt, xmin, xmax,
                   spec.kind != "bar" and spec.log_x, yt[0] if log_y else 0.0, log_y)

    @property
    def base(self) -> float:
        return self.top + self.ph

    def sy(self, v: float) -> float:
        if self.log_y:
            if v <= self.ybottom:
                return self.base
            lo, hi = math.log10(self.ybottom), math.log10(self.ytop)
            return self.top + self.ph - (math.log10(v) - lo) / (hi - lo) * self.ph
        return self.top + self.ph - (v / self.ytop) * self.ph

    def sx(self, v: float) -> float:
        if self.log_x:
            v = math.log2(v) if v > 0 else self.xmin
        return self.left + (v - self.xmin) / (self.xmax - self.xmin) * self.pw


def _head(spec: ChartSpec, width: int, height: int) -> list[str]:
    """The document's start: background, title, the note as its description, and which way
    is better."""
    esc = html.escape
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif" '
        'font-size="11">',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{width / 2:.1f}" y="22" text-anchor="middle" font-size="15" '
        f'font-weight="bold">{esc(shorten(spec.title, 15, width - 20))}</text>',
    ]
    if spec.note:  # the whole note, for screen readers and searches, however it is wrapped
        parts.insert(1, f"<desc>{esc(spec.note)}</desc>")
    if spec.better:
        parts.append(f'<text x="{width / 2:.1f}" y="40" text-anchor="middle" font-size="12" '
                     f'fill="#444">{esc(spec.y_label)}: {esc(spec.better)}</text>')
    return parts


def _y_axis(spec: ChartSpec, f: _Frame) -> list[str]:
    """The value grid and its labels, both axes' lines and the value axis' title."""
    left, top, pw, ph = f.left, f.top, f.pw, f.ph
    parts = []
    for t in f.yticks:
        y = f.sy(t)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" '
                     'stroke="#dddddd" stroke-width="1"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{tick_text(t)}</text>')
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph:.1f}" '
                 'stroke="#333333" stroke-width="1"/>')
    parts.append(f'<line x1="{left}" y1="{top + ph:.1f}" x2="{left + pw}" y2="{top + ph:.1f}" '
                 'stroke="#333333" stroke-width="1"/>')
    parts.append(f'<text transform="translate(18,{top + ph / 2:.1f}) rotate(-90)" '
                 f'text-anchor="middle">{html.escape(shorten(spec.axis_title, 11, ph))}</text>')
    return parts


def _bars(spec: ChartSpec, f: _Frame, box: _Layout) -> list[str]:
    """A bar chart's category labels and bars, each with its value and whisker."""
    esc, base, slot = html.escape, f.base, box.slot
    parts = []
    bw = slot * 0.8 / max(len(spec.series), 1)
    for i, lines in enumerate(box.xlines):
        cx = f.sx(float(i))
        if box.rotated:
            parts.append(f'<text transform="translate({cx:.1f},{base + 14:.1f}) '
                         f'rotate(-35)" text-anchor="end">{esc(lines[0])}'
                         f'<title>{esc(spec.categories[i])}</title></text>')
            continue
        for n, line in enumerate(lines):
            parts.append(f'<text x="{cx:.1f}" y="{base + 15 + n * 13.75:.1f}" '
                         f'text-anchor="middle">{esc(line)}</text>')
    for k, s in enumerate(spec.series):
        colour = series_style(k)[0]
        for i, (x, y) in enumerate(zip(s.x, s.y, strict=True)):
            x0 = f.sx(x) - slot * 0.4 + k * bw
            top_y = f.sy(y)
            parts.append(f'<rect x="{x0:.2f}" y="{top_y:.2f}" width="{bw:.2f}" '
                         f'height="{max(base - top_y, 0):.2f}" {_bar_paint(k)}>'
                         f'<title>{esc(s.name)}: {esc(number(y))} {esc(spec.y_label)}'
                         '</title></rect>')
            err = s.err[i] if s.err else 0.0
            mx = x0 + bw / 2
            if err:
                parts.append(f'<line x1="{mx:.2f}" y1="{f.sy(y + err):.2f}" x2="{mx:.2f}" '
                             f'y2="{f.sy(max(y - err, 0)):.2f}" stroke="#222222" '
                             'stroke-width="1.2"/>')
            parts += _bar_value(number(y), mx, bw, top_y, f.sy(y + err), base,
                                _ink(colour) if k < len(PALETTE) else "#111111")
    return parts


def _bar_value(value: str, mx: float, bw: float, top_y: float, tip: float, base: float,
               ink: str) -> list[str]:
    """A bar's value, written inside the bar at its foot when it fits (never at the
    whisker's tip, where it would read as the whisker's value), else above the whisker."""
    esc, wide, tall = html.escape, text_width(value, 10), base - top_y
    if wide <= bw - 2 and tall >= 16:
        return [f'<text x="{mx:.2f}" y="{base - 4:.2f}" text-anchor="middle" font-size="10" '
                f'fill="{ink}">{esc(value)}</text>']
    if bw >= 11 and tall >= wide + 8:  # a narrow bar: upright, inside, from its foot
        return [f'<text transform="translate({mx + 3.5:.2f},{base - 4:.2f}) rotate(-90)" '
                f'font-size="10" fill="{ink}">{esc(value)}</text>']
    above = min(tip, top_y) - 4
    if wide <= bw + 2:
        return [f'<text x="{mx:.2f}" y="{above:.2f}" text-anchor="middle" '
                f'font-size="10">{esc(value)}</text>']
    return [f'<text transform="translate({mx + 3.5:.2f},{above:.2f}) rotate(-90)" '
            f'font-size="10">{esc(value)}</text>']


def _lines(spec: ChartSpec, f: _Frame) -> list[str]:
    """A line chart's x ticks, markers, and lines with their whiskers and points."""
    esc, sx, sy, top, base = html.escape, f.sx, f.sy, f.top, f.base
    parts = _x_ticks(spec, sx, f.xmin, f.xmax, f.pw, base)
    for x, text in spec.markers:
        mx = sx(x)
        parts.append(f'<line x1="{mx:.1f}" y1="{top}" x2="{mx:.1f}" y2="{base:.1f}" '
                     'stroke="#888888" stroke-dasharray="4 3"/>')
        parts.append(f'<text x="{mx + 3:.1f}" y="{top + 10}" fill="#555555">'
                     f'{esc(shorten(text, 11, 120))}</text>')
    for k, s in enumerate(spec.series):
        colour, dash, shape = series_style(k)
        if not s.x:
            continue
        d = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}"
                     for i, (x, y) in enumerate(zip(s.x, s.y, strict=True)))
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="1.8"'
                     f'{dashed}><title>{esc(s.name)}</title></path>')
        for x, y, e in zip(s.x, s.y, s.err or [0.0] * len(s.x), strict=True):
            if e:  # whiskers: ± 1 stddev, capped
                cx, hi, lo = sx(x), sy(y + e), sy(max(y - e, 0.0))
                parts.append(f'<path d="M{cx:.1f},{hi:.1f} L{cx:.1f},{lo:.1f} '
                             f'M{cx - 4:.1f},{hi:.1f} L{cx + 4:.1f},{hi:.1f} '
                             f'M{cx - 4:.1f},{lo:.1f} L{cx + 4:.1f},{lo:.1f}" '
                             f'fill="none" stroke="{colour}" stroke-width="1.2"/>')
        if len(s.x) <= 40 or k >= len(PALETTE):
            step = max(1, len(s.x) // 40)
            parts += [marker(shape, sx(x), sy(y), colour)
                      for x, y in list(zip(s.x, s.y, strict=True))[::step]]
    return parts


def _foot(spec: ChartSpec, f: _Frame, box: _Layout) -> list[str]:
    """Under the plot: the x axis' title, the legend and the note."""
    esc = html.escape
    names = [s.name for s in spec.series]
    label_y = f.base + box.xlabel_h + 14
    parts = [f'<text x="{f.left + f.pw / 2:.1f}" y="{label_y:.1f}" text-anchor="middle" '
             f'fill="#333333">{esc(shorten(spec.x_label, 11, f.pw))}</text>']
    ly = label_y + 20
    for k, (dx, row, name) in enumerate(box.legend):
        colour, dash, shape = series_style(k)
        lx = f.left + dx
        if spec.kind == "bar":
            parts.append(f'<rect x="{lx:.1f}" y="{ly + row * 18 - 9:.1f}" width="10" '
                         f'height="10" {_bar_paint(k)}/>')
        else:  # the line's own dashes and marker
            yy = ly + row * 18 - 4
            dashed = f' stroke-dasharray="{dash}"' if dash else ""
            parts.append(f'<line x1="{lx - 2:.1f}" y1="{yy:.1f}" x2="{lx + 12:.1f}" '
                         f'y2="{yy:.1f}" stroke="{colour}" stroke-width="1.8"{dashed}/>')
            parts.append(marker(shape, lx + 5, yy, colour))
        parts.append(f'<text x="{lx + 14:.1f}" y="{ly + row * 18:.1f}">{esc(name)}'
                     f'<title>{esc(names[k])}</title></text>')
    for n, line in enumerate(box.note_lines):
        y = box.height - 8 - 14 * (len(box.note_lines) - 1 - n)
        parts.append(f'<text x="{box.width - box.right}" y="{y}" text-anchor="end" '
                     f'font-size="10" fill="#666666">{esc(line)}</text>')
    return parts


def _x_ticks(spec: ChartSpec, sx: Callable[[float], float], xmin: float, xmax: float,
             pw: float, base: float) -> list[str]:
    """A line chart's x tick labels: the spec's own (the swept values as the plan spells
    them: '4k', '64k', '1m'), else round numbers; thinned so they never overlap."""
    ticks = list(spec.x_ticks)
    if not ticks:
        xt = sorted({x for s in spec.series for x in s.x})
        if not spec.log_x:
            xt = nice_ticks(xmin, xmax)
        ticks = [(t, tick_text(t)) for t in xt]
    room = max((text_width(t, 11) for _x, t in ticks), default=0.0) + 12
    step = max(1, math.ceil(len(ticks) / max(int(pw / max(room, 40)), 2)))
    out = []
    for t, text in ticks[::step]:
        x = math.log2(t) if spec.log_x and t > 0 else t
        if spec.log_x or xmin <= x <= xmax:
            out.append(f'<text x="{sx(t):.1f}" y="{base + 15:.1f}" '
                       f'text-anchor="middle">{html.escape(text)}</text>')
    return out


def _heat_colour(f: float) -> tuple[str, str]:
    """The fill for a fraction 0..1 of the value range (light yellow to dark blue, readable in
    grey scale) and the text colour that reads on it."""
    stops = ((255, 255, 217), (127, 205, 187), (29, 145, 192), (12, 44, 132))
    f = min(max(f, 0.0), 1.0) * (len(stops) - 1)
    k = min(int(f), len(stops) - 2)
    a, b, t = stops[k], stops[k + 1], f - k
    rgb = tuple(round(a[c] + (b[c] - a[c]) * t) for c in range(3))
    return "#" + "".join(f"{c:02x}" for c in rgb), ("#ffffff" if f > 1.6 else "#111111")


def heatmap_svg(spec: ChartSpec, width: int = WIDTH, height: int = HEIGHT) -> str:
    """A heat map: `spec.grid` rows x `spec.categories` columns, every cell's value written in
    it, the colour its size (a scale beside it); rows labelled on the left, columns below."""
    esc = html.escape
    left = 24 + int(max((text_width(r, 11) for r in spec.rows), default=20.0)) + 30
    right, top = 110, 58
    note_lines = wrap(spec.note, 10, width - left - right, 2) or (
        [shorten(spec.note, 10, width - left - right)] if spec.note else [])
    pw, ph = width - left - right, height - top - 44 - 14 * len(note_lines)
    values = [v for row in spec.grid for v in row if v is not None]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    cw, ch = pw / max(len(spec.categories), 1), ph / max(len(spec.rows), 1)
    size = max(min(ch * 0.4, cw / 6, 13), 7)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif" '
        'font-size="11">',
        f"<desc>{esc(spec.note)}</desc>" if spec.note else "",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{width / 2:.1f}" y="22" text-anchor="middle" font-size="15" '
        f'font-weight="bold">{esc(shorten(spec.title, 15, width - 20))}</text>',
        f'<text x="{width / 2:.1f}" y="40" text-anchor="middle" font-size="12" '
        f'fill="#444">{esc(spec.axis_title)}</text>']
    for i, row in enumerate(spec.grid):
        y = top + i * ch
        parts.append(f'<text x="{left - 6}" y="{y + ch / 2 + 4:.1f}" text-anchor="end">'
                     f'{esc(spec.rows[i])}</text>')
        for j, v in enumerate(row):
            if v is None:
                continue
            fill, ink = _heat_colour((v - lo) / (hi - lo) if hi > lo else 0.5)
            x = left + j * cw
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{cw - 1:.1f}" '
                         f'height="{ch - 1:.1f}" fill="{fill}"><title>{esc(spec.rows[i])} / '
                         f'{esc(spec.categories[j])}: {number(v)} {esc(spec.y_label)}</title>'
                         '</rect>')
            parts.append(f'<text x="{x + cw / 2:.1f}" y="{y + ch / 2 + size * 0.35:.1f}" '
                         f'text-anchor="middle" font-size="{size:.1f}" fill="{ink}">'
                         f'{esc(number(v))}</text>')
    base = top + len(spec.grid) * ch
    for j, c in enumerate(spec.categories):
        parts.append(f'<text x="{left + (j + 0.5) * cw:.1f}" y="{base + 15:.1f}" '
                     f'text-anchor="middle">{esc(shorten(c, 11, cw))}</text>')
    parts.append(f'<text x="{left + pw / 2:.1f}" y="{base + 32:.1f}" text-anchor="middle" '
                 f'fill="#333333">{esc(spec.x_label)}</text>')
    parts += _heat_scale(width - right + 20, top, ph, lo, hi, spec.y_label)
    for n, line in enumerate(note_lines):
        y = height - 8 - 14 * (len(note_lines) - 1 - n)
        parts.append(f'<text x="{width - 24}" y="{y}" text-anchor="end" font-size="10" '
                     f'fill="#666666">{esc(line)}</text>')
    parts.append("</svg>")
    return "\n".join(p for p in parts if p)


def _heat_scale(x: float, top: float, ph: float, lo: float, hi: float, unit: str
                ) -> list[str]:
    """The colour scale beside a heat map: ten steps, its lowest and highest value."""
    out = []
    step = ph / 10
    for k in range(10):
        fill, _ink = _heat_colour(1.0 - (k + 0.5) / 10)
        out.append(f'<rect x="{x:.1f}" y="{top + k * step:.1f}" width="16" '
                   f'height="{step + 0.5:.1f}" fill="{fill}"/>')
    out.append(f'<text x="{x + 20:.1f}" y="{top + 10:.1f}">{number(hi)}</text>')
    out.append(f'<text x="{x + 20:.1f}" y="{top + ph:.1f}">{number(lo)}</text>')
    out.append(f'<text x="{x + 20:.1f}" y="{top + ph / 2:.1f}">{html.escape(unit)}</text>')
    return out


def write_svgs(specs: Sequence[ChartSpec], out: str | Path, width: int = WIDTH,
               height: int = HEIGHT) -> list[Path]:
    """Charts to SVG files of width x height px: `out` is a file (one chart) or a directory
    (one file per chart, named NN-slug.svg)."""
    out = Path(out)
    if len(specs) == 1 and out.suffix:
        out.write_text(to_svg(specs[0], width, height), encoding="utf-8")
        return [out]
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, spec in enumerate(specs, start=1):
        path = out / f"{i:02d}-{spec.slug()}.svg"
        path.write_text(to_svg(spec, width, height), encoding="utf-8")
        paths.append(path)
    return paths
