#!/usr/bin/env bash
# Table 1's SRL pair (baseline, +ELMo; UP English-EWT, seed 13370) again with one thing changed,
# each diagnostic into its own directory under $OUT with its table1.md. Written to find out why
# ELMo did not help SRL, which was a config bug (docs/paper_tables.md, "SRL: the bug that hid
# ELMo's gain"); the results measured before the fix are withdrawn. The first four train all 20
# epochs (no early stopping), the last one keeps table 1's patience:
#   full_budget  nothing else changed
#   head         the head-word label mode (CoNLL-2009 style: the role on each argument's head)
#                instead of spans: ELMo's effect on labels apart from span boundaries
#   small        ELMo at the input of a smaller SRL model (one alternating-LSTM layer of 100),
#                which has less capacity of its own to learn from 1,336 sentences
#   adapted      the biLM adapted to the task's text first (experiments/domain_adaptation.sh)
#   dropout      ELMo's dropout 0.1 instead of 0.5 (AllenNLP's SRL-with-ELMo configs use 0.1)
# (`paper_tables.py finetuned` trains SRL with the biLM fine-tuned: srl/srl_elmo_finetuned.jsonnet.)
#
#   bash experiments/srl_elmo_diagnostics.sh [full_budget head small adapted dropout]
# PYTHON (default .venv/bin/python) and OUT (default runs/srl_elmo_diagnostics) can be set;
# without names it runs the first four. DRY_RUN=1 prints the `allennlp train` commands instead of
# training (not for `adapted`, which trains regardless).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-runs/srl_elmo_diagnostics}
DIAGNOSTICS=${*:-full_budget head small adapted}
ELMO=model.text_field_embedder.token_embedders.elmo
export ELMO_PLUGIN_DATA=../shared/data  # the packaged configs' data (common/data.libsonnet)

FULL_BUDGET=(--overrides 'srl={"trainer.patience": null}')

table1_srl() {  # table1_srl NAME [paper_tables.py arguments]
  local name=$1
  shift
  "$PYTHON" experiments/paper_tables.py table1 --tasks srl --output-dir "$OUT/$name" "$@" \
    ${DRY_RUN:+--dry-run}
}

for diagnostic in $DIAGNOSTICS; do
  case $diagnostic in
    full_budget) table1_srl full_budget "${FULL_BUDGET[@]}" ;;
    head) table1_srl head "${FULL_BUDGET[@]}" --set srl.label_mode=head ;;
    small) table1_srl small "${FULL_BUDGET[@]}" --set srl.hidden_size=100 srl.num_layers=1 ;;
    adapted) OUT="$OUT/adapted" PYTHON="$PYTHON" bash experiments/domain_adaptation.sh srl \
      "${FULL_BUDGET[@]}" ;;
    dropout) table1_srl dropout --elmo-overrides "srl={\"$ELMO.dropout\": 0.1}" ;;
    *) echo "unknown diagnostic $diagnostic: expected full_budget, head, small, adapted," \
      "or dropout" >&2; exit 2 ;;
  esac
done
