"""Screenshots of every page of the real window under Xvfb (the xcb platform, not offscreen).

The test runs itself again under `xvfb-run -a` (its own X server, whatever DISPLAY says). The
pictures go to $DISKLAB_SCREENSHOTS (docs/screenshots/ when making the README's pictures) or a
temporary dir; look at them after a change to the window.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.core.resources import resource
from tests.helpers import engine_plan

ROOT = Path(__file__).resolve().parents[2]
INNER = "DISKLAB_SCREENSHOT_INNER"
PAGES = ("target", "configs", "matrix", "run", "library", "compare", "hosts")


def test_screenshots_of_every_page(tmp_path):
    out = Path(os.environ.get("DISKLAB_SCREENSHOTS") or tmp_path / "shots")
    out.mkdir(parents=True, exist_ok=True)
    if os.environ.get(INNER):
        return  # this is the inner run: the test below takes the pictures
    if shutil.which("xvfb-run") is None:
        pytest.fail("xvfb-run is not installed: `make test` installs it "
                    "(scripts/install-system-packages.sh)")
    env = {**os.environ, INNER: "1", "QT_QPA_PLATFORM": "xcb", "DISKLAB_SCREENSHOTS": str(out)}
    env.pop("WAYLAND_DISPLAY", None)
    done = subprocess.run(
        ["xvfb-run", "-a", "-s", "-screen 0 1400x900x24", sys.executable, "-m", "pytest",
         "-q", "-p", "no:cacheprovider", f"{__file__}::test_inner_take_screenshots"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for page in PAGES:
        png = out / f"{page}.png"
        assert png.exists(), f"no screenshot of {page}"
        assert png.read_bytes()[:4] == b"\x89PNG" and png.stat().st_size > 10_000


@pytest.mark.skipif(not os.environ.get(INNER), reason="runs inside xvfb-run (the test above)")
def test_inner_take_screenshots(qtbot, tmp_path):
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from disklab.gui.app import apply_theme
    from disklab.gui.draft import PlanDraft
    from disklab.gui.main_window import MainWindow
    from disklab.gui.state import Workbench

    assert QApplication.instance().platformName() == "xcb"
    apply_theme(QApplication.instance(), dark=False)
    out = Path(os.environ["DISKLAB_SCREENSHOTS"])
    target = tmp_path / "scratch"
    target.mkdir()
    (tmp_path / "lib").mkdir()
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(Workbench(tmp_path / "lib" / "library.sqlite3"), settings)
    w.ask = lambda title, text: True
    w.ask_save = lambda: "discard"  # closing with a changed plan: no dialog in tests
    qtbot.addWidget(w)
    w.resize(1280, 820)  # the default window (issue 29: every page read at this size)
    w.show()
    qtbot.waitExposed(w)

    sessions = []
    configs = [{"label": "ext4 data=ordered", "fs": "ext4", "mount": ["data=ordered"]},
               {"label": "ext4 data=journal", "fs": "ext4", "mkfs": {"journal_size": "64m"},
                "mount": ["data=journal"]}]
    with_image = os.geteuid() == 0
    if with_image:  # the real use: one session, two configurations of a scratch image
        w.wb.set_draft(PlanDraft.from_text(engine_plan(target, name="ext4 journal modes",
                                                       repeats=2, runtime="1s")))
        w.target.set_image(str(tmp_path / "scratch.img"), 1)
        for c in configs:
            w.configs.add_config(dict(c))
        runs = [w.wb.draft]
    else:
        runs = [PlanDraft.from_text(engine_plan(target, name=name, repeats=2, runtime="1s"))
                for name in ("engine buffered, first", "engine buffered, second")]
    for draft in runs:
        w.wb.set_draft(draft)
        with qtbot.waitSignal(w.run.finished, timeout=120_000) as blocker:
            w.run.start()
        assert blocker.args[1] == "finished", w.run.log.toPlainText()[-2000:]
        sessions.append(blocker.args[0])
    qtbot.wait(300)
    shots = {"run": w.grab()}  # the run page as the last run left it: plots, table, log

    w.show_page("matrix")
    if not with_image:
        w.matrix.load_file(str(resource("presets", "quick.toml")))
        w.target.set_directory(str(target))
    w.matrix.validate()
    qtbot.waitUntil(lambda: not w.matrix._checking, timeout=10_000)
    w.library.select_session(sessions[0])
    w.compare.compare_ids(sessions, baseline=sessions[0])
    assert len(w.compare.comparison.rows) == 2
    for page in PAGES:
        if page in ("run", "configs", "hosts"):
            continue
        w.show_page(page)
        qtbot.wait(250)
        shots[page] = w.grab()
    if not with_image:
        for c in configs:
            w.configs.add_config(dict(c))
    w.configs.list.setCurrentRow(w.configs.list.count() - 1)
    w.show_page("configs")
    qtbot.wait(300)
    shots["configs"] = w.grab()
    for page, pixmap in shots.items():
        assert pixmap.width() <= 1280, (page, pixmap.width())  # never wider than it was made
        assert pixmap.save(str(out / f"{page}.png"))
    w.compare.tabs.setCurrentIndex(1)
    w.show_page("compare")
    qtbot.wait(250)
    w.grab().save(str(out / "compare-chart.png"))
    # two machines on the Hosts page (a loopback fio server each, as the host-scaling preset
    # has them), added last: the other pages show the plan without them
    for i in (1, 2):
        assert w.hosts.add(f"h{i}", {"address": f"127.0.0.{i + 1}", "start": "running",
                                     "directory": f"/tmp/disklab-h{i}"}) is None
    w.show_page("hosts")
    qtbot.wait(250)
    assert w.grab().save(str(out / "hosts.png"))
    w.library.close_library()
    w.compare.close_library()
