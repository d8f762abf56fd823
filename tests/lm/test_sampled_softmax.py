import math

import numpy
import pytest
import torch
from allennlp.modules.sampled_softmax_loss import SampledSoftmaxLoss

from elmo_plugin.allennlp.lm.modules import SampledSoftmax, log_uniform_candidates


def _sequential_draws(num_words, num_samples, uniforms):
    """The one-draw-at-a-time algorithm of TensorFlow / AllenNLP over given uniforms."""
    chosen, tries = [], 0
    for u in uniforms:
        tries += 1
        sample = min(max(int(math.exp(u * math.log(num_words + 1))) - 1, 0), num_words - 1)
        if sample not in chosen:
            chosen.append(sample)
        if len(chosen) == num_samples:
            return chosen, tries
    raise AssertionError("not enough uniforms")


def test_vectorised_sampler_equals_drawing_one_at_a_time():
    for seed in range(5):
        ours, tries = log_uniform_candidates(1000, 200, numpy.random.RandomState(seed))
        uniforms = numpy.random.RandomState(seed).rand(100_000)
        expected, expected_tries = _sequential_draws(1000, 200, uniforms)
        assert list(ours) == expected and tries == expected_tries
        assert len(set(ours)) == 200


def test_sampled_loss_equals_allennlps_for_the_same_draws(monkeypatch):
    torch.manual_seed(0)
    ours = SampledSoftmax(num_words=500, embedding_dim=8, num_samples=50).train()
    theirs = SampledSoftmaxLoss(num_words=500, embedding_dim=8, num_samples=50).train()
    # Not sparse: its weights are Parameters (typed as the Embeddings of its sparse form).
    their_weight, their_bias = theirs.softmax_w, theirs.softmax_b
    assert isinstance(their_weight, torch.nn.Parameter)
    assert isinstance(their_bias, torch.nn.Parameter)
    with torch.no_grad():
        their_weight.copy_(ours.weight)
        their_bias.copy_(torch.randn(500))
        ours.bias.copy_(their_bias)
    draws = log_uniform_candidates(500, 50, numpy.random.RandomState(3))
    monkeypatch.setattr(
        "elmo_plugin.allennlp.lm.modules.sampled_softmax.log_uniform_candidates", lambda *a: draws
    )
    theirs.choice_func = lambda *a: draws
    embeddings = torch.randn(30, 8, requires_grad=True)
    targets = torch.randint(0, 500, (30,))
    targets[:5] = torch.from_numpy(draws[0][:5])  # some accidental hits
    our_loss, their_loss = ours(embeddings, targets).sum(), theirs(embeddings, targets)
    assert torch.allclose(our_loss, their_loss, atol=1e-4)
    # The same gradients, too (accidental hits are masked outside autograd).
    our_gradients = torch.autograd.grad(our_loss, [embeddings, ours.weight, ours.bias])
    their_gradients = torch.autograd.grad(their_loss, [embeddings, their_weight, their_bias])
    for mine, theirs_ in zip(our_gradients, their_gradients):
        assert torch.allclose(mine, theirs_, atol=1e-5)


def test_evaluation_is_the_exact_softmax_in_bounded_chunks():
    torch.manual_seed(0)
    softmax = SampledSoftmax(
        num_words=300, embedding_dim=6, num_samples=20, max_logits_per_chunk=1000
    )
    softmax.eval()
    embeddings, targets = torch.randn(17, 6), torch.randint(0, 300, (17,))
    logits = embeddings @ softmax.weight.t() + softmax.bias
    expected = -torch.log_softmax(logits, dim=1)[torch.arange(17), targets]
    assert torch.allclose(softmax(embeddings, targets), expected, atol=1e-5)


def test_training_without_samples_uses_the_full_softmax():
    softmax = SampledSoftmax(num_words=10, embedding_dim=4, num_samples=None).train()
    embeddings, targets = torch.randn(5, 4), torch.randint(0, 10, (5,))
    expected = torch.nn.functional.cross_entropy(
        embeddings @ softmax.weight.t() + softmax.bias, targets, reduction="none"
    )
    assert torch.allclose(softmax(embeddings, targets), expected)


def test_loading_weights_of_another_vocabulary_is_a_clear_error():
    from elmo_plugin.elmo.errors import ConfigurationError

    small = SampledSoftmax(num_words=10, embedding_dim=4)
    with pytest.raises(ConfigurationError, match="vocabulary does not belong"):
        SampledSoftmax(num_words=12, embedding_dim=4).load_state_dict(small.state_dict())


def test_a_sparse_gradient_gives_adagrad_exactly_the_dense_update():
    """The softmax rows a step does not touch get no gradient; Adagrad on the sparse gradient
    (only the touched rows) leaves every weight where the dense step leaves it."""
    results = []
    for sparse in (False, True):
        torch.manual_seed(0)
        softmax = SampledSoftmax(
            num_words=500, embedding_dim=8, num_samples=30, sparse_gradient=sparse
        )
        optimizer = torch.optim.Adagrad(softmax.parameters(), lr=0.2, initial_accumulator_value=1.0)
        numpy.random.seed(0)
        for _ in range(3):
            embeddings = torch.randn(12, 8)
            softmax(embeddings, torch.randint(0, 500, (12,))).mean().backward()
            assert softmax.weight.grad is not None
            assert softmax.weight.grad.is_sparse == sparse
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        results.append([p.detach().clone() for p in softmax.parameters()])
    for dense, sparse in zip(*results):
        torch.testing.assert_close(sparse, dense, rtol=1e-6, atol=1e-7)
