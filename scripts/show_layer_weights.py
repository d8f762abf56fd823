"""Prints the ELMo layer weights a task model learned, from its metrics.json."""
import json
import sys

metrics = json.load(open(sys.argv[1]))
weights = {k: v for k, v in metrics.items() if "_elmo_mix" in k and k.startswith("training_")}
print("learned ELMo mix (softmax-normalised layer weights, and gamma):")
for key, value in sorted(weights.items()):
    print(f"  {key.replace('training__elmo_', ''):<16} {value:.4f}")
scores = {k: v for k, v in metrics.items() if k.startswith("test_f1") or k.startswith("best_validation_f1")}
for key, value in sorted(scores.items()):
    print(f"  {key}: {value:.4f}")
