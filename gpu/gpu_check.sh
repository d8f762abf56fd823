#!/usr/bin/env bash
# The GPU checks in one command, on any machine with an NVIDIA GPU and a CUDA torch: the CUDA
# tests (those marked `gpu`, tests/conftest.py), then benchmarks/gpu_speed.py, then the bulk
# embedding's sorted against file-order batches (where padding is computed: the GPU's dense path).
#   bash gpu/gpu_check.sh [KIT] [LOG_DIR]
# Without KIT (or with "-"), python3 as it is: a profile's venv active, ../shared/data beside the
# project. With KIT (gpu/gpu_kit.sh assembles it), its with_site.sh adds what the machine's
# Python lacks, and its data/ stands in for ../shared/data where that is missing. Output goes to
# the terminal and to LOG_DIR (default .)/gpu_tests.txt, gpu_speed.txt and bulk_order.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
kit=${1:--} logs=${2:-.}
mkdir -p "$logs"
run=(python3)
if [ "$kit" != "-" ]; then
  kit=$(cd "$kit" && pwd)
  run=(bash "$kit/with_site.sh" python3)
  mkdir -p ../shared
  [ -e ../shared/data ] || ln -s "$kit/data" ../shared/data
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
"${run[@]}" -m pytest -q -p no:cacheprovider -m gpu tests 2>&1 | tee "$logs/gpu_tests.txt" | tail -25
"${run[@]}" benchmarks/gpu_speed.py 2>&1 | grep -v "Warning\|warn(" | tee "$logs/gpu_speed.txt"
"${run[@]}" benchmarks/bulk_embedding.py order --sentences 2000 --runs 3 --cuda-device 0 2>&1 \
  | grep -v "Warning\|warn(" | tee "$logs/bulk_order.txt"
