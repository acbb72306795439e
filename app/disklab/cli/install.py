"""`disklab install-desktop [--user|--system]` and `make install`: the files around the Python
package that a Linux desktop and a distribution expect, written from the package's resources.

Under PREFIX/share (--user: $XDG_DATA_HOME, ~/.local/share): the desktop entry
applications/org.disklab.DiskLab.desktop, the icon in the hicolor theme, the AppStream metainfo,
the man page disklab.1 and the bash, zsh and fish completions. System-wide also the polkit
policy (/usr/share/polkit-1/actions, the only place polkit reads) and the privileged helper's
launcher at /usr/libexec/disklab/disklab-helper (the policy's exec.path, where
core.helper_client looks for it), with @PYTHON@ replaced by the interpreter DiskLab is installed
for: pkexec clears the environment, so the launcher names it absolutely.

`disklab install-helper` (as root) installs what sudo and pkexec may run as root: a root-owned
copy of the disklab package and the helper's dependencies under /usr/local/lib/disklab, and the
launcher naming that copy and a root-owned interpreter. A venv in a home directory is the
user's to change, so the helper refuses to serve as root from one (core.root_helper.trust).
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from disklab.cli.docs import completion, manpage
from disklab.core.helper_client import HELPER_LAUNCHER
from disklab.core.resources import APP_ID, ICON_NAME, resource
from disklab.core.root_helper.trust import unsafe_path

EXIT_OK, EXIT_BAD_INPUT = 0, 2
POLICY = "org.disklab.helper.policy"
POLKIT_ACTIONS = "/usr/share/polkit-1/actions"
LEGACY_DESKTOP = "disklab.desktop"  # what `make desktop` wrote before the reverse-DNS id
HELPER_LIBDIR = "/usr/local/lib/disklab"  # the root-owned copy the launcher imports
HELPER_PACKAGES = ("disklab", "psutil", "platformdirs")  # what the helper and its tools import
SUDOERS_EXAMPLE = "{user} ALL=(root) NOPASSWD: {launcher}"


def add_parser(sub: argparse._SubParsersAction, parser: argparse.ArgumentParser) -> None:
    """The `install-desktop` subcommand; `parser` is the whole command line, for the man page
    and the completions."""
    p = sub.add_parser("install-desktop",
                       help="install the desktop entry, icon, metainfo, man page and completions")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true",
                       help="for this user, under $XDG_DATA_HOME (the default)")
    where.add_argument("--system", action="store_true",
                       help="for every user, under PREFIX; also the polkit policy and helper")
    p.add_argument("--prefix", metavar="DIR", default="/usr/local",
                   help="installation prefix of --system (default /usr/local)")
    p.add_argument("--destdir", metavar="DIR", default="",
                   help="staging root prepended to every path (packagers)")
    p.add_argument("--python", metavar="PATH", default=sys.executable,
                   help="interpreter the polkit helper runs (default: this one)")
    p.add_argument("--remove", action="store_true",
                   help="remove what the same install wrote (make clean does, for --user)")
    p.set_defaults(func=lambda args: install_desktop(args, parser), log=False)
    h = sub.add_parser("install-helper",
                       help="install the root-owned privileged helper sudo and pkexec start")
    h.add_argument("--libdir", metavar="DIR", default=HELPER_LIBDIR,
                   help=f"where the root-owned package copy goes (default {HELPER_LIBDIR})")
    h.add_argument("--launcher", metavar="PATH", default=HELPER_LAUNCHER,
                   help=f"the launcher's path (default {HELPER_LAUNCHER}, the polkit policy's)")
    h.add_argument("--python", metavar="PATH", default=os.path.realpath(sys.executable),
                   help="the root-owned interpreter the helper runs (default: this one's)")
    h.set_defaults(func=install_helper, log=False)


def _staged(destdir: str, path: str | Path) -> Path:
    """`path` under the staging root (DESTDIR), or `path` itself without one."""
    return Path(destdir) / Path(path).relative_to("/") if destdir else Path(path)


def _write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    print(f"installed {path}")
    return path


def _exec_line(system: bool) -> str:
    """The desktop entry's command: `disklab` on PATH for a system install; for a user's
    install the script beside this interpreter (a venv's or pipx's bin), which is not on the
    desktop session's PATH."""
    script = Path(sys.executable).parent / "disklab"
    return "disklab" if system or not script.exists() else str(script)


def desktop_entry(exec_command: str) -> str:
    lines = []
    for line in resource(f"{APP_ID}.desktop").read_text(encoding="utf-8").splitlines():
        if line.startswith("Exec="):
            line = f"Exec={exec_command} gui"
        elif line.startswith("TryExec="):
            line = f"TryExec={exec_command}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def shared_paths(share: Path) -> list[Path]:
    """What install_shared writes under share/, in its order."""
    return [share / "applications" / f"{APP_ID}.desktop",
            share / "icons/hicolor/scalable/apps" / f"{ICON_NAME}.svg",
            share / "metainfo" / f"{APP_ID}.metainfo.xml",
            share / "man/man1/disklab.1",
            share / "bash-completion/completions/disklab",
            share / "zsh/site-functions/_disklab",
            share / "fish/vendor_completions.d/disklab.fish"]


def remove(paths: list[Path]) -> int:
    """`install-desktop --remove`: the files an install wrote, those that are there."""
    for path in paths:
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        print(f"removed {path}")
    return EXIT_OK


def install_shared(share: Path, parser: argparse.ArgumentParser, exec_command: str) -> list[Path]:
    """The files under share/: desktop entry, icon, metainfo, man page, completions."""
    icon = resource("icons", f"{ICON_NAME}.svg").read_text(encoding="utf-8")
    texts = [desktop_entry(exec_command), icon,
             resource(f"{APP_ID}.metainfo.xml").read_text(encoding="utf-8"), manpage(parser),
             completion(parser, "bash"), completion(parser, "zsh"), completion(parser, "fish")]
    return [_write(path, text) for path, text in zip(shared_paths(share), texts, strict=True)]


def install_polkit(destdir: str, python: str) -> list[Path]:
    """The polkit policy and the helper launcher with the interpreter filled in."""
    return [
        _write(_staged(destdir, f"{POLKIT_ACTIONS}/{POLICY}"),
               resource("polkit", POLICY).read_text(encoding="utf-8")),
        _write(_staged(destdir, HELPER_LAUNCHER), launcher_text(python, None), 0o755),
    ]


def install_desktop(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.system:
        if not args.destdir and os.geteuid() != 0:
            print("disklab install-desktop: --system writes under /usr: run it as root, or use "
                  "--user", file=sys.stderr)
            return EXIT_BAD_INPUT
        if not Path(args.python).is_absolute():
            print(f"disklab install-desktop: --python {args.python}: give an absolute path "
                  "(pkexec clears PATH)", file=sys.stderr)
            return EXIT_BAD_INPUT
        share = _staged(args.destdir, Path(args.prefix) / "share")
        if args.remove:
            return remove([*shared_paths(share), _staged(args.destdir, HELPER_LAUNCHER),
                           _staged(args.destdir, f"{POLKIT_ACTIONS}/{POLICY}")])
        install_shared(share, parser, _exec_line(system=True))
        install_polkit(args.destdir, args.python)
        return EXIT_OK
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local/share")
    share = _staged(args.destdir, data_home)
    if args.remove:
        return remove(shared_paths(share))
    install_shared(share, parser, _exec_line(system=False))
    legacy = share / "applications" / LEGACY_DESKTOP
    if legacy.is_file() and "disklab gui" in legacy.read_text(encoding="utf-8", errors="replace"):
        legacy.unlink()  # one menu entry, not two
        print(f"removed {legacy} (replaced by {APP_ID}.desktop)")
    print("The polkit policy and helper are installed system-wide only (--system, as root).")
    return EXIT_OK


def launcher_text(python: str, libdir: str | None) -> str:
    """The launcher with its interpreter and package directory filled in (libdir None: the
    interpreter's own site-packages, for a distribution's package)."""
    text = resource("polkit", "disklab-helper").read_text(encoding="utf-8")
    if libdir is None:
        text = text.replace('sys.path.insert(0, "@LIBDIR@")\n', "")
    return text.replace("@PYTHON@", python).replace("@LIBDIR@", libdir or "")


def _copy_packages(libdir: Path) -> None:
    """The helper's packages into `libdir`, root-owned and writable by root only; the old copy
    is replaced whole (a new directory renamed over it)."""
    libdir.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=".disklab-helper-", dir=libdir.parent))
    try:
        for name in HELPER_PACKAGES:
            source = Path(importlib.import_module(name).__file__ or "").resolve().parent
            shutil.copytree(source, fresh / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for path in [fresh, *fresh.rglob("*")]:
            os.chown(path, 0, 0, follow_symlinks=False)
            if not path.is_symlink():
                path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
        old = libdir.with_name(libdir.name + ".old")
        if libdir.exists():
            shutil.rmtree(old, ignore_errors=True)
            libdir.rename(old)
        fresh.rename(libdir)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise


def install_helper(args: argparse.Namespace) -> int:
    """Copy the package root-owned to --libdir and write the launcher; refuse (exit 2) when not
    root or when the interpreter is not root's alone."""
    if os.geteuid() != 0:
        print("disklab install-helper: it installs what runs as root: run it as root "
              "(sudo disklab install-helper)", file=sys.stderr)
        return EXIT_BAD_INPUT
    for name, path in (("--python", args.python), ("--libdir", args.libdir),
                       ("--launcher", args.launcher)):
        if not os.path.isabs(path):
            print(f"disklab install-helper: {name} {path}: give an absolute path",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
    why = unsafe_path(args.python, set())
    if why:
        print(f"disklab install-helper: --python {args.python}: {why}; name a root-owned "
              "interpreter (such as /usr/bin/python3 with psutil for it)", file=sys.stderr)
        return EXIT_BAD_INPUT
    libdir = Path(args.libdir)
    _copy_packages(libdir)
    print(f"installed {libdir} (root-owned copy of {', '.join(HELPER_PACKAGES)})")
    launcher = Path(args.launcher)
    launcher.parent.mkdir(parents=True, exist_ok=True)
    _write(launcher, launcher_text(args.python, str(libdir)), 0o755)
    print("A sudoers rule that lets a user start it without a password names only it, e.g.:\n  "
          + SUDOERS_EXAMPLE.format(user="alice", launcher=launcher))
    return EXIT_OK
