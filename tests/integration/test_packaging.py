"""DiskLab installed the way a user and a packager install it, used from outside the checkout.

A wheel is built from a copy of this checkout and installed (not editable) into a fresh venv;
the venv borrows only the third-party dependencies of the interpreter running the tests (a .pth
line, so PySide6 is not downloaded again), never disklab itself. From a directory that is not
the checkout: `disklab start` runs the quick preset headless, `disklab plan show quick` finds
the preset by name, and the window (offscreen) lists every preset and has its icon. Then
`make install DESTDIR=... PREFIX=/usr` stages what a distribution package holds, checked with
the tools distributions check it with: desktop-file-validate, appstreamcli, xmllint, man, bash.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path

import PySide6
import pytest

import disklab
from disklab.core.resources import preset_names

pytestmark = pytest.mark.slow

CHECKOUT = Path(__file__).resolve().parents[2]
APP_ID = "org.disklab.DiskLab"


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _need(*tools: str) -> None:
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed: `make test` installs it "
                        "(scripts/install-system-packages.sh)")


def _copy_checkout(dest: Path) -> Path:
    """The checkout's files as git sees them (tracked and new, not ignored): what a release
    tarball or a packager's clone holds, without this checkout's venv and build output."""
    listed = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                  CHECKOUT)
    if listed.returncode != 0:  # an unpacked sdist: its files are the release's
        shutil.copytree(CHECKOUT, dest, ignore=shutil.ignore_patterns(
            ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache"))
        return dest
    for name in filter(None, listed.stdout.split("\0")):
        source = CHECKOUT / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    base = tmp_path_factory.mktemp("packaging")
    src = _copy_checkout(base / "src")
    wheels = base / "wheels"
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels),
                  str(src)], base)
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("disklab-*.whl")
    venv = base / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                     base).stdout.strip())
    # PySide6, psutil, ... from the interpreter running the tests; disklab only from the wheel
    (site / "deps-from-test-env.pth").write_text(f"{Path(PySide6.__file__).parents[1]}\n")
    pip = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                "-q", str(wheel)], base)
    assert pip.returncode == 0, pip.stderr
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    yield {"src": src, "venv": venv, "python": python, "wheel": wheel, "cwd": elsewhere,
           "base": base}


def _env(installed: dict[str, Path], **extra: str) -> dict[str, str]:
    """A user's environment: no PYTHONPATH into the checkout, no display, their own XDG dirs."""
    home = installed["base"] / "home"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "DISPLAY", "WAYLAND_DISPLAY", "DISKLAB_LIBRARY")
           and not k.startswith("XDG_")}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"),
               XDG_STATE_HOME=str(home / "state"), XDG_CONFIG_HOME=str(home / "config"),
               PATH=f"{installed['venv'] / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}", **extra)
    return env


def test_the_wheel_holds_the_resources_and_disklab_comes_from_it(
        installed: dict[str, Path]) -> None:
    env = _env(installed)
    where = _run([str(installed["python"]), "-c",
                  "import disklab, disklab.core.resources as r; print(disklab.__file__); "
                  "print(r.icon_path()); print(r.resource('presets', 'quick.toml'))"],
                 installed["cwd"], env)
    assert where.returncode == 0, where.stderr
    module, icon, quick = (Path(line) for line in where.stdout.split())
    assert module.is_relative_to(installed["venv"]), module
    assert installed["wheel"].name.startswith(f"disklab-{disklab.__version__}-")
    assert icon.is_file() and icon.is_relative_to(installed["venv"])
    assert quick.is_file() and quick.is_relative_to(installed["venv"])
    version = _run(["disklab", "--version"], installed["cwd"], env)
    assert version.stdout.strip() == f"disklab {disklab.__version__}"
    as_module = _run([str(installed["python"]), "-m", "disklab", "--version"], installed["cwd"],
                     env)
    assert as_module.stdout.strip() == f"disklab {disklab.__version__}", as_module.stderr


def test_start_runs_the_quick_preset_headless(installed: dict[str, Path]) -> None:
    done = _run(["disklab", "start"], installed["cwd"], _env(installed), timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "quick look" in done.stdout
    header = next(line for line in done.stdout.splitlines() if line.startswith("config"))
    assert header.split()[:6] == ["config", "tool", "metric", "direction", "parameters", "mean"]
    assert "engine" in done.stdout and "MB/s" in done.stdout


def test_presets_by_name_validate_and_show(installed: dict[str, Path]) -> None:
    env = _env(installed)
    shown = _run(["disklab", "plan", "show", "quick"], installed["cwd"], env)
    assert shown.returncode == 0, shown.stderr
    assert "plan 'quick look'" in shown.stdout and "disklab.engine" in shown.stdout
    for name in preset_names():
        checked = _run(["disklab", "plan", "validate", name], installed["cwd"], env)
        assert checked.returncode == 0, f"{name}: {checked.stderr}"
    work = installed["base"] / "work"
    work.mkdir(exist_ok=True)
    ran = _run(["disklab", "run", "quick", "--target", str(work), "--json"], installed["cwd"],
               env, timeout=900)
    assert ran.returncode == 0, ran.stderr[-3000:]
    events = [json.loads(line) for line in ran.stdout.splitlines()]
    assert events[0]["event"] == "SessionStarted" and events[0]["name"] == "quick look"
    assert events[-1]["event"] == "SessionFinished" and events[-1]["status"] == "finished"
    missing = _run(["disklab", "plan", "show", "no-such-preset"], installed["cwd"], env)
    assert missing.returncode == 2 and "no-such-preset" in missing.stderr
    assert "Traceback" not in missing.stderr


GUI_SMOKE = textwrap.dedent("""
    import json, sys
    from disklab.gui.app import make_app
    from disklab.gui.main_window import MainWindow, app_icon
    from disklab.gui.state import Workbench

    app = make_app()
    window = MainWindow(Workbench(sys.argv[1]))
    combo = window.matrix.preset
    print(json.dumps({
        "presets": [combo.itemText(i) for i in range(1, combo.count())],
        "window_icon_null": window.windowIcon().isNull(),
        "app_icon_null": app_icon().isNull(),
        "icon_sizes": len(window.windowIcon().availableSizes()) or
                      int(not window.windowIcon().pixmap(32, 32).isNull()),
    }))
""")


def test_the_window_sees_every_preset_and_its_icon(installed: dict[str, Path]) -> None:
    env = _env(installed, QT_QPA_PLATFORM="offscreen")
    done = _run([str(installed["python"]), "-c", GUI_SMOKE,
                 str(installed["base"] / "gui.sqlite3")], installed["cwd"], env)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["presets"] == preset_names()
    assert seen["window_icon_null"] is False and seen["app_icon_null"] is False
    assert seen["icon_sizes"]


# --- what packagers install ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def staged(installed: dict[str, Path]) -> Path:
    _need("make")
    dest = installed["base"] / "stage"
    done = _run(["make", "-s", "install", f"DESTDIR={dest}", "PREFIX=/usr",
                 f"PYTHON={installed['python']}"], installed["src"], _env(installed))
    assert done.returncode == 0, done.stderr
    return dest


def test_make_install_takes_the_checkouts_venv_else_says_what_it_needs(
        installed: dict[str, Path]) -> None:
    """Without PYTHON, `make install` uses the checkout's venv (what make run made); a Python
    without DiskLab's dependencies is one line naming them, not a traceback."""
    _need("make")
    src, base = installed["src"], installed["base"]
    (src / ".venv").symlink_to(installed["venv"])  # a venv with the dependencies
    try:
        dest = base / "stage-venv"
        done = _run(["make", "-s", "install", f"DESTDIR={dest}", "PREFIX=/usr"], src,
                    _env(installed))
        assert done.returncode == 0, done.stderr
        assert (dest / "usr/share/applications/org.disklab.DiskLab.desktop").is_file()
    finally:
        (src / ".venv").unlink()
    bare = base / "bare"
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(bare)], base).returncode == 0
    done = _run(["make", "-s", "install", f"DESTDIR={base / 'stage-bare'}", "PREFIX=/usr",
                 f"PYTHON={bare / 'bin' / 'python'}"], src, _env(installed))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    ours = [line for line in done.stderr.splitlines() if line.startswith("make install:")]
    assert len(ours) == 1 and "psutil" in ours[0] and "make setup" in ours[0]
    assert not (base / "stage-bare").exists()


def test_make_install_stages_valid_desktop_files(staged: Path) -> None:
    _need("desktop-file-validate", "appstreamcli", "xmllint")
    desktop = staged / f"usr/share/applications/{APP_ID}.desktop"
    metainfo = staged / f"usr/share/metainfo/{APP_ID}.metainfo.xml"
    policy = staged / "usr/share/polkit-1/actions/org.disklab.helper.policy"
    for argv in (["desktop-file-validate", str(desktop)],
                 ["appstreamcli", "validate", "--no-net", str(metainfo)],
                 ["xmllint", "--noout", "--nonet", str(policy)]):
        done = _run(argv, staged)
        assert done.returncode == 0, f"{argv}: {done.stdout}{done.stderr}"
    assert "Exec=disklab gui" in desktop.read_text()
    assert (staged / "usr/share/icons/hicolor/scalable/apps/disklab.svg").read_text().startswith(
        ("<svg", "<?xml"))
    text = metainfo.read_text()
    assert f'<release version="{disklab.__version__}"' in text  # the one version string
    assert "docs/screenshots/run.png" in text
    for shot in ("run.png", "compare-chart.png", "configs.png", "library.png"):
        assert (CHECKOUT / "docs/screenshots" / shot).is_file()
    helper = staged / "usr/libexec/disklab/disklab-helper"
    launcher = helper.read_text()
    assert "env -i PATH=" in launcher and "cd /" in launcher  # its own environment, from /
    # isolated, root's site-packages; trust.py run by its path and its boot() before the
    # helper's package is imported (docs/helper-contract.md, point 5)
    assert "/usr/bin/python3 -I -c '" in launcher and "sys.exit(trust.boot())" in launcher
    assert os.access(helper, os.X_OK)
    assert "/usr/libexec/disklab/disklab-helper" in policy.read_text()


def test_the_installed_man_page_renders(staged: Path) -> None:
    _need("man")
    page = staged / "usr/share/man/man1/disklab.1"
    done = _run(["man", "-l", str(page)], staged, {**os.environ, "MANPAGER": "cat",
                                                   "MANWIDTH": "100", "LANG": "C.UTF-8"})
    assert done.returncode == 0, done.stderr
    assert "DISKLAB(1)" in done.stdout
    for words in ("plan validate", "install-desktop", "EXIT STATUS", "XDG_STATE_HOME"):
        assert words in done.stdout, words
    assert done.stderr.strip() == "" or "warning" not in done.stderr


def _complete(script: Path, *words: str) -> list[str]:
    """What bash offers for `disklab WORDS... <TAB>` with the installed completion script."""
    line = " ".join(("disklab", *words))
    program = textwrap.dedent(f"""
        source {script}
        COMP_WORDS=(disklab {' '.join(words)})
        COMP_CWORD={len(words)}
        COMP_LINE={line!r}
        _disklab
        printf '%s\\n' "${{COMPREPLY[@]}}"
    """)
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_bash_completion_lists_the_subcommands(staged: Path) -> None:
    script = staged / "usr/share/bash-completion/completions/disklab"
    top = _complete(script, "")
    assert {"run", "start", "plan", "show", "export", "compare", "gui", "install-desktop",
            "tools", "devices", "sessions", "import"} <= set(top)
    assert set(_complete(script, "plan", "")) >= {"validate", "show", "schema"}
    assert "quick" in _complete(script, "run", "q")
    assert _complete(script, "export", "--format", "h") == ["html"]
    assert "--json" in _complete(script, "run", "--j")


def test_zsh_and_fish_completions(staged: Path) -> None:
    _need("zsh", "fish")
    zsh = staged / "usr/share/zsh/site-functions/_disklab"
    assert zsh.read_text().startswith("#compdef disklab")
    checked = _run(["zsh", "-n", str(zsh)], staged)
    assert checked.returncode == 0, checked.stderr
    fish = staged / "usr/share/fish/vendor_completions.d/disklab.fish"

    def offered(line: str) -> list[str]:
        done = _run(["fish", "--no-config", "-c", f"source {fish}; complete -C '{line}'"], staged)
        assert done.returncode == 0, done.stderr
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

    assert {"run", "start", "plan", "install-desktop"} <= set(offered("disklab "))
    assert set(offered("disklab plan ")) == {"validate", "show", "schema"}
    assert "quick" in offered("disklab run q")


def test_install_desktop_for_one_user(installed: dict[str, Path]) -> None:
    _need("desktop-file-validate")
    env = _env(installed)
    data = Path(env["XDG_DATA_HOME"])
    # what the module's other tests left in the user's data directory (a library) stays
    before = {p for p in data.rglob("*") if p.is_file()}
    done = _run(["disklab", "install-desktop", "--user"], installed["cwd"], env)
    assert done.returncode == 0, done.stderr
    desktop = data / "applications" / f"{APP_ID}.desktop"
    assert f"Exec={installed['venv']}/bin/disklab gui" in desktop.read_text()
    assert _run(["desktop-file-validate", str(desktop)], installed["cwd"]).returncode == 0
    assert (data / "icons/hicolor/scalable/apps/disklab.svg").is_file()
    assert (data / "man/man1/disklab.1").is_file()
    assert not (data / "polkit-1").exists()
    mine = {p for p in data.rglob("*") if p.is_file()} - before
    (data / "applications" / "other.desktop").write_text("[Desktop Entry]\n")
    removed = _run(["disklab", "install-desktop", "--user", "--remove"], installed["cwd"], env)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.count("removed ") == len(mine) == 7
    assert {p for p in data.rglob("*") if p.is_file()} == {
        *before, data / "applications" / "other.desktop"}


def test_the_sdist_holds_resources_license_and_tests(installed: dict[str, Path]) -> None:
    # pip builds wheels only: the sdist comes from the build backend pyproject.toml asks for,
    # in a venv of its own (as `python -m build` would do)
    base = installed["base"]
    backend = base / "build-env"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(backend)], base)
    assert made.returncode == 0, made.stderr
    requires = tomllib.loads((installed["src"] / "pyproject.toml").read_text())[
        "build-system"]["requires"]
    got = _run([sys.executable, "-m", "pip", "--python", str(backend / "bin/python"), "install",
                "-q", *requires], base)
    assert got.returncode == 0, got.stderr
    out = base / "sdist"
    done = _run([str(backend / "bin/python"), "-c", "from setuptools import build_meta; "
                 f"print(build_meta.build_sdist({str(out)!r}))"], installed["src"])
    assert done.returncode == 0, done.stderr
    with tarfile.open(out / done.stdout.strip().splitlines()[-1]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for wanted in ("LICENSE", "constraints.txt", "Makefile", "app/disklab/resources/presets/"
                   "quick.toml", f"app/disklab/resources/{APP_ID}.metainfo.xml",
                   "app/disklab/resources/polkit/disklab-helper", "tests/helpers.py",
                   "scripts/install-system-packages.sh"):
        assert wanted in names, wanted
