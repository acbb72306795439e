"""Charts as SVG without Qt: what HTML reports inline and `disklab export --format svg` writes.

The window draws the same ChartSpec with pyqtgraph (gui/plots.py); this renderer needs nothing
but the standard library, so a headless server writes the same charts.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
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


def tick_text(v: float) -> str:
    """An axis label: whole numbers whole, others with three significant digits."""
    if v == int(v) and abs(v) < 1e7:
        return str(int(v))
    return f"{v:.3g}"


def to_svg(spec: ChartSpec, width: int = 720, height: int = 380) -> str:
    """The chart as a standalone SVG document (for HTML reports written without Qt)."""
    left, right, top, bottom = 70, 20, 36, 70
    legend_rows = (len(spec.series) + 2) // 3
    bottom += 16 * legend_rows
    pw, ph = width - left - right, height - top - bottom
    esc = html.escape
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14" '
        f'font-weight="bold">{esc(spec.title)}</text>',
    ]
    ys = [y + (s.err[i] if s.err else 0.0) for s in spec.series for i, y in enumerate(s.y)]
    ymax = max([*ys, 0.0]) or 1.0
    yt = nice_ticks(0.0, ymax)
    ytop = yt[-1] or 1.0

    def sy(v: float) -> float:
        return top + ph - (v / ytop) * ph

    if spec.kind == "bar":
        ncat = max(len(spec.categories), 1)
        xmin, xmax = -0.5, ncat - 0.5

        def sx(v: float) -> float:
            return left + (v - xmin) / (xmax - xmin) * pw
    else:
        xs_all = [x for s in spec.series for x in s.x] or [0.0, 1.0]
        if spec.log_x:
            xs_all = [math.log2(x) for x in xs_all if x > 0] or [0.0, 1.0]
        xmin, xmax = min(xs_all), max(xs_all)
        if xmax <= xmin:
            xmax = xmin + 1.0

        def sx(v: float) -> float:
            if spec.log_x:
                v = math.log2(v) if v > 0 else xmin
            return left + (v - xmin) / (xmax - xmin) * pw

    # grid and y axis
    for t in yt:
        y = sy(t)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" '
                     'stroke="#ddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{tick_text(t)}</text>')
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#333"/>')
    parts.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" '
                 'stroke="#333"/>')
    parts.append(f'<text transform="translate(16,{top + ph / 2}) rotate(-90)" '
                 f'text-anchor="middle">{esc(spec.axis_title)}</text>')
    parts.append(f'<text x="{left + pw / 2}" y="{top + ph + 44}" text-anchor="middle">'
                 f'{esc(spec.x_label)}</text>')

    if spec.kind == "bar":
        nser = max(len(spec.series), 1)
        slot = pw / max(len(spec.categories), 1)
        bw = slot * 0.8 / nser
        for i, cat in enumerate(spec.categories):
            cx = sx(float(i))
            label = cat if len(cat) <= 28 else cat[:27] + "…"
            parts.append(f'<text x="{cx:.1f}" y="{top + ph + 14}" text-anchor="middle" '
                         f'font-size="9">{esc(label)}</text>')
        for k, s in enumerate(spec.series):
            colour = PALETTE[k % len(PALETTE)]
            for i, (x, y) in enumerate(zip(s.x, s.y, strict=True)):
                x0 = sx(x) - slot * 0.4 + k * bw
                parts.append(f'<rect x="{x0:.1f}" y="{sy(y):.1f}" width="{bw:.1f}" '
                             f'height="{max(sy(0) - sy(y), 0):.1f}" fill="{colour}">'
                             f'<title>{esc(s.name)}: {esc(number(y))} {esc(spec.y_label)}'
                             '</title></rect>')
                if s.err and s.err[i]:
                    mx = x0 + bw / 2
                    parts.append(f'<line x1="{mx:.1f}" y1="{sy(y + s.err[i]):.1f}" x2="{mx:.1f}" '
                                 f'y2="{sy(max(y - s.err[i], 0)):.1f}" stroke="#222"/>')
    else:
        xt = sorted({x for s in spec.series for x in s.x})
        if not spec.log_x:
            xt = nice_ticks(xmin, xmax)
        if len(xt) > 12:
            xt = xt[:: math.ceil(len(xt) / 12)]
        for t in xt:
            if spec.log_x or xmin <= t <= xmax:
                parts.append(f'<text x="{sx(t):.1f}" y="{top + ph + 14}" text-anchor="middle">'
                             f'{tick_text(t)}</text>')
        for x, label in spec.markers:
            mx = sx(x)
            parts.append(f'<line x1="{mx:.1f}" y1="{top}" x2="{mx:.1f}" y2="{top + ph}" '
                         'stroke="#888" stroke-dasharray="4 3"/>')
            parts.append(f'<text x="{mx + 3:.1f}" y="{top + 10}" fill="#555">{esc(label)}</text>')
        for k, s in enumerate(spec.series):
            colour = PALETTE[k % len(PALETTE)]
            if not s.x:
                continue
            d = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}"
                         for i, (x, y) in enumerate(zip(s.x, s.y, strict=True)))
            parts.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="1.5">'
                         f'<title>{esc(s.name)}</title></path>')
            if len(s.x) <= 40:
                for x, y in zip(s.x, s.y, strict=True):
                    parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" '
                                 f'fill="{colour}"/>')
    # legend
    ly = top + ph + 58
    for k, s in enumerate(spec.series):
        col, row = k % 3, k // 3
        lx = left + col * (pw / 3)
        colour = PALETTE[k % len(PALETTE)]
        name = s.name if len(s.name) <= 40 else s.name[:39] + "…"
        parts.append(f'<rect x="{lx:.1f}" y="{ly + row * 16 - 9}" width="10" height="10" '
                     f'fill="{colour}"/>')
        parts.append(f'<text x="{lx + 14:.1f}" y="{ly + row * 16}">{esc(name)}</text>')
    if spec.note:
        parts.append(f'<text x="{width - 6}" y="{height - 4}" text-anchor="end" font-size="9" '
                     f'fill="#666">{esc(spec.note)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def write_svgs(specs: Sequence[ChartSpec], out: str | Path) -> list[Path]:
    """Charts to SVG files: `out` is a file (one chart) or a directory (one file per chart,
    named NN-slug.svg)."""
    out = Path(out)
    if len(specs) == 1 and out.suffix:
        out.write_text(to_svg(specs[0]), encoding="utf-8")
        return [out]
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, spec in enumerate(specs, start=1):
        path = out / f"{i:02d}-{spec.slug()}.svg"
        path.write_text(to_svg(spec), encoding="utf-8")
        paths.append(path)
    return paths
