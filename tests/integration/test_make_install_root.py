"""`make install` as root with the default variables, in a throwaway root: an overlay of / in
a mount namespace of its own (chroot into it), so what the install changes is exactly the
overlay's upper layer, listed, and nothing of this machine changes.

Issue 46: without DESTDIR it ran `install-helper` with the system python3 (a psutil traceback
after 9 files) and named /usr/local/bin/python3, which Debian lacks; with DESTDIR and
HOME=/nonexistent (as sbuild builds) it wrote /nonexistent/.local/state/disklab/disklab.log."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None
    or not (CHECKOUT / ".venv/bin/python").exists(),
    reason="needs root, unshare and the checkout's venv (make setup)")

SCRIPT = """
set -e
T="$1"; shift
mount -t tmpfs tmpfs "$T"
mkdir "$T/upper" "$T/work" "$T/root"
mount -t overlay overlay -o lowerdir=/,upperdir="$T/upper",workdir="$T/work" "$T/root"
for d in proc dev sys; do mount --rbind "/$d" "$T/root/$d"; done
set +e
chroot "$T/root" /usr/bin/env -i PATH={path} HOME=/nonexistent sh -c "$1" > "$T/out" 2>&1
echo "exit $?" >> "$T/out"
cat "$T/out"
echo "--- changed"
cd "$T/upper" && find . -mindepth 1 -not -type d | sort
""".replace("{path}", PATH)


def in_throwaway_root(tmp_path: Path, command: str) -> tuple[str, int, list[str]]:
    """Run `command` (sh) as root in a throwaway copy of this machine's root filesystem:
    its output, exit code, and the files it made or changed there."""
    where = tmp_path / "root"
    where.mkdir()
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", SCRIPT,
                           "throwaway", str(where), command],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out, _, changed = done.stdout.partition("--- changed\n")
    body, _, code = out.rstrip("\n").rpartition("exit ")
    return body, int(code), [c.removeprefix(".") for c in changed.splitlines()]


def test_make_install_as_root_with_the_defaults_installs_a_helper_that_starts(
        tmp_path: Path) -> None:
    out, code, changed = in_throwaway_root(
        tmp_path, f"cd {CHECKOUT} && make -s install && "
                  "/usr/libexec/disklab/disklab-helper </dev/null")
    assert code == 0, out
    assert "Traceback" not in out and "Error" not in out, out
    launcher = [line for line in out.splitlines() if '"ready": true' in line]
    assert launcher, out  # the helper said it was ready: its interpreter and copy import
    assert "/usr/libexec/disklab/disklab-helper" in changed
    assert "/usr/local/lib/disklab/psutil/__init__.py" in changed
    assert "/usr/local/share/man/man1/disklab.1" in changed
    assert not [c for c in changed if c.startswith(("/nonexistent", "/root"))], changed


def test_make_install_with_destdir_writes_only_under_destdir(tmp_path: Path) -> None:
    stage = "/tmp/disklab-stage"
    out, code, changed = in_throwaway_root(
        tmp_path, f"cd {CHECKOUT} && make -s install DESTDIR={stage} PREFIX=/usr && "
                  f"grep -F -- ' -I -c ' {stage}/usr/libexec/disklab/disklab-helper")
    assert code == 0, out
    assert "Traceback" not in out, out
    # the launcher's interpreter line: the system's python3, isolated (-I)
    assert out.splitlines()[-1].strip().startswith("/usr/bin/python3 -I -c"), out
    outside = [c for c in changed if not c.startswith(stage + "/")]
    assert outside == [], outside
    assert f"{stage}/usr/share/applications/org.disklab.DiskLab.desktop" in changed
