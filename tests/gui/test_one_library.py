"""One Library per window (owned by its Workbench, handed to the pages) and typed change
notices: each page decides whether a change concerns what it shows (issue 29)."""

from __future__ import annotations

from disklab.core.library import Library
from tests.helpers import record_two_configs


def test_the_pages_share_the_windows_one_library(window) -> None:
    lib = window.wb.library()
    assert window.library._library() is lib
    assert window.compare._library() is lib
    window.library.refresh()
    window.compare.refresh()
    assert window.wb.library() is lib  # still the one connection: no page opened its own


def test_compare_recomputes_only_for_a_change_to_a_session_it_shows(window,
                                                                    library_path) -> None:
    with Library.open(library_path) as lib:
        shown = record_two_configs(lib)
        other = record_two_configs(lib)
    window.library.refresh()
    window.compare.refresh()
    window.compare.compare_ids([shown])
    assert [s["id"] for s in window.compare.sessions] == [shown]
    made = []
    original = window.compare.compare
    window.compare.compare = lambda: (made.append(True), original())
    lib = window.wb.library()
    lib.set_notes(other, "not shown here")
    window.wb.changed("edited", [other])
    assert made == []  # a session the page does not show: its list only
    lib.rename_session(shown, "renamed")
    window.wb.changed("edited", [shown])
    assert made == [True]
    assert window.compare.sessions[0]["name"] == "renamed"
    window.library.select_session(shown)
    window.library.delete(confirm=False)
    assert window.compare.sessions == []  # its only session was deleted: nothing shown
    listed = [window.compare.list.item(i).data(256) for i in
              range(window.compare.list.count())]
    assert listed == [other]


def test_the_library_and_compare_draw_their_charts_with_one_writer(window,
                                                                   library_path) -> None:
    """The Library's chart is Compare's: the SVG core.results.svg writes for exports (its
    labels laid out without overlap, its legend under the plot, never over a bar)."""
    from disklab.core.results.svg import to_svg

    with Library.open(library_path) as lib:
        sid = record_two_configs(lib)
        other = record_two_configs(lib)
    window.library.refresh()
    window.compare.refresh()
    window.library.select_session(sid)
    window.library.tabs.setCurrentWidget(window.library.chart_host)
    assert window.library.charts
    assert window.library.chart.svg == to_svg(window.library.charts[0])
    window.compare.compare_ids([sid, other], baseline=sid)
    assert window.compare.charts
    window.compare._show_chart(0)
    assert window.compare.chart.svg == to_svg(window.compare.charts[0])
    assert type(window.library.chart) is type(window.compare.chart)
