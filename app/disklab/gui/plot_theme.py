"""The live plots' colours for the theme the window follows (light or dark): app.apply_theme
sets them with the palette, and the plots' canvas asks for them at each paint, so a switch of
the desktop's light/dark reaches the plots at their next paint."""

from __future__ import annotations

RGB = tuple[int, int, int]
_COLOURS: dict[str, RGB] = {"background": (255, 255, 255), "foreground": (40, 40, 40)}


def set_plot_colours(background: RGB, foreground: RGB) -> None:
    _COLOURS["background"], _COLOURS["foreground"] = background, foreground


def theme_colours() -> tuple[RGB, RGB]:
    """(background, foreground) of the plots, as RGB."""
    return _COLOURS["background"], _COLOURS["foreground"]
