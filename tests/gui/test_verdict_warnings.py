"""Issue 44 in the window: a plan asking for direct I/O under ext4 data=journal is warned in
the Test matrix page's "Before you start" box, at the test's `direct` field."""

from __future__ import annotations

from disklab.core.plan.draft import PlanDraft
from tests.gui.test_guide import checked

PLAN = """\
name = "direct under data=journal"
[target]
image = {{ path = "{image}", size = "384m" }}

[[config]]
label = "journal"
fs = "ext4"
mount = ["data=journal"]

[[test]]
tool = "fio"
rw = "randwrite"
bs = "4k"
size = "64m"
ioengine = "libaio"
direct = true
runtime = "3s"
"""


def test_direct_io_under_data_journal_is_warned_before_you_start(qtbot, window, tmp_path):
    window.wb.set_draft(PlanDraft.from_text(PLAN.format(image=tmp_path / "scratch.img")))
    window.show_page("matrix")
    checked(qtbot, window)
    page = window.matrix
    (problem,) = [p for p in page.summary.problems if p.key == "test[1].direct"]
    assert "data=journal does not do O_DIRECT" in problem.message
    shown = [page.problems.item(i).text() for i in range(page.problems.count())]
    assert any("does not do O_DIRECT" in text for text in shown), shown
