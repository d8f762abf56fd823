import copy

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, Vocabulary
from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer
from allennlp.models import Model

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.squad.dataset_readers import SquadV1Reader
from elmo_plugin.allennlp.tasks.squad.models import BidafRc
from tests.paths import FIXTURES

FIXTURE = str(FIXTURES / "squad" / "tiny_train.json")
ELMO = {
    "options_file": str(FIXTURES / "elmo" / "options.json"),
    "weight_file": str(FIXTURES / "elmo" / "lm_weights.hdf5"),
    "dropout": 0.0,
}
ELMO_DIM = 32
HIDDEN = 5


def build_reader_instances():
    reader = SquadV1Reader(
        token_indexers={"tokens": SingleIdTokenIndexer(), "elmo": ELMoTokenCharactersIndexer()},
        passage_length_limit=60,
        skip_answers_outside_passage=True,
    )
    instances = list(reader.read(FIXTURE))
    return instances, Vocabulary.from_instances(instances)


def model_params(mixes=0, use_input=False, use_output=False, **extra):
    lstm = {"type": "lstm", "hidden_size": HIDDEN, "bidirectional": True}
    params = {
        "type": "bidaf_rc",
        "text_field_embedder": {
            "token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 6}}
        },
        "phrase_layer": lstm,
        "modeling_layer": lstm,
        "span_end_encoder": lstm,
        "dropout": 0.0,
        "use_input_elmo": use_input,
        "use_output_elmo": use_output,
        **extra,
    }
    if mixes:
        params["elmo"] = {**ELMO, "num_output_representations": mixes}
    return Params(params)


@pytest.fixture(scope="module")
def data():
    return build_reader_instances()


def tensors(instances, vocab, count=4):
    batch = Batch(copy.deepcopy(instances[:count]))
    batch.index_instances(vocab)
    return batch.as_tensor_dict()


def test_elmo_at_input_and_output_runs_the_bilm_once_per_text(data):
    instances, vocab = data
    model = Model.from_params(vocab=vocab, params=model_params(2, True, True))
    assert isinstance(model, BidafRc)
    # G = 4 * encoder output, plus the output ELMo representation.
    assert model._modeling_layer.get_input_dim() == 4 * 2 * HIDDEN + ELMO_DIM
    assert model._phrase_layer.get_input_dim() == 6 + ELMO_DIM
    calls = []
    assert model._elmo is not None
    model._elmo.bilm.register_forward_hook(lambda *args: calls.append(1))
    output = model(**tensors(instances, vocab))
    assert len(calls) == 2  # question and passage, each giving both representations
    output["loss"].backward()
    for mix in model._elmo.scalar_mixes:
        weights_grad, gamma_grad = mix.scalar_parameters.grad, mix.gamma.grad
        assert weights_grad is not None and weights_grad.abs().sum() > 0
        assert gamma_grad is not None and gamma_grad.abs().sum() > 0
    metrics = model.get_metrics()
    assert {"_elmo_mix0_lstm_1", "_elmo_mix1_lstm_2", "_elmo_mix1_gamma"} <= set(metrics)


def test_elmo_at_the_output_only_leaves_the_input_alone(data):
    instances, vocab = data
    model = Model.from_params(vocab=vocab, params=model_params(1, use_output=True))
    assert isinstance(model, BidafRc) and model._elmo is not None
    assert model._phrase_layer.get_input_dim() == 6
    assert model._modeling_layer.get_input_dim() == 4 * 2 * HIDDEN + ELMO_DIM
    model(**tensors(instances, vocab))["loss"].backward()
    gamma_grad = model._elmo.scalar_mixes[0].gamma.grad
    assert gamma_grad is not None and gamma_grad.abs().sum() > 0


@pytest.mark.parametrize(
    "mixes, use_input, use_output, message",
    [
        (0, True, False, "need an `elmo` module"),
        (2, True, False, "num_output_representations is 2 but 1 ELMo places"),
        (1, False, False, "num_output_representations is 1 but 0 ELMo places"),
    ],
)
def test_inconsistent_elmo_settings_are_configuration_errors(
    data, mixes, use_input, use_output, message
):
    with pytest.raises(ConfigurationError) as error:
        Model.from_params(vocab=data[1], params=model_params(mixes, use_input, use_output))
    assert message in str(error.value)


@pytest.mark.parametrize("mixes, use_input, use_output", [(0, False, False), (2, True, True)])
def test_forward_leaves_the_callers_batch_as_it_was(data, mixes, use_input, use_output):
    instances, vocab = data
    model = Model.from_params(vocab=vocab, params=model_params(mixes, use_input, use_output))
    batch = tensors(instances, vocab)
    before = {field: dict(batch[field]) for field in ("question", "passage")}
    model(**batch)
    assert {field: batch[field] for field in ("question", "passage")} == before
    assert all(set(text) == {"tokens", "elmo"} for text in before.values())


def test_an_elmo_model_needs_the_elmo_indexer(data):
    instances, vocab = data
    model = Model.from_params(vocab=vocab, params=model_params(1, use_input=True))
    batch = tensors(instances, vocab)
    del batch["question"]["elmo"]
    with pytest.raises(ConfigurationError, match='no "elmo" token indexer'):
        model(**batch)


def test_unlabelled_rows_are_left_out_of_the_loss(data):
    instances, vocab = data
    model = Model.from_params(vocab=vocab, params=model_params())
    model.eval()
    batch = tensors(instances, vocab)
    labelled_only = model(**copy.deepcopy(batch))["loss"]
    with_unlabelled = copy.deepcopy(batch)
    for key in ("span_start", "span_end"):
        with_unlabelled[key] = torch.cat([with_unlabelled[key], torch.full((1, 1), -1)])
    for field in ("question", "passage"):
        for indexer, tensor_dict in with_unlabelled[field].items():
            for name, tensor in tensor_dict.items():
                tensor_dict[name] = torch.cat([tensor, tensor[:1]])
    with_unlabelled["metadata"] = with_unlabelled["metadata"] + with_unlabelled["metadata"][:1]
    assert model(**with_unlabelled)["loss"].item() == pytest.approx(labelled_only.item(), rel=1e-5)

    none_labelled = copy.deepcopy(batch)
    none_labelled["span_start"].fill_(-1)
    none_labelled["span_end"].fill_(-1)
    loss = model(**none_labelled)["loss"]
    assert loss.item() == 0.0 and loss.requires_grad


def test_decoded_answers_are_passage_substrings_within_the_length_limit(data):
    instances, vocab = data
    model = Model.from_params(vocab=vocab, params=model_params(max_span_length=3))
    output = model(**tensors(instances, vocab))
    for (start, end), (first, last), answer, meta in zip(
        output["best_span_chars"],
        output["best_span"].tolist(),
        output["best_span_str"],
        [i["metadata"] for i in instances[:4]],
    ):
        assert answer == meta["passage"][start:end]
        assert 0 <= first <= last <= first + 2


def test_learns_the_fixture_spans(data):
    instances, vocab = data
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=model_params(2, True, True))
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.02)
    batch = tensors(instances, vocab, count=6)
    losses = []
    for _ in range(40):
        optimizer.zero_grad()
        loss = model(**copy.deepcopy(batch))["loss"]
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.get_metrics(reset=True)
    model.eval()
    model(**copy.deepcopy(batch))
    metrics = model.get_metrics()
    assert losses[-1] < losses[0] / 4
    assert metrics["f1"] > 0.8 and metrics["start_acc"] > 0.8
