# One entry point for people and CI. `make demo` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# BASE: the proxy and what it needs to run (make demo, make serve); STAMP: plus the test extras,
# the neo4j 6.x client and the JS driver (make test).
BASE   := $(VENV)/.installed-base
STAMP  := $(VENV)/.installed
# TCK=path: the openCypher TCK's features directory (default ../shared/tck; tests skip without it)
ifdef TCK
export TCK_DIR := $(abspath $(TCK))
endif

.PHONY: install demo serve test fuzz bench conformance clean

$(BASE): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(BASE)

# neo4j 6.x is tested as a client only: its own directory, no resolution against the proxy's
# neo4j 5 (its one requirement is pytz).
$(STAMP): $(BASE) tests/js/package.json
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m pip install --quiet --no-deps --upgrade --target .cache/neo4j6 'neo4j>=6,<7' pytz
	cd tests/js && npm install --silent --no-audit --no-fund
	touch $(STAMP)

install: $(STAMP)

demo: $(BASE)
	$(VENV)/bin/cypher-proxy demo

serve: $(BASE)
	$(VENV)/bin/cypher-proxy serve

test: install
	$(PY) -m pytest -q -p no:cacheprovider

# The long form of tests/fuzz (make test runs a bounded sample).
fuzz: install
	FUZZ_LONG=1 $(PY) -m pytest -q -p no:cacheprovider tests/fuzz

bench: install
	$(PY) -m bench

conformance: install
	$(PY) -m conformance

clean:
	rm -rf $(VENV) .cache tests/js/node_modules build *.egg-info
