"""What a batch runs on: a choice given as `true` that cannot run on a batch's input is refused
with every reason (never run otherwise in silence), what `"auto"` leaves to the device runs
everywhere, and the biLM logs the path that ran once, and again when it changes."""

import logging
import pickle

import pytest
import torch

from elmo_plugin.elmo import ConfigurationError, Elmo, Execution, batch_to_ids, load_bilm
from elmo_plugin.elmo.bilm.lstm.triton_gates import uses_triton
from elmo_plugin.elmo.execution.settings import Conditions

CUDA = torch.device("cuda")
LOGGER = "elmo_plugin.elmo.bilm.model"


@pytest.fixture
def bilm(elmo_options, elmo_weights):
    return load_bilm(elmo_options, elmo_weights)


@pytest.fixture
def ids(sentences):
    return batch_to_ids(sentences[:3])


def _refusal(bilm, ids, **setting) -> str:
    bilm.set_execution(Execution(**setting))
    with pytest.raises(ConfigurationError) as error:
        bilm(ids)
    return str(error.value)


def test_cuda_graphs_demanded_on_cpu_tensors_are_refused_naming_the_way_to_run(bilm, ids):
    message = _refusal(bilm, ids, cuda_graphs=True)
    assert "cuda_graphs is true and the input is on cpu" in message
    assert 'set cuda_graphs "auto"' in message


def test_sorted_inference_demanded_off_the_fused_path_is_refused(bilm, ids):
    with torch.no_grad():
        message = _refusal(bilm, ids, sorted_inference=True)
    assert "sorted_inference is true and the input is on cpu, where the packed path runs" in message


def test_sorted_inference_demanded_where_gradients_flow_is_refused(bilm, ids):
    bilm.requires_grad_(True)
    message = _refusal(bilm, ids, fused=True, sorted_inference=True)
    assert "gradients must flow through the biLM" in message
    with torch.no_grad():  # inference: it runs, sorted
        bilm(ids)
    assert bilm.lstm.last_path is not None and bilm.lstm.last_path.sorted


def test_every_reason_is_in_one_error(bilm, ids):
    bilm.requires_grad_(True)
    message = _refusal(bilm, ids, sorted_inference=True)
    assert message.startswith("execution {fused=auto, cuda_graphs=False, sorted_inference=True")
    assert "cannot run: (1) sorted_inference is true and the input is on cpu" in message
    assert "; (2) sorted_inference is true and gradients must flow" in message


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_on_cuda_without_triton_a_demanded_fused_path_and_bfloat16_without_support_are_refused(
    dtype,
):
    """The reasons a CUDA batch brings, listed without a GPU: the conditions are arguments."""
    setting = Execution(fused=True, sorted_inference=True)
    reasons = setting.refusals(Conditions(CUDA, True, False, False), dtype)
    assert reasons[0].startswith("fused is true and the input is on cuda")
    assert "Triton, which is not installed" in reasons[0]
    assert reasons[1].startswith("sorted_inference is true and gradients must flow")
    assert len(reasons) == (3 if dtype == torch.bfloat16 else 2)
    if dtype == torch.bfloat16:
        assert "no bfloat16 products (a CUDA GPU before compute capability 8.0" in reasons[2]
    # What "auto" chooses runs: the fused path with torch's gates, no demand to refuse.
    assert Execution(cuda_graphs=None).refusals(Conditions(CUDA, True, False, True), dtype) == []


def test_auto_runs_on_the_cpu_what_it_runs_on_cuda_where_it_can(bilm, ids):
    bilm.set_execution(Execution(fused=True, cuda_graphs=None))
    bilm(ids)
    path = bilm.lstm.last_path
    assert path is not None and path.fused and not path.cuda_graphs
    assert Execution(cuda_graphs=None).uses_cuda_graphs(CUDA)
    assert not Execution(cuda_graphs=None, sorted_inference=True).uses_cuda_graphs(CUDA)


def _lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and "biLM ran" in r.message]


def test_the_path_that_ran_is_logged_once_and_again_when_it_changes(bilm, ids, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    with torch.no_grad():
        bilm(ids)
        bilm(ids)
    lines = _lines(caplog)
    assert len(lines) == 1
    assert lines[0] == (
        "biLM ran: LSTM packed (recurrence threads: adaptive) on cpu; compute dtype float32; "
        f"torch threads {torch.get_num_threads()}; character CNN distinct tokens, token cache "
        "on (50000 types); activation cache none"
    )
    bilm.requires_grad_(True)
    bilm(ids)  # training: gradients flow, so no adaptive threads and no token cache
    bilm(ids)
    lines = _lines(caplog)
    assert len(lines) == 2
    assert "packed (recurrence threads: torch's count)" in lines[1]
    assert "token cache off while gradients reach the encoder" in lines[1]
    bilm.set_execution(Execution(fused=True, deduplicates=False))
    bilm(ids)
    gates = "Triton" if uses_triton(ids) else "torch"
    assert f"LSTM fused ({gates} gates) on cpu" in _lines(caplog)[2]
    assert "every position (deduplicates false: no token cache)" in _lines(caplog)[2]


def test_the_log_says_whether_bfloat16_is_native_on_this_cpu(bilm, ids, caplog, monkeypatch):
    from elmo_plugin.elmo.bilm import model

    caplog.set_level(logging.INFO, logger=LOGGER)
    bilm.set_execution(Execution(compute_dtype="bfloat16"))
    with torch.no_grad():
        for native in (True, False):
            monkeypatch.setattr(model, "cpu_has_native_bfloat16", lambda: native)
            bilm(ids)
    lines = _lines(caplog)
    assert "compute dtype bfloat16 (native)" in lines[0]
    assert "compute dtype bfloat16 (emulated: weights rounded, products float32)" in lines[1]


def test_the_log_names_the_activation_cache_of_an_elmo(elmo_options, elmo_weights, ids, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    elmo = Elmo(elmo_options, elmo_weights, 1, activation_cache={"max_memory_mb": 1})
    elmo(ids)
    assert _lines(caplog)[0].endswith("activation cache 1 MB in memory, float32")


def test_a_long_sentences_windows_log_the_path_too(elmo_options, elmo_weights, caplog):
    from elmo_plugin import ElmoEmbedder

    caplog.set_level(logging.INFO, logger=LOGGER)
    embedder = ElmoEmbedder(elmo_options, elmo_weights, max_tokens=8)
    embedder.embed_sentence(["word"] * 20)  # in windows of 4 positions, past the biLM's forward
    assert len(_lines(caplog)) == 1


def test_a_bilm_pickled_whole_before_these_settings_still_runs(bilm, ids):
    """`torch.save` of a whole module keeps its `__dict__`: one saved by an earlier version has
    neither the log's attributes nor an `Execution` with a compute dtype."""
    old_setting = Execution(fused=True)
    vars(old_setting).pop("compute_dtype")
    bilm.lstm.execution = old_setting
    for module, names in (
        (bilm, ["_logged_run", "activation_cache_described"]),
        (bilm.lstm, ["last_path"]),
    ):
        for name in names:
            vars(module).pop(name, None)
    restored = pickle.loads(pickle.dumps(bilm))
    restored(ids)
    assert restored.execution == Execution(fused=True, compute_dtype="float32")
