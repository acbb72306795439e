"""bench/run.py --cases: figure 4's noisy rows measured again with more pairs, without the whole
figure's time (issue 34: QD 32 and 4 x QD 8 could not be resolved at 5 pairs). A wrong name is
refused with exit 2 and one line naming the option and the names it takes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.figures.engine_vs_fio import CASE_NAMES, CASES
from bench.run import chosen_figures

RUN = Path(__file__).resolve().parents[2] / "bench" / "run.py"


def test_each_case_has_a_name_of_its_own_that_says_its_size_and_queue() -> None:
    assert len(set(CASE_NAMES)) == len(CASES)
    assert "randread-4k-qd32" in CASE_NAMES and "randread-4k-4xqd8" in CASE_NAMES
    assert "read-1m-qd1" in CASE_NAMES


def _refused(*args: str) -> str:
    done = subprocess.run([sys.executable, str(RUN), *args], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr.strip().splitlines()[-1]


def test_a_case_that_does_not_exist_is_refused_with_the_names_there_are() -> None:
    line = _refused("--only", "4", "--cases", "qd32")
    assert "argument --cases: invalid choice: 'qd32'" in line
    assert all(name in line for name in CASE_NAMES)


def test_cases_with_figure_4_left_out_is_refused() -> None:
    line = _refused("--only", "5", "--cases", "randread-4k-qd32")
    assert line.endswith("--cases names figure 4's cases, and --only leaves figure 4 out")


def test_cases_alone_run_figure_4_and_nothing_else() -> None:
    """`--cases NAME` measures those rows of figure 4 again; it once ran every other figure
    first (1e, 1b and 2: a quarter of an hour) because --only was not given."""
    assert chosen_figures(None, ["randread-4k-qd8"]) == {"4"}
    assert chosen_figures(["1", "4"], ["randread-4k-qd8"]) == {"1", "4"}
    assert chosen_figures(None, None) == {str(i) for i in range(1, 12)}
    assert chosen_figures(["6"], None) == {"6"}
