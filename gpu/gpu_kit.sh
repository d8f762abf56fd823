#!/usr/bin/env bash
# Assembles KIT (default .gpu), what gpu/gpu_check.sh needs on a GPU machine that has Python, a
# CUDA torch and Triton but not the rest of the project's environment (no AllenNLP, no package
# index, no ../shared beside the project): an archive of the current profile's other packages
# with its runner (site.tar.xz and with_site.sh, from SHARED/gpu, default ../shared/gpu; its
# make_site.sh rebuilds them from .venv), and the one data file gpu_speed.py reads. KIT is then
# ignored by git (.git/info/exclude), so that it can travel with the working tree:
#   bash gpu/gpu_kit.sh                       # here
#   bash gpu/gpu_check.sh .gpu LOG_DIR        # on the GPU machine, from the project root
# A GPU machine with the project installed (a profile's venv) and ../shared/data needs no kit.
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
