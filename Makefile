# The two entry points of the README: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-long test-gui-hog check lint bench setup system-packages clean desktop \
	install dist

# pyproject.toml gives ranges; constraints.txt the exact versions the tests ran with.
$(STAMP): pyproject.toml setup.py constraints.txt app/disklab/engine/_native.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[gui,dev]'
	-$(MAKE) -s desktop
	touch $(STAMP)

setup: $(STAMP)

# The launcher, icon and AppStream metadata for this user's desktop menu, pointing at this
# checkout's venv (disklab install-desktop --user).
desktop:
	$(VENV)/bin/disklab install-desktop --user

# For packagers: the desktop entry, icon, metainfo, man page, shell completions, polkit policy
# and the helper's launcher in libexec (/usr/libexec/disklab/disklab-helper, the policy's
# exec.path) under $(DESTDIR)$(PREFIX); the Python package itself is installed, root-owned, by
# pip or the distribution's Python tooling. HELPER_PYTHON is the root-owned interpreter the
# helper runs (default with DESTDIR: $(PREFIX)/bin/python3 when the build machine has it, else
# /usr/bin/python3); PYTHON must be able to import disklab's dependencies. Without DESTDIR (as
# root, from a checkout) the launcher runs a root-owned copy of the package instead, made by
# `disklab install-helper` under /usr/local/lib/disklab, with the interpreter PYTHON is (its
# real path: the copied psutil is built for it): the helper refuses to serve as root from code
# a user can change (a venv in a home directory). Nothing is written outside DESTDIR, nor
# under $HOME (no log, no byte code).
PREFIX ?= /usr/local
DESTDIR ?=
# Without PYTHON on the command line, the checkout's venv (made by make run / make setup) when
# there is one: the system python3 usually lacks psutil and platformdirs.
INSTALL_PYTHON := $(if $(filter file,$(origin PYTHON)),$(if $(wildcard $(PY)),$(PY),$(PYTHON)),$(PYTHON))
INSTALL_REAL_PYTHON = $(shell $(INSTALL_PYTHON) -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null)
HELPER_PYTHON ?= $(if $(DESTDIR),$(or $(wildcard $(PREFIX)/bin/python3),/usr/bin/python3),$(INSTALL_REAL_PYTHON))
INSTALL_ENV := PYTHONPATH=$(abspath app) PYTHONDONTWRITEBYTECODE=1
install:
	@$(INSTALL_PYTHON) -c 'import psutil, platformdirs' 2>/dev/null || { echo "make install: \
	$(INSTALL_PYTHON) cannot import DiskLab's dependencies (psutil, platformdirs): run make setup \
	first, or give PYTHON=/path/to/a/python/that/has/them" >&2; exit 2; }
	$(INSTALL_ENV) $(INSTALL_PYTHON) -m disklab install-desktop --system \
		--prefix $(PREFIX) --destdir "$(DESTDIR)" --python $(HELPER_PYTHON)
	if [ -z "$(DESTDIR)" ]; then $(INSTALL_ENV) $(INSTALL_PYTHON) -m disklab \
		install-helper --python $(HELPER_PYTHON); fi

# What a distribution builds from and what a user installs (README, "Install"): the sdist
# (with the tests; installing it builds the engine's C loop where there is a compiler) and a
# pure wheel built from it, py3-none-any, for every Python the classifiers name (the engine's
# Python loop). `python -m build` in an isolated environment (setuptools from the package index
# or pip's cache). pipx install 'dist/disklab-VERSION-py3-none-any.whl[gui]'.
dist: setup
	rm -rf dist build app/*.egg-info
	DISKLAB_PURE_WHEEL=1 $(PY) -m build -q --outdir dist . >/dev/null
	@ls dist/disklab-*.tar.gz dist/disklab-*-py3-none-any.whl

system-packages:
	bash scripts/install-system-packages.sh

run: setup
	$(VENV)/bin/disklab start

# Three tiers (README, "Tests"). make test: every module, unit, integration and GUI, with the
# short form of each long test (the `long` marker is deselected in pyproject.toml), hypothesis
# at its CI profile; the 15 slowest tests at the end. JOBS tests at a time (pytest-xdist; most
# of the time is real tools running and waiting): each test file in one worker (its module's
# fixtures made once), each worker with loopback addresses and XDG directories of its own, a
# test marked `alone` while no other runs (tests/conftest.py). JOBS=1: one at a time.
JOBS ?= 2
# system packages first: make setup builds the engine's C loop with their compiler
test: system-packages setup
	$(VENV)/bin/ruff check app tests bench
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q $(if $(filter-out 1,$(JOBS)),-n $(JOBS) --dist loadfile --no-loadscope-reorder) --durations=15 tests

# For a maintainer before a release: the long forms only (the 600-second progress matrix, the
# full soak) and every fuzz test at the long hypothesis profile.
test-long: system-packages setup
	$(PY) -m pytest -q --durations=15 -m "long or hypothesis" --hypothesis-profile=long tests

# The edit loop, under a minute: lint, the format and the types of the packages [tool.mypy]
# names (pyproject.toml), import contracts and the unit tests that start no
# process (tests/no_processes.py skips a test at its first fork or exec).
check: setup
	$(VENV)/bin/ruff check app tests bench
	$(VENV)/bin/ruff format --check app/disklab/core/vocab
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(PY) -m pytest -q -p tests.no_processes --durations=5 tests/unit tests/test_isolation.py

# The GUI tests RUNS times in a row with every CPU kept busy by a hog the script starts and kills
# (issue 26's crash showed only on a busy machine); prints crashes and failures per round and
# the tally; JOBS test workers as in make test (JOBS=1: one process, one test at a time).
# Ctrl-C stops after the round under way (the tally of the rounds run); a second, at once.
# Not for a machine where others are timing things.
RUNS ?= 20
test-gui-hog: setup
	$(PY) scripts/gui_hog.py --runs $(RUNS) $(if $(MINUTES),--minutes $(MINUTES)) -- tests/gui \
		$(if $(filter-out 1,$(JOBS)),-n $(JOBS) --dist loadfile --no-loadscope-reorder)

lint: setup
	$(VENV)/bin/ruff check app tests bench

bench: system-packages setup
	$(PY) bench/run.py

clean:
	-test -x $(VENV)/bin/disklab && $(VENV)/bin/disklab install-desktop --user --remove
	rm -rf $(VENV) build *.egg-info app/*.egg-info

# The soak, by hand (not in CI): random SIGKILLs and cancels of real runs, hostile plans and
# imports; prints the figures that must all be 0. A small one runs in `make test`
# (tests/integration/test_soak.py). Sizes: make soak KILLS=100 CANCELS=50 PLANS=200 IMPORTS=100
KILLS ?= 100
CANCELS ?= 50
PLANS ?= 200
IMPORTS ?= 100
.PHONY: soak
soak: setup system-packages
	$(PY) scripts/soak.py --kills $(KILLS) --cancels $(CANCELS) --plans $(PLANS) \
		--imports $(IMPORTS)

# The README's pictures: every page of the real window under Xvfb after a small real session
# (tests/gui/test_screenshots.py), written over docs/screenshots/*.png. Look at them before
# committing; the real-input test (tests/gui/test_real_input.py) keeps its own screenshots too.
.PHONY: screenshots
screenshots: setup
	DISKLAB_SCREENSHOTS=$(abspath docs/screenshots) $(PY) -m pytest -q -p no:cacheprovider \
		tests/gui/test_screenshots.py
