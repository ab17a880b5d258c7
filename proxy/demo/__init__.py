"""The Sodir demo knowledge graph (`cypher-proxy demo`) and its seed question."""

SEED_QUESTION = ("How much smaller is the TROLL field's production typically during the summer "
                 "months compared with the rest of the year?")

#: describe() + this one query answer the seed question.
SEED_QUERY = """\
MATCH (f:Field {title: 'TROLL'})<-[:OF_FIELD]-(p:ProductionProfile)
UNWIND range(2015, 2024) AS year
WITH p, year, toString(year) AS y
WITH p, year, ts_avg(p.prd_oe_net, y) AS yearly_avg,
     ts_avg(p.prd_oe_net, y + '-6', y + '-8') AS summer_avg
WHERE yearly_avg > 0
WITH year, summer_avg / yearly_avg AS ratio
RETURN avg(ratio) AS mean_ratio, std(ratio) AS std_ratio, count(ratio) AS n_years,
       1.0 - avg(ratio) AS mean_reduction"""
