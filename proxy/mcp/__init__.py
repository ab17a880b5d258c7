"""The MCP front end: describe() and Cypher as tools for agents (Model Context Protocol).

`tools` is the tool table, `results` writes rows within a row and token budget, `server`
builds the `mcp` SDK's server over them; the transports are `proxy/http/mcp.py` (Streamable
HTTP at `/mcp`) and `stdio` (`cypher-proxy mcp`). A tool call runs through a `Session`, as a
Query API request does.
"""
