// Data paths, under the folder named by the environment variable ELMO_PLUGIN_DATA (AllenNLP
// passes the environment to jsonnet; elmo_plugin/allennlp/data_paths.py gives "$ELMO_PLUGIN_DATA" when it
// is not set, which the readers refuse naming the files expected), or name the files, e.g.
//   allennlp train ... -o '{"train_data_path": "/data/squad/train-v1.1.json"}'
// Each task's page in docs/ names its files and their source; the project's own runs set
// ELMO_PLUGIN_DATA=../shared/data, which gives the same paths as before the variable.
local folder = std.extVar("ELMO_PLUGIN_DATA");
local root = if std.endsWith(folder, "/") then folder else folder + "/";
{
  root: root,
  conll2003: { train: root + "conll2003/train.txt", dev: root + "conll2003/dev.txt", test: root + "conll2003/test.txt" },
  srl: { train: root + "srl_up_english_ewt/split/train.conllu", dev: root + "srl_up_english_ewt/split/dev.conllu", test: root + "srl_up_english_ewt/en_ewt-up-test.conllu" },
  snli: { train: root + "snli_1.0/split/train.jsonl", dev: root + "snli_1.0/split/dev.jsonl", test: root + "snli_1.0/snli_1.0_test.tok.jsonl" },
  sst: { train: root + "sst/trees/train.txt", dev: root + "sst/trees/dev.txt", test: root + "sst/trees/test.txt" },
  // LitBank coreference (its README, section 11): lists of document files, read from conll/ beside them.
  litbank: { train: root + "litbank_coref/train_docs.txt", dev: root + "litbank_coref/dev_docs.txt", test: root + "litbank_coref/test_docs.txt" },
  squad: { train: root + "squad1.1/split/train.json", test: root + "squad1.1/split/test.json" },
  lm: { train: root + "lm_wikipedia_en_2015/tokenized/train/*.txt.xz", dev: root + "lm_wikipedia_en_2015/tokenized/valid.txt.xz", test: root + "lm_wikipedia_en_2015/tokenized/test.txt.xz" },
}
