"""Neo4j's HTTP surface: discovery, the Query API v2, the transactional endpoint, and Bolt over
WebSocket on the Bolt port, served with aiohttp on the proxy's one event loop.

`server.HttpFrontEnd` assembles it; `routes` is the URL table; `query_api` and `tx_endpoint`
turn JSON into `Session` calls and results back into JSON (`summary`, and the value codec
`proxy/json_values.py` shared with MCP); `middleware` gives every error Neo4j's shape; `websocket` adapts a WebSocket to the Bolt
server's reader/writer; `transactions` keeps explicit transactions between requests; `mcp`
serves the MCP tools (`proxy/mcp/`) at `/mcp`.
"""
