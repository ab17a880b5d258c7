#!/bin/bash
# Run the official drivers' integration expectations (neo4j-drivers/testkit, tests/neo4j: types,
# temporal, spatial, summary, transactions, bookmarks, sessions) against this proxy.
#
#   scripts/run_testkit.sh TESTKIT_DIR DRIVER_DIR [LOG]
#
# TESTKIT_DIR: a checkout of github.com/neo4j-drivers/testkit; DRIVER_DIR: a checkout of
# github.com/neo4j/neo4j-python-driver (its testkitbackend/ is the driver side). The Python that
# runs them ($TESTKIT_PYTHON, default python3) needs `neo4j`, `freezegun`, `ifaddr`, `lark` and
# `pytz`. The proxy (embedded FalkorDB, throwaway data directory) runs from this checkout; the
# testkit backend listens on its fixed port 9876. Prints unittest's summary; the log keeps the rest.
set -euo pipefail
TESTKIT=$(realpath "$1"); DRIVER=$(realpath "$2"); LOG=${3:-testkit.log}
PY=${TESTKIT_PYTHON:-python3}
HERE=$(cd "$(dirname "$0")/.." && pwd)
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
BOLT=$(free_port); HTTP=$(free_port); DATA=$(mktemp -d)
cleanup() { kill "$PROXY" "$BACKEND" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$DATA"; }
trap cleanup EXIT
(cd "$HERE" && exec .venv/bin/python -m proxy serve --bolt "127.0.0.1:$BOLT" --http "127.0.0.1:$HTTP" \
    --data-dir "$DATA" --password pass) > "$LOG.proxy" 2>&1 &
PROXY=$!
for _ in $(seq 100); do grep -q '^ready' "$LOG.proxy" && break; sleep 0.3; done
(cd "$DRIVER" && exec "$PY" -m testkitbackend) > "$LOG.backend" 2>&1 &
BACKEND=$!
sleep 2
cd "$TESTKIT"
TEST_NEO4J_HOST=127.0.0.1 TEST_NEO4J_PORT=$BOLT TEST_NEO4J_HTTP_PORT=$HTTP TEST_NEO4J_USER=neo4j \
TEST_NEO4J_PASS=pass TEST_NEO4J_VERSION=5.26 TEST_NEO4J_EDITION=community TEST_NEO4J_CLUSTER=False \
TEST_NEO4J_SCHEME=neo4j TEST_DRIVER_NAME=python TEST_BACKEND_HOST=127.0.0.1 TEST_BACKEND_PORT=9876 \
    "$PY" -m unittest discover -v -s tests/neo4j -t . > "$LOG" 2>&1 || true
tail -3 "$LOG"
