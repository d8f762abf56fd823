#!/usr/bin/env bash
# SNLI with a biLM adapted to its text, as the paper does (Peters et al. 2018, section 3.4 and
# appendix A.1: the biLM trained one more epoch on the task's training sentences, labels
# discarded), against table 1's SNLI row with the shipped Wikipedia biLM:
#   1. the premises and hypotheses of the SNLI training split (../shared/data) as a corpus,
#      the dev split's as held-out text;
#   2. one epoch of elmo_plugin/training_configs/bilm/bilm_finetune.jsonnet from the shipped biLM on them;
#   3. allennlp elmo-export of the result;
#   4. experiments/paper_tables.py table1 --tasks snli with that biLM (same budget and seeds
#      as table 1), into $OUT/tables.
#
#   bash experiments/snli_domain_adaptation.sh          # from the project root
# PYTHON (default .venv/bin/python) and OUT (default runs/snli_domain_adaptation) can be set;
# extra arguments go to paper_tables.py (e.g. --extra-seeds 1 2).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-runs/snli_domain_adaptation}
SPLIT=../shared/data/snli_1.0/split
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
mkdir -p "$OUT"

# Every distinct sentence of a split, in file order (a premise recurs for each of its hypotheses).
sentences() {
  "$PYTHON" -c '
import json, sys
seen = {}
for line in open(sys.argv[1], encoding="utf-8"):
    pair = json.loads(line)
    for key in ("sentence1", "sentence2"):
        seen.setdefault(pair[key].strip(), None)
print("\n".join(seen))' "$1" > "$2"
}
sentences "$SPLIT/train.jsonl" "$OUT/train_sentences.txt"
sentences "$SPLIT/dev.jsonl" "$OUT/dev_sentences.txt"

"$PYTHON" -m allennlp train elmo_plugin/training_configs/bilm/bilm_finetune.jsonnet -s "$OUT/bilm" \
  --include-package elmo_plugin --force --file-friendly-logging \
  -o "{\"train_data_path\": \"$OUT/train_sentences.txt\", \"validation_data_path\": \"$OUT/dev_sentences.txt\"}"
"$PYTHON" -m allennlp elmo-export "$OUT/bilm/model.tar.gz" "$OUT/elmo" --include-package elmo_plugin

"$PYTHON" experiments/paper_tables.py table1 --tasks snli --output-dir "$OUT/tables" \
  --bilm-options "$OUT/elmo/options.json" --bilm-weights "$OUT/elmo/weights.hdf5" "$@"
