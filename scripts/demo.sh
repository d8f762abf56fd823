#!/usr/bin/env bash
# The main job on the bundled defaults (`make demo`), the whole ELMo workflow at toy size:
#   1. pretrain a tiny biLM on the bundled Wikipedia slice (fixtures/lm/),
#   2. export it to the bilm-tf format (options.json + weights.hdf5),
#   3. embed bundled sentences with it to hdf5 and print the shapes,
#   4. train a small NER tagger with the exported ELMo on a bundled CoNLL slice and print the
#      layer weights it learned.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
out=${DEMO_DIR:-runs/demo}
rm -rf "$out"
mkdir -p "$out"

echo "== 1. pretrain a tiny biLM (training_configs/bilm/bilm_tiny.jsonnet)"
allennlp train training_configs/bilm/bilm_tiny.jsonnet -s "$out/bilm" --include-package elmo_plugin 2>&1 \
  | grep -E "perplexity|Epoch|Training|Validation" | grep -vE "^\s*$" | tail -n 12 || true

echo "== 2. export it: allennlp elmo-export"
allennlp elmo-export "$out/bilm/model.tar.gz" "$out/elmo" --include-package elmo_plugin 2>&1 | tail -n 2

echo "== 3. embed fixtures/lm/sentences.txt: allennlp elmo-embed"
allennlp elmo-embed fixtures/lm/sentences.txt "$out/embeddings.hdf5" \
  --options-file "$out/elmo/options.json" --weight-file "$out/elmo/weights.hdf5" 2>&1 | tail -n 1
python scripts/show_embeddings.py "$out/embeddings.hdf5" fixtures/lm/sentences.txt

echo "== 4. NER with the exported ELMo on a bundled CoNLL-2003 slice"
# Only the ELMo files change: the model sizes its encoder from the embedders.
allennlp train training_configs/ner/ner_elmo.jsonnet -s "$out/ner" --include-package elmo_plugin -o "{
  \"train_data_path\": \"fixtures/ner/train.txt\", \"validation_data_path\": \"fixtures/ner/dev.txt\",
  \"test_data_path\": \"fixtures/ner/test.txt\", \"trainer.num_epochs\": 3,
  \"model.text_field_embedder.token_embedders.elmo.options_file\": \"$out/elmo/options.json\",
  \"model.text_field_embedder.token_embedders.elmo.weight_file\": \"$out/elmo/weights.hdf5\"}" > "$out/ner.log" 2>&1
python scripts/show_layer_weights.py "$out/ner/metrics.json"
