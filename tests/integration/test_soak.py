"""The soak of scripts/soak.py at a small size: a handful of random SIGKILLs and cancels of
real engine, fio and iozone runs (directory targets, and image targets as root), a few dozen
hostile plans and some hostile imports. Every figure that `make soak` prints must be 0. The full
soak (make soak's sizes) is the long form, in `make test-long`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from disklab.core.vocab.units import parse_size

pytestmark = [pytest.mark.slow]

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "soak.py"


def _soak_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("disklab_soak", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


SIZES = {"small": {"kills": 5, "cancels": 4, "plans": 30, "imports": 12},
         "full": {"kills": 100, "cancels": 50, "plans": 200, "imports": 100}}  # make soak's


@pytest.fixture(scope="module", params=[pytest.param("small"),
                                        pytest.param("full", marks=pytest.mark.long)])
def size(request: pytest.FixtureRequest) -> dict[str, int]:
    return SIZES[request.param]


@pytest.fixture(scope="module")
def figures(size: dict[str, int], tmp_path_factory: pytest.TempPathFactory) -> Any:
    soak = _soak_module()
    lines: list[str] = []
    fig = soak.soak(**size, seed=7, work=tmp_path_factory.mktemp("soak"), log=lines.append)
    print(fig.text())
    return fig


def _bounds_missing() -> bool:
    """True while sizes beyond a float still end in OverflowError (a traceback): the hostile
    plans' tracebacks are then those of the unbounded plan values (issue 18 points 2, 3 and
    6, fixed on their own branch), not of the kills and cancels this soak is for."""
    try:
        parse_size("9" * 400 + "m")
    except OverflowError:
        return True
    except ValueError:
        return False
    return False


TRACEBACKS = pytest.param("tracebacks", marks=pytest.mark.xfail(
    _bounds_missing(), strict=False, reason="the plan-value bounds are not merged yet (parse_size "
    "of 400 nines overflows): hostile plans still end in OverflowError and MemoryError"))


@pytest.mark.parametrize("figure", ["integrity_failures", "results_lost", "orphans",
                                    "leftover_files", "leftover_dirs", "mounts_left",
                                    "loops_left", TRACEBACKS, "injections", "runaways",
                                    "bad_exits", "next_start_failures"])
def test_the_soak_figure_is_zero(figures: Any, figure: str) -> None:
    details = [d for d in figures.details if d.startswith(f"{figure}:")]
    assert getattr(figures, figure) == 0, "\n".join(details)


def test_the_soak_really_attacked(figures: Any, size: dict[str, int]) -> None:
    assert sum(figures.kills.values()) + figures.ended_before_signal >= size["kills"]
    assert figures.plans == size["plans"] and figures.imports == size["imports"]


def test_every_cancel_is_stored_cancelled_with_exit_130(figures: Any) -> None:
    assert figures.cancels_stored_cancelled == figures.cancel_count, figures.cancel_outcomes
