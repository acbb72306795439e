# The two entry points of the README: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint bench setup system-packages clean desktop

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[gui,dev]'
	-$(MAKE) -s desktop
	touch $(STAMP)

setup: $(STAMP)

# The launcher and icon for the desktop's menu, pointing at this checkout's venv.
APPS := $(HOME)/.local/share/applications
desktop:
	mkdir -p $(APPS)
	sed "s|^Exec=.*|Exec=$(abspath $(VENV))/bin/disklab gui|" resources/disklab.desktop \
		> $(APPS)/disklab.desktop
	install -Dm644 resources/icons/disklab.svg \
		$(HOME)/.local/share/icons/hicolor/scalable/apps/disklab.svg

system-packages:
	bash scripts/install-system-packages.sh

run: setup
	$(VENV)/bin/disklab start

test: setup system-packages
	$(VENV)/bin/ruff check app tests bench
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q tests

lint: setup
	$(VENV)/bin/ruff check app tests bench

bench: setup system-packages
	$(PY) bench/run.py

clean:
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
