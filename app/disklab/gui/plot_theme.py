"""The live plots' colours for the theme the window follows (light or dark): app.apply_theme
sets them with the palette, and the live plots (gui/plots.apply_theme) take them when the
palette changes, so the desktop's light/dark switch reaches the plots too. Here, not in
gui/plots, because app.py sets them before pyqtgraph is imported (gui/lazy.py)."""

from __future__ import annotations

RGB = tuple[int, int, int]
_COLOURS: dict[str, RGB] = {"background": (255, 255, 255), "foreground": (40, 40, 40)}


def set_plot_colours(background: RGB, foreground: RGB) -> None:
    _COLOURS["background"], _COLOURS["foreground"] = background, foreground


def theme_colours() -> tuple[RGB, RGB]:
    """(background, foreground) of the plots, as RGB."""
    return _COLOURS["background"], _COLOURS["foreground"]
