"""What varies is what every surface names: a real fio session at iodepth 1 and 16 (random
4k reads of an 8 MiB file, two repeats each) reads `iodepth=1` / `iodepth=16` in `disklab
show`, in `disklab compare` as text, Markdown, CSV, JSON and HTML, in the SVG charts (and the
PNG made of them), and in the window's Run, Library and Compare tables; what every case shares
is said once, and fio's defaults nobody set (`runtime=0.0`, `rwmixread=70`) nowhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from disklab.cli.main import main
from disklab.core.plan.matrix import expand
from disklab.core.plan.parse import parse_plan
from disklab.core.vocab.events import SessionStarted

pytestmark = pytest.mark.slow

PLAN = """\
name = "queue depth"
repeats = 2

[target]
directory = "{target}"

[[test]]
tool = "fio"
rw = "randread"
bs = "4k"
size = "8m"
ioengine = "libaio"
iodepth = [1, 16]
"""
UNSET_DEFAULTS = ("runtime", "rwmixread", "ramp_time", "group_reporting")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    base = tmp_path_factory.mktemp("labels")
    (base / "target").mkdir()
    plan_text = PLAN.format(target=base / "target")
    (base / "plan.toml").write_text(plan_text)
    library = base / "library.sqlite3"
    assert main(["run", str(base / "plan.toml"), "--library", str(library)]) == 0
    return library, plan_text


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def _says_what_varies(text: str) -> None:
    assert "iodepth=1" in text and "iodepth=16" in text, text[:2000]
    for key in UNSET_DEFAULTS:
        assert f"{key}=" not in text, (key, text[:2000])


def test_show_and_every_compare_format(session: tuple[Path, str], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    library, _plan = session
    lib = ("--library", str(library))
    shown = _run(capsys, "show", "1", *lib)
    _says_what_varies(shown)
    assert "every case: bs=4k ioengine=libaio rw=randread size=8m" in shown
    for fmt in ("text", "md", "csv", "json", "html"):
        out = _run(capsys, "compare", "1", "--rows", "iodepth", "--columns", "test",
                   "--format", fmt, *lib)
        _says_what_varies(out)
    doc = json.loads(_run(capsys, "compare", "1", "--rows", "iodepth", "--columns", "test",
                          "--format", "json", *lib))
    assert doc["rows"] == ["iodepth=1", "iodepth=16"]
    # the default pivot (config x test): iodepth varies inside a cell and joins the columns
    doc = json.loads(_run(capsys, "compare", "1", "--rows", "config", "--format", "json", *lib))
    assert doc["columns"] == ["read / iodepth=1", "read / iodepth=16"]
    # asked to compare: iodepth 16 against iodepth 1 of the same test, two repeats each side
    doc = json.loads(_run(capsys, "compare", "1", "--rows", "iodepth", "--columns", "test",
                          "--baseline", "iodepth=1", "--format", "json", *lib))
    cell = doc["cells"][1][0]
    assert cell["compared_with"] == "iodepth=1 / read" and cell["p_value"] is not None
    assert cell["delta_ci_low"] < cell["delta"] < cell["delta_ci_high"]


def test_svg_and_png_charts_name_the_queue_depth(session: tuple[Path, str], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    library, _plan = session
    lib = ("--library", str(library))
    _run(capsys, "export", "1", "--format", "svg", "-o", f"{tmp_path / 'svg'}/", *lib)
    svgs = {p.name: p.read_text() for p in (tmp_path / "svg").glob("*.svg")}
    sweep = [t for name, t in svgs.items() if "against-iodepth" in name]
    assert sweep, list(svgs)  # the queue depth is the x axis of a line chart
    texts = re.findall(r">([^<>]+)</text>", sweep[0])
    assert "iodepth" in texts and "1" in texts and "16" in texts
    assert any("higher is better" in t for t in texts) and any("n=2" in t for t in texts)
    for text in svgs.values():
        for key in UNSET_DEFAULTS:
            assert f"{key}=" not in text
    _run(capsys, "export", "1", "--format", "png", "-o", f"{tmp_path / 'png'}/", *lib)
    assert sorted(p.stem for p in (tmp_path / "png").glob("*.png")) == sorted(
        Path(n).stem for n in svgs)


def test_window_run_library_and_compare_tables(qtbot, window, session: tuple[Path, str]
                                               ) -> None:
    library, plan_text = session
    # the Run page's table, as a run of this plan fills it
    cases = tuple(expand(parse_plan(plan_text).plan))
    window.run.on_event(SessionStarted(name="queue depth", cases=cases, repeats=2, host={},
                                       warnings=(), t=1.0, plan_text=plan_text))
    titles = [window.run.table.item(r, 4).text() for r in range(window.run.table.rowCount())]
    assert titles == ["fio iodepth=1", "fio iodepth=16"]
    _says_what_varies(window.run.table.toolTip() + " ".join(titles))

    window.wb.library_path = library
    window.wb.close_library()
    window.library.refresh()
    assert window.library.select_session(1)
    qtbot.waitUntil(lambda: window.library.results_table.rowCount() > 0)
    t = window.library.results_table
    params = [t.item(i, 4).text() for i in range(t.rowCount())]
    assert set(params) == {"iodepth=1", "iodepth=16"}
    _says_what_varies(" ".join(params) + window.library.heading.text())

    window.compare.refresh()
    window.compare.compare_ids([1])
    view = window.compare.pivot_view
    headers = [view.horizontalHeaderItem(j).text() for j in range(view.columnCount())]
    rows = [view.verticalHeaderItem(i).text() for i in range(view.rowCount())]
    _says_what_varies(" ".join(headers + rows))
