"""Prints what a biLM pretraining run reached, from its metrics.json: epochs, perplexities and
the training time."""

import json
import sys

metrics = json.load(open(sys.argv[1]))
epochs = metrics.get("epoch", -1) + 1
seconds = sum(
    float(x) * 60**i
    for i, x in enumerate(reversed(metrics.get("training_duration", "0").split(":")))
)
print(f"trained {epochs} epoch(s) in {seconds:.0f} s; perplexity (training / validation):")
for name in ("perplexity", "forward_perplexity", "backward_perplexity"):
    training, validation = metrics.get(f"training_{name}"), metrics.get(f"validation_{name}")
    if training is not None or validation is not None:
        shown = [f"{v:.1f}" if v is not None else "-" for v in (training, validation)]
        print(f"  {name:<20} {shown[0]:>9} / {shown[1]}")
