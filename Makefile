# One entry point for people and CI. `make demo` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install browser demo serve test bench conformance clean

$(STAMP): pyproject.toml tests/js/package.json tests/stock/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m pip install --quiet --target .cache/neo4j6 'neo4j[http]>=6,<7'
	$(PYTHON) -m venv .cache/stock        # stock agent tools: their own env (they need neo4j 6.x)
	.cache/stock/bin/python -m pip install --quiet -r tests/stock/requirements.txt
	cd tests/js && npm install --silent --no-audit --no-fund
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/cypher-proxy demo

serve: install
	$(VENV)/bin/cypher-proxy serve

# Headless Chromium for tests/integration/test_browser.py (which skips, saying why, without it).
browser:
	@command -v chromium >/dev/null 2>&1 || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
	  echo "chromium could not be installed: the browser test will be skipped"

test: install browser
	$(PY) -m pytest -q -p no:cacheprovider

bench: install
	$(PY) -m bench

conformance: install
	$(PY) -m conformance

clean:
	rm -rf $(VENV) .cache tests/js/node_modules build *.egg-info
