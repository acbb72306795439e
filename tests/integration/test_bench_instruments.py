"""The bench's own instruments for figures 8 and 9 (bench/figures): the device watcher sees a
real O_DIRECT write on the device it was given and nothing on another, and figure 8's reading
of fio's "All clients" total from a recorded client report agrees with what DiskLab's parser
stores for `host = all` (the figure's verdict is that those two are equal)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from bench.figures.devwatch import Watcher, first_write, stat_path
from bench.figures.host_scaling import fio_total

from disklab.core.tools.base import ToolOutput
from disklab.core.tools.fio.client import client_metrics
from disklab.core.vocab.model import HostEndpoint
from tests.helpers import IS_ROOT, fixture_text, make_scratch_fs, teardown


@pytest.mark.root
def test_the_watcher_sees_a_direct_write_on_its_device_and_none_on_the_other(
        tmp_path: Path) -> None:
    if not IS_ROOT:
        pytest.skip("needs root for loop devices and mount")
    a = make_scratch_fs(tmp_path, "ext4", "256M")
    try:
        b = make_scratch_fs(tmp_path, "xfs", "512M")
        try:
            watcher = Watcher([stat_path(a.mountpoint), stat_path(b.mountpoint)])
            time.sleep(0.2)
            t0 = time.time()
            subprocess.run(["dd", "if=/dev/zero", f"of={a.mountpoint}/f", "bs=1M", "count=2",
                            "oflag=direct"], check=True, capture_output=True)
            t1 = time.time()
            time.sleep(0.1)
            changes = watcher.stop()
            seen = first_write(changes, 0, t0, t1 + 0.05, 256 << 10)
            assert seen is not None and t0 < seen <= t1 + 0.05
            assert first_write(changes, 1, t0, t1 + 0.05, 256 << 10) is None
            assert watcher.proc.returncode is not None  # the watcher process has ended
            assert not watcher.log.exists()  # and its log in /dev/shm is removed
        finally:
            teardown(b)
    finally:
        teardown(a)


def test_figure_8_reads_fios_total_as_disklab_stores_it() -> None:
    text = fixture_text("fio", "client", "client_2servers_randrw_terse.txt")
    endpoints = [HostEndpoint("h1", "127.0.0.41", 8765, "/tmp/a"),
                 HostEndpoint("h2", "127.0.0.42", 8765, "/tmp/b")]
    metrics, failures = client_metrics(ToolOutput("", "", text, 0), {"hosts": "h1+h2"},
                                       endpoints)
    assert failures == {}
    stored = [m.value for m in metrics if m.name == "write" and m.params
              and m.params.get("host") == "all"]
    assert stored == [fio_total(text.splitlines(), 2)]
    assert stored[0] > 0
    with pytest.raises(RuntimeError):  # two hosts and no "All clients" line: said, not guessed
        fio_total([ln for ln in text.splitlines() if "All clients" not in ln], 2)
