"""The `sparse_gradient_descent` trainer clips sparse gradients (the bilm model's
`sparse_softmax_gradient`) as torch clips dense ones; the paper configs train with both."""

import json
from typing import Any

import pytest
import torch
from allennlp.commands.train import train_model_from_file

import elmo_plugin.allennlp.training.sparse_gradient_trainer as sparse_gradient_trainer
from elmo_plugin.allennlp.training.sparse_gradient_trainer import (
    clip_gradient_norm,
    clip_gradient_values,
)


@pytest.mark.parametrize("max_norm", [0.5, 1000.0], ids=["clipped", "unclipped"])
def test_sparse_and_dense_gradients_clip_as_torch_clips_them_dense(max_norm):
    torch.manual_seed(0)
    sparse_weight, dense_weight = (torch.nn.Parameter(torch.randn(10, 4)) for _ in range(2))
    ids = torch.tensor([1, 7, 7, 3])  # a row twice: coalesced before its norm
    for weight, sparse in ((sparse_weight, True), (dense_weight, False)):
        (
            torch.nn.functional.embedding(ids, weight, sparse=sparse)
            * torch.arange(16.0).view(4, 4)
        ).sum().backward()
    other = torch.nn.Parameter(torch.randn(3))
    other.grad = torch.randn(3)
    reference = other.detach().clone().requires_grad_()
    reference.grad = other.grad.clone()
    ours = clip_gradient_norm([sparse_weight, other], max_norm)
    theirs = torch.nn.utils.clip_grad_norm_([dense_weight, reference], max_norm)
    torch.testing.assert_close(ours, theirs)
    assert sparse_weight.grad is not None
    assert sparse_weight.grad.is_sparse
    torch.testing.assert_close(sparse_weight.grad.to_dense(), dense_weight.grad)
    torch.testing.assert_close(other.grad, reference.grad)


def test_the_paper_recipe_trains_with_sparse_softmax_gradients(tmp_path, monkeypatch):
    clipped = []
    clamped = []
    original = sparse_gradient_trainer.clip_gradient_norm
    original_values = sparse_gradient_trainer.clip_gradient_values

    def recording(parameters, max_norm):
        parameters = list(parameters)
        clipped.append(any(p.grad is not None and p.grad.is_sparse for p in parameters))
        return original(parameters, max_norm)

    def recording_values(parameters, clip_value):
        parameters = list(parameters)
        clamped.append(any(p.grad is not None and p.grad.is_sparse for p in parameters))
        original_values(parameters, clip_value)

    monkeypatch.setattr(sparse_gradient_trainer, "clip_gradient_norm", recording)
    monkeypatch.setattr(sparse_gradient_trainer, "clip_gradient_values", recording_values)
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
        },
        "model.num_samples": 8,  # fewer than the fixture's words: the sampled softmax
        "model.sparse_softmax_gradient": True,
        "trainer.type": "sparse_gradient_descent",
        "trainer.optimizer": {"type": "adagrad", "lr": 0.2, "initial_accumulator_value": 1.0},
        "trainer.grad_norm": 10.0,
        "trainer.grad_clipping": 5.0,  # AllenNLP's fails on sparse gradients
        "trainer.num_epochs": 1,
    }
    train_model_from_file(
        "training_configs/bilm/bilm_tiny.jsonnet",
        str(tmp_path / "run"),
        overrides=json.dumps(overrides),
    )
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert clipped and all(clipped) and clamped and all(clamped)
    assert 1 < metrics["validation_perplexity"] < float("inf")


def test_sparse_and_dense_gradient_values_clip_as_torch_clips_them_dense():
    torch.manual_seed(0)
    sparse_weight, dense_weight = (torch.nn.Parameter(torch.randn(10, 4)) for _ in range(2))
    ids = torch.tensor([1, 7, 7, 3])  # a row twice: summed, then clamped
    for weight, sparse in ((sparse_weight, True), (dense_weight, False)):
        (
            torch.nn.functional.embedding(ids, weight, sparse=sparse)
            * torch.arange(16.0).view(4, 4)
        ).sum().backward()
    clip_gradient_values([sparse_weight], 5.0)
    torch.nn.utils.clip_grad_value_([dense_weight], 5.0)
    assert sparse_weight.grad is not None and sparse_weight.grad.is_sparse
    torch.testing.assert_close(sparse_weight.grad.to_dense(), dense_weight.grad)


@pytest.mark.parametrize(
    "settings, key",
    [
        ({"grad_norm": -10.0}, "grad_norm"),
        ({"grad_norm": 0}, "grad_norm"),
        ({"grad_norm": None}, "grad_norm"),
        ({"grad_norm": float("inf")}, "grad_norm"),
        ({"grad_clipping": -1.0}, "grad_clipping"),
        ({"grad_clipping": 0.0}, "grad_clipping"),
        ({"grad_clipping": "1"}, "grad_clipping"),
    ],
)
def test_bad_gradient_settings_are_refused_naming_the_key(settings, key):
    from elmo_plugin.elmo.errors import ConfigurationError
    from elmo_plugin.allennlp.training.sparse_gradient_trainer import SparseGradientDescentTrainer

    # Checked before anything else is built, so nothing else is needed.
    nothing: Any = None
    with pytest.raises(ConfigurationError, match=rf"trainer\.{key} must be a positive number"):
        SparseGradientDescentTrainer(nothing, nothing, nothing, **settings)
