"""Screenshots of every page of the real window under Xvfb (the xcb platform, not offscreen).

The test runs itself again under `xvfb-run -a` (its own X server, whatever DISPLAY says). The
pictures go to $DISKLAB_SCREENSHOTS (docs/screenshots/ when making the README's pictures) or a
temporary dir; look at them after a change to the window.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QAbstractButton, QGroupBox, QLabel, QListWidget, QWidget

from disklab.core.resources import resource
from tests.helpers import engine_plan

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
INNER = "DISKLAB_SCREENSHOT_INNER"
PAGES = ("target", "configs", "matrix", "run", "library", "compare", "hosts")
# every page again on a laptop's screen (issue 49): the window at 1024x768, the History page too
SMALL = (1024, 768)
SMALL_PAGES = (*PAGES, "history")
MANIFEST = "shown.json"  # what the widget tree showed at each capture (inner run)
def _visible_texts(widget: QWidget) -> list[str]:
    """The texts of the labels, buttons, group boxes and list entries the user can see inside
    `widget` now."""
    texts = []
    for child in widget.findChildren(QWidget):
        if not child.isVisible():
            continue
        if isinstance(child, QLabel | QAbstractButton):
            texts.append(child.text())
        elif isinstance(child, QGroupBox):
            texts.append(child.title())
        elif isinstance(child, QListWidget):
            texts += [child.item(i).text() for i in range(child.count())]
    return [t for t in texts if t]


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
    # what the window showed at each capture, from its widget tree (no OCR): the page asked
    # for was the one on screen, its entry current in the sidebar, its own texts visible
    shown = json.loads((out / MANIFEST).read_text())
    pixels: dict[str, bytes] = {}
    for page in PAGES:
        png = out / f"{page}.png"
        assert png.exists(), f"no screenshot of {page}"
        seen = shown[f"{page}.png"]
        assert seen["page"] == page and seen["stacked"], seen  # that page's widget on top
        assert seen["sidebar"].endswith(seen["title"]), seen  # and its entry current
        others = set().union(*(shown[f"{p}.png"]["texts"] for p in PAGES if p != page))
        assert set(seen["texts"]) - others, f"nothing of the {page} page's own was visible"
        image = QImage(str(png))
        assert (image.width(), image.height()) == tuple(seen["size"]), page
        pixels[page] = _not_blank(image, page)
    assert len(set(pixels.values())) == len(PAGES), "two pages' screenshots are the same"
    for page in SMALL_PAGES:  # at 1024x768 the window is that size, each page drawn whole
        name = f"{page}-{SMALL[0]}x{SMALL[1]}.png"
        seen = shown[name]
        assert seen["page"] == page and seen["stacked"], seen
        image = QImage(str(out / name))
        assert (image.width(), image.height()) == SMALL, (page, image.size())
        _not_blank(image, page)


def _not_blank(image: QImage, page: str) -> bytes:
    """The page's area (right of the sidebar) sampled on a 40 x 40 grid: many colours, not one
    flat fill (a window grabbed before it was painted is one colour); the samples, to compare
    pages by."""
    xs = [200 + (image.width() - 210) * i // 40 for i in range(40)]
    ys = [40 + (image.height() - 80) * j // 40 for j in range(40)]
    samples = [image.pixel(x, y) for y in ys for x in xs]
    assert len(set(samples)) >= 8, f"the {page} page's screenshot is blank"
    flat = max(samples.count(c) for c in set(samples))
    assert flat < 0.97 * len(samples), f"the {page} page's screenshot is one colour"
    return b"".join(c.to_bytes(4, "little") for c in samples)


@pytest.mark.skipif(not os.environ.get(INNER), reason="runs inside xvfb-run (the test above)")
def test_inner_take_screenshots(qtbot, tmp_path):
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from disklab.core.plan.draft import PlanDraft
    from disklab.gui.app import apply_theme
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
    w.ask_save = lambda _doing: "discard"  # closing with a changed plan: no dialog in tests
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
    shown: dict[str, dict] = {}

    def capture(name: str) -> QPixmap:
        """The window now, and what its widget tree showed (for the outer test)."""
        key = w.current_page()
        pixmap = w.grab()
        shown[name] = {"page": key, "title": w.pages[key].title,
                       "stacked": w.stack.currentWidget() is w.pages[key],
                       "sidebar": w.sidebar.currentItem().text(),
                       "texts": _visible_texts(w.pages[key]),
                       "size": [pixmap.width(), pixmap.height()]}
        return pixmap

    shots = {"run": capture("run.png")}  # the run page as the last run left it

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
        shots[page] = capture(f"{page}.png")
    if not with_image:
        for c in configs:
            w.configs.add_config(dict(c))
    w.configs.list.setCurrentRow(w.configs.list.count() - 1)
    w.show_page("configs")
    qtbot.wait(300)
    shots["configs"] = capture("configs.png")
    for page, pixmap in shots.items():
        assert pixmap.width() <= 1280, (page, pixmap.width())  # never wider than it was made
        assert pixmap.save(str(out / f"{page}.png"))
    w.compare.tabs.setCurrentIndex(1)
    w.show_page("compare")
    qtbot.wait(250)
    assert capture("compare-chart.png").save(str(out / "compare-chart.png"))
    # two machines on the Hosts page (a loopback fio server each, as the host-scaling preset
    # has them), added last: the other pages show the plan without them
    for i in (1, 2):
        assert w.hosts.add(f"h{i}", {"address": f"127.0.0.{i + 1}", "start": "running",
                                     "directory": f"/tmp/disklab-h{i}"}) is None
    w.show_page("hosts")
    qtbot.wait(250)
    assert capture("hosts.png").save(str(out / "hosts.png"))
    w.compare.tabs.setCurrentIndex(0)
    w.resize(*SMALL)
    w.history.show_history(sessions[0])
    for page in SMALL_PAGES:
        w.show_page(page)
        qtbot.wait(300)
        name = f"{page}-{SMALL[0]}x{SMALL[1]}.png"
        assert capture(name).save(str(out / name))
    (out / MANIFEST).write_text(json.dumps(shown, indent=1))
    w.wb.close_library()
