"""`ElmoEmbedder`: AllenNLP 0.9's API and outputs, simple_elmo's `embed`, bounded runs."""

import io
import json
import logging
import shutil
from pathlib import Path
from typing import List

import h5py
import numpy
import pytest
import torch
from allennlp.modules.elmo import _ElmoBiLm, batch_to_ids

import elmo_plugin
from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo import load_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from tests.paths import FIXTURES

AWKWARD = [["a"], [], ["x" * 80, "naïve", "日本語"], ["The", "cat", "sat", "."]]


@pytest.fixture
def embedder(elmo_options, elmo_weights) -> ElmoEmbedder:
    return ElmoEmbedder(elmo_options, elmo_weights)


def reference_layers(options, weights, batch):
    """Each sentence's layers as `load_bilm` gives them, `<S>` and `</S>` cut off by hand."""
    bilm = load_bilm(options, weights).eval()
    with torch.no_grad():
        activations = torch.stack(bilm(batch_to_ids(batch))["activations"])
    return [activations[:, row, 1 : len(s) + 1].numpy() for row, s in enumerate(batch)]


def allennlp_09_embed_batch(options, weights, batch):
    """What 0.9's `ElmoEmbedder.embed_batch` returned for a first batch: its `_ElmoBiLm` (still
    in AllenNLP 2.10), the markers removed, each row cut to its length."""
    bilm = _ElmoBiLm(options, weights)
    with torch.no_grad():
        output = bilm(batch_to_ids(batch))
    lengths = output["mask"].sum(dim=1) - 2
    layers = torch.stack(output["activations"], dim=1)
    return [layers[row, :, 1 : 1 + int(lengths[row])].numpy() for row in range(len(batch))]


def test_embed_batch_equals_the_bilm_stripped_by_hand_and_allennlp_09(
    embedder, elmo_options, elmo_weights, sentences
):
    batch = sentences[:12]
    ours = embedder.embed_batch(batch)
    by_hand = reference_layers(elmo_options, elmo_weights, batch)
    theirs = allennlp_09_embed_batch(elmo_options, elmo_weights, batch)
    for sentence, mine, expected, old in zip(batch, ours, by_hand, theirs):
        assert mine.shape == (3, len(sentence), 32) and mine.dtype == numpy.float32
        numpy.testing.assert_allclose(mine, expected, atol=1e-6, rtol=0)
        numpy.testing.assert_allclose(mine, old, atol=1e-5, rtol=0)


def test_embed_sentence_is_the_same_in_any_batch_and_on_every_call(embedder, sentences):
    alone = embedder.embed_sentence(sentences[3])
    numpy.testing.assert_allclose(embedder.embed_batch(sentences[:8])[3], alone, atol=1e-6)
    numpy.testing.assert_array_equal(embedder.embed_sentence(sentences[3]), alone)


def test_batch_to_embeddings_has_0_9s_shapes(embedder, sentences):
    activations, mask = embedder.batch_to_embeddings(sentences[:3])
    longest = max(len(s) for s in sentences[:3])
    assert activations.shape == (3, 3, longest, 32)
    assert mask.tolist() == [[i < len(s) for i in range(longest)] for s in sentences[:3]]
    assert not activations.requires_grad


def test_empty_sentences_give_no_tokens(embedder):
    assert [a.shape for a in embedder.embed_batch([[]])] == [(3, 0, 32)]
    assert [a.shape for a in embedder.embed_batch(AWKWARD)] == [
        (3, 1, 32),
        (3, 0, 32),
        (3, 3, 32),
        (3, 4, 32),
    ]
    activations, mask = embedder.batch_to_embeddings([[], []])
    assert activations.shape == (2, 3, 0, 32) and mask.shape == (2, 0)


def test_each_run_stays_within_max_tokens_and_gives_the_same_vectors(
    elmo_options, elmo_weights, sentences
):
    long_document = [f"w{i}" for i in range(300)]
    batch = sentences[:20] + [long_document] + sentences[20:]
    runs = []
    bounded = ElmoEmbedder(elmo_options, elmo_weights, max_tokens=64)
    bounded.elmo_bilm.lstm.register_forward_pre_hook(lambda _, args: runs.append(args[0].shape))
    chunked = bounded.embed_batch(batch)
    # Every run within the bound, the 300-token document too (in windows, 2 rows of 32).
    assert max(rows * positions for rows, positions, _ in runs) <= 64 and len(runs) > 10
    assert (2, 32) in [run[:2] for run in runs]
    whole = ElmoEmbedder(elmo_options, elmo_weights, max_tokens=10**6).embed_batch(batch)
    for ours, expected in zip(chunked, whole):
        numpy.testing.assert_allclose(ours, expected, atol=1e-6, rtol=0)


def test_embed_sentences_is_lazy_and_in_order(embedder, sentences):
    consumed = []

    def stream():
        for sentence in sentences:
            consumed.append(sentence)
            yield sentence

    embedded = embedder.embed_sentences(stream(), batch_size=4)
    first = next(embedded)
    assert len(consumed) == 4
    everything = [first] + list(embedded)
    for ours, expected in zip(everything, embedder.embed_batch(sentences)):
        numpy.testing.assert_allclose(ours, expected, atol=1e-6, rtol=0)


@pytest.mark.parametrize(
    "layers,shape,pick",
    [
        ("average", (4, 4, 32), lambda layers: layers.mean(axis=0)),
        ("top", (4, 4, 32), lambda layers: layers[-1]),
        ("all", (4, 3, 4, 32), lambda layers: layers),
        ([0, 2], (4, 2, 4, 32), lambda layers: layers[[0, 2]]),
        ([-1], (4, 1, 4, 32), lambda layers: layers[[-1]]),
    ],
)
def test_embed_pads_with_zeros_like_simple_elmo(embedder, layers, shape, pick):
    vectors = embedder.embed(AWKWARD, layers=layers, batch_size=2)
    assert vectors.shape == shape and vectors.dtype == numpy.float32
    for row, (sentence, expected) in enumerate(zip(AWKWARD, embedder.embed_batch(AWKWARD))):
        numpy.testing.assert_allclose(
            vectors[row, ..., : len(sentence), :], pick(expected), atol=1e-6, rtol=0
        )
        assert not vectors[row, ..., len(sentence) :, :].any()


def _batches_run(embedder, monkeypatch):
    """The sentence lists `embedder.embed_batch` is called with, recorded."""
    seen = []
    run = embedder.embed_batch

    def recorded(batch):
        seen.append([len(sentence) for sentence in batch])
        return run(batch)

    monkeypatch.setattr(embedder, "embed_batch", recorded)
    return seen


def test_embed_runs_stateless_sentences_sorted_by_length_in_token_budgets(
    embedder, sentences, monkeypatch
):
    mixed = sentences[:9] + [["word"] * 30, ["a"]]
    expected = [embedder.embed_sentence(sentence) for sentence in mixed]
    embedder.max_tokens = 64
    seen = _batches_run(embedder, monkeypatch)
    vectors = embedder.embed(mixed, layers="all", batch_size=4)
    lengths = [length for batch in seen for length in batch]
    assert lengths == sorted((len(s) for s in mixed), reverse=True)
    assert all(len(batch) <= 4 and len(batch) * (batch[0] + 2) <= 64 for batch in seen[1:])
    for row, (sentence, layers) in enumerate(zip(mixed, expected)):
        numpy.testing.assert_allclose(vectors[row, :, : len(sentence)], layers, atol=1e-6, rtol=0)


def test_embed_with_carried_states_keeps_the_given_order(
    elmo_options, elmo_weights, sentences, monkeypatch
):
    carried = ElmoEmbedder(elmo_options, elmo_weights, state="carried")
    seen = _batches_run(carried, monkeypatch)
    carried.embed(sentences[:6], batch_size=4)
    assert seen == [[len(s) for s in sentences[:4]], [len(s) for s in sentences[4:6]]]


@pytest.mark.gpu
def test_embed_on_a_cuda_device_equals_the_cpu(elmo_options, elmo_weights, sentences):
    on_cpu = ElmoEmbedder(elmo_options, elmo_weights).embed(sentences, layers="all")
    on_gpu = ElmoEmbedder(elmo_options, elmo_weights, cuda_device=0)
    numpy.testing.assert_allclose(on_gpu.embed(sentences, layers="all"), on_cpu, atol=1e-5)
    assert next(on_gpu.elmo_bilm.parameters()).is_cuda


def test_a_long_embed_call_logs_its_progress_and_a_short_one_nothing(
    embedder, sentences, monkeypatch, caplog
):
    from elmo_plugin.embedding import elmo_embedder

    caplog.set_level(logging.INFO, logger="elmo_plugin.embedding.progress")
    embedder.embed(sentences, batch_size=2)
    assert "sentences" not in caplog.text
    monkeypatch.setattr(elmo_embedder, "PROGRESS_INTERVAL", 0.0)
    embedder.embed(sentences, batch_size=2)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("embed: ")]
    assert len(lines) == len(sentences)  # the closing line is not repeated
    assert f"{len(sentences)}/{len(sentences)} sentences (100%)" in lines[-1]
    assert "done in" in lines[-1]


@pytest.mark.parametrize("layers", ["mean", [], [3], [True], 1])
def test_embed_names_the_layer_choices(embedder, layers):
    with pytest.raises(ConfigurationError, match=r"one of \('average', 'top', 'all'\).*\[0, 3\)"):
        embedder.embed([["a"]], layers=layers)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda e: e.embed_sentence("Hello world"), "expected a list of tokens"),
        (lambda e: e.embed_batch(["Hello world"]), "sentence 0 is the str 'Hello world'"),
        (lambda e: e.embed_batch([["a"], ["b", 3]]), "sentence 1, token 1 is the int 3"),
        (lambda e: list(e.embed_sentences([["a"]], batch_size=0)), "batch_size must be"),
    ],
)
def test_bad_input_is_named(embedder, call, message):
    with pytest.raises(ConfigurationError, match=message):
        call(embedder)


def test_embed_file_writes_0_9s_layout(embedder, tmp_path, sentences, caplog):
    lines = [" ".join(s) for s in sentences[:5]] + ["", "  spaced   out  "]
    text = tmp_path / "in.txt"
    text.write_text("\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING):
        count = embedder.embed_file(str(text), str(tmp_path / "out.hdf5"), batch_size=3)
    assert count == 7
    assert "1 empty lines (lines 6)" in caplog.text
    expected = embedder.embed_batch([line.split() for line in lines])
    with h5py.File(tmp_path / "out.hdf5", "r") as written:
        assert sorted(written) == sorted([str(i) for i in range(7)] + ["sentence_to_index"])
        index = json.loads(written["sentence_to_index"][0])
        assert index == {line.strip(): str(i) for i, line in enumerate(lines)}
        for i, layers in enumerate(expected):
            assert written[str(i)].dtype == numpy.float32
            numpy.testing.assert_allclose(written[str(i)][...], layers, atol=1e-6, rtol=0)


@pytest.mark.parametrize("output_format", ["top", "average"])
def test_embed_file_top_and_average_from_a_file_object(embedder, tmp_path, output_format):
    with open(tmp_path / "in.txt", "w") as handle:
        handle.write("a b c\nd e\n")
    with open(tmp_path / "in.txt") as handle:
        embedder.embed_file(handle, str(tmp_path / "out.hdf5"), output_format)
    layers = embedder.embed_sentence(["a", "b", "c"])
    expected = layers[-1] if output_format == "top" else layers.mean(axis=0)
    with h5py.File(tmp_path / "out.hdf5", "r") as written:
        numpy.testing.assert_allclose(written["0"][...], expected, atol=1e-6, rtol=0)


def test_embed_file_sentence_keys_and_forgotten_sentences(embedder, tmp_path):
    embedder.embed_file(
        io.StringIO("a b\nc\n"), str(tmp_path / "keys.hdf5"), use_sentence_keys=True
    )
    embedder.embed_file(io.StringIO("a b\nc\n"), str(tmp_path / "bare.hdf5"), forget_sentences=True)
    with h5py.File(tmp_path / "keys.hdf5", "r") as keys, h5py.File(tmp_path / "bare.hdf5") as bare:
        assert sorted(keys) == ["a b", "c"] and sorted(bare) == ["0", "1"]
        numpy.testing.assert_array_equal(keys["c"][...], bare["1"][...])
    with pytest.raises(ConfigurationError, match="line 3 repeats an earlier line"):
        embedder.embed_file(
            io.StringIO("a\nb\na\n"), str(tmp_path / "x.hdf5"), use_sentence_keys=True
        )
    with pytest.raises(ConfigurationError, match="line 1: 'a/b' cannot name an hdf5 dataset"):
        embedder.embed_file(io.StringIO("a/b\n"), str(tmp_path / "x.hdf5"), use_sentence_keys=True)
    assert not (tmp_path / "x.hdf5").exists()


def test_embed_file_refuses_its_input_as_output_and_bad_formats(embedder, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("a b\n")
    with pytest.raises(ConfigurationError, match="is the input file"):
        embedder.embed_file(str(text), str(text))
    assert text.read_text() == "a b\n"
    with pytest.raises(ConfigurationError, match=r"output_format must be one of .*'mean'"):
        embedder.embed_file(str(text), str(tmp_path / "out.hdf5"), "mean")


# AllenNLP 0.9 code as flair's ELMoEmbeddings and SeqVec wrote it; only the import line changes.
FLAIR_STYLE = """
from allennlp.commands.elmo import ElmoEmbedder
import torch

ee = ElmoEmbedder(options_file=OPTIONS, weight_file=WEIGHTS, cuda_device=-1)
embedding_length = len(torch.cat([torch.FloatTensor(x[0]) for x in ee.embed_batch([["hello"]])[0]]))
ee.cuda_device = -1
ee.elmo_bilm.to(device="cpu")
token_vectors = []
for sentence_embeddings, sentence in zip(ee.embed_batch(SENTENCES), SENTENCES):
    for token_idx in range(len(sentence)):
        layers = [torch.FloatTensor(sentence_embeddings[k, token_idx, :]) for k in range(3)]
        token_vectors.append(torch.cat(layers))
"""

SEQVEC_STYLE = """
from allennlp.commands.elmo import ElmoEmbedder
import torch

model = ElmoEmbedder(OPTIONS, WEIGHTS, cuda_device=-1)
embedding = model.embed_sentence(list(SEQUENCE))
residue_embd = torch.tensor(embedding).sum(dim=0)
protein_embd = torch.tensor(embedding).sum(dim=0).mean(dim=0)
"""


def run_after_one_import_change(code, **names):
    changed = code.replace(
        "from allennlp.commands.elmo import ElmoEmbedder", "from elmo_plugin import ElmoEmbedder"
    )
    assert [a for a, b in zip(code.splitlines(), changed.splitlines()) if a != b] == [
        "from allennlp.commands.elmo import ElmoEmbedder"
    ]
    scope = dict(names)
    exec(changed, scope)
    return scope


def test_flair_style_calls_work_after_one_import_change(elmo_options, elmo_weights, sentences):
    batch = sentences[:3]
    scope = run_after_one_import_change(
        FLAIR_STYLE, OPTIONS=elmo_options, WEIGHTS=elmo_weights, SENTENCES=batch
    )
    assert scope["embedding_length"] == 3 * 32
    expected = reference_layers(elmo_options, elmo_weights, batch)
    flat = [layers[:, i].reshape(-1) for layers in expected for i in range(layers.shape[1])]
    assert len(scope["token_vectors"]) == len(flat) == sum(len(s) for s in batch)
    for ours, theirs in zip(scope["token_vectors"], flat):
        numpy.testing.assert_allclose(ours.numpy(), theirs, atol=1e-6, rtol=0)


def test_seqvec_style_calls_work_after_one_import_change(elmo_options, elmo_weights):
    sequence = "SEQWENCEAAK"
    scope = run_after_one_import_change(
        SEQVEC_STYLE, OPTIONS=elmo_options, WEIGHTS=elmo_weights, SEQUENCE=sequence
    )
    expected = reference_layers(elmo_options, elmo_weights, [list(sequence)])[0]
    assert scope["embedding"].shape == (3, len(sequence), 32)
    numpy.testing.assert_allclose(scope["residue_embd"].numpy(), expected.sum(0), atol=1e-5)
    assert scope["protein_embd"].shape == (32,)


def test_the_default_is_the_shipped_bilm():
    vectors = ElmoEmbedder().embed_sentence(["Hello", "world"])
    assert vectors.shape == (3, 2, 256) and vectors.dtype == numpy.float32
    assert elmo_plugin.ElmoEmbedder is ElmoEmbedder and "ElmoEmbedder" in elmo_plugin.__all__


def test_an_options_file_alone_is_refused_not_given_random_weights(elmo_options):
    with pytest.raises(ConfigurationError, match=r"needs its weight_file.*random.*original"):
        ElmoEmbedder(elmo_options)
    with pytest.raises(ConfigurationError, match=r"needs its weight_file.*random.*original"):
        ElmoEmbedder(elmo_options, None)


def test_a_folder_holding_an_export_is_a_whole_bilm(tmp_path, elmo_options, elmo_weights):
    shutil.copy(elmo_options, tmp_path / "options.json")
    shutil.copy(elmo_weights, tmp_path / "weights.hdf5")
    sentence = ["Hello", "world"]
    expected = ElmoEmbedder(elmo_options, elmo_weights).embed_sentence(sentence)
    numpy.testing.assert_array_equal(ElmoEmbedder(tmp_path).embed_sentence(sentence), expected)
    with pytest.raises(ConfigurationError, match="brings its own weights"):
        ElmoEmbedder(str(tmp_path), elmo_weights)


def test_paths_and_numpy_layer_indices_are_taken(elmo_options, elmo_weights):
    embedder = ElmoEmbedder(Path(elmo_options), Path(elmo_weights))
    by_list = embedder.embed([["a", "b"]], layers=[0, 2])
    by_array = embedder.embed([["a", "b"]], layers=numpy.array([0, 2]))
    numpy.testing.assert_array_equal(by_array, by_list)
    with pytest.raises(ConfigurationError, match="layers must be one of"):
        embedder.embed([["a"]], layers=numpy.array([[0, 1]]))


def test_an_efml_sentence_longer_than_max_tokens_is_embedded_in_windows():
    """The window path took bilm-tf's ids and sentence markers, which an ELMoForManyLangs
    biLM has not."""
    model = str(FIXTURES / "efml" / "model")
    sentence = [f"word{index % 7}" for index in range(22)] + ["мама", "x" * 70]
    whole = ElmoEmbedder(model, max_tokens=10**6).embed_sentence(sentence)
    bounded = ElmoEmbedder(model, max_tokens=8)
    runs: List[int] = []
    bounded.elmo_bilm.lstm.register_forward_pre_hook(
        lambda _, args: runs.append(args[0].size(0) * args[0].size(1))
    )
    windowed = bounded.embed_sentence(sentence)
    assert len(runs) > 1 and max(runs) <= 8
    assert windowed.shape == whole.shape == (3, len(sentence), 32)
    numpy.testing.assert_allclose(windowed, whole, atol=2e-6, rtol=0)
