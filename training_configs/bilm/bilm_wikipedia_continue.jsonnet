// More training for the shipped biLM (elmo_plugin/pretrained/elmo_wikipedia_512x128): the
// corpus, batches and validation of bilm_wikipedia_cpu.jsonnet, starting from the export's
// weights, softmax and vocabulary instead of random ones, in bfloat16 (its cost in perplexity:
// docs/performance.md). experiments/pretrain_bilm.sh runs it, export and evaluation included:
//
//   CONFIG=training_configs/bilm/bilm_wikipedia_continue.jsonnet \
//   TRAIN='../shared/data/lm_wikipedia_en_2015/tokenized/train/shard-1[0-9].txt.xz' \
//   RUN=runs/bilm_continue OUT=runs/bilm_continue/elmo bash experiments/pretrain_bilm.sh
//
// Any other export of the same size continues the same way: override the four export paths.
local export = "elmo_plugin://pretrained/elmo_wikipedia_512x128";
(import "bilm_wikipedia_cpu.jsonnet") + {
  vocabulary: { type: "from_corpus", vocab_file: export + "/vocab.txt" },
  model: {
    type: "bilm",
    options_file: export + "/options.json",
    weight_file: export + "/weights.hdf5",
    softmax_file: export + "/softmax.hdf5",
    num_samples: 4096,
    dropout: 0.1,
    compute_dtype: "bfloat16",
  },
}
