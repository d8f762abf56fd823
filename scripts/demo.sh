#!/usr/bin/env bash
# The main job on the bundled defaults (`make demo`):
#   1. embed bundled sentences to hdf5 with the shipped pretrained ELMo
#      (elmo_plugin/pretrained/elmo_wikipedia_512x128) and print the shapes,
#   2. train a small NER tagger with it on a bundled CoNLL-2003 slice (ner_elmo.jsonnet as it
#      is: that biLM is every task config's default) and print the layer weights it learned,
#   3. pretrain a tiny biLM of your own on the bundled Wikipedia slice (training_configs/bilm/sample/),
#   4. export it to the bilm-tf format and check that stock AllenNLP's `Elmo` loads it and
#      gives our vectors,
# then lists what it produced. Each step's full log goes to a file beside its outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/${VENV:-.venv}/bin:$PATH"
out=${DEMO_DIR:-runs/demo}
elmo=elmo_plugin/pretrained/elmo_wikipedia_512x128
rm -rf "$out"
mkdir -p "$out"
SECONDS=0
# Runs a command with its output in a log file; when it fails, shows the log's last lines.
logged() {
  local log=$1
  shift
  "$@" > "$log" 2>&1 || { echo "demo: failed: $* (the end of $log):" >&2; tail -n 20 "$log" >&2; exit 1; }
}

echo "== 1. embed fixtures/lm/sentences.txt with the shipped ELMo ($elmo): allennlp elmo-embed"
logged "$out/embed.log" allennlp elmo-embed fixtures/lm/sentences.txt "$out/embeddings.hdf5" \
  --options-file "$elmo/options.json" --weight-file "$elmo/weights.hdf5"
python scripts/show_embeddings.py "$out/embeddings.hdf5" fixtures/lm/sentences.txt

echo "== 2. NER with it on a bundled CoNLL-2003 slice (training_configs/ner/ner_elmo.jsonnet)"
echo "   training 30 epochs on 21 sentences, about half a minute (log: $out/ner.log)"
# 21 training sentences: a higher learning rate, small batches and 30 epochs without early
# stopping, so that something is learned in half a minute.
logged "$out/ner.log" allennlp train training_configs/ner/ner_elmo.jsonnet -s "$out/ner" --include-package elmo_plugin -o "{
  \"train_data_path\": \"fixtures/ner/train.txt\", \"validation_data_path\": \"fixtures/ner/dev.txt\",
  \"test_data_path\": \"fixtures/ner/test.txt\", \"trainer.num_epochs\": 30, \"trainer.patience\": null,
  \"trainer.optimizer.lr\": 0.01, \"data_loader.batch_sampler.batch_size\": 4}"
python scripts/show_layer_weights.py "$out/ner/metrics.json" fixtures/ner/dev.txt fixtures/ner/test.txt

echo "== 3. pretrain a tiny biLM of your own (training_configs/bilm/bilm_tiny.jsonnet)"
logged "$out/bilm.log" allennlp train training_configs/bilm/bilm_tiny.jsonnet -s "$out/bilm" \
  --include-package elmo_plugin
python scripts/show_bilm_metrics.py "$out/bilm/metrics.json"

echo "== 4. export it (allennlp elmo-export) and load the export in stock AllenNLP"
allennlp elmo-export "$out/bilm/model.tar.gz" "$out/elmo" --include-package elmo_plugin 2>&1 | tail -n 2
python scripts/compare_with_allennlp.py "$out/elmo" fixtures/lm/sentences.txt

echo "== done in $((SECONDS / 60)) min $((SECONDS % 60)) s; what it produced, in $out/:"
summary() { printf "  %-22s %6s  %s\n" "$1" "$(du -sh "$out/$1" | cut -f1)" "$2"; }
summary embeddings.hdf5 "1. the ELMo layers of each sentence (hdf5, one dataset a line)"
summary ner/model.tar.gz "2. the NER tagger: source ${VENV:-.venv}/bin/activate; allennlp predict $out/ner/model.tar.gz ..."
summary ner.log "2. its training log; metrics in ner/metrics.json"
summary bilm/model.tar.gz "3. your tiny biLM (training log: bilm.log)"
summary elmo "4. its bilm-tf export (options.json, weights.hdf5), for any ELMo code"
