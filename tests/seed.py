"""The seed question's answer computed independently, with pandas on Sodir's CSV."""

from __future__ import annotations

import pandas as pd

from tests.harness import REPO


def expected_seed_answer() -> dict:
    """mean_ratio, std_ratio, n_years, mean_reduction of TROLL's summer (Jun-Aug) vs yearly
    average oil-equivalent production, 2015-2024 (what `proxy.demo.SEED_QUERY` computes)."""
    csv = REPO / "examples" / "sodir" / "sodir_current" / "field_production_monthly.csv.gz"
    frame = pd.read_csv(csv, encoding="utf-8-sig")
    troll = frame[(frame.prfInformationCarrier == "TROLL") & frame.prfYear.between(2015, 2024)]
    ratios = []
    for _, months in troll.groupby("prfYear"):
        yearly = months.prfPrdOeNetMillSm3.mean()
        summer = months[months.prfMonth.between(6, 8)].prfPrdOeNetMillSm3.mean()
        if yearly > 0:
            ratios.append(summer / yearly)
    series = pd.Series(ratios)
    return {"mean_ratio": series.mean(), "std_ratio": series.std(ddof=1), "n_years": len(series),
            "mean_reduction": 1.0 - series.mean()}
