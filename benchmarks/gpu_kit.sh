#!/usr/bin/env bash
# Assembles what benchmarks/gpu_check.sh needs on the GPU machine the device tool lends (Python,
# CUDA torch and Triton, but no AllenNLP, no package index and no ../shared) into KIT (default
# .gpu): ../shared/gpu's site.tar.xz and with_site.sh, and the one data file gpu_speed.py reads.
# KIT is then ignored by git (.git/info/exclude), so that a run names it in `carry`:
#   bash benchmarks/gpu_kit.sh                      # here, once a session
#   bash benchmarks/gpu_check.sh .gpu $OUT          # there (carry: [".gpu"])
set -euo pipefail
cd "$(dirname "$0")/.."
kit=${1:-.gpu} shared=${SHARED:-../shared}
corpus=data/lm_wikipedia_en_2015/tokenized
mkdir -p "$kit/$corpus" .git/info
cp "$shared/gpu/site.tar.xz" "$shared/gpu/with_site.sh" "$kit/"
cp "$shared/$corpus/valid.txt.xz" "$kit/$corpus/"
grep -qxF "/$kit/" .git/info/exclude 2>/dev/null || echo "/$kit/" >> .git/info/exclude
git status --porcelain --ignored "$kit" | grep -q '^!!' || { echo "$kit is not ignored" >&2; exit 1; }
du -sh "$kit"
