"""The live samples of a real case: twice a second on a fixed grid, whether or not the tool's
own output (the engine prints every 0.5 s too) is what wakes the runner to take them."""

from __future__ import annotations

import itertools

import pytest

from disklab.core.plan.parse import parse_plan
from disklab.core.run.runner import SAMPLE_INTERVAL, run_plan
from disklab.core.vocab.events import CaseFinished, LogLine, Sample

pytestmark = [pytest.mark.root]


def test_samples_come_every_half_second_and_the_tools_lines_all_arrive(scratch_fs) -> None:
    text = (f'name = "t"\n[target]\ndirectory = "{scratch_fs.mountpoint}"\n[[test]]\n'
            'tool = "engine"\nmode = "randread"\nblock_size = "4k"\nsize = "16m"\n'
            'direct = true\nruntime = 4\n')
    events = list(run_plan(parse_plan(text).plan))
    assert any(isinstance(e, CaseFinished) for e in events)
    times = [e.t for e in events if isinstance(e, Sample) and e.series == "dirty_bytes"]
    gaps = [b - a for a, b in itertools.pairwise(times)][:-1]  # the last closes
    assert 7 <= len(times) <= 11, times
    # the grid: none more than a fifth of the interval early or late, the mean on the rate
    low, high = 0.6 * SAMPLE_INTERVAL - 0.05, 1.4 * SAMPLE_INTERVAL + 0.05
    assert all(low <= g <= high for g in gaps), gaps
    assert sum(gaps) / len(gaps) == pytest.approx(SAMPLE_INTERVAL, abs=0.05)
    lines = [e for e in events if isinstance(e, LogLine) and '"interval"' in e.text]
    assert len(lines) >= 6  # the engine's every-0.5 s lines, none lost to the merged wake-ups
