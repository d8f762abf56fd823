import copy
from typing import cast

import pytest
import torch
from allennlp.modules.elmo import batch_to_ids
from allennlp.nn.util import add_sentence_boundary_token_ids

from elmo_plugin.elmo import load_bilm
from elmo_plugin.elmo.bilm.characters.encoder import max_pooled_convolution
from tests.host_reads import host_reads_forbidden


def per_occurrence_encoding(encoder, ids):
    """The plain computation AllenNLP does: every position, padding included."""
    encoded = encoder(ids)
    full = encoder._encode(
        torch.cat([encoder.bos_characters.view(1, -1), ids.view(-1, 50)]).clamp(min=0)
    )
    return encoded, full


def test_type_deduplication_gives_the_same_embeddings_as_encoding_every_token(
    elmo_options, elmo_weights, sentences
):
    encoder = load_bilm(elmo_options, elmo_weights).character_encoder.eval()
    encoder.cache_size = 0
    ids = batch_to_ids(sentences[:6])
    with torch.no_grad():
        encoded = encoder(ids)
        embeddings, mask = encoded["token_embedding"], encoded["mask"]
        for row in range(ids.size(0)):
            length = int(mask[row].sum()) - 2
            direct = encoder._encode(ids[row, :length])
            torch.testing.assert_close(embeddings[row, 1 : length + 1], direct, atol=1e-6, rtol=0)
            assert torch.all(embeddings[row, length + 2 :] == 0)


def test_frozen_encoder_remembers_token_types_and_reuses_them(
    elmo_options, elmo_weights, sentences, monkeypatch
):
    encoder = load_bilm(elmo_options, elmo_weights).character_encoder.eval()
    for parameter in encoder.parameters():
        parameter.requires_grad_(False)
    ids = batch_to_ids(sentences[:4])
    first = encoder(ids)["token_embedding"]
    remembered = len(encoder._type_cache)
    distinct = len({token for sentence in sentences[:4] for token in sentence}) + 2  # <S>, </S>
    assert remembered == distinct
    calls = []
    original = encoder._encode

    def encode(type_ids):
        calls.append(len(type_ids))
        return original(type_ids)

    monkeypatch.setattr(encoder, "_encode", encode)
    again = encoder(ids)["token_embedding"]
    assert calls == []  # nothing new to encode
    assert torch.equal(first, again)


def test_cache_is_bounded_and_dropped_when_training(elmo_options, elmo_weights, sentences):
    encoder = load_bilm(elmo_options, elmo_weights, char_cnn_cache_size=10).character_encoder.eval()
    with torch.no_grad():
        encoder(batch_to_ids(sentences[:3]))
    assert len(encoder._type_cache) == 10
    encoder.train()
    assert len(encoder._type_cache) == 0


def test_trainable_encoder_gets_gradients_through_deduplicated_types(
    elmo_options, elmo_weights, sentences
):
    encoder = load_bilm(elmo_options, elmo_weights).character_encoder.train()
    ids = batch_to_ids([["the", "cat", "the"], ["the"]])
    encoder(ids)["token_embedding"].sum().backward()
    assert encoder.projection.weight.grad is not None
    assert encoder.char_embedding.grad is not None
    assert encoder.char_embedding.grad.abs().sum() > 0
    assert len(encoder._type_cache) == 0


def _trainable_encoders(elmo_options, elmo_weights):
    """Two copies of one trainable encoder: one encoding each distinct token of a batch once,
    the other (`deduplicates = False`) every position."""
    distinct = load_bilm(elmo_options, elmo_weights).character_encoder.train()
    every = copy.deepcopy(distinct)
    every.deduplicates = False
    return distinct, every


def test_encoding_every_position_gives_the_deduplicated_encodings_and_gradients(
    elmo_options, elmo_weights, sentences
):
    distinct, every = _trainable_encoders(elmo_options, elmo_weights)
    # Repeated words, padding, an empty sentence and a word of 49 characters (no trim).
    ids = batch_to_ids(sentences[:5] + [[], ["x" * 49, "the", "the"]])
    weights = torch.randn(ids.size(0), ids.size(1) + 2, distinct.get_output_dim())
    encodings = []
    for encoder in (distinct, every):
        encodings.append(encoder(ids)["token_embedding"])
        (encodings[-1] * weights).sum().backward()
    torch.testing.assert_close(encodings[1], encodings[0], atol=1e-6, rtol=0)
    for (name, mine), (_, reference) in zip(every.named_parameters(), distinct.named_parameters()):
        torch.testing.assert_close(mine.grad, reference.grad, atol=1e-5, rtol=1e-5, msg=name)


def test_encoding_every_position_reads_nothing_back_to_the_host(elmo_options, elmo_weights):
    """What the GPU's training step can run without waiting for the device; the deduplicating
    encoder needs counts (the check that this test can fail)."""
    distinct, every = _trainable_encoders(elmo_options, elmo_weights)
    windows = batch_to_ids([["<S>", "the", "cat", "the"], ["sat", "</S>", "<S>", "a"]])
    with host_reads_forbidden():
        every.encode_without_markers(windows)["token_embedding"].sum().backward()
        with pytest.raises(AssertionError, match="read back to the host"):
            distinct.encode_without_markers(windows)


def test_long_non_ascii_and_control_tokens(elmo_options, elmo_weights):
    encoder = load_bilm(elmo_options, elmo_weights).character_encoder.eval()
    long_token = "a" * 49 + "b" * 30
    ids = batch_to_ids([[long_token, "naïve", "\x00\x07", "\u200b", "😀"], []])
    with torch.no_grad():
        encoded = encoder(ids)
    assert encoded["token_embedding"].shape == (2, 7, 16)
    assert torch.isfinite(encoded["token_embedding"]).all()
    # Tokens longer than 50 characters are cut (as the indexer does): only the first 48 count.
    same_prefix = batch_to_ids([["a" * 49 + "c" * 30]])
    with torch.no_grad():
        torch.testing.assert_close(
            encoder(same_prefix)["token_embedding"][0, 1], encoded["token_embedding"][0, 1]
        )
    assert encoded["mask"].tolist()[1] == [True, True] + [False] * 5


def untrimmed_encoding(encoder, type_ids):
    """The CNN over all 50 character positions, as AllenNLP runs it."""
    embedded = torch.nn.functional.embedding(type_ids, encoder.char_embedding).transpose(1, 2)
    pooled = [encoder._activation(conv(embedded).max(dim=-1)[0]) for conv in encoder.convolutions]
    return encoder.projection(encoder.highways(torch.cat(pooled, dim=-1)))


def test_short_words_skip_the_padding_positions_with_the_same_encodings(elmo_options, elmo_weights):
    encoder = load_bilm(elmo_options, elmo_weights).character_encoder.eval()
    short = batch_to_ids([["a", "cat", "sat", "mid-sentence", "naïve"]]).view(-1, 50)
    longest = batch_to_ids([["x" * 49]]).view(-1, 50)
    widest = max(width for width, _ in encoder.filters)
    # "mid-sentence" is 12 characters plus the word markers: 14 positions and one padding window.
    assert encoder.trim_padding(short).size(1) == 14 + widest
    assert encoder.trim_padding(longest).size(1) == 50
    with torch.no_grad():
        for type_ids in (short, longest, torch.cat([short, longest])):
            torch.testing.assert_close(
                encoder._encode(type_ids), untrimmed_encoding(encoder, type_ids), atol=1e-6, rtol=0
            )


def test_encoding_without_markers_of_marked_input_is_the_forward_encoding(
    elmo_options, elmo_weights, sentences
):
    """What the packed biLM training uses: windows that already hold their `<S>` and `</S>`."""
    encoder = load_bilm(elmo_options, elmo_weights).character_encoder.eval()
    ids = batch_to_ids(sentences[:6])
    with torch.no_grad():
        marked = encoder(ids)
        mask = cast(torch.BoolTensor, (ids > 0).any(dim=-1))  # bool, typed Tensor by torch
        ids_with_markers, _ = add_sentence_boundary_token_ids(
            ids, mask, encoder.bos_characters, encoder.eos_characters
        )
        unmarked = encoder.encode_without_markers(ids_with_markers)
    assert ids_with_markers.size(1) == ids.size(1) + 2
    assert torch.equal(unmarked["mask"], marked["mask"])
    assert torch.equal(unmarked["token_embedding"], marked["token_embedding"])
    # Nothing is added: the same shape in as out, zeros where the input is padding.
    plain = encoder.encode_without_markers(ids)["token_embedding"]
    assert plain.shape[:2] == ids.shape[:2]
    assert not plain[~mask].any() and plain[mask].abs().sum(dim=-1).gt(0).all()


def _convolved(embedded, weight, bias):
    return torch.nn.functional.conv1d(embedded.transpose(1, 2), weight, bias)


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("device", DEVICES)  # each device pools its own way
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_max_pooled_convolution_equals_conv1d_then_max(dtype, device, monkeypatch):
    # cuDNN's convolutions default to TF32 on Ampere and later: 1e-3 relative, not float32's.
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    generator = torch.Generator().manual_seed(0)
    inputs = [
        torch.randn(*shape, generator=generator).to(dtype)
        for shape in [(9, 12, 4), (5, 4, 3), (5,)]
    ]
    upstream = torch.randn(9, 5, generator=generator)
    mine = [tensor.clone().to(device).requires_grad_() for tensor in inputs]
    ours = max_pooled_convolution(*mine).cpu()
    torch.testing.assert_close(ours, _convolved(*inputs).max(dim=-1).values)
    # The gradients against float32's (torch 1.12's bfloat16 conv1d backward on AVX2 is itself
    # far less exact). Where a window's two largest outputs lie within bfloat16's resolution of
    # each other, the bfloat16 maximum may be either (both right): such windows send none.
    reference = [tensor.float().requires_grad_() for tensor in inputs]
    convolved = _convolved(*reference)
    expected = convolved.max(dim=-1).values
    top_two = convolved.topk(2).values
    near_tie = (top_two[..., 0] - top_two[..., 1]).detach() <= 2**-7 * top_two[
        ..., 0
    ].detach().abs()
    upstream = upstream.masked_fill(near_tie, 0)
    (ours * upstream.to(dtype)).sum().backward()
    (expected * upstream).sum().backward()
    for tensor, exact in zip(mine, reference):
        assert tensor.grad is not None and exact.grad is not None
        if dtype == torch.float32:
            torch.testing.assert_close(tensor.grad.cpu(), exact.grad)
        else:  # a bfloat16 backward rounds its sums: a few ulps of the gradient's scale
            scale = exact.grad.abs().max().item()
            torch.testing.assert_close(
                tensor.grad.float().cpu(), exact.grad, rtol=0, atol=2**-6 * scale
            )


@pytest.mark.parametrize("cache_size", [1, 7, 50000])
def test_the_cache_gives_what_encoding_without_it_gives_through_hits_misses_and_evictions(
    elmo_options, elmo_weights, sentences, cache_size
):
    """Overlapping batches, so that each has remembered and new types, and with a small cache
    the slots its remembered types came from are handed to its new ones. (To a few ulps: a
    type encoded in another batch went through products of other shapes.)"""
    bilm = load_bilm(elmo_options, elmo_weights, char_cnn_cache_size=cache_size)
    encoder = bilm.character_encoder.eval()
    uncached = load_bilm(elmo_options, elmo_weights, char_cnn_cache_size=0).character_encoder
    uncached.eval()
    with torch.no_grad():
        for start in (0, 2, 1, 0, 3, 2):
            ids = batch_to_ids(sentences[start : start + 3])
            torch.testing.assert_close(
                encoder(ids)["token_embedding"], uncached(ids)["token_embedding"], rtol=0, atol=1e-6
            )
            assert len(encoder._type_cache) <= cache_size
