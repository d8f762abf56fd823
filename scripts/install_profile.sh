#!/usr/bin/env bash
# Installs the project into a virtual environment with one of the two profiles (README "Install"):
#   bash scripts/install_profile.sh current|allennlp-2.10 VENV_PYTHON [ALLENNLP_MODELS_DIR]
# These are the same steps a user can type by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=$1 python=$2 models_dir=${3:-}
pin="-c requirements/$profile.txt"
case $profile in
  current)
    # requirements/current.txt pins what was tested on Python 3.12 (numpy 2.5 has no 3.11
    # build, for one); on another Python, pip resolves requirements/current.in afresh.
    version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    if [ "$version" != 3.12 ]; then
      echo "install_profile.sh: Python $version: resolving requirements/current.in without the 3.12 pins" >&2
      pin=""
    fi
    # pip cannot loosen allennlp's pins (torch<1.13, spacy<3.4, ...): its real needs, with the
    # caps that guard real breakages, are requirements/current.in; allennlp goes in without deps.
    "$python" -m pip install -q $pin -r requirements/current.in
    "$python" -m pip install -q --no-deps allennlp==2.10.1
    "$python" -m pip install -q --no-deps -e . ;;
  allennlp-2.10)
    "$python" -m pip install -q $pin --upgrade pip setuptools wheel
    "$python" -m pip install -q $pin -r requirements/allennlp-2.10.in
    "$python" -m pip install -q $pin -e . ;;
  *) echo "install_profile.sh: unknown profile '$profile' (current or allennlp-2.10)" >&2; exit 2 ;;
esac
if [ -n "$models_dir" ]; then
  rm -rf "$models_dir"
  "$python" -m pip install -q --no-deps --target "$models_dir" allennlp-models==2.10.1
  if [ "$profile" = current ]; then
    # ELMoForManyLangs, for the EFML parity tests only (tests/efml_reference.py imports it
    # with a no-op `overrides`), beside allennlp-models, off the default import path.
    efml_dir=$(dirname "$models_dir")/elmoformanylangs
    rm -rf "$efml_dir"
    "$python" -m pip install -q --no-deps --target "$efml_dir" elmoformanylangs==0.0.4.post2
  fi
  # flair and the four small packages its import needs beyond ours, for the old-client tests
  # only (tests/flair_reference.py says what else stands in while it imports), off the
  # default import path.
  flair_dir=$(dirname "$models_dir")/flair
  rm -rf "$flair_dir"
  "$python" -m pip install -q --no-deps --target "$flair_dir" \
    flair==0.15.1 deprecated==1.3.1 segtok==1.5.11 pptree==3.1 wrapt==2.5.2
fi
