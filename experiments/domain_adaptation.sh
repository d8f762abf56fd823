#!/usr/bin/env bash
# A task with a biLM adapted to its text, as the paper does (Peters et al. 2018, section 3.4
# and appendix A.1: the biLM trained one more epoch on the task's training sentences, labels
# discarded), against table 1's row for the task with the shipped Wikipedia biLM:
#   1. the sentences of the task's training split (../shared/data), read with the task's own
#      dataset reader, as a corpus, its dev split's as held-out text
#      (experiments/task_sentences.py);
#   2. the shipped biLM's held-out perplexity on them as it is (allennlp elmo-perplexity),
#      then one epoch of training_configs/bilm/bilm_finetune.jsonnet from it;
#   3. allennlp elmo-export of the result;
#   4. experiments/paper_tables.py table1 --tasks TASK with that biLM (same budget and seeds
#      as table 1), into $OUT/tables.
#
#   bash experiments/domain_adaptation.sh snli        # from the project root; or srl, ner
# PYTHON (default .venv/bin/python) and OUT (default runs/domain_adaptation/TASK) can be set;
# further arguments go to paper_tables.py (e.g. --extra-seeds 1 2).
set -euo pipefail
cd "$(dirname "$0")/.."
TASK=${1:?usage: domain_adaptation.sh TASK [paper_tables.py arguments]}
shift
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-runs/domain_adaptation/$TASK}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
export ELMO_PLUGIN_DATA=../shared/data  # the packaged configs' data (common/data.libsonnet)
mkdir -p "$OUT"

"$PYTHON" experiments/task_sentences.py "$TASK" train "$OUT/train_sentences.txt"
"$PYTHON" experiments/task_sentences.py "$TASK" dev "$OUT/dev_sentences.txt"

perplexity() {  # perplexity EXPORT_DIR NAME LABEL: into $OUT/perplexity_NAME.json, and printed
  "$PYTHON" -m allennlp elmo-perplexity "$1" "$OUT/dev_sentences.txt" \
    --output-file "$OUT/perplexity_$2.json" > /dev/null
  "$PYTHON" -c 'import json, sys
metrics = json.load(open(sys.argv[1]))
directions = {"forward": "forward_perplexity", "backward": "backward_perplexity", "both": "perplexity"}
print(sys.argv[2], ", ".join(f"{name} {metrics[key]:.1f}" for name, key in directions.items()))' \
    "$OUT/perplexity_$2.json" "held-out perplexity $3:"
}
perplexity elmo_plugin/pretrained/elmo_wikipedia_512x128 shipped "of the shipped biLM"
"$PYTHON" -m allennlp train training_configs/bilm/bilm_finetune.jsonnet -s "$OUT/bilm" \
  --include-package elmo_plugin --force --file-friendly-logging \
  -o "{\"train_data_path\": \"$OUT/train_sentences.txt\", \"validation_data_path\": \"$OUT/dev_sentences.txt\"}" \
  > "$OUT/bilm.log" 2>&1
"$PYTHON" -m allennlp elmo-export "$OUT/bilm/model.tar.gz" "$OUT/elmo" --include-softmax \
  --include-package elmo_plugin
perplexity "$OUT/elmo" adapted "after one epoch on the task's text"

"$PYTHON" experiments/paper_tables.py table1 --tasks "$TASK" --output-dir "$OUT/tables" \
  --bilm-options "$OUT/elmo/options.json" --bilm-weights "$OUT/elmo/weights.hdf5" "$@"
