"""Neo4j's temporal types computed exactly in Python, for what the embedded FalkorDB lacks.

`values` (the types, their text and the driver's values), `parse` (ISO 8601 strings),
`build` (constructors from maps and other values, truncation), `calc` (arithmetic, comparison,
`duration.between`, accessors) and `query` (whole queries on no graph, answered here: the
planner's `constant` plans).
"""
