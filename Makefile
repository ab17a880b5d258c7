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

# neo4j-drivers/testkit's commit whose boltstub plays the upstream Neo4j in tests
TESTKIT := 0c5fb949219b19a66553b9302aa77e40045d9487

.PHONY: install browser demo serve test fuzz bench conformance clean

$(BASE): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(BASE)

# neo4j 6.x is tested as a client only: its own directory, installed without resolving against
# the proxy's neo4j 5 (no pip conflict). Its requirements: pytz, and for [http] aiohttp (the
# proxy's own) and urllib3.
$(STAMP): $(BASE) tests/js/package.json tests/stock/requirements.txt tests/mcp_agent/requirements.txt \
          tests/stock/requirements-agents.txt tests/stock/requirements-llama.txt tests/boltstub-requirements.txt
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m pip install --quiet --no-deps --upgrade --target .cache/neo4j6 'neo4j>=6,<7' pytz urllib3
	$(PYTHON) -m venv .cache/stock        # stock agent tools: their own env (they need neo4j 6.x)
	.cache/stock/bin/python -m pip install --quiet -r tests/stock/requirements.txt
	$(PYTHON) -m venv .cache/mcp-agent    # langchain-mcp-adapters: its own env (it needs mcp 1.x)
	.cache/mcp-agent/bin/python -m pip install --quiet -r tests/mcp_agent/requirements.txt
	$(PYTHON) -m venv .cache/agents       # neomodel, mcp-neo4j-memory (neo4j 6.1)
	.cache/agents/bin/python -m pip install --quiet -r tests/stock/requirements-agents.txt
	$(PYTHON) -m venv .cache/llama        # llama-index's graph stores (neo4j 5)
	.cache/llama/bin/python -m pip install --quiet -r tests/stock/requirements-llama.txt
	cd tests/js && npm install --silent --no-audit --no-fund
	$(PYTHON) -m venv .cache/boltstub     # testkit's Bolt stub server, the scripted upstream Neo4j
	.cache/boltstub/bin/python -m pip install --quiet -r tests/boltstub-requirements.txt
	rm -rf .cache/boltstub/src .cache/boltstub/testkit.tar.gz && mkdir -p .cache/boltstub/src
	# GitHub may be out of reach (PyPI, Debian and npm only): then the boltstub tests skip, saying so
	if curl -fsSL -o .cache/boltstub/testkit.tar.gz https://github.com/neo4j-drivers/testkit/archive/$(TESTKIT).tar.gz; then \
	  tar -xzf .cache/boltstub/testkit.tar.gz -C .cache/boltstub/src --strip-components=1 testkit-$(TESTKIT)/boltstub; \
	else echo "testkit not reachable: tests/integration/test_neo4j_stub_upstream.py will skip"; fi
	touch $(STAMP)

install: $(STAMP)

demo: $(BASE)
	$(VENV)/bin/cypher-proxy demo

serve: $(BASE)
	$(VENV)/bin/cypher-proxy serve

# Headless Chromium for tests/integration/test_browser.py (which skips, saying why, without it).
browser:
	@command -v chromium >/dev/null 2>&1 || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
	  echo "chromium could not be installed: the browser test will be skipped"

test: install browser
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
