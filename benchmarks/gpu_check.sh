#!/usr/bin/env bash
# The GPU checks in one command, for a CUDA machine whose Python has torch and Triton but no
# AllenNLP (../shared/gpu/README.md): the CUDA tests (those marked `gpu`, tests/conftest.py), then
# benchmarks/gpu_speed.py.
#   bash benchmarks/gpu_check.sh KIT [LOG_DIR]
# KIT holds ../shared/gpu's site.tar.xz and with_site.sh, and data/ with what gpu_speed.py reads
# (lm_wikipedia_en_2015/tokenized/valid.txt.xz); it stands in for ../shared/data when that is
# missing (benchmarks/gpu_kit.sh assembles it). Output goes to the terminal and to
# LOG_DIR/gpu_tests.txt, gpu_speed.txt and bulk_order.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
kit=$(cd "$1" && pwd) logs=${2:-.}
mkdir -p ../shared "$logs"
[ -e ../shared/data ] || ln -s "$kit/data" ../shared/data
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
bash "$kit/with_site.sh" python3 -m pytest -q -p no:cacheprovider -m gpu tests 2>&1 \
  | tee "$logs/gpu_tests.txt" | tail -25
bash "$kit/with_site.sh" python3 benchmarks/gpu_speed.py 2>&1 | grep -v "Warning\|warn(" | tee "$logs/gpu_speed.txt"
# Issue 44: sorted against file-order batches where padding is computed (the dense path).
bash "$kit/with_site.sh" python3 benchmarks/bulk_embedding.py order --sentences 2000 --runs 3 \
  --cuda-device 0 2>&1 | grep -v "Warning\|warn(" | tee "$logs/bulk_order.txt"
