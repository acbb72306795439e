"""`make dist` as a distribution and a user take it (issue 46): an sdist with the tests and the
C loop's source, and a pure py3-none-any wheel built from it. A clean venv of each Python the
classifiers name (3.11, 3.12, 3.13; a Python this machine lacks is skipped, saying so)
installs the wheel and runs `disklab start`; the sdist installed builds the engine's C loop;
pipx installs the wheel. The wheel was cp311-cp311-linux_x86_64 (refused by Python 3.13's pip)
and there was no sdist."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import disklab

pytestmark = pytest.mark.slow

CHECKOUT = Path(__file__).resolve().parents[2]
VERSION = disklab.__version__


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def classifier_pythons() -> list[str]:
    """The Python versions the classifiers name ('3.11', ...)."""
    meta = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["project"]
    prefix = "Programming Language :: Python :: "
    return [c.removeprefix(prefix) for c in meta["classifiers"]
            if c.startswith(prefix) and c.removeprefix(prefix).count(".") == 1]


def interpreter(version: str) -> str | None:
    """An interpreter of `version` on this machine (pyenv's, else on PATH), or None."""
    found = sorted(glob.glob(f"/root/.pyenv/versions/{version}.*/bin/python{version}"))
    return found[-1] if found else shutil.which(f"python{version}")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """`make dist` in a copy of the checkout (its venv borrowed: not made again)."""
    if not (CHECKOUT / ".venv/.installed").exists():
        pytest.skip("needs the checkout's venv (make setup)")
    base = tmp_path_factory.mktemp("dist")
    src = base / "src"
    listed = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                  CHECKOUT)
    assert listed.returncode == 0, listed.stderr
    for name in filter(None, listed.stdout.split("\0")):
        if (CHECKOUT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(CHECKOUT / name, src / name)
    (src / ".venv").symlink_to(CHECKOUT / ".venv")
    done = _run(["make", "-s", "dist", "-o", ".venv/.installed"], src, timeout=900)
    assert done.returncode == 0, done.stderr
    yield src / "dist"


def user_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "DISPLAY", "WAYLAND_DISPLAY", "DISKLAB_LIBRARY",
                        "VIRTUAL_ENV") and not k.startswith(("XDG_", "PIPX_"))}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"),
               XDG_STATE_HOME=str(home / "state"), XDG_CONFIG_HOME=str(home / "config"))
    return env


def test_dist_is_an_sdist_with_the_tests_and_a_pure_wheel(dist: Path) -> None:
    assert sorted(p.name for p in dist.iterdir()) == [
        f"disklab-{VERSION}-py3-none-any.whl", f"disklab-{VERSION}.tar.gz"]
    with tarfile.open(dist / f"disklab-{VERSION}.tar.gz") as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for wanted in ("setup.py", "pyproject.toml", "app/disklab/engine/_native.c",
                   "tests/helpers.py", "tests/unit/test_engine_native.py", "Makefile",
                   "constraints.txt", "app/disklab/resources/presets/quick.toml"):
        assert wanted in names, wanted


@pytest.mark.parametrize("version", classifier_pythons())
def test_a_clean_venv_of_each_python_installs_the_wheel_and_starts(
        dist: Path, version: str, tmp_path: Path) -> None:
    python = interpreter(version)
    if python is None:
        pytest.skip(f"no Python {version} on this machine")
    venv = tmp_path / "venv"
    assert _run([python, "-m", "venv", str(venv)], tmp_path).returncode == 0
    env = user_env(tmp_path / "home")
    pip = _run([str(venv / "bin/python"), "-m", "pip", "install", "-q",
                str(dist / f"disklab-{VERSION}-py3-none-any.whl")], tmp_path, env)
    assert pip.returncode == 0, pip.stderr
    started = _run([str(venv / "bin/disklab"), "start"], tmp_path, env, timeout=600)
    assert started.returncode == 0, started.stdout[-2000:] + started.stderr[-2000:]
    assert "No display" in started.stdout and "(finished)" in started.stdout


def test_the_sdist_installs_and_builds_the_c_loop(dist: Path, tmp_path: Path) -> None:
    python = interpreter(classifier_pythons()[-1]) or sys.executable
    if shutil.which("cc") is None:
        pytest.skip("no C compiler: the sdist would install the Python loop only")
    venv = tmp_path / "venv"
    assert _run([python, "-m", "venv", str(venv)], tmp_path).returncode == 0
    env = user_env(tmp_path / "home")
    pip = _run([str(venv / "bin/python"), "-m", "pip", "install", "-q",
                str(dist / f"disklab-{VERSION}.tar.gz")], tmp_path, env, timeout=900)
    assert pip.returncode == 0, pip.stderr
    native = _run([str(venv / "bin/python"), "-c", "import disklab.engine._native as n; "
                   "print(n.__file__)"], tmp_path, env)
    assert native.returncode == 0 and native.stdout.strip().endswith(".so"), native.stderr


def test_pipx_installs_the_wheel(dist: Path, tmp_path: Path) -> None:
    pipx = shutil.which("pipx") or str(Path(sys.executable).parent / "pipx")
    if not Path(pipx).exists():
        pytest.fail("pipx is not installed: make setup installs it (the dev extra)")
    env = user_env(tmp_path / "home")
    env.update(PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"),
               PIPX_MAN_DIR=str(tmp_path / "man"))
    done = _run([pipx, "install", str(dist / f"disklab-{VERSION}-py3-none-any.whl")],
                tmp_path, env, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    version = _run([str(tmp_path / "bin/disklab"), "--version"], tmp_path, env)
    assert version.returncode == 0 and version.stdout.strip() == f"disklab {VERSION}"
