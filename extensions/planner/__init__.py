"""Planning: one client query in, backend queries out, extension values computed in between.

`planner.ExtensionPlanner` is the entry point (`proxy/app.py` builds it over `catalog`'s
registry). `triggers` decides whether a query is looked at at all; `probe` finds the extension
calls and builds the `plan` (steps, then the rewritten text) that `planner` runs: `bind` turns
computed values into parameters in the forms of the backend's dialect (`kernels` does the batch
work, `runners` writes the bound forms into later queries), `split` and `joins` separate probes,
`calls` checks procedure CALLs, `late` renders data-dependent labels, `reduce` keeps the rows an
algorithm CALL needs, `existence` checks NOT NULL constraints, and `probe_cache` keeps probe
answers per graph state. Plugins (compat's rewrites, `late`) see the plan being built only
through `extensions/plan_builder.py`'s `PlanBuilder`. The families (`extensions/<family>/`)
register evaluators in `extensions/registry.py`; the planner never imports the wire.
"""
