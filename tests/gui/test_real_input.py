"""The real app, driven by real X input: a short comparison from the Target page to exported files.

`python -m disklab gui` runs in its own process on its own X server (Xvfb), with a throwaway
HOME, XDG directories and library; xdotool sends it X key presses and mouse clicks, as a person
at the keyboard would: the directory typed on the Target page, the built-in engine test added
on the Test matrix with two block sizes, F5, Compare the last run, and File > Export for a
PNG chart, an SVG chart and the CSV table. The test checks what the person would: the session
in the library holds the two cases on that directory, the PNG has a size and is not blank, the
SVG parses and has bars, the CSV has a row per block size.

Screenshots of the screen (the X server's root window, grabbed by Qt in a helper process) go
to $DISKLAB_SCREENSHOTS when set, else the test's temporary directory: look at them.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SCREEN = (1400, 900)
GRAB = """\
import sys
from PySide6.QtGui import QGuiApplication
app = QGuiApplication(sys.argv[:1])
ok = app.primaryScreen().grabWindow(0).save(sys.argv[1])
sys.exit(0 if ok else 1)
"""


class Desktop:
    """An X server of its own, the app on it, and the person's hands (xdotool)."""

    def __init__(self, tmp: Path, shots: Path):
        self.tmp, self.shots = tmp, shots
        read, write = os.pipe()
        self.xvfb = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write), "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24",
             "-nolisten", "tcp"], pass_fds=(write,), stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as f:
            self.display = ":" + f.readline().strip()
        home = tmp / "home"
        self.env = {
            "PATH": os.environ["PATH"], "DISPLAY": self.display, "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".data"),
            "XDG_STATE_HOME": str(home / ".state"), "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_RUNTIME_DIR": str(tmp / "run"), "QT_QPA_PLATFORM": "xcb",
            "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT / "app")),
            "LANG": "C.UTF-8",
        }
        (tmp / "run").mkdir(mode=0o700)
        home.mkdir()
        self.app: subprocess.Popen[bytes] | None = None
        self.log = tmp / "app.log"

    def start_app(self, library: Path) -> None:
        self.app = subprocess.Popen(
            [sys.executable, "-m", "disklab", "gui", "--library", str(library)],
            cwd=self.tmp, env=self.env, stdout=self.log.open("wb"), stderr=subprocess.STDOUT)

    def xdo(self, *args: str) -> str:
        done = subprocess.run(["xdotool", *args], env=self.env, capture_output=True, text=True,
                              timeout=30)
        assert done.returncode == 0, f"xdotool {args}: {done.stderr}"
        return done.stdout.strip()

    def key(self, *keys: str) -> None:
        for k in keys:
            self.xdo("key", "--clearmodifiers", k)
            time.sleep(0.15)

    def type(self, text: str) -> None:
        self.xdo("type", "--delay", "20", text)
        time.sleep(0.2)

    def window(self, name: str, timeout: float = 30) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.alive()
            found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", name],
                                   env=self.env, capture_output=True, text=True)
            if found.returncode == 0 and found.stdout.split():
                return found.stdout.split()[-1]
            time.sleep(0.2)
        raise AssertionError(f"no window {name!r}: {self.log.read_text()[-2000:]}")

    def click(self, window: str, x: int, y: int) -> None:
        """A real mouse click at (x, y) inside `window`."""
        self.xdo("mousemove", "--window", window, "--sync", str(x), str(y))
        self.xdo("click", "1")
        time.sleep(0.3)

    def shot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        subprocess.run([sys.executable, "-c", GRAB, str(path)], env=self.env, check=True,
                       timeout=30, capture_output=True)
        return path

    def alive(self) -> None:
        assert self.app is not None and self.app.poll() is None, \
            f"the app exited: {self.log.read_text()[-3000:]}"

    def close(self) -> None:
        if self.app is not None and self.app.poll() is None:
            self.app.send_signal(signal.SIGTERM)  # the app's Cancel-and-quit, without asking
            try:
                self.app.wait(30)
            except subprocess.TimeoutExpired:
                self.app.kill()
                self.app.wait()
        self.xvfb.terminate()
        self.xvfb.wait(10)


def wait_for(what: str, check: Callable[[], object], timeout: float, desk: Desktop) -> object:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        desk.alive()
        got = check()
        if got:
            return got
        time.sleep(0.25)
    raise AssertionError(f"waited {timeout} s for {what}: {desk.log.read_text()[-3000:]}")


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def sessions(library: Path) -> list[tuple[int, str, str]]:
    if not library.exists():
        return []
    with sqlite3.connect(f"file:{library}?mode=ro", uri=True) as db:
        return list(db.execute("SELECT id, status, plan_text FROM session ORDER BY id"))


def export(desk: Desktop, win: str, letter: str, path: Path) -> None:
    """File > Export > (letter), the file name typed in the dialog, Enter."""
    desk.xdo("windowfocus", "--sync", win)  # no window manager gives it back after a dialog
    time.sleep(0.2)
    desk.key("alt+f", "e", letter)
    dialog = desk.window("^Export")
    desk.xdo("windowfocus", "--sync", dialog)
    time.sleep(0.3)
    desk.key("ctrl+a")
    desk.type(str(path))
    desk.key("Return")
    wait_for(f"{path.name} written", lambda: path.exists() and path.stat().st_size > 0, 20, desk)


def test_a_comparison_by_real_keys_and_clicks(tmp_path):
    for tool in ("Xvfb", "xdotool"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed: scripts/install-system-packages.sh installs it")
    shots = Path(os.environ.get("DISKLAB_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    target = tmp_path / "target dir"  # a space: the path is typed, not pasted
    target.mkdir()
    library = tmp_path / "lib" / "library.sqlite3"
    out = tmp_path / "out"
    out.mkdir()
    desk = Desktop(tmp_path, shots)
    started = time.monotonic()
    try:
        desk.start_app(library)
        win = desk.window(" — DiskLab$")  # the title names the plan: "new plan — DiskLab"
        desk.xdo("windowfocus", "--sync", win)
        time.sleep(1.0)
        desk.shot("real-target")

        # Target page (where a new window opens): the directory, typed
        desk.key("alt+d", "Tab", "ctrl+a")
        desk.type(str(target))
        desk.key("Tab")

        # Test matrix: a real click on its sidebar entry (the third, 36 px rows under the
        # menu bar), the built-in engine (first in the list), two block sizes
        desk.click(win, 80, 48 + 2 * 36)
        desk.key("alt+a")  # Add a test with this tool: the cursor lands in its `mode`
        desk.type("write")
        desk.key("Tab")
        desk.type("64k, 1m")
        desk.key("Tab")
        desk.type("32m")
        time.sleep(1.0)  # the page's check (300 ms after the last key)
        desk.shot("real-matrix")

        desk.key("F5")
        done = wait_for("the session to finish",
                        lambda: [s for s in sessions(library) if s[1] != "running"], 40, desk)
        session_id, status, plan_text = done[0]  # type: ignore[index]
        assert status == "finished", desk.log.read_text()[-3000:]
        assert str(target) in plan_text and "64k" in plan_text
        time.sleep(1.0)
        desk.shot("real-run")

        desk.key("ctrl+k")  # Run > Compare the last run
        time.sleep(1.5)
        desk.shot("real-compare")
        png, svg, table = out / "chart.png", out / "chart.svg", out / "table.csv"
        export(desk, win, "p", png)
        export(desk, win, "v", svg)
        export(desk, win, "c", table)
    except AssertionError:
        if desk.app is not None and desk.app.poll() is None:
            desk.shot("real-failure")  # what the screen showed when it went wrong
        raise
    finally:
        desk.close()
    elapsed = time.monotonic() - started

    # what the person got
    width, height = png_size(png)
    assert width >= 400 and height >= 250, (width, height)
    assert len(png.read_bytes()) > 5_000  # a drawn chart, not a blank canvas
    tree = ET.parse(svg)
    rects = [e for e in tree.iter() if e.tag.endswith("rect")]
    texts = " ".join("".join(e.itertext()) for e in tree.iter() if e.tag.endswith("text"))
    # one chart per metric (write), each block size in value order: 64k, then 1m; a swept
    # axis is drawn as a line with a mark per value (core.results.charts), else as bars
    marks = [e for e in tree.iter() if e.tag.rsplit("}", 1)[-1] in ("circle", "path", "rect")]
    assert len(rects) >= 2 or len(marks) >= 2, "no bars or points in the SVG chart"
    assert "write" in texts and texts.index("64k") < texts.index("1m"), texts
    rows = list(csv.reader(table.read_text(encoding="utf-8").splitlines()))
    flat = json.dumps(rows)
    assert len(rows) >= 2, rows
    assert ("64k" in flat or "65536" in flat or "64 KiB" in flat) and \
        ("1m" in flat or "1048576" in flat or "1 MiB" in flat), rows
    with sqlite3.connect(f"file:{library}?mode=ro", uri=True) as db:
        cases = [json.loads(p) for (p,) in db.execute(
            "SELECT params FROM case_ WHERE session_id = ?", (session_id,))]
    assert sorted(c["block_size"] for c in cases) == [64 * 1024, 1024 * 1024]
    for name in ("real-target", "real-matrix", "real-run", "real-compare"):
        assert png_size(shots / f"{name}.png") == SCREEN
    assert elapsed < 90, f"the real-input run took {elapsed:.0f} s"
