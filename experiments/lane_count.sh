#!/usr/bin/env bash
# With more lanes (the GPU's throughput setting) does the biLM reach
# the held-out perplexity that bilm-tf's 128 lanes reach after the same number of tokens, and
# with which learning rate? experiments/lane_count.jsonnet at TOKENS training tokens per run
# (default 1,280,000: 500 batches of 128 lanes), one thread per run, two runs at a time.
# A finished run (its metrics.json) is kept; an interrupted one starts again.
#   bash experiments/lane_count.sh        # runs in runs/lane_count (kept out of git)
#   python experiments/lane_count_table.py runs/lane_count --keep   # records: experiments/results/lane_count/runs.json
set -euo pipefail
cd "$(dirname "$0")/.."
tokens=${TOKENS:-1280000}
results=${RESULTS:-runs/lane_count}
mkdir -p "$results"
run() {
  local lanes=$1 lr=$2 dir="$results/lanes${1}_lr${2}"
  [ -f "$dir/metrics.json" ] && return 0
  rm -rf "$dir"
  LANES=$lanes LR=$lr BATCHES=$((tokens / (lanes * 20))) OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
    allennlp train experiments/lane_count.jsonnet -s "$dir" --include-package elmo_plugin \
    > "$results/lanes${lanes}_lr${lr}.log" 2>&1
}
run 128 0.2 & run 512 0.2 & wait
run 512 0.4 & run 2048 0.4 & wait
run 512 0.8
