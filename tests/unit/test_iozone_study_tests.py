"""iozone as the studies ran it: the 13 results of the ext4 journal-size study by name, the
per-process min/max/avg of throughput mode (the data=journal study), and -O (operations per
second), on real outputs."""

from __future__ import annotations

from disklab.core import tools
from disklab.core.tools.base import RunTarget, ToolOutput
from disklab.core.vocab.units import KiB, MiB
from tests.helpers import fixture_text

THIRTEEN = ("write", "rewrite", "read", "reread", "random_read", "random_write",
            "backward_read", "record_rewrite", "stride_read", "fwrite", "frewrite", "fread",
            "freread")


def parse(name: str, **params: object) -> dict[str, float | None]:
    metrics = tools.get_adapter("iozone").parse_result(
        ToolOutput(fixture_text("iozone", name)), params)
    return {m.name: m.value for m in metrics}


def test_the_journal_size_studys_thirteen_tests_are_asked_by_name_and_read_back() -> None:
    params = {"tests": ("write", "read", "random", "backward", "record_rewrite", "stride",
                        "fwrite", "fread"), "record_size": 64 * KiB, "file_size": 4 * MiB,
              "threads": 0}
    adapter = tools.get_adapter("iozone")
    assert adapter.check(params) == []
    argv = adapter.build_command(params, RunTarget(directory="/d", tag="t")).argv
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "-i"] == [
        "0", "1", "2", "3", "4", "5", "6", "7"]
    got = parse("single_r64k_s4m_i0-7_thirteen_excel.txt", **params)
    assert all(got[name] and got[name] > 0 for name in THIRTEEN), sorted(got)


def test_throughput_mode_gives_every_tests_per_process_min_max_avg() -> None:
    got = parse("throughput_r64k_s2m_t2_i0-10.txt")
    for name in ("write", "rewrite", "read", "reread", "random_read", "random_write",
                 "backward_read", "stride_read", "fwrite", "fread", "mixed", "pwrite",
                 "pread"):
        low, high, mean = (got[f"{name}:{k}_proc"] for k in ("min", "max", "avg"))
        assert low is not None and high is not None and mean is not None
        assert 0 < low <= high, name


def test_ops_per_second_are_asked_with_O_and_named_as_such() -> None:
    adapter = tools.get_adapter("iozone")
    params = {"tests": ("write", "read"), "record_size": 64 * KiB, "file_size": MiB,
              "threads": 2, "ops": True}
    assert "-O" in adapter.build_command(params, RunTarget(directory="/d", tag="t")).argv
    text = fixture_text("iozone", "ops_r64k_s1m_t2_i0-1_O_excel.txt")
    metrics = {m.name: m for m in adapter.parse_result(ToolOutput(text), params)}
    assert metrics["write:iops"].unit == "op/s"
    assert "write" not in metrics  # no figure passes for kB/s
    line = next(s for s in text.splitlines() if "Children see throughput for  2 initial" in s)
    assert metrics["write:iops"].value == float(line.split("=")[1].split()[0])
    for suffix in ("parent_iops", "min_proc_iops", "max_proc_iops", "avg_proc_iops"):
        assert metrics[f"reread:{suffix}"].unit == "op/s"
    # an imported file says -O on its command line
    imported = {m.name for m in adapter.parse_result(ToolOutput(text), {})}
    assert "write:iops" in imported and "write" not in imported
