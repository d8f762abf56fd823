"""`span_ranking_coref` built directly and from the coreference configs: sizes set by the model,
ELMo run once a batch over the sentences, the factored pair layer and the running-softmax head
equal to their plain forms, the loss and decoding, clear errors."""

import copy
import json
from typing import cast

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, Vocabulary
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer
from allennlp.models import Model
from allennlp.nn import util

import elmo_plugin.allennlp.tasks.coref  # noqa: F401
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.coref.dataset_readers import LitbankCorefReader
from elmo_plugin.allennlp.tasks.coref.models.factored_pair_layer import FactoredPairLayer
from elmo_plugin.allennlp.tasks.coref.models.sentence_layout import SentenceLayout
from elmo_plugin.allennlp.tasks.coref.models.span_ranking_coref import (
    SpanRankingCoref,
    decode_clusters,
    marginal_log_likelihood,
)
from tests.paths import TRAINING_CONFIGS
from tests.tasks.coref.coref_small_overrides import (
    FEATURE,
    FEEDFORWARD,
    FIXTURES,
    HIDDEN,
    NUM_FILTERS,
    SMALL,
    WORD_DIM,
)
from tests.tasks.training_helpers import FIXTURE_BILM, assert_input_size_must_match, bilm_files

CONFIGS = TRAINING_CONFIGS / "coref"
ELMO_CONFIG = CONFIGS / "coref_elmo.jsonnet"
ELMO_DIM = 32  # the fixture biLM's
MAX_SPAN_WIDTH = 6  # the configs'
SMALL_WITH_FIXTURE_BILM = {**SMALL, **bilm_files("model.elmo", FIXTURE_BILM)}


@pytest.fixture(scope="module")
def batch_and_vocab():
    reader = LitbankCorefReader(
        token_indexers={"tokens": SingleIdTokenIndexer(), "elmo": ELMoTokenCharactersIndexer()},
        max_span_width=MAX_SPAN_WIDTH,
        remove_singleton_clusters=True,
    )
    instances = list(reader.read(FIXTURES / "conll"))
    vocab = Vocabulary.from_instances(instances)
    batch = Batch(instances[:2])
    batch.index_instances(vocab)
    return batch.as_tensor_dict(), vocab


def model_from(config, vocab, extra_overrides=None, **model_overrides) -> SpanRankingCoref:
    overrides = SMALL_WITH_FIXTURE_BILM if config == ELMO_CONFIG else SMALL
    overrides = {**overrides, **(extra_overrides or {})}
    params = Params.from_file(str(config), params_overrides=json.dumps(overrides))
    model_params = params.pop("model").as_dict()
    model_params["text_field_embedder"] = {
        "token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 6}}
    }
    model_params.update(model_overrides)
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=Params(copy.deepcopy(model_params)))
    assert isinstance(model, SpanRankingCoref)
    return model


def test_one_biLM_run_over_the_sentences_and_the_layer_weights_reach_the_loss(batch_and_vocab):
    tensors, vocab = batch_and_vocab
    model = model_from(ELMO_CONFIG, vocab)
    inputs = []
    assert model._elmo is not None
    model._elmo.bilm.register_forward_hook(lambda module, args, output: inputs.append(args[0]))
    before = dict(tensors["text"])
    output = model(**tensors)
    output["loss"].backward()
    # One run, a row a sentence of either document, padded to the longest sentence.
    (character_ids,) = inputs
    lengths = tensors["sentence_lengths"]
    assert character_ids.shape[:2] == (int((lengths > 0).sum()), int(lengths.max()))
    assert (character_ids[:, :, 0] > 0).sum(dim=1).tolist() == lengths[lengths > 0].tolist()
    assert dict(tensors["text"]) == before and set(before) == {"tokens", "elmo"}
    grad = model._elmo.scalar_mixes[0].scalar_parameters.grad
    assert grad is not None and grad.abs().sum() > 0
    metrics = model.get_metrics()
    assert 0.0 <= metrics["coref_f1"] <= 1.0 and 0.0 <= metrics["mention_recall"] <= 1.0
    assert len([key for key in metrics if key.startswith("_elmo")]) == 4  # 3 layers + gamma


def test_the_sizes_follow_the_embedders_and_elmo(batch_and_vocab):
    _, vocab = batch_and_vocab
    model = model_from(ELMO_CONFIG, vocab)
    assert model._context_layer.get_input_dim() == 6 + ELMO_DIM
    span_dim = 2 * 2 * HIDDEN + FEATURE + 6  # endpoints, width, attended words (no ELMo)
    assert model._mention_feedforward.get_input_dim() == span_dim
    assert model._pair_layer.linear.in_features == 3 * span_dim + FEATURE
    assert model._antecedent_feedforward.get_input_dim() == FEEDFORWARD
    baseline = model_from(CONFIGS / "coref_baseline.jsonnet", vocab)
    assert baseline._context_layer.get_input_dim() == 6
    assert baseline._mention_feedforward.get_input_dim() == span_dim


@pytest.mark.parametrize(
    "module, size_key, right",
    [
        ("context_layer", "input_size", WORD_DIM + NUM_FILTERS + ELMO_DIM),
        ("mention_feedforward", "input_dim", 2 * 2 * HIDDEN + FEATURE + WORD_DIM + NUM_FILTERS),
        ("antecedent_feedforward", "input_dim", FEEDFORWARD),
    ],
)
def test_sizes_given_in_the_config_must_match_the_model(module, size_key, right):
    vocab = Vocabulary(tokens_to_add={"tokens": ["the"]})
    assert_input_size_must_match(
        ELMO_CONFIG, SMALL_WITH_FIXTURE_BILM, vocab, module, size_key, right
    )


def test_the_factored_pair_layer_is_the_linear_layer_on_the_pairs():
    torch.manual_seed(0)
    layer = FactoredPairLayer(span_dim=5, feature_dim=3, output_dim=4)
    spans = torch.randn(2, 6, 5)
    indices = cast(torch.LongTensor, torch.randint(0, 6, (2, 6, 3)))  # long, typed Tensor by torch
    features = torch.randn(3, 3)
    antecedents = util.batched_index_select(spans, indices)
    targets = spans.unsqueeze(2).expand_as(antecedents)
    pairs = torch.cat(
        [targets, antecedents, targets * antecedents, features.expand(2, 6, 3, 3)], dim=-1
    )
    torch.testing.assert_close(layer(spans, indices, features), layer.linear(pairs))


def test_the_running_softmax_head_is_the_attention_over_each_spans_words():
    torch.manual_seed(0)
    contextual, embedded = torch.randn(2, 20, 4), 3 * torch.randn(2, 20, 5)
    spans = cast(  # long, typed Tensor by torch
        torch.LongTensor,
        torch.tensor([[[s, e] for s in range(20) for e in range(s, min(s + 6, 20))]] * 2),
    )
    holder = torch.nn.Module()
    holder._head_attention = torch.nn.Linear(4, 1)
    with torch.no_grad():
        holder._head_attention.weight.mul_(10)  # peaked attention: the softmax must stay stable
    # The holder stands in for the model: the method reads its `_head_attention` alone.
    heads = SpanRankingCoref._attended_heads(
        cast(SpanRankingCoref, holder), contextual, embedded, spans
    )
    logits, word_mask = util.batched_span_select(holder._head_attention(contextual), spans)
    weights = util.masked_softmax(logits.squeeze(-1), word_mask)
    words, _ = util.batched_span_select(embedded, spans)
    torch.testing.assert_close(heads, util.weighted_sum(words, weights), rtol=1e-5, atol=1e-5)


def test_the_sentence_layout_moves_words_to_sentences_and_back():
    lengths = torch.tensor([[2, 3, 0], [1, 1, 1]])
    documents = torch.arange(2 * 6 * 2, dtype=torch.float).view(2, 6, 2)
    layout = SentenceLayout(lengths, 6)
    sentences = layout.to_sentences(documents)
    assert sentences.shape == (5, 3, 2)
    assert sentences[1, :, 0].tolist() == [4.0, 6.0, 8.0] and sentences[2, 1:].abs().sum() == 0
    back = layout.to_documents(sentences)
    assert torch.equal(back[0, :5], documents[0, :5]) and torch.equal(back[1, :3], documents[1, :3])
    assert back[1, 3:].abs().sum() == 0
    assert layout.word_mask.tolist() == [[True] * 5 + [False], [True] * 3 + [False] * 3]
    with pytest.raises(ValueError, match="add up to"):
        SentenceLayout(torch.tensor([[4, 4]]), 6)


def test_the_loss_is_the_marginal_likelihood_of_the_gold_antecedents():
    scores = torch.tensor([[[0.0, 1.0, 2.0], [0.0, -1.0, 3.0], [0.0, 5.0, 5.0]]])
    gold = torch.tensor([[[False, True, True], [True, False, False], [False, True, False]]])
    mask = torch.tensor([[True, True, False]])  # the third span is padding
    # log (e^1 + e^2) / (e^0 + e^1 + e^2) + log e^0 / (e^0 + e^-1 + e^3)
    expected = (
        torch.logsumexp(torch.tensor([1.0, 2.0]), 0)
        - torch.logsumexp(torch.tensor([0.0, 1.0, 2.0]), 0)
        - torch.logsumexp(torch.tensor([0.0, -1.0, 3.0]), 0)
    )
    torch.testing.assert_close(marginal_log_likelihood(scores, gold, mask), expected)


def test_a_batch_loses_what_its_documents_lose_alone(batch_and_vocab):
    # Padding (spans, kept spans, sentences) adds nothing: allennlp-models' coref counts its
    # padded kept spans in the loss.
    tensors, vocab = batch_and_vocab
    model = model_from(CONFIGS / "coref_baseline.jsonnet", vocab).eval()
    batch_loss = model(**tensors)["loss"]
    reader = LitbankCorefReader(max_span_width=MAX_SPAN_WIDTH, remove_singleton_clusters=True)
    alone = 0.0
    for instance in list(reader.read(FIXTURES / "conll"))[:2]:
        batch = Batch([instance])
        batch.index_instances(vocab)
        alone += model(**batch.as_tensor_dict())["loss"]
    assert batch_loss > 0
    torch.testing.assert_close(batch_loss, alone, rtol=1e-5, atol=1e-4)


def test_decoding_follows_the_links_and_skips_the_dummy():
    top_spans = torch.tensor([[[0, 0], [2, 3], [5, 5], [7, 7], [-1, -1]]])
    antecedents = torch.tensor([[[0, 0], [0, 0], [1, 0], [2, 1], [3, 2]]])
    predicted = torch.tensor([[-1, 0, 0, 1, -1]])  # 1 -> 0, 2 -> 1, 3 -> 1
    assert decode_clusters(top_spans, antecedents, predicted) == [
        [[(0, 0), (2, 3), (5, 5), (7, 7)]]
    ]
    predicted = torch.tensor([[-1, -1, -1, 0, -1]])  # 3 -> 2
    assert decode_clusters(top_spans, antecedents, predicted) == [[[(5, 5), (7, 7)]]]
    with pytest.raises(ValueError, match="not before it"):
        decode_clusters(top_spans, antecedents, torch.tensor([[0, -1, -1, -1, -1]]))


def test_human_readable_output_gives_clusters_of_word_positions(batch_and_vocab):
    tensors, vocab = batch_and_vocab
    model = model_from(CONFIGS / "coref_baseline.jsonnet", vocab).eval()
    readable = model.make_output_human_readable(model(**tensors))
    assert len(readable["clusters"]) == 2 and readable["words"][0][:2] == ["CHAPTER", "I"]
    kept = {tuple(span) for span in readable["top_spans"][0].tolist()}
    for cluster in readable["clusters"][0]:
        assert len(cluster) > 1 and all(tuple(mention) in kept for mention in cluster)


def test_a_model_with_elmo_needs_the_elmo_indexer(batch_and_vocab):
    tensors, vocab = batch_and_vocab
    model = model_from(ELMO_CONFIG, vocab)
    text = {key: value for key, value in tensors["text"].items() if key != "elmo"}
    with pytest.raises(
        ConfigurationError, match='span_ranking_coref .* indexer under the key "elmo"'
    ):
        model(**{**tensors, "text": text})


def test_spans_wider_than_the_model_takes_are_a_configuration_error(batch_and_vocab):
    tensors, vocab = batch_and_vocab
    model = model_from(CONFIGS / "coref_baseline.jsonnet", vocab, max_span_width=4)
    with pytest.raises(
        ConfigurationError, match="a span of 6 words, over the model's max_span_width=4"
    ):
        model(**tensors)


def test_an_embedder_without_output_is_a_configuration_error(batch_and_vocab):
    _, vocab = batch_and_vocab
    with pytest.raises(ConfigurationError, match="text_field_embedder has no output"):
        model_from(ELMO_CONFIG, vocab, text_field_embedder={"token_embedders": {}})
