"""The Run page's live plots driven by real X input (xdotool on Xvfb, issue 45): the window as
`disklab gui` opens it (tests/gui/live_probe.py, which also writes what the plots show), a real
run of two engine cases (4 MiB blocks, fast; 512 B blocks, far slower), then as a person would:
the wheel over the y axis zooms y alone; a drag on a plot pans time in all plots; zoomed by the
wheel into the slow case, y fits it (the top tick within 2x of what is shown, not the run's
peak); the crosshair's values are the stored samples (`disklab export --format samples`) at the
mouse's time; the right-click menu's Export > CSV holds the stored samples of the window shown.

Screenshots go to $DISKLAB_SCREENSHOTS when set, else the test's temporary directory.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from disklab.core.library.store import Library
from tests.gui.test_real_input import Desktop, wait_for

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PLAN = """\
name = "live plots by hand"

[target]
directory = "{target}"

[[test]]
tool = "engine"
mode = "write"
block_size = ["4m", "512"]
size = "64m"
runtime = "5s"
direct = false
"""


class Probe:
    """What the plots show, as live_probe.py writes it."""

    def __init__(self, path: Path, desk: Desktop):
        self.path, self.desk = path, desk

    def read(self) -> dict:
        for _ in range(50):
            try:
                return json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                time.sleep(0.1)
        raise AssertionError(f"no probe: {self.desk.log.read_text()[-2000:]}")

    def settled(self) -> dict:
        """The state once two probes agree (the plots redraw within 100 ms of a move)."""
        time.sleep(0.5)
        last = self.read()
        for _ in range(20):
            time.sleep(0.3)
            now = self.read()
            if now["views"] == last["views"]:
                return now
            last = now
        return last


def centre(rect: list[int]) -> tuple[int, int]:
    return rect[0] + rect[2] // 2, rect[1] + rect[3] // 2


def stored(library: Path, session: int, series: str, t0: float) -> list[tuple[float, float]]:
    """The stored samples of a series as (plot time, value in MB/s), from the CLI's export."""
    out = subprocess.run([sys.executable, "-m", "disklab", "export", str(session), "--format",
                          "samples", "-o", "-", "--library", str(library)],
                         capture_output=True, text=True, check=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "app")}).stdout
    lib = Library.open(library)
    try:
        starts = {(r["case_id"], r["repeat"]): r["started"] for r in lib.runs(session)}
    finally:
        lib.close()
    rows = [r for r in csv.DictReader(io.StringIO(out)) if r["series"] == series]
    return sorted((starts[(r["case_id"], int(r["repeat"]))] + float(r["t_s"]) - t0,
                   float(r["value"]) / 1e6) for r in rows)


def test_the_live_plots_by_real_mouse(tmp_path):
    for tool in ("Xvfb", "xdotool"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed: scripts/install-system-packages.sh installs it")
    shots = Path(os.environ.get("DISKLAB_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    target = tmp_path / "target"
    target.mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(target=target), encoding="utf-8")
    library = tmp_path / "lib" / "library.sqlite3"
    desk = Desktop(tmp_path, shots)
    probe = Probe(tmp_path / "probe.json", desk)
    try:
        desk.app = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "gui" / "live_probe.py"), str(library),
             str(plan), str(probe.path)], cwd=tmp_path, env=desk.env,
            stdout=desk.log.open("wb"), stderr=subprocess.STDOUT)
        win = desk.window(" — DiskLab$")
        desk.xdo("windowfocus", "--sync", win)
        time.sleep(1.0)
        desk.key("F5")
        wait_for("the run to finish", lambda: probe.path.exists()
                 and probe.read()["status"] in ("finished", "failed", "cancelled"), 90, desk)
        state = probe.settled()
        assert state["status"] == "finished", desk.log.read_text()[-3000:]
        desk.shot("plots-run")
        _by_hand(desk, probe, state, library, tmp_path)
    except AssertionError:
        if desk.app is not None and desk.app.poll() is None:
            desk.shot("plots-failure")
        raise
    finally:
        desk.close()


def _by_hand(desk: Desktop, probe: Probe, state: dict, library: Path, tmp: Path) -> None:
    session, t0 = int(state["session"]), float(state["t0"])
    app = stored(library, session, "app_wchar_bps", t0)
    whole_x, whole_y = state["views"]["app"]

    # the wheel over the Application plot's y axis: y zoomed, time and the other plots not
    x, y = centre(state["axis_rects"]["app"])
    desk.xdo("mousemove", str(x), str(y))
    desk.xdo("click", "--repeat", "3", "--delay", "80", "4")
    now = probe.settled()
    assert now["views"]["app"][1][1] < 0.8 * whole_y[1], (now["views"]["app"], whole_y)
    assert now["views"]["app"][0] == pytest.approx(whole_x, rel=1e-6)
    assert now["views"]["device"][1] == pytest.approx(state["views"]["device"][1], rel=1e-6)
    desk.shot("plots-y-zoom")

    # "Whole run": the whole run again, y fitted (a double click does the same:
    # test_live_plots.py)
    x, y = centre(now["whole_button"])
    desk.xdo("mousemove", str(x), str(y))
    desk.xdo("click", "1")
    now = probe.settled()
    assert now["views"]["app"][1] == pytest.approx(whole_y, rel=0.02)

    # the wheel on the plot at three quarters of the run: time zoomed into the slow case
    rect = now["plot_rects"]["app"]
    desk.xdo("mousemove", str(rect[0] + rect[2] * 3 // 4), str(rect[1] + rect[3] // 2))
    desk.xdo("click", "--repeat", "4", "--delay", "80", "4")
    now = probe.settled()
    lo, hi = now["views"]["app"][0]
    assert hi - lo < 0.5 * (whole_x[1] - whole_x[0])
    for key in ("device", "memory", "cpu"):
        assert now["views"][key][0] == pytest.approx([lo, hi], rel=1e-6)  # every plot
    shown = [v for t, v in app if lo <= t <= hi]
    run_max = max(v for _t, v in app)
    assert shown and max(shown) < run_max / 3, (max(shown), run_max)  # far below the peak
    top = max(now["ticks"]["app"])
    assert max(shown) * 0.5 <= top <= 2 * max(shown), (top, max(shown), now["ticks"]["app"])
    assert now["views"]["app"][1][1] < run_max  # not the run's peak
    desk.shot("plots-zoomed")

    # the crosshair's values: the stored sample at the mouse's time (within one sample)
    rect = probe.read()["plot_rects"]["app"]  # where the plots are now (the layout may move)
    desk.xdo("mousemove", str(rect[0] + rect[2] // 2), str(rect[1] + rect[3] // 3))
    text = probe.settled()["readout"]
    at = float(re.search(r"t = ([0-9.]+) s", text).group(1))
    shown_value = float(re.search(r"Application: write ([0-9.e+]+) MB/s", text).group(1))
    near = sorted(app, key=lambda s: abs(s[0] - at))[:2]  # the nearest and the next nearest
    assert any(f"{v:.4g}" == f"{shown_value:.4g}" for _t, v in near), (text, near)
    desk.shot("plots-crosshair")

    # a drag on the Device plot pans time in all plots (to earlier times)
    rect = probe.read()["plot_rects"]["device"]
    x, y = rect[0] + rect[2] // 3, rect[1] + rect[3] * 3 // 4  # clear of the legend
    desk.xdo("mousemove", "--sync", str(x), str(y))
    time.sleep(0.3)
    desk.shot("plots-before-drag")
    time.sleep(1.0)
    desk.xdo("mousedown", "1")
    time.sleep(0.6)
    for _ in range(10):
        desk.xdo("mousemove_relative", "--", "20", "0")
        time.sleep(0.1)
    time.sleep(0.3)
    desk.xdo("mouseup", "1")
    panned = probe.settled()
    plo, phi = panned["views"]["app"][0]
    assert plo < lo and phi - plo == pytest.approx(hi - lo, rel=0.01)
    for key in ("device", "memory", "cpu"):
        assert panned["views"][key][0] == pytest.approx([plo, phi], rel=1e-6)
    assert not panned["follow"]  # back in time: it stays there
    desk.shot("plots-panned")

    # the right-click menu: Export > CSV of the samples shown
    x, y = centre(probe.read()["plot_rects"]["app"])
    desk.xdo("mousemove", str(x), str(y))
    desk.xdo("click", "3")
    time.sleep(0.5)
    desk.shot("plots-menu")
    desk.key("e", "c")
    dialog = desk.window("^Export the samples")
    desk.xdo("windowfocus", "--sync", dialog)
    time.sleep(0.3)
    path = tmp / "shown.csv"
    desk.key("ctrl+a")
    desk.type(str(path))
    desk.key("Return")
    wait_for("the CSV", lambda: path.exists() and path.stat().st_size > 0, 20, desk)
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    got = [(float(r["t_s"]), float(r["Application write (MB/s)"])) for r in rows
           if r.get("Application write (MB/s)")]
    want = [(round(t, 3), v) for t, v in app if plo <= t <= phi]
    assert len(got) == len(want) and got, (len(got), len(want))
    for (tg, vg), (tw, vw) in zip(got, want, strict=True):
        assert tg == pytest.approx(tw, abs=0.002) and vg == pytest.approx(vw, rel=1e-9)
