"""The biLM shipped in pretrained/: what its README promises, loadable by stock AllenNLP."""

import json
import os

import h5py
import torch
from allennlp.data import Batch
from allennlp.modules.elmo import Elmo as AllenNlpElmo
from allennlp.modules.elmo import batch_to_ids

from elmo_plugin.elmo import Elmo
from elmo_plugin.allennlp.lm.corpus_vocabulary import CorpusVocabulary
from elmo_plugin.allennlp.lm.dataset_readers import BilmCorpusReader
from elmo_plugin.allennlp.lm.models import BilmLanguageModel
from tests.paths import PROJECT_ROOT, TRAINING_CONFIGS

SHIPPED = PROJECT_ROOT / "elmo_plugin" / "pretrained" / "elmo_wikipedia_512x128"
OPTIONS, WEIGHTS = str(SHIPPED / "options.json"), str(SHIPPED / "weights.hdf5")


def test_the_shipped_files_are_a_bilm_tf_model_of_the_documented_size_under_40_mb():
    options = json.loads((SHIPPED / "options.json").read_text())
    assert options["lstm"]["dim"] == 512 and options["lstm"]["projection_dim"] == 128
    assert options["lstm"]["n_layers"] == 2 and options["lstm"]["use_skip_connections"]
    assert options["char_cnn"]["n_characters"] == 262
    total = sum(os.path.getsize(path) for path in SHIPPED.iterdir())
    assert total < 40 * 2**20
    words = (SHIPPED / "vocab.txt").read_text(encoding="utf-8").split("\n")
    assert {"<S>", "</S>", "the", ","} <= set(words[:20])  # frequency order, as the sampler needs
    with h5py.File(SHIPPED / "softmax.hdf5", "r") as softmax:
        assert softmax["softmax/W"].shape == (
            len(words) - 1 if words[-1] == "" else len(words),
            128,
        )


def test_the_task_configs_default_to_it_by_a_name_that_resolves_from_anywhere():
    libsonnet = (TRAINING_CONFIGS / "common" / "elmo.libsonnet").read_text()
    assert 'local shipped = "elmo_plugin://pretrained/elmo_wikipedia_512x128";' in libsonnet
    assert 'import "elmo_plugin/pretrained/elmo_wikipedia_512x128/options.json"' in libsonnet


def test_stock_allennlp_loads_it_and_gives_our_vectors(corpus_sentences):
    ids = batch_to_ids(corpus_sentences(24))
    with torch.no_grad():
        ours = Elmo(OPTIONS, WEIGHTS, 1, dropout=0.0)(ids)["elmo_representations"][0]
        stock = AllenNlpElmo(OPTIONS, WEIGHTS, 1, dropout=0.0)(ids)["elmo_representations"][0]
    assert ours.shape[-1] == 256
    torch.testing.assert_close(ours, stock, atol=1e-5, rtol=0)


def test_it_is_trained_its_held_out_perplexity_is_far_below_a_unigram_models():
    """With its shipped softmax, on 200 held-out Wikipedia sentences (fixtures/lm), in both
    directions. A unigram model with the same vocabulary, counted on the first training shard,
    scores 1177 there; an untrained biLM scores about the vocabulary size, 50,000."""
    vocabulary = CorpusVocabulary.from_corpus(vocab_file=str(SHIPPED / "vocab.txt"))
    model = BilmLanguageModel(
        vocabulary,
        options_file=OPTIONS,
        weight_file=WEIGHTS,
        softmax_file=str(SHIPPED / "softmax.hdf5"),
    ).eval()
    reader = BilmCorpusReader()
    instances = list(reader.read(str(TRAINING_CONFIGS / "bilm" / "sample" / "wiki_valid.txt")))
    with torch.no_grad():
        for start in range(0, len(instances), 50):
            batch = Batch(instances[start : start + 50])
            for instance in batch.instances:
                reader.apply_token_indexers(instance)
            batch.index_instances(vocabulary)
            model(**batch.as_tensor_dict())
    metrics = model.get_metrics(reset=True)
    assert metrics["forward_perplexity"] < 500 and metrics["backward_perplexity"] < 500
