# One venv for everything; `make install` is idempotent and re-runs when pyproject.toml changes.
VENV ?= .venv
PY := $(VENV)/bin/python
# The extras `make install` adds: dev is the test and lint tools, code the Monty sandbox of code mode; `make demo`
# installs DEMO_EXTRAS (none) instead.
EXTRAS ?= dev,code
DEMO_EXTRAS ?=
TEST_WORKERS ?= 2  # pytest processes: the suite mostly waits on the processes it starts

.PHONY: install demo test lint bench chaos readme clean

install: $(VENV)/.installed-$(EXTRAS)

$(VENV)/.installed-$(EXTRAS): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.$(if $(strip $(EXTRAS)),[$(strip $(EXTRAS))])'
	@touch $@

demo:  # the package and its dependencies only: no pytest, mypy, ruff or playwright (`make test` adds them)
	@$(MAKE) --no-print-directory install EXTRAS='$(DEMO_EXTRAS)'
	$(VENV)/bin/toolwire demo

test: install
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m 'not alone'
	$(PY) -m pytest -q -m alone

CHAOS_TRIALS ?= 5
CHAOS_RUNS ?= 200
chaos: install  # the partition scenarios of tests/cluster (root: network namespaces), more trials and runs than CI
	for i in $$(seq $(CHAOS_TRIALS)); do TOOLWIRE_CHAOS_RUNS=$(CHAOS_RUNS) $(PY) -m pytest -q -s -p no:cacheprovider tests/cluster || exit 1; done

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

bench: install
	$(PY) -m bench.run

readme: install  # the README's table of every command and option, from the click command tree
	$(PY) -m toolwire_client.cli.reference README.md

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
