import dataclasses
import logging
import math
from typing import Dict, List

import numpy
import pytest
import torch
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.training.optimizers import Optimizer

from elmo_plugin.elmo import save_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.compute_dtype import COMPUTE_DTYPES
from elmo_plugin.allennlp.lm.corpus_vocabulary import CorpusVocabulary
from elmo_plugin.allennlp.lm.dataset_readers import BilmCorpusReader
from elmo_plugin.allennlp.lm.models import BilmLanguageModel
from tests.fields import tokens_of
from tests.lm.conftest import tensorize

SENTENCES = "fixtures/lm/sentences.txt"


def _model(tiny_bilm, **kwargs):
    torch.manual_seed(1)
    vocabulary = CorpusVocabulary.from_corpus(corpus=SENTENCES)
    return BilmLanguageModel(vocabulary, bilm=tiny_bilm, **kwargs)


def _batch(model):
    reader = BilmCorpusReader()
    return tensorize(list(reader.read(SENTENCES))[:4], model.vocab, reader)


def _lowest_possible_loss(sentences):
    """The mean NLL of a perfect memoriser of `sentences`: where sentences sharing a prefix
    (or, backward, a suffix) go on differently, even it must spread its probability."""

    def direction(rows):
        total, count = 0.0, 0
        for row in rows:
            for i in range(1, len(row)):
                same_prefix = [r for r in rows if r[:i] == row[:i]]
                total -= math.log(sum(r[i] == row[i] for r in same_prefix) / len(same_prefix))
                count += 1
        return total, count

    rows = [["<S>"] + s + ["</S>"] for s in sentences]
    forward, backward = direction(rows), direction([r[::-1] for r in rows])
    return (forward[0] + backward[0]) / (forward[1] + backward[1])


def test_overfits_a_few_sentences_to_near_zero_loss(tiny_bilm):
    model = _model(tiny_bilm, num_samples=None, dropout=0.0)
    reader = BilmCorpusReader()
    instances = list(reader.read(SENTENCES))[:4]
    batch = tensorize(instances, model.vocab, reader)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    first = None
    for _ in range(200):
        optimizer.zero_grad()
        loss = model(**batch)["loss"]
        first = first if first is not None else loss.item()
        loss.backward()
        optimizer.step()
    assert first is not None
    model.eval()
    final = model(**batch)["loss"].item()
    floor = _lowest_possible_loss([[t.text for t in tokens_of(i, "tokens")] for i in instances])
    assert floor < 0.15  # where the sentences part ways, even a perfect memoriser must guess
    assert first > 5.0 and final < floor + 0.02


def test_bfloat16_training_decreases_the_loss_like_float32(tiny_bilm):
    """The same steps from the same start: bfloat16 products, float32 master weights."""
    reader = BilmCorpusReader()
    losses: Dict[str, List[float]] = {}
    for name in ("float32", "bfloat16"):
        model = _model(tiny_bilm, num_samples=None, dropout=0.0, compute_dtype=name)
        batch = tensorize(list(reader.read(SENTENCES))[:4], model.vocab, reader)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
        losses[name] = []
        for _ in range(30):
            optimizer.zero_grad()
            loss = model(**batch)["loss"]
            losses[name].append(loss.item())
            loss.backward()
            optimizer.step()
        assert all(p.dtype == torch.float32 for p in model.parameters())
        assert model.bilm.compute_dtype == model.softmax.compute_dtype == COMPUTE_DTYPES[name]
    exact, reduced = losses["float32"], losses["bfloat16"]
    assert abs(reduced[0] - exact[0]) < 1e-2 * exact[0]
    assert reduced[-1] < 0.5 * reduced[0]
    # After 30 steps (loss 5.5 to 1.4) the two stay within 15% of float32's decrease (4% on
    # torch 2.15, 6% on torch 1.12).
    assert abs(reduced[-1] - exact[-1]) < 0.15 * (exact[0] - exact[-1])
    assert reduced != exact  # it did run in bfloat16


@pytest.mark.parametrize("fused", [False, True], ids=["packed", "fused"])
def test_perplexity_is_exp_of_the_mean_nll_computed_by_hand(tiny_bilm, fused):
    model = _model(tiny_bilm, num_samples=8).eval()
    # the fused path (the GPU's) scores every position, masked
    model.bilm.lstm.execution = dataclasses.replace(model.bilm.lstm.execution, fused=fused)
    reader = BilmCorpusReader()
    batch = tensorize(list(reader.read(SENTENCES))[:6], model.vocab, reader)
    with torch.no_grad():
        model(**batch)
        metrics = model.get_metrics(reset=True)
        # By hand: every position's forward state predicts the next word, its backward state
        # the previous one, with the full softmax.
        output = model.bilm(batch["tokens"]["elmo"]["elmo_tokens"])
        top, mask = output["activations"][-1], output["mask"]
        ids = batch["targets"]["tokens"]["tokens"]
        weight, bias = model.softmax.weight, model.softmax.bias
        forward, backward = [], []
        for row in range(ids.size(0)):
            length = int(mask[row].sum())
            for position in range(length):
                log_probabilities = torch.log_softmax(weight @ top[row, position, :16] + bias, 0)
                if position + 1 < length:
                    forward.append(-log_probabilities[ids[row, position + 1] - 1])
                log_probabilities = torch.log_softmax(weight @ top[row, position, 16:] + bias, 0)
                if position > 0:
                    backward.append(-log_probabilities[ids[row, position - 1] - 1])
    assert metrics["forward_perplexity"] == pytest.approx(
        math.exp(sum(forward) / len(forward)), rel=1e-5
    )
    assert metrics["backward_perplexity"] == pytest.approx(
        math.exp(sum(backward) / len(backward)), rel=1e-5
    )
    both = (sum(forward) + sum(backward)) / (len(forward) + len(backward))
    assert metrics["perplexity"] == pytest.approx(math.exp(both), rel=1e-5)


@pytest.mark.parametrize("fused", [False, True], ids=["packed", "fused"])
def test_packed_windows_carry_the_forward_state_along_each_lane(tiny_bilm, fused):
    """The forward LM scores a lane read in windows of 4 exactly as in one long window."""
    model = _model(tiny_bilm).eval()
    model.bilm.lstm.execution = dataclasses.replace(model.bilm.lstm.execution, fused=fused)
    windows = BilmCorpusReader(mode="packed", num_lanes=1, window_length=4)
    whole = BilmCorpusReader(mode="packed", num_lanes=1, window_length=10_000)

    def forward_nll(reader, batch_size):
        model.reset_states()
        instances = list(reader.read(SENTENCES))
        total = 0.0
        with torch.no_grad():
            for start in range(0, len(instances), batch_size):
                output = model(
                    **tensorize(instances[start : start + batch_size], model.vocab, reader)
                )
                total += float(output["forward_loss"]) * int(output["num_targets"])
        return total

    assert forward_nll(windows, 1) == pytest.approx(forward_nll(whole, 1), rel=1e-5)
    # With several lanes, any batch size works: the states follow the lanes, not the rows.
    lanes = BilmCorpusReader(mode="packed", num_lanes=3, window_length=4)
    assert forward_nll(lanes, 2) == pytest.approx(forward_nll(lanes, 3), rel=1e-5)


def test_forgetting_the_carried_state_changes_the_scores(tiny_bilm):
    """The carried state is used: forgetting it between windows changes the scores."""
    model = _model(tiny_bilm).eval()
    reader = BilmCorpusReader(mode="packed", num_lanes=2, window_length=4)
    instances = list(reader.read(SENTENCES))
    with torch.no_grad():
        batches = [tensorize(instances[i : i + 2], model.vocab, reader) for i in range(0, 8, 2)]
        carried = [model(**batch)["forward_loss"] for batch in batches]
        fresh = []
        for batch in batches:
            model.reset_states()
            fresh.append(model(**batch)["forward_loss"])
    assert carried[0] == fresh[0] and carried[1] != fresh[1]


def test_vocabulary_without_sentence_markers_is_an_error(tiny_bilm):
    vocabulary = Vocabulary()
    vocabulary.add_tokens_to_namespace(["the", "cat"], "tokens")
    with pytest.raises(ConfigurationError, match="no <S> or </S>"):
        BilmLanguageModel(vocabulary, bilm=tiny_bilm)


def test_needs_options_or_an_options_file(tiny_bilm):
    vocabulary = CorpusVocabulary.from_corpus(corpus=SENTENCES)
    with pytest.raises(ConfigurationError, match="needs either"):
        BilmLanguageModel(vocabulary)
    del tiny_bilm["lstm"]["dim"]
    with pytest.raises(ConfigurationError, match="'lstm' has no 'dim'"):
        BilmLanguageModel(vocabulary, bilm=tiny_bilm)


def test_inline_options_get_the_checks_of_an_options_file(tiny_bilm):
    vocabulary = CorpusVocabulary.from_corpus(corpus=SENTENCES)
    tiny_bilm["lstm"]["dim"] = "32"
    with pytest.raises(
        ConfigurationError, match=r"bilm options: 'lstm'.'dim' expected a positive integer"
    ):
        BilmLanguageModel(vocabulary, bilm=tiny_bilm)


def test_dropout_reaches_the_lstm_from_options_and_from_files(tiny_bilm, tmp_path):
    model = _model(tiny_bilm, dropout=0.3)
    assert model.bilm.lstm.dropout.p == 0.3
    save_bilm(model.bilm, str(tmp_path))
    loaded = BilmLanguageModel(
        model.vocab,
        options_file=str(tmp_path / "options.json"),
        weight_file=str(tmp_path / "weights.hdf5"),
        dropout=0.2,
    )
    assert loaded.bilm.lstm.dropout.p == 0.2


def test_a_training_step_on_the_fused_path_equals_the_packed_path(tiny_bilm):
    """The GPU's path (fused LSTM, every position scored and masked) gives the CPU's loss and
    gradients for the same sampled negatives."""
    reader = BilmCorpusReader()
    results = []
    for fused in (False, True):
        model = _model(tiny_bilm, num_samples=8, dropout=0.0)
        model.bilm.lstm.execution = dataclasses.replace(model.bilm.lstm.execution, fused=fused)
        batch = tensorize(list(reader.read(SENTENCES))[:6], model.vocab, reader)
        numpy.random.seed(0)
        output = model(**batch)
        output["loss"].backward()
        results.append(
            [output["loss"], output["num_targets"]] + [p.grad for p in model.parameters()]
        )
    for packed, fused in zip(*results):
        torch.testing.assert_close(fused, packed, rtol=1e-5, atol=1e-6)


def _tf32_switches():
    return torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32


@pytest.fixture
def tf32_off():
    """torch's TF32 switches off for the test, restored after it (torch's cuBLAS switch is no
    plain attribute, which monkeypatch cannot restore)."""
    saved = _tf32_switches()
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def test_tf32_is_on_during_the_models_passes_only(tiny_bilm, tf32_off):
    """`execution: {tf32: true}` turns TF32 on inside the forward pass and the backward pass,
    and leaves torch's switches as they were between and after them."""
    model = _model(tiny_bilm, execution={"tf32": True})
    seen = []
    model.bilm.lstm.register_forward_hook(lambda *_: seen.append(("forward", _tf32_switches())))
    batch = _batch(model)
    output = model(**batch)
    assert seen == [("forward", (True, True))] and _tf32_switches() == (False, False)
    model.bilm.character_encoder.char_embedding.register_hook(
        lambda grad: seen.append(("backward", _tf32_switches()))
    )
    output["loss"].backward()
    assert seen[1:] == [("backward", (True, True))]
    assert _tf32_switches() == (False, False)


def test_tf32_is_off_without_the_setting(tiny_bilm, tf32_off):
    model = _model(tiny_bilm)
    seen = []
    model.bilm.lstm.register_forward_hook(lambda *_: seen.append(_tf32_switches()))
    model(**_batch(model))["loss"].backward()
    assert seen == [(False, False)]


def test_the_execution_is_asked_for_by_the_config(tiny_bilm):
    assert not _model(tiny_bilm).bilm.execution.cuda_graphs
    model = _model(tiny_bilm, execution={"cuda_graphs": True, "deduplicates": False})
    assert model.bilm.lstm.execution.cuda_graphs
    assert not model.bilm.character_encoder.deduplicates


def test_lane_states_keep_a_lanes_later_window_and_grow_without_the_scratch_slot():
    from elmo_plugin.elmo.bilm.lstm.module import LstmState
    from elmo_plugin.allennlp.lm.models.bilm_language_model import _LaneStates

    def state(values):  # (layers=1, lanes, 1): one number a lane
        column = torch.tensor(values, dtype=torch.float).view(1, -1, 1)
        return LstmState(column.unsqueeze(1), column.unsqueeze(1).clone())

    states = _LaneStates()
    lane, window = torch.tensor([0, 1, 0]), torch.tensor([5, 3, 4])
    zeros = LstmState(torch.zeros(1, 1, 3, 1), torch.zeros(1, 1, 3, 1))
    states.initial(lane, window, 2, zeros)
    states.remember(lane, window, state([50.0, 13.0, 40.0]))
    assert states.window is not None and states.hidden is not None
    assert states.window[:2].tolist() == [5, 3]  # lane 0 keeps window 5's state, not 4's
    assert states.hidden[0, :2, 0].tolist() == [50.0, 13.0]
    # Lane 2 is new: it starts from zeros, whatever the dropped write left in the old scratch.
    lane, window = torch.tensor([0, 1, 2]), torch.tensor([6, 4, 5])
    initial = states.initial(lane, window, 3, zeros)
    assert initial.hidden[0, 0, :, 0].tolist() == [50.0, 13.0, 0.0]


def test_the_paper_optimizer_gives_the_sparse_softmax_gradient_a_group_of_its_own(tiny_bilm):
    """torch's Adagrad steps a group holding a sparse gradient one tensor at a time; the paper
    configs' groups leave every dense gradient to the multi-tensor path, and the update is
    the one a single group makes."""
    paper_optimizer = Params.from_file(
        "training_configs/bilm/bilm_elmo_original.jsonnet"
    ).as_dict()["trainer"]["optimizer"]
    reader = BilmCorpusReader()
    updated, groups = [], []
    for optimizer_config in (paper_optimizer, {"type": "adagrad", "lr": 0.2}):
        model = _model(tiny_bilm, num_samples=8, sparse_softmax_gradient=True)
        optimizer = Optimizer.from_params(
            model_parameters=list(model.named_parameters()),
            params=Params(dict(optimizer_config, initial_accumulator_value=1.0)),
        )
        batch = tensorize(list(reader.read(SENTENCES))[:6], model.vocab, reader)
        numpy.random.seed(0)
        model(**batch)["loss"].backward()
        optimizer.step()
        updated.append([p.detach().clone() for p in model.parameters()])
        groups.append([[p.grad.is_sparse for p in g["params"]] for g in optimizer.param_groups])
    assert sorted(groups[0]) == [[False] * (len(updated[0]) - 1), [True]]
    for grouped, single in zip(*updated):
        torch.testing.assert_close(grouped, single, rtol=0, atol=0)


def test_the_packed_lanes_log_the_path_that_ran_once(tiny_bilm, caplog):
    """The lanes run the encoder and the LSTM apart from the biLM's forward pass: still one
    line for the path, at the first batch."""
    caplog.set_level(logging.INFO, logger="elmo_plugin.elmo.bilm.model")
    model = _model(tiny_bilm)
    reader = BilmCorpusReader(mode="packed", num_lanes=2, window_length=4)
    instances = list(reader.read(SENTENCES))[:4]
    for batch in (instances[:2], instances[2:]):
        model(**tensorize(batch, model.vocab, reader))
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("biLM ran")]
    assert len(lines) == 1 and "LSTM packed (recurrence threads: torch's count)" in lines[0]
