"""What `disklab run` prints for each case: its title names what differs among the plan's
cases (a default included when another case differs from it, the shared values once at the
start), and its result line names each figure's target, not `write ..., write ..., write ...`."""

from __future__ import annotations

import io

from disklab.cli.output import TerminalView
from disklab.core.vocab.events import CaseFinished, CaseStarted, SessionStarted
from disklab.core.vocab.model import Case, Metric

PARAMS = {"rw": "randread", "bs": 4096, "size": 8 << 20, "runtime": 0.0, "rwmixread": 70,
          "ioengine": "libaio"}


def test_case_lines_name_what_differs_and_each_target() -> None:
    cases = tuple(Case(f"c{d}", i, "as is", "fio", 0, {**PARAMS, "iodepth": d})
                  for i, d in enumerate((1, 16)))
    out = io.StringIO()
    view = TerminalView(out)
    view.show(SessionStarted(name="qd", cases=cases, repeats=1, host={}, warnings=(), t=0.0,
                             plan_text=""))
    for k, case in enumerate(cases):
        view.show(CaseStarted(case=case, repeat=1, argv=("fio",), t=1.0, run_index=k,
                              run_count=2))
    figures = tuple(Metric("write", v * (1 << 20), "B/s", params={"on": "a+b", "target": t})
                    for t, v in (("a", 374.0), ("b", 337.5), ("all", 711.5)))
    view.show(CaseFinished(case_id="c16", repeat=1, metrics=figures, exit_status=0,
                           duration=2.0, t=3.0))
    lines = out.getvalue().splitlines()
    assert lines[1] == "every case: rw=randread bs=4k size=8m ioengine=libaio"
    assert lines[2] == "[1/2] as is | fio iodepth=1 (repeat 1)"  # the default, said
    assert lines[3] == "[2/2] as is | fio iodepth=16 (repeat 1)"
    # one rate formatter (issue 29): the figures as every table writes them
    assert lines[4] == ("    done in 2.0 s: write target=a 392 MB/s, write target=b "
                        "354 MB/s, write target=all 746 MB/s")  # 374, 337.5, 711.5 MiB/s
    assert "runtime" not in out.getvalue() and "rwmixread" not in out.getvalue()
