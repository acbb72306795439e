"""Filesystems and mounts: wipe, format, mount, unmount, read back.

A destructive step checks everything before it destroys anything: the target (a device this
helper attached or formatted, or a user's device with the confirmation string its identity
gives, passing the safety classes), every extra device, and that the mkfs tool accepts the
options (its dry run: mke2fs -n, mkfs.xfs -N). Only then does wipefs run. It mounts only a
filesystem its own mkfs made in this session (no raw tool has written over it since), with
nosuid, nodev and noexec (checked in mountinfo afterwards), on a new directory it makes
directly in its own work directory; it unmounts and reads back only where it mounted.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Sequence

from disklab.core import proc
from disklab.core.fs.commands import (
    FORCED_MOUNT_OPTIONS,
    setup_commands,
    umount_argv,
    wipefs_argv,
)
from disklab.core.fs.options import (
    config_from_toml,
    device_options,
    mount_refusal,
    passthrough_options,
)
from disklab.core.fs.readback import readback as read_back
from disklab.core.helper_client.protocol import (
    Done,
    Mkfs,
    Mount,
    Mounted,
    ReadBack,
    Readback,
    Umount,
    Unmounted,
    Wipefs,
)
from disklab.core.root_helper.state import TIMEOUTS, Session, device_of
from disklab.core.system import devices
from disklab.core.system.mountinfo import mount_at
from disklab.core.vocab.errors import ConfigError, RequestError, SafetyError, ToolError
from disklab.core.vocab.model import FsConfig

MOUNT_NAME = re.compile(r"disklab-mnt-[A-Za-z0-9_-]{1,64}")
# How long a busy filesystem is retried before the lazy unmount (or the error): a ring of a tool
# that used io_uring with registered files (fio --registerfiles) is torn down by a kernel worker
# after the tool has exited, and holds its files open until then (tens of milliseconds).
UMOUNT_SETTLE = 3.0
DRY_RUN = {"mke2fs": "-n", "mkfs.xfs": "-N"}  # mkfs tools that can check without writing


def destructive_target(s: Session, device: str, confirm: str | None,
                       library_path: str | None, what: str = "wiping") -> tuple[str, str]:
    """(canonical path, kernel name) of a device that may be destroyed now: one this helper
    attached or made, or any other with the plan's confirm; both pass the safety classes
    (mounted, system, member, holding the library) as read now."""
    path, kname = device_of(device)
    if confirm is None and not s.owns(kname):
        raise SafetyError(f"{device}: {what} a device DiskLab did not attach in this session "
                          "needs the plan's confirm")
    devices.check_destructive(path, confirm, library_path)
    return path, kname


def checked_config(table: dict) -> FsConfig:
    config, problems = config_from_toml(table)
    if config is None:
        raise ConfigError(problems)
    if config.fs is None:
        raise ConfigError([("fs", "this configuration makes no filesystem (as is)")])
    return config


def wipefs(s: Session, r: Wipefs) -> Done:
    path, kname = destructive_target(s, r.device, r.confirm, r.library_path)
    s.written_raw(kname)
    s.run(wipefs_argv(path), timeout=TIMEOUTS["wipefs"])
    s.held.owned.add(kname)
    s.save()
    return Done()


def _dry_run(s: Session, argv: Sequence[str]) -> None:
    """Have the mkfs tool check its options without writing (where it can), else check that
    the tool is there: a refused option must fail before the wipe, not after."""
    if proc.which(argv[0]) is None:
        raise ToolError(f"{argv[0]} is not installed: nothing was wiped")
    flag = DRY_RUN.get(argv[0])
    if flag is None:
        return
    dry = [argv[0], flag, *argv[1:]]
    if "-J" in dry and any(a.startswith("device=") for a in dry):  # not formatted yet
        i = next(i for i, a in enumerate(dry) if a.startswith("device="))
        del dry[i - 1:i + 1]
    done = s.run(dry, timeout=TIMEOUTS["default"], check=False)
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).strip().splitlines()[:2])[:400]
        raise ToolError(f"{argv[0]} refuses these options (its dry run; nothing was wiped): "
                        f"{said}")


def mkfs(s: Session, r: Mkfs) -> Done:
    """Format per a validated config: the "mkfs" commands of setup_commands (wipefs, the
    external journal, mkfs), after the target and any journal/log device pass the destructive
    checks and the mkfs tool accepted the options."""
    config = checked_config(r.config)
    extra = device_options(config)
    if len(extra) > 1:
        raise RequestError(f"one external journal/log device per configuration, not "
                           f"{', '.join(extra)}")
    path, kname = device_of(r.device)
    for name, other in extra.items():
        # A device the helper did not attach is a user's: it is wiped only with the confirm
        # the plan gave for it, matched against the device as read now.
        if r.journal_confirm is None:
            raise SafetyError(f"{name} {other}: wiping a second device needs the plan's "
                              "confirm for it (journal_confirm)")
        if device_of(other)[1] == kname:
            raise SafetyError(f"the external journal/log {other} is the target itself")
        devices.check_destructive(other, r.journal_confirm, r.library_path)
    path, kname = destructive_target(s, r.device, r.confirm, r.library_path, "formatting")
    commands = [c.argv for c in setup_commands(config, path, None) if c.request == "mkfs"]
    for argv in commands:
        if argv[0] != "wipefs":
            _dry_run(s, argv)
    s.written_raw(kname)
    for argv in commands:
        kind = "wipefs" if argv[0] == "wipefs" else "mkfs"
        s.run(argv, timeout=TIMEOUTS[kind])
    s.held.owned.add(kname)
    s.formatted.add(kname)
    s.save()
    return Done()


def _mount_dir(s: Session, mountpoint: str) -> tuple[str, bool]:
    """A new directory for a mount, directly in the helper's work directory."""
    parent, name = os.path.split(mountpoint)
    if parent != os.path.realpath(s.workdir) or not MOUNT_NAME.fullmatch(name):
        raise SafetyError(f"{mountpoint}: the helper mounts only on a new directory "
                          f"{s.workdir}/disklab-mnt-NAME of its own")
    try:
        os.mkdir(mountpoint, 0o755)
    except FileExistsError:  # only root makes anything here: one of ours, unmounted since
        if os.path.ismount(mountpoint) or os.path.islink(mountpoint) or os.listdir(mountpoint):
            raise SafetyError(f"{mountpoint} is not a free directory: not mounting over it"
                              ) from None
        return mountpoint, False
    s.builtin("mkdir", mountpoint)
    return mountpoint, True


def mount(s: Session, r: Mount) -> Mounted:
    config = checked_config(r.config)
    path, kname = device_of(r.device)
    if kname not in s.formatted:
        raise SafetyError(f"{r.device}: the helper mounts only a filesystem its own mkfs made "
                          "in this session (and no raw I/O has written over since)")
    dev = devices.classify(path, r.library_path)
    if dev.refused:
        raise SafetyError(f"{r.device} refused: class {dev.safety}: {'; '.join(dev.reasons)}")
    mountpoint, created = _mount_dir(s, r.mountpoint)
    try:
        for command in setup_commands(config, path, mountpoint):
            if command.request == "mount":
                if not set(FORCED_MOUNT_OPTIONS) <= set(command.argv[command.argv.index("-o")
                                                                     + 1].split(",")):
                    raise SafetyError("a mount without nosuid,nodev,noexec")  # never built
                _mount(s, config, command.argv)
        _check_forced(s, mountpoint)
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                os.rmdir(mountpoint)
        raise
    s.held.mounts[mountpoint] = kname
    s.save()
    return Mounted(mountpoint, created)


def _check_forced(s: Session, mountpoint: str) -> None:
    """The kernel shows the new mount with nosuid, nodev and noexec; else it is undone."""
    entry = mount_at(mountpoint)
    shown = set(entry.options.split(",")) if entry is not None else set()
    if not set(FORCED_MOUNT_OPTIONS) <= shown:
        s.run(umount_argv(mountpoint), check=False)
        shown_text = entry.options if entry is not None else "not mounted"
        raise SafetyError(f"{mountpoint}: the kernel shows the mount without "
                          f"{','.join(FORCED_MOUNT_OPTIONS)} ({shown_text}); undone")


def _kernel_log(s: Session) -> list[str]:
    """The kernel's log lines (dmesg --notime); [] when it cannot be read."""
    try:
        return s.run(["dmesg", "--notime"], check=False).stdout.splitlines()
    except ToolError:
        return []


def _mount(s: Session, config: FsConfig, argv: Sequence[str]) -> None:
    """Run mount; when it fails on a configuration with options passed through to the
    kernel, the failure is the configuration's, with the kernel's words from its log."""
    passed = bool(passthrough_options(config))
    # the log's last line before the mount: what follows it is the mount's
    marker = (_kernel_log(s) or [None])[-1] if passed else None
    try:
        s.run(argv, timeout=TIMEOUTS["mount"])
    except ToolError as e:
        if not passed:
            raise
        log = _kernel_log(s)
        if marker in log:
            log = log[len(log) - log[::-1].index(marker):]
        refusal = mount_refusal(config, str(e), log[-20:])
        if refusal is None:
            raise
        raise refusal from e


def umount(s: Session, r: Umount) -> Unmounted:
    kname = s.mounted_here(r.mountpoint)
    if kname is None:
        raise SafetyError(f"{r.mountpoint}: not a mount this helper made; not unmounting it")
    mountpoint = r.mountpoint
    entry = mount_at(mountpoint) if os.path.ismount(mountpoint) else None
    try:
        held = entry is not None and devices.kernel_name(entry.source) == kname
    except SafetyError:
        held = False
    if entry is not None and not held:
        raise SafetyError(f"{mountpoint} holds {entry.source}, not /dev/{kname}; not "
                          "unmounting it")
    if r.device is not None and device_of(r.device)[1] != kname:
        raise SafetyError(f"{mountpoint} holds /dev/{kname}, not {r.device}")
    if held:
        _unmount(s, mountpoint, r.lazy)
    s.forget_mount(mountpoint)
    removed = False
    if r.remove_dir and not os.path.ismount(mountpoint):
        with contextlib.suppress(OSError):
            os.rmdir(mountpoint)
            s.builtin("rmdir", mountpoint)
            removed = True
    return Unmounted(removed)


def _unmount(s: Session, mountpoint: str, lazy: bool) -> None:
    done = s.run(umount_argv(mountpoint), timeout=TIMEOUTS["umount"], check=False)
    settle = time.monotonic() + UMOUNT_SETTLE
    while done.returncode != 0 and os.path.ismount(mountpoint) and time.monotonic() < settle:
        time.sleep(0.2)  # "target is busy" for a moment after a tool's io_uring went away
        done = s.run(umount_argv(mountpoint), timeout=TIMEOUTS["umount"], check=False)
    if done.returncode != 0 and os.path.ismount(mountpoint):
        if not lazy:
            s.run(umount_argv(mountpoint), timeout=TIMEOUTS["umount"])  # raises, says why
        s.run(umount_argv(mountpoint, lazy=True))


def readback(s: Session, r: Readback) -> ReadBack:
    """The read-back of a mount this helper made (device and mountpoint as it mounted them),
    or of a device it formatted (mountpoint None); nothing else is read as root."""
    path, kname = device_of(r.device)
    if r.mountpoint is not None and s.mounted_here(r.mountpoint) != kname:
        raise SafetyError(f"{r.mountpoint}: not a mount of {r.device} this helper made; the "
                          "helper reads back only what it mounted")
    if r.mountpoint is None and not s.owns(kname):
        raise SafetyError(f"{r.device}: the helper reads back only a device it formatted or "
                          "attached")
    return ReadBack(read_back(path, r.mountpoint, r.fstype,
                              run=lambda argv: s.run(argv, check=False)))


def close(s: Session) -> None:
    """The client has gone: unmount (lazily if need be) what this session mounted."""
    for mountpoint in list(s.held.mounts):
        with contextlib.suppress(Exception):
            umount(s, Umount(mountpoint, lazy=True, remove_dir=True))
