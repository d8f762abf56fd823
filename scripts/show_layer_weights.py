"""Prints the ELMo layer weights a task model learned, from its metrics.json."""

import json
import sys
import warnings

with warnings.catch_warnings():
    # Importing AllenNLP warns about torch deprecations that are none of this script's output.
    warnings.simplefilter("ignore", FutureWarning)
    from elmo_plugin.elmo import parse_layer_weight_metric_name

metrics = json.load(open(sys.argv[1]))
weights = {}
for key, value in metrics.items():
    name = parse_layer_weight_metric_name(key)
    if name is not None and name.phase == "training":
        elmo = "" if name.elmo is None else f"elmo{name.elmo}_"
        weights[key] = (f"{elmo}mix{name.mix}_{name.layer}", value)
print("learned ELMo mix (softmax-normalised layer weights, and gamma):")
for key, (label, value) in sorted(weights.items()):
    print(f"  {label:<16} {value:.4f}")
scores = {
    k: v
    for k, v in metrics.items()
    if k.startswith("test_f1") or k.startswith("best_validation_f1")
}
for key, value in sorted(scores.items()):
    print(f"  {key}: {value:.4f}")
