"""Prints the ELMo layer weights a task model learned, from its metrics.json, and its F1; with
the CoNLL files it was validated and tested on (2nd and 3rd arguments), how many sentences each
score is on, so that a score on a handful of sentences is not read as a result."""

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


def sentences_in(conll_file: str) -> int:
    """The sentences of a CoNLL-2003 file: its blocks of lines but the -DOCSTART- ones."""
    with open(conll_file, encoding="utf-8") as handle:
        blocks = handle.read().split("\n\n")
    return sum(1 for block in blocks if block.strip() and not block.startswith("-DOCSTART-"))


evaluated_on = dict(zip(("best_validation", "test"), sys.argv[2:4]))
for key, value in sorted(scores.items()):
    split = "test" if key.startswith("test") else "best_validation"
    on = evaluated_on.get(split)
    note = f"  (on the {sentences_in(on)} sentences of {on}: it learns, no more)" if on else ""
    print(f"  {key}: {value:.4f}{note}")
