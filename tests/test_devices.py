"""The modules follow the model to its device. The CUDA cases skip without a CUDA device; the
same steps run on the CPU everywhere, so the tests themselves are exercised in CI."""

import copy
import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.modules.elmo import batch_to_ids

import elmo_plugin.allennlp.tasks.ner  # noqa: F401
from elmo_plugin.elmo import Elmo, ElmoCharacterEncoder

CUDA = pytest.mark.gpu  # skipped without a CUDA device (tests/conftest.py)
# ner_elmo's ELMo token embedder, as a config path.
ELMO = "model.text_field_embedder.token_embedders.elmo"
DEVICES = ["cpu", pytest.param("cuda", marks=CUDA)]
TRAINING = [
    ("cpu", False),
    pytest.param("cuda", False, marks=CUDA),
    pytest.param("cuda", True, marks=CUDA),
]


@pytest.fixture(autouse=True)
def exact_float32_on_cuda():
    # cuDNN's convolutions run in TF32 by default on Ampere and later: 1e-3 relative, not 1e-5.
    if torch.cuda.is_available():
        previous = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
        yield
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = previous
    else:
        yield


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cached", [False, True], ids=["uncached", "activation_cache"])
def test_embedding_on_a_device_equals_the_cpu(
    device, cached, elmo_options, elmo_weights, sentences
):
    from elmo_plugin.elmo import ActivationCache

    def build():
        cache = ActivationCache(max_memory_mb=64) if cached else None
        return Elmo(elmo_options, elmo_weights, dropout=0.0, activation_cache=cache).eval()

    ids = batch_to_ids(sentences)
    with torch.no_grad():
        expected = build()(ids)["elmo_representations"][0]
        moved = build().to(device)
        first = moved(ids.to(device))["elmo_representations"][0]
        again = moved(ids.to(device))["elmo_representations"][0]  # from the caches now
    assert first.device.type == device
    torch.testing.assert_close(first.cpu(), expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(again.cpu(), expected, rtol=1e-5, atol=1e-5)


def test_a_move_empties_the_character_cnn_cache(elmo_options, elmo_weights, sentences) -> None:
    elmo = Elmo(elmo_options, elmo_weights, dropout=0.0).eval()
    encoder: ElmoCharacterEncoder = elmo.bilm.character_encoder
    ids = batch_to_ids(sentences)
    with torch.no_grad():
        elmo(ids)
        assert len(encoder._type_cache) > 0
        doubled = copy.deepcopy(elmo).double()  # a dtype move takes the same path as a device move
        assert len(doubled.bilm.character_encoder._type_cache) == 0
        assert doubled(ids)["elmo_representations"][0].dtype == torch.float64


def _train(config, run, overrides, device, amp):
    overrides = {
        **overrides,
        "trainer.cuda_device": 0 if device == "cuda" else -1,
        "trainer.use_amp": amp,
    }
    model = train_model_from_file(config, str(run), overrides=json.dumps(overrides))
    metrics = json.loads((run / "metrics.json").read_text())
    return model, metrics


@pytest.mark.parametrize("device, amp", TRAINING)
def test_a_training_step_of_the_bilm_language_model(device, amp, tmp_path):
    overrides = {
        "train_data_path": "fixtures/lm/sentences.txt",
        "validation_data_path": "fixtures/lm/sentences.txt",
        "vocabulary.corpus": "fixtures/lm/sentences.txt",
        "model.bilm.lstm": {
            "dim": 32,
            "projection_dim": 16,
            "n_layers": 2,
            "cell_clip": 3,
            "proj_clip": 3,
            "use_skip_connections": True,
        },
        "model.num_samples": 64,
        "trainer.num_epochs": 1,
    }
    model, metrics = _train(
        "training_configs/bilm/bilm_tiny.jsonnet",
        tmp_path / "run",
        overrides,
        device,
        amp,
    )
    assert next(model.parameters()).device.type == device
    assert 1 < metrics["validation_perplexity"] < float("inf")


@pytest.mark.parametrize("device, amp", TRAINING)
def test_a_training_step_of_ner_elmo(device, amp, tmp_path):
    overrides = {
        "train_data_path": "fixtures/ner/train.txt",
        "validation_data_path": "fixtures/ner/dev.txt",
        "test_data_path": "fixtures/ner/test.txt",
        f"{ELMO}.options_file": "fixtures/elmo/options.json",
        f"{ELMO}.weight_file": "fixtures/elmo/lm_weights.hdf5",
        "model.encoder.hidden_size": 8,
        "data_loader.batch_sampler.batch_size": 8,
        "trainer.num_epochs": 1,
    }
    model, metrics = _train(
        "training_configs/ner/ner_elmo.jsonnet",
        tmp_path / "run",
        overrides,
        device,
        amp,
    )
    assert next(model.parameters()).device.type == device
    assert metrics["training_loss"] == metrics["training_loss"]  # not NaN
