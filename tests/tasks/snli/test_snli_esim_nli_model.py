from typing import Tuple

import pytest
import torch
from allennlp.data import Batch, Vocabulary
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer
from allennlp.modules import FeedForward
from allennlp.modules.seq2seq_encoders import LstmSeq2SeqEncoder, Seq2SeqEncoder
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder, TextFieldEmbedder
from allennlp.modules.token_embedders import Embedding
from allennlp.nn import Activation

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.modules import Elmo
from elmo_plugin.allennlp.tasks.snli.dataset_readers import SnliJsonlReader
from elmo_plugin.allennlp.tasks.snli.models import EsimNli
from tests import paths

FIXTURES = paths.FIXTURES / "snli"
OPTIONS = str(paths.FIXTURES / "elmo" / "options.json")
WEIGHTS = str(paths.FIXTURES / "elmo" / "lm_weights.hdf5")
ELMO_DIM = 32
WORD_DIM, HIDDEN = 6, 5
VARIANTS = {
    "baseline": (False, False),
    "input": (True, False),
    "output": (False, True),
    "input_output": (True, True),
}


@pytest.fixture(scope="module")
def batch_and_vocab():
    reader = SnliJsonlReader(
        token_indexers={"tokens": SingleIdTokenIndexer(), "elmo": ELMoTokenCharactersIndexer()}
    )
    instances = list(reader.read(FIXTURES / "dev.jsonl"))[:7]
    vocab = Vocabulary.from_instances(instances)
    batch = Batch(instances)
    batch.index_instances(vocab)
    return batch.as_tensor_dict(), vocab


def build_model(vocab, use_input_elmo, use_output_elmo, num_representations=None) -> EsimNli:
    num_places = int(use_input_elmo) + int(use_output_elmo)
    num_representations = num_representations or num_places
    elmo = (
        Elmo(OPTIONS, WEIGHTS, num_output_representations=num_representations, dropout=0.0)
        if num_representations
        else None
    )
    embedder = BasicTextFieldEmbedder(
        {"tokens": Embedding(embedding_dim=WORD_DIM, num_embeddings=vocab.get_vocab_size("tokens"))}
    )
    encoding_dim = 2 * HIDDEN + (ELMO_DIM if use_output_elmo else 0)
    return EsimNli(
        vocab,
        embedder,
        LstmSeq2SeqEncoder(
            WORD_DIM + (ELMO_DIM if use_input_elmo else 0), HIDDEN, bidirectional=True
        ),
        FeedForward(4 * encoding_dim, 1, HIDDEN, Activation.by_name("relu")()),
        LstmSeq2SeqEncoder(HIDDEN, HIDDEN, bidirectional=True),
        FeedForward(8 * HIDDEN, 1, HIDDEN, Activation.by_name("tanh")()),
        elmo=elmo,
        use_input_elmo=use_input_elmo,
        use_output_elmo=use_output_elmo,
        dropout=0.0,
    )


def without_elmo(text_field_tensors):
    return {key: value for key, value in text_field_tensors.items() if key != "elmo"}


def modules_of(
    model: EsimNli,
) -> Tuple[TextFieldEmbedder, Seq2SeqEncoder, FeedForward, Seq2SeqEncoder, FeedForward]:
    """The modules it was built of, in `EsimNli`'s order."""
    return (
        model._text_field_embedder,
        model._encoder,
        model._projection_feedforward,
        model._inference_encoder,
        model._output_feedforward,
    )


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_forward_shapes_loss_and_metrics(batch_and_vocab, variant):
    tensors, vocab = batch_and_vocab
    model = build_model(vocab, *VARIANTS[variant])
    if variant == "baseline":  # a baseline config has no elmo indexer
        tensors = {
            **tensors,
            "premise": without_elmo(tensors["premise"]),
            "hypothesis": without_elmo(tensors["hypothesis"]),
        }
    output = model(**tensors)
    assert output["label_logits"].shape == (7, 3)
    assert torch.allclose(output["label_probs"].sum(-1), torch.ones(7))
    assert torch.isfinite(output["loss"])
    assert len(output["premise_tokens"]) == 7
    metrics = model.get_metrics()
    assert 0.0 <= metrics["accuracy"] <= 1.0
    elmo_keys = {key for key in metrics if key.startswith("_elmo")}
    num_places = sum(VARIANTS[variant])
    # token + 2 LSTM layer weights and gamma, per ELMo place
    assert len(elmo_keys) == 4 * num_places


@pytest.mark.parametrize("variant", ["input", "output", "input_output"])
def test_every_elmo_representation_reaches_the_loss_from_one_bilm_run_per_sentence(
    batch_and_vocab, variant
):
    tensors, vocab = batch_and_vocab
    model = build_model(vocab, *VARIANTS[variant])
    bilm_runs = []
    assert model._elmo is not None
    model._elmo.bilm.register_forward_hook(lambda *args: bilm_runs.append(1))
    model(**tensors)["loss"].backward()
    assert len(bilm_runs) == 2  # premise and hypothesis
    for mix in model._elmo.scalar_mixes:
        assert mix.scalar_parameters.grad is not None
        assert mix.scalar_parameters.grad.abs().sum() > 0


@pytest.mark.parametrize("variant", ["input", "input_output"])
def test_forward_leaves_the_callers_batch_as_it_was(batch_and_vocab, variant):
    tensors, vocab = batch_and_vocab
    before = {field: dict(tensors[field]) for field in ("premise", "hypothesis")}
    build_model(vocab, *VARIANTS[variant])(**tensors)
    assert {field: tensors[field] for field in ("premise", "hypothesis")} == before
    assert all(set(text) == {"tokens", "elmo"} for text in before.values())


def test_human_readable_output_names_the_predicted_label(batch_and_vocab):
    tensors, vocab = batch_and_vocab
    model = build_model(vocab, True, True).eval()
    readable = model.make_output_human_readable(model(**tensors))
    for label, probabilities, probs in zip(
        readable["label"], readable["probabilities"], readable["label_probs"]
    ):
        assert set(probabilities) == {"entailment", "neutral", "contradiction"}
        assert probabilities[label] == pytest.approx(float(probs.max()))


def test_elmo_places_must_match_the_elmo_module(batch_and_vocab):
    _, vocab = batch_and_vocab
    with pytest.raises(ConfigurationError, match="need an `elmo` module"):
        EsimNli(vocab, *modules_of(build_model(vocab, False, False)), use_input_elmo=True)


def test_elmo_representation_count_must_match_the_places(batch_and_vocab):
    _, vocab = batch_and_vocab
    with pytest.raises(
        ConfigurationError, match="num_output_representations is 2 but 1 ELMo places"
    ):
        build_model(vocab, True, False, num_representations=2)


def test_encoder_dims_are_checked_against_elmo(batch_and_vocab):
    _, vocab = batch_and_vocab
    model = build_model(vocab, False, False)
    with pytest.raises(ConfigurationError, match="encoder input dim"):
        EsimNli(
            vocab,
            *modules_of(model),
            elmo=Elmo(OPTIONS, WEIGHTS, num_output_representations=1),
            use_input_elmo=True,
        )


def test_missing_elmo_indexer_is_a_clear_error(batch_and_vocab):
    tensors, vocab = batch_and_vocab
    model = build_model(vocab, True, False)
    sentence = without_elmo(tensors["premise"])
    with pytest.raises(ConfigurationError, match='indexer under the key "elmo"'):
        model(premise=sentence, hypothesis=sentence)
