"""The Target page's "Start here" banner: the four steps to a first run, shown while the plan
is blank. Apart from the page, because its one rule is about the layout around it: its room is
kept while the page is on screen after it goes (the form does not jump under the pointer at
the first choice) and given back when the page is left (coming back, no blank band above the
form)."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

TEXT = ("<b>Start here.</b> 1. Choose where the tests run (a directory is the quickest). "
        "2. Optionally add filesystem configurations to compare (page 2). "
        "3. Add tests on the Test matrix (page 3). 4. Press F5 to run.")


class StartHint(QLabel):
    """The banner; hidden until show_hint(True), as it has no room before."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(TEXT, parent)
        self.setWordWrap(True)
        self.setStyleSheet("background:#e8f1fb; border:1px solid #9cc1e8; "
                           "padding:6px; color:#123;")
        self.hide()

    def show_hint(self, shown: bool) -> None:
        """Show or hide it, its room kept while it is shown and after it goes."""
        self.keep_room(shown)
        self.setVisible(shown)

    def keep_room(self, keep: bool) -> None:
        """Keep its room in the layout while hidden (`keep`), or give it back."""
        policy = self.sizePolicy()
        if policy.retainSizeWhenHidden() != keep:
            policy.setRetainSizeWhenHidden(keep)
            self.setSizePolicy(policy)

    def page_hidden(self, page: QWidget) -> None:
        """The page has been left: a banner gone gives its room back."""
        if not self.isVisibleTo(page):
            self.keep_room(False)
