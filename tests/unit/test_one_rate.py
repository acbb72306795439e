"""One rate formatter (issue 29): the same rate reads the same on the Run page, in the
terminal's lines and in every table."""

from __future__ import annotations

from disklab.core.results.format import format_value
from disklab.core.run.progress import readable_line
from disklab.core.vocab.units import human_rate, units_used


def test_a_rate_reads_the_same_everywhere() -> None:
    for bps in (1.5e9, 105e6, 2.5e5, 999.0):
        assert human_rate(bps) == format_value(bps, "B/s")
    assert human_rate(1.5e9) == "1500 MB/s"
    with units_used("iec"):
        assert human_rate(1.5e9) == "1431 MiB/s" == format_value(1.5e9, "B/s")
    line = readable_line('{"type":"interval","elapsed":1.0,"bytes":1500000000,"ops":2}')
    assert line.endswith(f"{format_value(1.5e9, 'B/s')} on average")
