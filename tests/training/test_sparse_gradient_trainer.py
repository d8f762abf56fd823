"""The `sparse_gradient_descent` trainer clips sparse gradients (the bilm model's
`sparse_softmax_gradient`) as torch clips dense ones; the paper configs train with both."""

import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file

import elmo_plugin.training.sparse_gradient_trainer as sparse_gradient_trainer
from elmo_plugin.training.sparse_gradient_trainer import clip_gradient_norm


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
    original = sparse_gradient_trainer.clip_gradient_norm

    def recording(parameters, max_norm):
        parameters = list(parameters)
        clipped.append(any(p.grad is not None and p.grad.is_sparse for p in parameters))
        return original(parameters, max_norm)

    monkeypatch.setattr(sparse_gradient_trainer, "clip_gradient_norm", recording)
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
        "trainer.num_epochs": 1,
    }
    train_model_from_file(
        "elmo_plugin/training_configs/bilm/bilm_tiny.jsonnet",
        str(tmp_path / "run"),
        overrides=json.dumps(overrides),
    )
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert clipped and all(clipped)
    assert 1 < metrics["validation_perplexity"] < float("inf")
