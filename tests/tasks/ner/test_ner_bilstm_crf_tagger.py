import copy
import math

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, Vocabulary
from allennlp.data.dataset_readers.dataset_utils.span_utils import bioul_tags_to_spans
from allennlp.models import Model

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.modules import ElmoTokenEmbedder
from elmo_plugin.allennlp.tasks.ner.dataset_readers import Conll2003NerReader
from elmo_plugin.allennlp.tasks.ner.models import BiLstmCrfTagger
from tests.paths import FIXTURES, TRAINING_CONFIGS

ELMO_EMBEDDER = {
    "type": "elmo",
    "options_file": str(FIXTURES / "elmo/options.json"),
    "weight_file": str(FIXTURES / "elmo/lm_weights.hdf5"),
    "dropout": 0.0,
}
INDEXERS = {"tokens": {"type": "single_id"}, "elmo": {"type": "elmo_characters"}}


def read(tag_scheme="BIOUL", indexers=None):
    reader = Conll2003NerReader.from_params(
        Params(
            {
                "tag_scheme": tag_scheme,
                "token_indexers": indexers or {"tokens": {"type": "single_id"}},
            }
        )
    )
    instances = list(reader.read(FIXTURES / "ner/train.txt"))
    for instance in instances:
        reader.apply_token_indexers(instance)
    return instances


def build(vocab, label_encoding="BIOUL", with_elmo=False, **extra):
    embedders = {"tokens": {"type": "embedding", "embedding_dim": 6}}
    if with_elmo:
        embedders["elmo"] = copy.deepcopy(ELMO_EMBEDDER)
    params = {
        "type": "bilstm_crf_tagger",
        "label_encoding": label_encoding,
        "text_field_embedder": {"token_embedders": embedders},
        "encoder": {
            "type": "lstm",
            "input_size": 6 + (32 if with_elmo else 0),
            "hidden_size": 5,
            "bidirectional": True,
        },
        "dropout": 0.0,
        **extra,
    }
    return Model.from_params(vocab=vocab, params=Params(params))


def batch_of(instances, vocab):
    batch = Batch(instances)
    batch.index_instances(vocab)
    return batch.as_tensor_dict()


@pytest.fixture(scope="module")
def data():
    instances = read()
    return instances, Vocabulary.from_instances(instances)


def test_forward_gives_a_finite_loss_and_one_tag_per_token(data):
    instances, vocab = data
    model = build(vocab)
    output = model(**batch_of(instances[:6], vocab))
    assert output["loss"].dim() == 0 and math.isfinite(output["loss"].item())
    assert [len(tags) for tags in output["tags"]] == [len(i["tokens"]) for i in instances[:6]]
    output["loss"].backward()
    assert model.encoder._module.weight_ih_l0.grad.abs().sum() > 0


def test_constrained_decoding_only_produces_valid_bioul(data):
    instances, vocab = data
    model = build(vocab)
    labels = vocab.get_token_to_index_vocabulary("labels")
    with torch.no_grad():
        # Push the scores towards O -> I-ORG, which BIOUL forbids.
        model.crf.transitions.fill_(0.0)
        model.crf.transitions[labels["O"], labels["I-ORG"]] = 100.0
        model.tag_scores._module.bias.fill_(0.0)
        model.tag_scores._module.bias[labels["I-ORG"]] = 5.0
        model.tag_scores._module.bias[labels["O"]] = 5.0
    model.eval()
    readable = model.make_output_human_readable(model(**batch_of(instances[:6], vocab)))
    for tags in readable["tags"]:
        for previous, tag in zip(["O"] + tags, tags + ["O"]):
            if tag[0] in "IL":
                assert previous[0] in "BI" and previous[2:] == tag[2:], tags
            if previous[0] in "BI":
                assert tag[0] in "IL" and previous[2:] == tag[2:], tags


def test_unconstrained_decoding_follows_the_scores(data):
    instances, vocab = data
    model = build(vocab, constrain_crf_decoding=False)
    labels = vocab.get_token_to_index_vocabulary("labels")
    with torch.no_grad():
        model.tag_scores._module.bias.fill_(0.0)
        model.tag_scores._module.bias[labels["I-ORG"]] = 100.0
    model.eval()
    readable = model.make_output_human_readable(model(**batch_of(instances[:1], vocab)))
    assert set(readable["tags"][0]) == {"I-ORG"}
    # Invalid BIOUL still reads as entities, for the metric and the output spans.
    assert readable["spans"][0][0]["label"] == "ORG"
    assert 0 <= model.get_metrics()["f1-measure-overall"] <= 1


def test_spans_of_the_decoded_tags():
    instances = read()
    vocab = Vocabulary.from_instances(instances)
    model = build(vocab)
    tags = ["B-PER", "L-PER", "O", "U-LOC", "O", "B-ORG", "I-ORG", "L-ORG"]
    words = ["Peter", "Blackburn", "in", "Brussels", "for", "the", "European", "Commission"]
    assert model.entity_spans(tags, words) == [
        {"label": "PER", "start": 0, "end": 1, "text": "Peter Blackburn"},
        {"label": "LOC", "start": 3, "end": 3, "text": "Brussels"},
        {"label": "ORG", "start": 5, "end": 7, "text": "the European Commission"},
    ]
    spans_without_text = [
        (s["label"], (s["start"], s["end"])) for s in model.entity_spans(tags, None)
    ]
    assert sorted(bioul_tags_to_spans(tags)) == sorted(spans_without_text)


def test_span_f1_is_perfect_when_decoding_the_gold_tags(data):
    instances, vocab = data
    model = build(vocab)
    batch = batch_of(instances, vocab)
    gold = batch["tags"]
    with torch.no_grad():
        model.crf.transitions.fill_(0.0)
        model.crf.start_transitions.fill_(0.0)
        model.crf.end_transitions.fill_(0.0)
    model.tag_scores = _GoldScores(gold, vocab.get_vocab_size("labels"))
    model.eval()
    model(**batch)
    metrics = model.get_metrics(reset=True)
    assert metrics["f1-measure-overall"] == pytest.approx(1.0)
    assert set(metrics) == {"precision-overall", "recall-overall", "f1-measure-overall"}


class _GoldScores(torch.nn.Module):
    def __init__(self, gold, num_labels):
        super().__init__()
        self.scores = torch.nn.functional.one_hot(gold, num_labels).float() * 50

    def forward(self, encoded):
        return self.scores


def test_label_encoding_must_match_the_reader_scheme(data):
    _, vocab = data
    with pytest.raises(ConfigurationError, match="is not a BIO tag"):
        build(vocab, label_encoding="BIO")


def test_encoder_input_must_match_the_embedding_size(data):
    _, vocab = data
    with pytest.raises(ConfigurationError, match="encoder input dim"):
        build(vocab, encoder={"type": "lstm", "input_size": 7, "hidden_size": 5})


def test_elmo_layer_weights_are_in_the_metrics():
    instances = read(indexers=INDEXERS)
    vocab = Vocabulary.from_instances(instances)
    model = build(vocab, with_elmo=True)
    output = model(**batch_of(instances[:4], vocab))
    output["loss"].backward()
    metrics = model.get_metrics()
    weights = [metrics[f"_elmo_mix0_{name}"] for name in ("token", "lstm_1", "lstm_2")]
    assert sum(weights) == pytest.approx(1.0)
    assert metrics["_elmo_mix0_gamma"] == pytest.approx(1.0)
    mix = model.text_field_embedder.token_embedder_elmo.elmo.scalar_mixes[0]
    assert mix.scalar_parameters.grad is not None
    assert not any(
        key.startswith("_elmo") for key in build(Vocabulary.from_instances(read())).get_metrics()
    )


def test_elmo_config_regularizes_the_layer_weights():
    params = Params.from_file(str(TRAINING_CONFIGS / "ner/ner_elmo.jsonnet"))
    model_params = params.pop("model").as_dict()
    model_params["text_field_embedder"]["token_embedders"] = {"elmo": copy.deepcopy(ELMO_EMBEDDER)}
    model_params["encoder"].update(input_size=32, hidden_size=4, num_layers=1)
    instances = read(indexers=INDEXERS)
    model = Model.from_params(
        vocab=Vocabulary.from_instances(instances), params=Params(model_params)
    )
    assert isinstance(model, BiLstmCrfTagger)
    elmo_embedder = model.text_field_embedder.token_embedder_elmo
    assert isinstance(elmo_embedder, ElmoTokenEmbedder)
    mix = elmo_embedder.elmo.scalar_mixes[0]
    with torch.no_grad():
        mix.scalar_parameters.copy_(torch.tensor([1.0, -2.0, 3.0]))
    penalty = model.get_regularization_penalty()
    assert penalty is not None and penalty.item() == pytest.approx(0.001 * 14)
