"""`disklab install-desktop [--user|--system]` and `make install`: the files around the Python
package that a Linux desktop and a distribution expect, written from the package's resources.

Under PREFIX/share (--user: $XDG_DATA_HOME, ~/.local/share): the desktop entry
applications/org.disklab.DiskLab.desktop, the icon in the hicolor theme, the AppStream metainfo,
the man page disklab.1 and the bash, zsh and fish completions. System-wide also the polkit
policy (/usr/share/polkit-1/actions, the only place polkit reads) and the privileged helper's
launcher at /usr/libexec/disklab/disklab-helper (the policy's exec.path, where
core.privilege looks for it), with @PYTHON@ replaced by the interpreter DiskLab is installed
for: pkexec clears the environment, so the launcher names it absolutely.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from disklab.cli.docs import completion, manpage
from disklab.core.privilege import HELPER_LAUNCHER
from disklab.core.resources import APP_ID, ICON_NAME, resource

EXIT_OK, EXIT_BAD_INPUT = 0, 2
POLICY = "org.disklab.helper.policy"
POLKIT_ACTIONS = "/usr/share/polkit-1/actions"
LEGACY_DESKTOP = "disklab.desktop"  # what `make desktop` wrote before the reverse-DNS id


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
    p.set_defaults(func=lambda args: install_desktop(args, parser))


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
    launcher = resource("polkit", "disklab-helper").read_text(encoding="utf-8")
    return [
        _write(_staged(destdir, f"{POLKIT_ACTIONS}/{POLICY}"),
               resource("polkit", POLICY).read_text(encoding="utf-8")),
        _write(_staged(destdir, HELPER_LAUNCHER), launcher.replace("@PYTHON@", python), 0o755),
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
