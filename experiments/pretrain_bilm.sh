#!/usr/bin/env bash
# The project's pretrained biLM (elmo_plugin/pretrained/elmo_wikipedia_512x128/), from scratch:
#   1. train training_configs/bilm/bilm_wikipedia_cpu.jsonnet on the tokenised Wikipedia corpus
#      of ../shared/data (one thread, "epochs" of 300 batches so a checkpoint lands every few
#      minutes; rerun this script after an interruption and it resumes with --recover),
#   2. archive the best checkpoint (also when the run was stopped before its last epoch),
#   3. export it with `allennlp elmo-export` (options.json, weights.hdf5, and the softmax in
#      16 bits with its vocabulary, so that it can be fine-tuned: 32 MB in all),
#   4. measure held-out perplexity, forward / backward / both, with the exact softmax on the
#      corpus's test split and on WikiText-2 test.
#
#   bash experiments/pretrain_bilm.sh                 # EPOCHS=9 (what the shipped model had)
#   EPOCHS=40 RUN=runs/bilm_longer OUT=/tmp/elmo bash experiments/pretrain_bilm.sh
#   STAGES="archive export evaluate" bash experiments/pretrain_bilm.sh   # after stopping step 1
#
# CONFIG picks another config (bilm_wikipedia_continue.jsonnet trains the shipped biLM further),
# TRAIN another training corpus (a file or a glob, e.g. shards not seen yet), COMPUTE_DTYPE the
# training's dtype when it should not be the config's (float32 on a CPU without native bfloat16,
# where bfloat16 is emulated and slower).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
EPOCHS=${EPOCHS:-9}
BATCHES=${BATCHES:-300}  # batches an "epoch": a checkpoint and a validation each
RUN=${RUN:-runs/pretrained_bilm}
OUT=${OUT:-elmo_plugin/pretrained/elmo_wikipedia_512x128}
STAGES=${STAGES:-"train archive export evaluate"}
CONFIG=${CONFIG:-training_configs/bilm/bilm_wikipedia_cpu.jsonnet}
TRAIN=${TRAIN:-}
COMPUTE_DTYPE=${COMPUTE_DTYPE:-}
THREADS=${THREADS:-1}  # torch threads for training: 1 keeps a core free for other work
DATA=../shared/data
export ELMO_PLUGIN_DATA=$DATA  # where the packaged configs read it (common/data.libsonnet)
PLUGIN="--include-package elmo_plugin"

stage() { [[ " $STAGES " == *" $1 "* ]]; }

if stage train; then
  recover=()
  [[ -f "$RUN/config.json" ]] && recover=(--recover)
  extra=""
  [[ -n "$TRAIN" ]] && extra=", \"train_data_path\": \"$TRAIN\""
  [[ -n "$COMPUTE_DTYPE" ]] && extra+=", \"model.compute_dtype\": \"$COMPUTE_DTYPE\""
  OMP_NUM_THREADS=$THREADS allennlp train "$CONFIG" -s "$RUN" $PLUGIN "${recover[@]}" \
    -o "{\"data_loader.batches_per_epoch\": $BATCHES, \"trainer.num_epochs\": $EPOCHS$extra}"
fi

if stage archive && [[ ! -f "$RUN/model.tar.gz" ]]; then
  python - "$RUN" <<'EOF'
import sys
from allennlp.models.archival import archive_model
archive_model(sys.argv[1], weights="best.th")
EOF
fi

if stage export; then
  mkdir -p "$OUT"
  allennlp elmo-export "$RUN/model.tar.gz" "$OUT" --include-softmax --softmax-float16 $PLUGIN
  cp "$RUN/metrics.json" "$OUT/training_metrics.json" 2>/dev/null \
    || cp "$(ls -t "$RUN"/metrics_epoch_*.json | head -n 1)" "$OUT/training_metrics.json"
  grep -E "Epoch [0-9]+/|_perplexity +\||Epoch duration" "$RUN/out.log" > "$OUT/training_log.txt" || true
fi

if stage evaluate; then
  # Every held-out sentence, and the biLM in float32 (exact) however it was trained.
  everything='{"validation_dataset_reader.max_instances": null, "model.compute_dtype": "float32"}'
  for split in "wikipedia_test:$DATA/lm_wikipedia_en_2015/tokenized/test.txt.xz" \
               "wikitext2_test:$DATA/wikitext-2/wiki.test.tokens"; do
    name=${split%%:*}
    OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} allennlp evaluate "$RUN/model.tar.gz" "${split#*:}" $PLUGIN \
      -o "$everything" --output-file "$OUT/perplexity_$name.json" 2>&1 | tail -n 1
    echo "$name: $(cat "$OUT/perplexity_$name.json")"
  done
fi
