"""`bcn_classifier` built directly and from the SST configs: ELMo placed at the input and the
integrator's output from one biLM run, sizes set by the model, clear errors."""

import copy
import json

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, Vocabulary
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer
from allennlp.models import Model

import elmo_plugin.allennlp.tasks.sentiment  # noqa: F401
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.modules.elmo import span_rows
from elmo_plugin.allennlp.tasks.sentiment.dataset_readers import SstTreesReader
from elmo_plugin.allennlp.tasks.sentiment.models import BcnClassifier
from tests.paths import TRAINING_CONFIGS
from tests.tasks.sentiment.sst_small_overrides import (
    FIXTURES,
    HIDDEN,
    NUM_FILTERS,
    PRE_ENCODE,
    SMALL,
    WORD_DIM,
)
from tests.tasks.training_helpers import FIXTURE_BILM, assert_input_size_must_match, bilm_files

CONFIGS = TRAINING_CONFIGS / "sentiment"
ELMO_CONFIG = CONFIGS / "sst_elmo_input_output.jsonnet"  # ELMo at both places
ELMO_DIM = 32  # the fixture biLM's
SMALL_WITH_FIXTURE_BILM = {**SMALL, **bilm_files("model.elmo", FIXTURE_BILM)}
LABELS = ["0", "1", "2", "3", "4"]


@pytest.fixture(scope="module")
def batch_and_vocab():
    reader = SstTreesReader(
        token_indexers={"tokens": SingleIdTokenIndexer(), "elmo": ELMoTokenCharactersIndexer()}
    )
    instances = list(reader.read(FIXTURES / "dev.txt"))
    vocab = Vocabulary.from_instances(instances)
    batch = Batch(instances)
    batch.index_instances(vocab)
    return batch.as_tensor_dict(), vocab


def model_from(config, vocab, **model_overrides) -> BcnClassifier:
    overrides = SMALL_WITH_FIXTURE_BILM if config == ELMO_CONFIG else SMALL
    params = Params.from_file(str(config), params_overrides=json.dumps(overrides))
    model_params = params.pop("model").as_dict()
    model_params["text_field_embedder"] = {
        "token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 6}}
    }
    model_params.update(model_overrides)
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=Params(copy.deepcopy(model_params)))
    assert isinstance(model, BcnClassifier)
    return model


def test_one_biLM_run_feeds_both_places_and_both_layer_weightings_reach_the_loss(batch_and_vocab):
    tensors, vocab = batch_and_vocab
    model = model_from(ELMO_CONFIG, vocab)
    runs = []
    assert model._elmo is not None
    model._elmo.bilm.register_forward_hook(lambda *args: runs.append(1))
    before = dict(tensors["tokens"])
    output = model(**tensors)
    output["loss"].backward()
    assert runs == [1]
    assert dict(tensors["tokens"]) == before and set(before) == {"tokens", "elmo"}
    assert output["logits"].shape == (5, 5)
    assert torch.allclose(output["class_probabilities"].sum(-1), torch.ones(5))
    for mix in model._elmo.scalar_mixes:
        grad = mix.scalar_parameters.grad
        assert grad is not None and grad.abs().sum() > 0
    metrics = model.get_metrics()
    assert 0.0 <= metrics["accuracy"] <= 1.0
    assert len([key for key in metrics if key.startswith("_elmo")]) == 2 * 4  # 3 layers + gamma


def test_the_sizes_follow_the_embedders_and_the_elmo_places(batch_and_vocab):
    _, vocab = batch_and_vocab
    model = model_from(ELMO_CONFIG, vocab)
    assert model._pre_encode_feedforward.get_input_dim() == 6 + ELMO_DIM
    assert model._encoder.get_input_dim() == PRE_ENCODE
    assert model._integrator.get_input_dim() == 3 * 2 * HIDDEN
    assert model._output_layer.get_input_dim() == 4 * (2 * HIDDEN + ELMO_DIM)
    assert model._classification_layer.out_features == vocab.get_vocab_size("labels") == 5
    baseline = model_from(CONFIGS / "sst_baseline.jsonnet", vocab)
    assert baseline._pre_encode_feedforward.get_input_dim() == 6
    assert baseline._output_layer.get_input_dim() == 4 * 2 * HIDDEN


def test_elmo_alone_at_the_input_needs_no_other_embedder(batch_and_vocab):
    tensors, vocab = batch_and_vocab
    params = Params.from_file(
        str(ELMO_CONFIG), params_overrides=json.dumps(SMALL_WITH_FIXTURE_BILM)
    )
    model_params = params.pop("model").as_dict()
    model_params.update(
        text_field_embedder={"token_embedders": {}}, use_integrator_output_elmo=False
    )
    model_params["elmo"]["num_output_representations"] = 1
    model = Model.from_params(vocab=vocab, params=Params(copy.deepcopy(model_params)))
    assert isinstance(model, BcnClassifier)
    assert model._pre_encode_feedforward.get_input_dim() == ELMO_DIM
    elmo_only = {"elmo": tensors["tokens"]["elmo"]}
    assert torch.isfinite(model(tokens=elmo_only, label=tensors["label"])["loss"])
    del model_params["elmo"]
    model_params["use_input_elmo"] = False
    with pytest.raises(ConfigurationError, match="text_field_embedder has no output"):
        Model.from_params(vocab=vocab, params=Params(model_params))


def test_a_model_with_elmo_needs_the_elmo_indexer(batch_and_vocab):
    tensors, vocab = batch_and_vocab
    model = model_from(ELMO_CONFIG, vocab)
    tokens = {key: value for key, value in tensors["tokens"].items() if key != "elmo"}
    with pytest.raises(ConfigurationError, match='bcn_classifier .* indexer under the key "elmo"'):
        model(tokens=tokens)


def test_the_elmo_representations_must_match_the_places(batch_and_vocab):
    _, vocab = batch_and_vocab
    with pytest.raises(ConfigurationError, match="num_output_representations is 2 but 1 ELMo"):
        model_from(ELMO_CONFIG, vocab, use_integrator_output_elmo=False)


def test_human_readable_output_names_labels_and_their_probabilities(batch_and_vocab):
    tensors, vocab = batch_and_vocab
    model = model_from(ELMO_CONFIG, vocab).eval()
    readable = model.make_output_human_readable(model(**tensors))
    assert readable["tokens"][0][:3] == ["It", "'s", "like"]
    for label, probabilities, row in zip(
        readable["label"], readable["probabilities"], readable["class_probabilities"]
    ):
        assert set(probabilities) == set(LABELS)
        assert probabilities[label] == pytest.approx(float(row.max().detach()))


@pytest.mark.parametrize(
    "module, size_key, right",
    [
        ("pre_encode_feedforward", "input_dim", WORD_DIM + NUM_FILTERS + ELMO_DIM),
        ("encoder", "input_size", PRE_ENCODE),
        ("integrator", "input_size", 3 * 2 * HIDDEN),
        ("output_layer", "input_dim", 4 * (2 * HIDDEN + ELMO_DIM)),
    ],
)
def test_sizes_given_in_the_config_must_match_the_model(module, size_key, right):
    vocab = Vocabulary(tokens_to_add={"labels": LABELS})
    assert_input_size_must_match(
        ELMO_CONFIG, SMALL_WITH_FIXTURE_BILM, vocab, module, size_key, right
    )


def test_a_phrase_in_context_gets_its_rows_of_its_sentences_elmo(tmp_path):
    path = tmp_path / "tree.txt"
    path.write_text("(3 (2 It) (4 (3 (2 a) (4 (3 lovely) (2 film))) (2 .)))\n")
    indexers = {"tokens": SingleIdTokenIndexer(), "elmo": ELMoTokenCharactersIndexer()}
    in_context = list(
        SstTreesReader(indexers, use_subtrees=True, phrases_in_context=True).read(path)
    )
    alone = list(SstTreesReader(indexers, use_subtrees=True).read(path))
    vocab = Vocabulary.from_instances(alone)
    model = model_from(ELMO_CONFIG, vocab).eval()

    def tensors_of(instances):
        batch = Batch(instances)
        batch.index_instances(vocab)
        return batch.as_tensor_dict()

    with torch.no_grad():
        context_tensors = tensors_of(in_context)
        places = model._elmo_places
        elmo_in_context = places(
            context_tensors["tokens"],
            context_tensors["elmo_context"],
            context_tensors["phrase_span"],
        )
        elmo_alone = places(tensors_of(alone)["tokens"])
    for elmo_of_context, elmo_of_phrase in [
        (elmo_in_context.input, elmo_alone.input),
        (elmo_in_context.output, elmo_alone.output),
    ]:
        assert elmo_of_context is not None and elmo_of_phrase is not None
        sentence = elmo_of_phrase[0]  # the root is the whole sentence, in context or not
        for row, (start, end) in enumerate(context_tensors["phrase_span"].tolist()):
            length = end - start + 1
            assert torch.allclose(
                elmo_of_context[row, :length], sentence[start : end + 1], atol=1e-6
            )
            assert not elmo_of_context[row, length:].any()
        # "lovely film" alone is not "lovely film" in its sentence
        assert not torch.allclose(elmo_of_phrase[5, :2], elmo_of_context[5, :2], atol=1e-3)
    output = model.train()(**context_tensors)
    output["loss"].backward()
    assert output["logits"].shape == (len(in_context), vocab.get_vocab_size("labels"))


def test_span_rows_takes_each_span_and_zeroes_past_its_end():
    sequence = torch.arange(2 * 4 * 1, dtype=torch.float).view(2, 4, 1)
    rows = span_rows(sequence, torch.tensor([[1, 2], [3, 3]]), num_rows=3)
    assert rows.squeeze(-1).tolist() == [[1.0, 2.0, 0.0], [7.0, 0.0, 0.0]]
