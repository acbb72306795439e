"""A hostile client of a real root helper (issue 27, items 2 and 3): every request of the
corpus below is refused with exactly one error line (a ping sent right after it proves the
helper lives and wrote nothing else), and the canaries are unchanged afterwards: root-owned
files and a root-only directory, a loop device that is not the helper's (ext4, with a marker
file that must survive), a tmpfs mounted by someone else, and two cgroups that are not the
helper's (one named as DiskLab names its own). The helper serves a user who is not root (made
for the module): SUDO_UID, as sudo sets it.

Each request's id says what it tried; `pytest -v` lists them all. The symbolic-link race
runs in a loop after the corpus: for 6 s in `make test` (about 50 attaches on this machine,
half of them refused), for 30 s in its long form (`make test-long`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from disklab.core.system import devices
from tests.integration.privhelper_fixtures import (
    BRANCH,
    LocalUser,
    RawHelper,
    helper_env,
    made_user,
    venv_python,
)

pytestmark = [pytest.mark.root]

RACE_SECONDS = (pytest.param(6.0, id="6s"), pytest.param(30.0, id="30s", marks=pytest.mark.long))
CGROUPS = Path("/sys/fs/cgroup/memory")
EXT4 = {"label": "x", "fs": "ext4"}


@dataclass
class World:
    user: LocalUser
    canary: Path  # root-owned: shadow (0600), rootonly/ (0700), empty
    shadow: Path
    rootonly: Path
    loop: str  # a loop device that is not the helper's
    loop_image: Path
    marker: str
    groups: list[Path]
    foreign_mount: Path
    helper: RawHelper
    fingerprint: dict[str, object]

    @property
    def workdir(self) -> str:
        return str(self.helper.hello["workdir"])


def _sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def _fingerprint(w: World) -> dict[str, object]:
    """What must not change: file contents, modes and owners, directory listings, the loop
    device's backing file and filesystem, the marker, the cgroups, the foreign mount."""
    files = {}
    for path in sorted([w.canary, *w.canary.rglob("*")]):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        files[str(path)] = (st.st_mode, st.st_uid, st.st_size, digest)
    backing = Path(f"/sys/block/{os.path.basename(w.loop)}/loop/backing_file").read_text()
    return {
        "files": files,
        "loop": (backing.strip(), _sh("blkid", "-o", "value", "-s", "TYPE", w.loop).strip()),
        "marker": _sh("debugfs", "-R", "cat /marker", w.loop),
        "groups": [g.is_dir() for g in w.groups],
        "mount": os.path.ismount(w.foreign_mount),
        "etc": sorted(os.listdir("/etc/cron.d")) if os.path.isdir("/etc/cron.d") else None,
        "root": sorted(os.listdir("/root")),
    }


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with made_user("dl-s7-hostile") as user:
        canary = Path(f"/var/tmp/disklab-{BRANCH}-canary-{secrets.token_hex(3)}")
        canary.mkdir(mode=0o755)
        loop = None
        groups = [CGROUPS / f"disklab-1-{BRANCH.replace('-', '')}canary",
                  CGROUPS / f"{BRANCH}-canary"]
        helper = None
        try:
            shadow = canary / "shadow"
            shadow.write_bytes(os.urandom(65536))
            shadow.chmod(0o600)
            rootonly = canary / "rootonly"
            rootonly.mkdir(mode=0o700)
            (rootonly / "keep").write_text("keep")
            (canary / "empty").touch()
            source = canary / "source"
            source.mkdir()
            marker = secrets.token_hex(16)
            (source / "marker").write_text(marker)
            image = canary / "canary.img"
            _sh("mkfs.ext4", "-q", "-F", "-d", str(source), str(image), "64M")
            loop = _sh("losetup", "--find", "--show", str(image)).strip()
            for g in groups:
                g.mkdir(exist_ok=True)
            mnt = canary / "mnt"
            mnt.mkdir()
            _sh("mount", "-t", "tmpfs", "-o", "size=1m", f"{BRANCH}-canary", str(mnt))
            helper = RawHelper([venv_python(), "-I", "-m", "disklab.core.root_helper"],
                               helper_env(SUDO_UID=str(user.uid)))
            assert helper.hello["ready"] and helper.hello["served_uid"] == user.uid
            w = World(user, canary, shadow, rootonly, loop, image, marker, groups, mnt,
                      helper, {})
            w.fingerprint = _fingerprint(w)
            assert marker in str(w.fingerprint["marker"])
            yield w
        finally:
            if helper is not None:
                helper.close()
            subprocess.run(["umount", str(canary / "mnt")], check=False)
            if loop:
                subprocess.run(["losetup", "-d", loop], check=False)
            for g in groups:
                if g.is_dir():
                    g.rmdir()
            subprocess.run(["rm", "-rf", "--one-file-system", str(canary)], check=False)


def req(op: str, **args: object) -> Callable[[World], bytes]:
    return lambda w: json.dumps({"id": 1, "op": op, "args": {
        k: (v(w) if callable(v) else v) for k, v in args.items()}}).encode()


def raw(data: bytes) -> Callable[[World], bytes]:
    return lambda w: data


def deep(n: int) -> bytes:
    return b'{"id": 1, "op": "ping", "args": {"a": ' + b"[" * n + b"]" * n + b"}}"


HOME = lambda sub: lambda w: str(w.user.home / sub)  # noqa: E731 - a path in the user's home
SHADOW = lambda w: str(w.shadow)  # noqa: E731
LOOP = lambda w: w.loop  # noqa: E731
WRONG = lambda w: f"{w.loop} not-this {1 << 20}"  # noqa: E731 - a confirm that does not match
FIO = {"rw": "read", "size": 1 << 20}
DIR = lambda w: w.workdir  # noqa: E731

CORPUS: list[tuple[str, Callable[[World], bytes]]] = [
    # --- malformed, oversized, deeply nested ---
    ("not JSON", raw(b"this is not json")),
    ("a JSON array", raw(b"[1, 2]")),
    ("a JSON string", raw(b'"ping"')),
    ("JSON null", raw(b"null")),
    ("an empty object", raw(b"{}")),
    ("op not a string", raw(b'{"id": 1, "op": 5}')),
    ("an unknown op run_shell", req("run_shell", command="rm -rf /")),
    ("an extra top-level key", raw(b'{"id": 1, "op": "ping", "sudo": true}')),
    ("args not an object", raw(b'{"id": 1, "op": "ping", "args": [1]}')),
    ("an id that is a string", raw(b'{"id": "x", "op": "ping"}')),
    ("200,000 '[' on one line", raw(b"[" * 200_000)),
    ("200,000 nested objects", raw(b'{"a":' * 200_000)),
    ("nesting 40 deep inside args", raw(deep(40))),
    ("a 300 KiB line", raw(b'{"id": 1, "op": "ping", "args": {"x": "' + b"a" * 300_000
                           + b'"}}')),
    ("a 4 MiB line without a newline until its end", raw(b"x" * (4 << 20))),
    ("invalid UTF-8", raw(b'{"id": 1, "op": "\xff\xfe"}')),
    ("an integer of 5000 digits", raw(b'{"id": 1, "op": "setra", "args": {"device": "/dev/x", '
                                      b'"sectors": ' + b"9" * 5000 + b"}}")),
    ("NaN where a number goes", raw(b'{"id": 1, "op": "tool_read", "args": {"run": 1, '
                                    b'"wait": NaN}}')),
    ("Infinity where a number goes", raw(b'{"id": 1, "op": "tool_stop", "args": {"run": 1, '
                                         b'"grace": Infinity}}')),
    ("an unknown argument", req("ping", shell="sh")),
    ("a missing argument", req("attach", size=1 << 20)),
    # --- out of range, wrong type, wrong shape ---
    ("attach size -1", req("attach", image=HOME("a.img"), size=-1)),
    ("attach size 0", req("attach", image=HOME("a.img"), size=0)),
    ("attach size 2**60", req("attach", image=HOME("a.img"), size=1 << 60)),
    ("attach size as a string", req("attach", image=HOME("a.img"), size="1g")),
    ("attach size true", req("attach", image=HOME("a.img"), size=True)),
    ("attach a relative image", req("attach", image="a.img", size=1 << 20)),
    ("attach an image path with ..", req("attach", image=lambda w: f"{w.user.home}/../../etc/x",
                                         size=1 << 20)),
    ("attach an image path with //", req("attach", image="//etc/x", size=1 << 20)),
    ("attach an image path with NUL", req("attach", image=lambda w: f"{w.user.home}/a\0b",
                                          size=1 << 20)),
    ("attach an image path with a newline", req("attach", image=lambda w: f"{w.user.home}/a\nb",
                                                size=1 << 20)),
    ("setra sectors -1", req("setra", device=LOOP, sectors=-1)),
    ("setra sectors 2**30", req("setra", device=LOOP, sectors=1 << 30)),
    ("scheduler name with a path", req("scheduler", device=LOOP, name="../../x")),
    ("scheduler name with a shell character", req("scheduler", device=LOOP, name="none;id")),
    ("tool_read run 0", req("tool_read", run=0)),
    ("tool_read run -5", req("tool_read", run=-5)),
    ("tool_read wait -1", req("tool_read", run=1, wait=-1)),
    ("tool_stop grace 1e9", req("tool_stop", run=1, grace=1e9)),
    ("partition count 0", req("partition", device=LOOP, count=0)),
    ("partition count 17", req("partition", device=LOOP, count=17)),
    ("cgroup_create limit 0", req("cgroup_create", tag="t", limit=0)),
    ("cgroup_create tag ../../x", req("cgroup_create", tag="../../x", limit=1 << 30)),
    ("a device that is not a /dev path", req("wipefs", device="/etc/passwd")),
    ("a /dev path with ..", req("wipefs", device="/dev/../etc/shadow")),
    ("a device that is a symlink in the user's home", req("wipefs", device=HOME("disk"))),
    ("a tool name with a shell character", req("tool_start", tool="fio;sh", params=FIO,
                                               tag="t", directory=DIR)),
    ("a tag with a slash", req("tool_start", tool="fio", params=FIO, tag="a/b",
                               directory=DIR)),
    ("a confirm with a control character", req("wipefs", device=LOOP, confirm="a\x1bb")),
    # --- item 3: outside the contract ---
    ("detach+remove a root file no loop is backed by",
     req("detach", image=SHADOW, remove_image=True)),
    ("detach+remove /etc/passwd", req("detach", image="/etc/passwd", remove_image=True)),
    ("detach+remove the foreign loop's image",
     req("detach", image=lambda w: str(w.loop_image), remove_image=True)),
    ("detach the foreign loop by device",
     req("detach", image=lambda w: str(w.loop_image), device=LOOP)),
    ("attach a new image in /etc/cron.d", req("attach", image="/etc/cron.d/disklab-evil",
                                              size=1 << 20)),
    ("attach a new image in /root", req("attach", image="/root/disklab-evil", size=1 << 20)),
    ("attach a new image in a root-only directory",
     req("attach", image=lambda w: str(w.rootonly / "evil.img"), size=1 << 20)),
    ("attach an existing root file (non-empty)", req("attach", image=SHADOW, size=100)),
    ("attach an existing empty root-owned file",
     req("attach", image=lambda w: str(w.canary / "empty"), size=100)),
    ("attach a symlink in the user's home to a root file",
     req("attach", image=HOME("link-to-shadow"), size=100)),
    ("attach through a symlinked parent into a root-only directory",
     req("attach", image=HOME("link-to-rootonly/evil.img"), size=1 << 20)),
    ("attach under /proc", req("attach", image="/proc/disklab-evil", size=1 << 20)),
    ("attach under /sys", req("attach", image="/sys/disklab-evil", size=1 << 20)),
    ("attach under /dev", req("attach", image="/dev/disklab-evil", size=1 << 20)),
    ("wipefs the foreign loop without a confirm", req("wipefs", device=LOOP)),
    ("wipefs the foreign loop with a wrong confirm", req("wipefs", device=LOOP, confirm=WRONG)),
    ("mkfs the foreign loop without a confirm", req("mkfs", device=LOOP, config=EXT4)),
    ("mkfs the foreign loop with a wrong confirm",
     req("mkfs", device=LOOP, config=EXT4, confirm=WRONG)),
    ("mkfs with an option the tool would refuse",
     req("mkfs", device=LOOP, config={"label": "x", "fs": "ext4", "mkfs": {"block_size": 3}},
         confirm=WRONG)),
    ("partition the foreign loop without a confirm", req("partition", device=LOOP, count=2)),
    ("unpartition the foreign loop", req("unpartition", device=LOOP)),
    ("mount the foreign loop in the user's home",
     req("mount", device=LOOP, config=EXT4, mountpoint=HOME("mnt"))),
    ("mount the foreign loop in the helper's directory",
     req("mount", device=LOOP, config=EXT4,
         mountpoint=lambda w: f"{w.workdir}/disklab-mnt-evil")),
    ("mount over /mnt", req("mount", device=LOOP, config=EXT4, mountpoint="/mnt")),
    ("umount /", req("umount", mountpoint="/")),
    ("umount /proc", req("umount", mountpoint="/proc")),
    ("umount someone else's tmpfs",
     req("umount", mountpoint=lambda w: str(w.foreign_mount), lazy=True)),
    ("setra on the foreign loop", req("setra", device=LOOP, sectors=0)),
    ("scheduler on the foreign loop", req("scheduler", device=LOOP, name="none")),
    ("cgroup_remove a DiskLab-named cgroup it did not make",
     req("cgroup_remove", path=lambda w: str(w.groups[0]))),
    ("cgroup_remove a cgroup that is not DiskLab's",
     req("cgroup_remove", path=lambda w: str(w.groups[1]))),
    ("cgroup_remove /etc", req("cgroup_remove", path="/etc")),
    ("cgroup_remove the memory hierarchy's root", req("cgroup_remove", path=str(CGROUPS))),
    ("fio with exec_prerun", req("tool_start", tool="fio", params={**FIO, "exec_prerun": "id"},
                                 tag="t", directory=DIR)),
    ("fio with exec_postrun", req("tool_start", tool="fio",
                                  params={**FIO, "exec_postrun": "id"}, tag="t", directory=DIR)),
    ("fio with --output of its choosing",
     req("tool_start", tool="fio", params={**FIO, "output": "/etc/evil"}, tag="t",
         directory=DIR)),
    ("iozone with shell characters", req("tool_start", tool="iozone",
                                         params={"tests": ["write; id"], "file_size": 1 << 20},
                                         tag="t", directory=DIR)),
    ("bonnie++ with shell characters", req("tool_start", tool="bonnie",
                                           params={"size": "1g;id"}, tag="t", directory=DIR)),
    ("a tool in the user's home", req("tool_start", tool="dd",
                                      params={"mode": "write", "size": 1 << 20},
                                      tag="t", directory=lambda w: str(w.user.home))),
    ("a tool in /", req("tool_start", tool="dd", params={"mode": "write", "size": 1 << 20},
                        tag="t", directory="/")),
    ("raw I/O on the foreign loop without a confirm",
     req("tool_start", tool="dd", params={"mode": "write", "size": 1 << 20}, tag="t",
         directory=DIR, device=LOOP)),
    ("a placement with a path in it",
     req("tool_start", tool="dd", params={"mode": "write", "size": 1 << 20, "on": "a+../etc"},
         tag="t", directory=DIR)),
    ("a placement's directory outside its mounts",
     req("tool_start", tool="dd", params={"mode": "write", "size": 1 << 20, "on": "a"},
         tag="t", directory=DIR, directories={"a": "/etc"})),
    ("an unknown tool sh", req("tool_start", tool="sh", params={}, tag="t", directory=DIR)),
    ("tool_read of a run it never started", req("tool_read", run=12345)),
    ("tool_stop of a run it never started", req("tool_stop", run=12345)),
    ("tool_close of a run it never started", req("tool_close", run=12345)),
]


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 80
    assert len({what for what, _ in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("make", [m for _w, m in CORPUS], ids=[w for w, _m in CORPUS])
def test_a_hostile_request_is_refused_with_one_error_line(world: World, make) -> None:
    home = world.user.home
    for name, target in (("link-to-shadow", world.shadow), ("link-to-rootonly", world.rootonly),
                         ("disk", Path(world.loop))):
        if not (home / name).is_symlink():
            (home / name).symlink_to(target)
            os.lchown(home / name, world.user.uid, world.user.gid)
    answers = world.helper.send(make(world))
    assert len(answers) == 1, answers
    (answer,) = answers
    assert answer["ok"] is False and answer["error"], answer
    assert answer["kind"] != "InternalError", answer


@pytest.mark.parametrize("race_seconds", RACE_SECONDS)
def test_the_symlink_race_never_reaches_root_files(world: World, race_seconds: float) -> None:
    """For race_seconds, a process of the served user swaps the image's name (absent / a link
    to a root file) and its parent (a real directory / a link to a root-only one) while the
    helper is asked to attach there: what succeeds is an image in the user's own directory,
    everything else is refused with one line, and no root file changes."""
    home = world.user.home
    race = home / "race"
    real = home / "race-real"
    stop = threading.Event()

    def swap() -> None:  # as the user would: rename links over the names, atomically
        os.setegid(world.user.gid)
        os.seteuid(world.user.uid)
        try:
            real.mkdir(exist_ok=True)
            n = 0
            while not stop.is_set():
                n += 1
                tmp = home / f".swap{n % 2}"
                target = world.rootonly if n % 2 else real
                try:
                    tmp.unlink(missing_ok=True)
                    tmp.symlink_to(target)
                    os.replace(tmp, race)
                    image = real / "img"
                    image.unlink(missing_ok=True)
                    tmp.unlink(missing_ok=True)
                    tmp.symlink_to(world.shadow)
                    os.replace(tmp, image)
                    image.unlink(missing_ok=True)
                except OSError:
                    pass
        finally:
            os.seteuid(0)
            os.setegid(0)

    racer = threading.Thread(target=swap)
    racer.start()
    attached = refused = 0
    try:
        deadline = time.monotonic() + race_seconds
        while time.monotonic() < deadline:
            for image in (race / "img", real / "img"):
                answers = world.helper.send(json.dumps({"id": 2, "op": "attach", "args": {
                    "image": str(image), "size": 100}}).encode())
                assert len(answers) == 1, answers
                if not answers[0]["ok"]:
                    refused += 1
                    continue
                attached += 1
                device = answers[0]["result"]["device"]
                backing = Path(f"/sys/block/{os.path.basename(device)}/loop/backing_file")
                assert backing.read_text().strip().startswith(str(real)), backing.read_text()
                done = world.helper.send(json.dumps({"id": 3, "op": "detach", "args": {
                    "image": str(real / "img"), "device": device,
                    "remove_image": True}}).encode())
                assert len(done) == 1 and done[0]["ok"], done
    finally:
        stop.set()
        racer.join()
    print(f"{attached} attached, {refused} refused in {race_seconds:g} s")
    assert refused > 0
    assert _fingerprint(world)["files"] == world.fingerprint["files"]


def test_the_canaries_are_unchanged(world: World) -> None:
    """After the corpus and the race: every canary as it was, the helper still serving."""
    assert _fingerprint(world) == world.fingerprint
    assert world.marker in str(_fingerprint(world)["marker"])
    assert devices.kernel_name(world.loop)  # still attached
    assert world.helper.send(b'{"id": 5, "op": "ping"}')[0]["ok"]


def test_when_its_client_goes_the_helper_undoes_what_it_attached_and_mounted(world: World
                                                                            ) -> None:
    """End of input (the client closed or died): the helper unmounts, detaches the loop
    device, removes the image it made and its own directory, and ends."""
    helper = RawHelper([venv_python(), "-I", "-m", "disklab.core.root_helper"],
                       helper_env(SUDO_UID=str(world.user.uid)))
    image = world.user.home / "gone.img"
    try:
        (attached,) = helper.send(json.dumps({"id": 1, "op": "attach", "args": {
            "image": str(image), "size": 64 << 20}}).encode())
        assert attached["ok"], attached
        device = attached["result"]["device"]
        (made,) = helper.send(json.dumps({"id": 2, "op": "mkfs", "args": {
            "config": EXT4, "device": device}}).encode())
        assert made["ok"], made
        mountpoint = f"{helper.hello['workdir']}/disklab-mnt-gone"
        (mounted,) = helper.send(json.dumps({"id": 3, "op": "mount", "args": {
            "config": EXT4, "device": device, "mountpoint": mountpoint}}).encode())
        assert mounted["ok"] and os.path.ismount(mountpoint), mounted
        assert image.stat().st_uid == 0
    finally:
        helper.close()  # its input ends, as when the client goes
    assert helper.p.returncode == 0
    assert not os.path.ismount(mountpoint) and not os.path.exists(helper.hello["workdir"])
    assert not image.exists()
    assert subprocess.run(["losetup", "-j", str(image)], capture_output=True,
                          text=True).stdout == ""


def test_a_mkfs_the_tool_refuses_leaves_the_filesystem_as_it_was(world: World) -> None:
    """Everything is checked before the wipe, the mkfs tool's own dry run of the options
    included: a refused mkfs answers one error and the device keeps its filesystem."""
    image = world.user.home / "kept.img"
    helper = RawHelper([venv_python(), "-I", "-m", "disklab.core.root_helper"],
                       helper_env(SUDO_UID=str(world.user.uid)))
    try:
        (attached,) = helper.send(json.dumps({"id": 1, "op": "attach", "args": {
            "image": str(image), "size": 64 << 20}}).encode())
        device = attached["result"]["device"]
        (made,) = helper.send(json.dumps({"id": 2, "op": "mkfs", "args": {
            "config": EXT4, "device": device}}).encode())
        assert made["ok"], made
        before = _sh("blkid", "-o", "export", device)
        too_big = {"label": "log larger than the device", "fs": "xfs",
                   "mkfs": {"log_size": 1 << 30}}
        (refused,) = helper.send(json.dumps({"id": 3, "op": "mkfs", "args": {
            "config": too_big, "device": device}}).encode())
        assert not refused["ok"] and "dry run; nothing was wiped" in refused["error"], refused
        assert [c["argv"][:2] for c in refused["ran"]] == [["mkfs.xfs", "-N"]]  # no wipefs
        assert _sh("blkid", "-o", "export", device) == before  # ext4, same UUID
    finally:
        helper.close()
    assert not image.exists()
