"""The embedded FalkorDB backend: two `redis-server`s with the FalkorDB module, a primary and a
replica fed through a relay the proxy owns, behind `core.backend`'s interface.

- `backend`: `FalkorDBBackend`, the hub (lifecycle, routing a statement to a server, the
  writer lock, crash and timeout handling); `result`: `FalkorDBResult`, its records as fetched.
- `statement`: a client query analysed once per text (lifted, guarded, classified) and ready to
  send (command, text, may it write); `graph`: per-graph state; `endpoint`: connections to one
  server; `stream`: a reply read as it is fetched.
- `tx`: explicit transactions as a state machine; `pair`: the primary/replica pair (hold,
  release, rollback, writes past their timeout); `recovery`: its (re)start and re-sync rules;
  `watchdog`: its health checks; `roles`: which server is the primary (the journal, and
  `primary_address` for tools); `relay`: the replication link the proxy owns; `server`: one
  process.
- `guards`: inputs that crash or wedge FalkorDB, refused; `upkeep`: work-arounds for its known
  corruption bugs; `errors`: its client errors as Neo4j's; `params`/`values`: parameters in,
  values out.
"""
