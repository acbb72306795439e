"""A field the last plan check found wrong is drawn with a red border (the Target,
Configurations and Test matrix pages): one look for every page."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

INVALID = "border: 2px solid #d33;"


def mark_invalid(widget: QWidget, invalid: bool) -> None:
    """A red border on the widget itself (not on its children: a table's headers stay as they
    are), or none."""
    name = widget.metaObject().className()
    widget.setStyleSheet(f"{name} {{ {INVALID} }}" if invalid else "")
