"""Tool outputs with numbers too large for a float or for SQLite: `disklab import` says which
tool, line and field (exit 2), never a traceback; the library never gets a value it cannot
store."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from disklab.cli.main import main
from disklab.core import tools
from disklab.core.library import Library
from disklab.core.library.imports import import_session
from disklab.core.tools.base import ToolOutput
from disklab.core.vocab.errors import DisklabError, LibraryError, ParseError
from disklab.core.vocab.model import Case, Metric
from tests.helpers import FIXTURES, fixture_text

HUGE = "9" * 400


def _import(tmp_path: Path, name: str, text: str, capsys: pytest.CaptureFixture[str],
            *extra: str) -> tuple[int, str]:
    path = tmp_path / name
    path.write_text(text)
    code = main(["import", str(path), "--library", str(tmp_path / "library.sqlite3"), *extra])
    return code, capsys.readouterr().err


def test_a_fio_json_whose_bw_has_401_digits_names_tool_line_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = fixture_text("fio", "disklab_numjobs2_randrw70.output.json")
    line = text.splitlines().index('        "bw" : 59141,') + 1
    text = text.replace('"bw" : 59141,', f'"bw" : {"9" * 401},', 1)
    code, err = _import(tmp_path, "fio.json", text, capsys)
    assert code == 2, err
    assert f"fio output, line {line}" in err and "'bw'" in err
    assert "Traceback" not in err and "Overflow" not in err


def test_a_bonnie_csv_whose_size_is_400_nines_names_tool_line_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fields = fixture_text("bonnie", "s1g_r512_n16_quiet_ext4.csv").strip().split(",")
    assert fields[5] == "1G"
    fields[5] = HUGE
    code, err = _import(tmp_path, "bonnie.csv", ",".join(fields) + "\n", capsys,
                        "--tool", "bonnie")
    assert code == 2, err
    assert "bonnie output, line 1" in err and "size" in err
    assert "Traceback" not in err


SAMPLES = {  # a few recorded outputs per tool, each number of which is made huge in turn
    "fio": ["disklab_numjobs2_randrw70.output.json", "client-server_jobfile_btrfs_json.json",
            "client-server_jobfile_ext4_normal.txt"],
    "bonnie": ["s1g_r512_n16_quiet_ext4.csv", "bon_csv2txt_of_quiet_csv_btrfs.txt",
               "s1g_r512_n16_ext4.txt"],
    "iozone": ["auto_n1m-g4m_y64k-q256k_i0-1_cpu_excel.txt",
               "auto_s64m_q16m_i0-1-2_btrfs.txt"],
    "dd": ["read_1m_iflag-direct_progress_btrfs.stderr.txt",
           "error_enospc_write_1m_x5120_progress_ext4.stderr.txt"],
}


def _storable(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return True
    return math.isfinite(value) and abs(value) < 2**63


@pytest.mark.parametrize("tool", sorted(SAMPLES))
def test_every_number_made_huge_is_a_parse_error_or_a_storable_figure(tmp_path: Path,
                                                                      tool: str) -> None:
    adapter = tools.get_adapter(tool)
    folder = {"bonnie": "bonnie"}.get(tool, tool)
    library = Library.open(tmp_path / "library.sqlite3")
    tried = 0
    for name in SAMPLES[tool]:
        text = (FIXTURES / folder / name).read_text(errors="replace")
        numbers = list(re.finditer(r"\d+(?:\.\d+)?", text))
        for m in numbers[:: max(1, len(numbers) // 40)]:
            for huge in (HUGE, "9" * 401 + ".5", "1" + "0" * 320):
                damaged = text[:m.start()] + huge + text[m.end():]
                output = ToolOutput(stdout=damaged, stderr=damaged if tool == "dd" else "")
                tried += 1
                try:
                    metrics = adapter.parse_result(output, {})
                except ParseError as e:
                    assert e.tool == tool
                    continue
                except DisklabError:  # what the output itself says went wrong (dd's ENOSPC)
                    continue
                for metric in metrics:
                    assert metric.value is None or _storable(metric.value), metric
                    assert all(_storable(v) for v in (metric.params or {}).values()), metric
                import_session(library, name="x", tool=tool, config="c", source_path=name,
                                       transcript="", metrics=metrics, params={}, host={})
    library.close()
    assert tried > 100


def test_the_library_refuses_a_value_it_cannot_store_with_a_library_error(
        tmp_path: Path) -> None:
    """Whatever a parser lets through, SQLite never raises OverflowError at the recorder."""
    library = Library.open(tmp_path / "library.sqlite3")
    with pytest.raises(LibraryError, match="too large"):
        import_session(library, name="x", tool="fio", config="c", source_path="f",
                               transcript="", metrics=[Metric("bw", 10**400, "B/s")],
                               params={}, host={})
    writer = library.writer()
    case = Case("c1", 0, "as is", "engine", 0, {"size": 1})
    writer.create_session(name="s", started=1.0, pid=1, pid_started=1.0, host={},
                          plan_text="", warnings=(), repeats=1, cases=[case])
    with pytest.raises(LibraryError, match="too large"):
        writer.start_run("c1", 1, ["tool"], None, 2**64, 2.0)
    with pytest.raises(LibraryError, match="too large"):
        writer.add_metrics("c1", 1, [Metric("bw", float("inf"), "B/s")])
    writer.add_metrics("c1", 1, [Metric("bw", 10**30, "B/s")])  # a float holds it
    writer.commit(3.0)
    library.close()
