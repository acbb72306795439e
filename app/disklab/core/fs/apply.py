"""Applying filesystem configurations to a target, and undoing them whatever happens.

The runner calls a Scratch: attach_image() for an image target, apply() per configuration
(the commands of fs.commands.setup_commands, run by the privileged helper, then the
read-back), release() after the configuration's cases, teardown() at the end. teardown() never
raises and runs after failures, cancels, Ctrl-C and SIGTERM.

What is set up is written to a state file in the library's directory *before* it is done
(`setup-state-PID.json`), so that when DiskLab is killed with SIGKILL the next start finds
the record and `recover_leftovers` unmounts, restores and detaches what is left, by name:
only the mountpoint recorded with its device, only loop devices backed by the recorded image.
The memory cgroups of a page-cache limit are recorded the same way (CgroupRecord, in a state
file of their own: any target kind has them), and removed by their recorded path.
The same record holds the files a case is about to create (`record_files`) and the directories
DiskLab makes (`make_dir`, the mountpoints): recovery removes exactly those paths, only inside
the directory recorded with them, and removes a directory only when it is empty.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from disklab.core.fs.commands import MOUNT_PREFIX
from disklab.core.fs.options import config_to_dict, device_options, validate
from disklab.core.fs.readback import mismatches, readback
from disklab.core.helper_client import protocol as rq
from disklab.core.helper_client.client import Privileged
from disklab.core.system.cgroups import remove_group
from disklab.core.system.cleanup import remove_recorded
from disklab.core.system.mountinfo import filesystem_of
from disklab.core.system.sysfs import read_readahead, read_scheduler
from disklab.core.vocab.errors import ConfigError, DisklabError, SafetyError
from disklab.core.vocab.model import FsConfig

STATE_PREFIX = "setup-state-"
STATE_VERSION = 1


def _process_start(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


class StateFile:
    """The on-disk record of one session's setup: a list of steps, rewritten atomically."""

    def __init__(self, path: Path, data: dict[str, Any] | None = None):
        self.path = path
        self.data = data or {"version": STATE_VERSION, "pid": os.getpid(),
                             "create_time": _process_start(os.getpid()),
                             "started": time.time(), "steps": []}

    @property
    def steps(self) -> list[dict[str, Any]]:
        return self.data["steps"]

    def add(self, step: dict[str, Any]) -> dict[str, Any]:
        self.steps.append(step)
        self.save()
        return step

    def remove(self, step: dict[str, Any]) -> None:
        if step in self.steps:
            self.steps.remove(step)
        self.save()

    def record_files(self, directory: str, paths: tuple[str, ...] | list[str]
                     ) -> dict[str, Any]:
        """Record the files a case is about to create in `directory`, before it runs: a kill
        then leaves a record the next start removes them by. The directory is kept resolved,
        so that recovery refuses a path that no longer lies directly in it."""
        return self.add({"kind": "files", "root": os.path.realpath(directory),
                         "paths": [os.path.abspath(p) for p in paths]})

    def make_dir(self, prefix: str, parent: str | None = None) -> str:
        """A new directory `parent`/`prefix`<random>, recorded before it is made (so a kill
        right after mkdir still leaves a record); recovery removes it only when empty."""
        parent = parent or tempfile.gettempdir()
        while True:
            path = os.path.join(parent, prefix + secrets.token_hex(4))
            step = self.add({"kind": "dir", "path": path})
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:  # not ours: never recorded as ours
                self.remove(step)
                continue
            except BaseException:
                self.remove(step)
                raise
            return path

    def save(self) -> None:
        if not self.steps:
            with contextlib.suppress(OSError):
                self.path.unlink()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1))
        os.replace(tmp, self.path)

    def owner_alive(self) -> bool:
        """True when the session that wrote it still runs (same pid and start time)."""
        pid = self.data.get("pid")
        if not isinstance(pid, int) or pid == os.getpid():
            return pid == os.getpid()
        started = _process_start(pid)
        recorded = self.data.get("create_time")
        return started is not None and (recorded is None or abs(started - recorded) < 1.0)


class CgroupRecord:
    """The memory cgroups one session made for its cases (a page-cache limit), on disk while
    they exist: a group made as root (by this process) is recorded before it is made; one the
    privileged helper makes, as soon as the helper names it (the helper removes its own groups
    when it ends, so only a kill of both leaves one, and then it is recorded)."""

    def __init__(self, state_dir: str | Path):
        self.state = StateFile(Path(state_dir) / f"{STATE_PREFIX}{os.getpid()}-cgroups.json")

    def add(self, path: str | Path) -> dict[str, Any]:
        return self.state.add({"kind": "cgroup", "path": str(path)})

    def done(self, step: dict[str, Any]) -> None:
        self.state.remove(step)


def session_state(state_dir: str | Path) -> StateFile:
    """This process's record in `state_dir` (one per session; empty records leave no file)."""
    return StateFile(Path(state_dir) / f"{STATE_PREFIX}{os.getpid()}.json")


class Scratch:
    """One session's setup on a target: what it attached, formatted, mounted and changed."""

    def __init__(self, priv: Privileged, state_dir: str | Path,
                 library_path: str | None = None,
                 log: Callable[[str], None] | None = None, state: StateFile | None = None):
        self.priv = priv
        # absolute: the root helper runs from / and refuses a relative path
        self.library_path = os.path.abspath(library_path) if library_path else None
        self.log = log or (lambda message: None)
        # the session's record, shared with the runner's file and directory records
        self.state = state or session_state(state_dir)
        self.identities: dict[str, str] = {}  # device -> identity read when DiskLab attached it

    # --- image targets ----------------------------------------------------------------------
    def attach_image(self, path: str | Path, size: int) -> str:
        """A new sparse image of `size` bytes on a loop device with direct I/O; its path."""
        image = os.path.abspath(path)
        # created stays False until the helper says it made the file: a record left by a kill
        # in between must never make recovery delete a file that was there before.
        step = self.state.add({"kind": "loop", "image": image, "device": None,
                               "created": False})
        try:
            result: rq.Attached = self.priv.call(rq.Attach(image, int(size), self.library_path))
        except BaseException:
            self.state.remove(step)
            raise
        step.update(device=result.device, inode=result.inode, direct_io=result.direct_io,
                    created=result.created)
        self.state.save()
        self.identities[result.device] = result.identity
        if not result.direct_io:
            self.log(f"{result.device}: direct I/O could not be enabled on the loop device; "
                     "O_DIRECT results inside the image are page-cache speed")
        return result.device

    def mountpoint(self) -> str:
        """A new mountpoint's path: a directory the helper makes in its own work directory
        (the only place it mounts), so that no user can plant a link where root mounts."""
        if not self.priv.alive:
            self.priv.start()
        return os.path.join(str(self.priv.workdir), MOUNT_PREFIX + secrets.token_hex(4))

    # --- partitions (several targets on one image or device) --------------------------------
    def partition(self, device: str, count: int, confirm: str | None = None) -> list[str]:
        """Split `device` into `count` equal GPT partitions (sgdisk, by the helper, after the
        same destructive checks as a mkfs); their device paths, in order. `confirm`: the plan's
        identity of a user's device (an image DiskLab attached has its own, read then). Recorded
        before it is done, so that teardown and recovery make the kernel forget them."""
        confirm = confirm if confirm is not None else self.identities.get(device)
        step = self.state.add({"kind": "partitions", "device": device, "count": int(count)})
        try:
            result: rq.Partitioned = self.priv.call(
                rq.Partition(device, int(count), confirm, self.library_path))
        except BaseException:
            self.state.remove(step)
            raise
        parts = list(result.partitions)
        step["partitions"] = parts
        self.state.save()
        self.identities.update(result.identities)
        return parts

    # --- configurations ---------------------------------------------------------------------
    def apply(self, config: FsConfig, device: str, mountpoint: str | Path,
              confirm: str | None = None) -> dict[str, Any]:
        """Make and mount the filesystem of `config` on `device`; the read-back, with the
        asked-vs-applied differences under "mismatches" and the commands under "commands".
        `confirm` is the plan's identity for a user's device; a DiskLab image uses the identity
        read when it was attached. An external journal/log device's confirm is the config's."""
        problems = validate(config)
        if problems:
            raise ConfigError(problems)
        if config.fs is None:
            raise ConfigError([("fs", f"{config.label!r} makes no filesystem (as is)")])
        mountpoint = os.path.abspath(mountpoint)
        confirm = confirm if confirm is not None else self.identities.get(device)
        table = config_to_dict(config)
        commands: list[dict[str, Any]] = []

        def ask(request: rq.Request) -> Any:
            try:
                result = self.priv.call(request)
            except DisklabError as e:
                commands.extend(getattr(e, "ran", []))
                raise
            commands.extend(self.priv.last_ran)
            return result

        self.release(device)
        lib = self.library_path
        # The helper runs fs.commands.setup_commands of the configuration, request by request;
        # an external journal or log device is wiped too, so its confirm goes with it and the
        # helper re-checks that device's identity as it does the target's.
        journal_confirm = None
        for name in device_options(config):
            journal_confirm = config.confirms.get(name)
        ask(rq.Mkfs(table, device, confirm, lib, journal_confirm))
        step = self.state.add({"kind": "mount", "device": device, "mountpoint": mountpoint,
                               "created_dir": False})
        try:
            mounted: rq.Mounted = ask(rq.Mount(table, device, mountpoint, lib))
        except BaseException:
            self.state.remove(step)
            raise
        step["created_dir"] = mounted.created
        self.state.save()
        if config.readahead is not None:
            before = read_readahead(device)
            self.state.add({"kind": "readahead", "device": device, "previous": before})
            ask(rq.Setra(device, config.readahead))
        if config.scheduler is not None:
            before, _ = read_scheduler(device)
            self.state.add({"kind": "scheduler", "device": device, "previous": before})
            ask(rq.Scheduler(device, config.scheduler))
        rb = ask(rq.Readback(device, mountpoint, config.fs)).readback
        rb["mismatches"] = mismatches(config, rb)
        rb["commands"] = [c.get("argv") for c in commands]
        rb["config"] = table
        return rb

    def release(self, device: str | None = None) -> list[str]:
        """Unmount and restore what apply() did (on `device`, or everywhere); never raises."""
        done: list[str] = []
        for step in reversed(list(self.state.steps)):
            if step["kind"] in ("loop", "files", "dir", "partitions") or (
                    device is not None and step.get("device") != device):
                continue
            done += _undo(self.priv, step, self.state, self.library_path)
        return done

    def teardown(self) -> list[str]:
        """Undo everything this session set up, newest first; never raises. What could not be
        undone stays in the state file for the next start (and is said in the messages)."""
        done: list[str] = []
        for step in reversed(list(self.state.steps)):
            if step.get("owner") == "helper":
                continue  # the running helper's own directory: it removes it when it ends
            try:
                done += _undo(self.priv, step, self.state, self.library_path)
            except BaseException as e:  # a second Ctrl-C skips one step, not the rest
                done.append(f"could not undo {step.get('kind')}: {e}")
        return done


def readback_directory(directory: str) -> dict[str, Any]:
    """The read-back of the filesystem holding a directory target (its single 'as is' config),
    as DiskLab's user can read it: the root helper reads back only what it mounted
    (docs/helper-contract.md, point 7), so a superblock tool on a root-only device is listed
    under "errors". Never raises."""
    fs = filesystem_of(directory)
    source, mountpoint, fstype = fs.get("source", ""), fs.get("mountpoint"), fs.get("fstype")
    if not source.startswith("/dev/") or not os.path.exists(source):
        options = [o for o in f"{fs.get('options', '')},{fs.get('super_options', '')}".split(",")
                   if o]
        return {"device": source or None, "mountpoint": mountpoint, "fs": fstype,
                "mount_options": list(dict.fromkeys(options)), "raw": {},
                "errors": [f"{source or directory} is not a block device: no superblock facts"]}
    return readback(source, mountpoint, fstype)


def _undo(priv: Privileged, step: dict[str, Any], state: StateFile,
          library_path: str | None) -> list[str]:
    """Undo one recorded step; the step leaves the record only when it is really undone."""
    kind = step.get("kind")
    if kind == "remote-files":  # on fio servers: core.hosts.leftovers, before this runs
        return []
    if kind == "files":
        return _undo_files(step, state)
    if kind == "dir":
        return _undo_dir(step, state)
    try:
        if kind == "cgroup":
            return _undo_cgroup(priv, step, state)
        if not priv.alive:
            priv.start()
        if kind == "mount":
            mountpoint, device = step["mountpoint"], step["device"]
            if not os.path.ismount(mountpoint):
                if step.get("created_dir"):
                    with contextlib.suppress(OSError):
                        os.rmdir(mountpoint)
                state.remove(step)
                return []
            priv.call(rq.Umount(mountpoint, device, lazy=True,
                                remove_dir=bool(step.get("created_dir")),
                                library_path=library_path))
            state.remove(step)
            return [f"unmounted {mountpoint} ({device})"]
        if kind in ("readahead", "scheduler"):
            device, previous = step["device"], step.get("previous")
            now = (read_readahead(device) if kind == "readahead" else read_scheduler(device)[0]
                   ) if os.path.exists(device) else None
            if previous is None or previous == "" or now is None or str(now) == str(previous):
                state.remove(step)  # nothing to restore (the helper's end restored it)
                return []
            if kind == "readahead":
                priv.call(rq.Setra(device, int(previous)))
            else:
                priv.call(rq.Scheduler(device, str(previous)))
            state.remove(step)
            return [f"restored {kind.replace('readahead', 'read-ahead')} {previous} on {device}"]
        if kind == "partitions":  # the kernel forgets them (the table stays, like a mkfs)
            device = step["device"]
            if os.path.exists(device) and _has_partitions(device):
                priv.call(rq.Unpartition(device, list(step.get("partitions") or ())))
            state.remove(step)
            return [f"removed the partitions of {device} from the kernel's view"]
        if kind == "loop":
            image = step["image"]
            if not os.path.exists(image):
                state.remove(step)
                return []
            try:
                result: rq.Detached = priv.call(rq.Detach(image, None,
                                                          bool(step.get("created"))))
            except SafetyError:
                if _loop_backed_by(image):
                    raise
                state.remove(step)  # no loop device holds it: nothing of this step is left
                return [f"no loop device holds {image} any more; the record of it is dropped"]
            state.remove(step)
            out = [f"detached {d} ({image})" for d in result.detached]
            if result.removed:
                out.append(f"removed {image}")
            return out
        state.remove(step)
        return [f"ignored an unknown setup record {kind!r}"]
    except DisklabError as e:
        return [f"could not undo {kind} {step.get('mountpoint') or step.get('device') or ''}: "
                f"{e}"]


def _loop_backed_by(image: str) -> bool:
    """Some loop device is backed by the file at `image` now (sysfs, readable by anyone)."""
    real = os.path.realpath(image)
    for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
        with contextlib.suppress(OSError):
            if os.path.realpath(backing.read_text().strip().removesuffix(" (deleted)")) == real:
                return True
    return False


def _has_partitions(device: str) -> bool:
    """The kernel shows partitions of `device` (sysfs; the helper's end may have removed them
    with the loop device)."""
    name = os.path.basename(os.path.realpath(device))
    return any((p / "partition").exists() for p in Path(f"/sys/class/block/{name}").glob(
        f"{name}*"))


def _undo_cgroup(priv: Privileged, step: dict[str, Any], state: StateFile) -> list[str]:
    """Remove a recorded memory cgroup: here as root, else through the helper (it is root's)."""
    path = str(step.get("path") or "")
    if not os.path.isdir(path):
        state.remove(step)
        return []
    if os.geteuid() == 0:
        remove_group(path)
    else:
        priv.call(rq.CgroupRemove(path))
    state.remove(step)
    return [f"removed the memory cgroup {path}"]


def _undo_files(step: dict[str, Any], state: StateFile) -> list[str]:
    """Remove the recorded files of a case (only those directly in the recorded directory);
    what is still there stays in the record."""
    removed, left, refused = remove_recorded(str(step.get("root") or ""),
                                             [str(p) for p in step.get("paths") or ()])
    out = [f"removed {p}" for p in removed]
    out += [f"refused to remove {p}: not directly in {step.get('root')}" for p in refused]
    out += [f"could not remove {p}" for p in left]
    if left:
        step["paths"] = left
        state.save()
    else:
        state.remove(step)
    return out


def _undo_dir(step: dict[str, Any], state: StateFile) -> list[str]:
    """Remove a directory DiskLab made, when it is empty (a mountpoint once unmounted); a
    directory with something in it is never removed."""
    path = str(step.get("path") or "")
    if not path or not os.path.isdir(path) or os.path.islink(path):
        state.remove(step)
        return []
    if os.path.ismount(path):
        return [f"could not remove {path}: still mounted"]
    try:
        os.rmdir(path)
    except OSError as e:
        state.remove(step)  # not empty: not ours to empty
        return [f"left {path}: {e.strerror}"]
    state.remove(step)
    return [f"removed directory {path}"]


def leftover_files(state_dir: str | Path) -> list[Path]:
    """State files of sessions that are no longer running."""
    found = []
    for path in sorted(Path(state_dir).glob(f"{STATE_PREFIX}*.json")):
        try:
            state = StateFile(path, json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
        if not state.owner_alive():
            found.append(path)
    return found


def recover_leftovers(state_dir: str | Path, priv: Privileged | None = None,
                      library_path: str | None = None) -> list[str]:
    """Clean what killed sessions left set up (their state files); what was cleaned, one line
    each. Starts a privileged helper only when there is something to clean. Never raises."""
    files = leftover_files(state_dir)
    if not files:
        return []
    own = priv is None
    helper = priv or Privileged()
    done: list[str] = []
    try:
        for path in files:
            try:
                state = StateFile(path, json.loads(path.read_text()))
            except (OSError, ValueError) as e:
                done.append(f"cannot read {path}: {e}")
                continue
            pid = state.data.get("pid")
            if not state.steps:
                with contextlib.suppress(OSError):
                    path.unlink()
                continue
            for step in reversed(list(state.steps)):
                for line in _undo(helper, step, state, library_path):
                    done.append(f"{line} (left by DiskLab pid {pid})")
    except Exception as e:  # recovery reports; it never stops a start
        done.append(f"recovery stopped: {e}")
    finally:
        if own:
            with contextlib.suppress(Exception):
                helper.close()
    return done
