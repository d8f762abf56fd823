"""`allennlp train` -> `allennlp elmo-export` -> ELMo embedders, ours and stock AllenNLP's."""

import json
import os
import shutil
import tarfile

import h5py
import pytest
import torch
from allennlp.models.archival import load_archive
from allennlp.modules.elmo import Elmo as AllenNlpElmo
from allennlp.modules.elmo import _ElmoBiLm as AllenNlpElmoBiLm
from allennlp.modules.elmo import batch_to_ids
from allennlp.modules.token_embedders import ElmoTokenEmbedder as AllenNlpElmoTokenEmbedder

import elmo_plugin.allennlp.commands  # noqa: F401
import elmo_plugin.allennlp.lm  # noqa: F401
from elmo_plugin.elmo import Elmo, load_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.lm.corpus_vocabulary import CorpusVocabulary
from elmo_plugin.allennlp.lm.dataset_readers import BilmCorpusReader
from elmo_plugin.allennlp.lm.models import BilmLanguageModel
from elmo_plugin.allennlp.lm.perplexity import held_out_perplexity, language_model_from_export
from elmo_plugin.allennlp.modules import ElmoTokenEmbedder
from tests.lm.conftest import allennlp_train, one_file_corpus, run_allennlp, tensorize

SENTENCES = "fixtures/lm/sentences.txt"
TINY_BILM = {
    # n_characters 261 is bilm-tf's training convention; the export must say 262.
    "char_cnn": {
        "embedding": {"dim": 4},
        "filters": [[1, 8], [2, 8], [3, 16]],
        "n_highway": 2,
        "n_characters": 261,
    },
    "lstm": {
        "dim": 32,
        "projection_dim": 16,
        "n_layers": 2,
        "cell_clip": 3,
        "proj_clip": 3,
        "use_skip_connections": True,
    },
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    overrides = {
        **one_file_corpus(SENTENCES),
        "model.bilm": TINY_BILM,
        "model.num_samples": 50,
        "trainer.num_epochs": 10,
        "trainer.optimizer.lr": 0.01,
    }
    allennlp_train("training_configs/bilm/bilm_tiny.jsonnet", root / "run", overrides)
    archive = str(root / "run" / "model.tar.gz")
    run_allennlp("elmo-export", archive, str(root / "elmo"), "--include-softmax")
    return archive, str(root / "elmo")


def _sentences():
    return [line.split() for line in open(SENTENCES, encoding="utf-8")][:8]


def test_export_writes_the_bilm_tf_layout(exported):
    _, out = exported
    assert sorted(os.listdir(out)) == [
        "manifest.json",
        "options.json",
        "softmax.hdf5",
        "vocab.txt",
        "weights.hdf5",
    ]
    options = json.load(open(os.path.join(out, "options.json")))
    assert options["char_cnn"]["n_characters"] == 262
    assert options["lstm"] == {
        "cell_clip": 3,
        "dim": 32,
        "n_layers": 2,
        "proj_clip": 3,
        "projection_dim": 16,
        "use_skip_connections": True,
    }
    with h5py.File(os.path.join(out, "weights.hdf5"), "r") as weights:
        assert weights["char_embed"].shape == (261, 4)
        assert "RNN_1/RNN/MultiRNNCell/Cell1/LSTMCell/W_P_0" in weights


def test_stock_allennlp_elmo_gives_the_trained_models_outputs(exported):
    archive, out = exported
    options, weights = os.path.join(out, "options.json"), os.path.join(out, "weights.hdf5")
    model = load_archive(archive).model.eval()
    assert isinstance(model, BilmLanguageModel)
    character_ids = batch_to_ids(_sentences())
    with torch.no_grad():
        ours = model.bilm(character_ids)
        stock = AllenNlpElmoBiLm(options, weights)(character_ids)
        reloaded = load_bilm(options, weights)(character_ids)
    assert len(ours["activations"]) == len(stock["activations"]) == 3
    for mine, theirs, again in zip(
        ours["activations"], stock["activations"], reloaded["activations"]
    ):
        assert torch.allclose(mine, theirs, atol=1e-5)
        assert torch.allclose(mine, again, atol=1e-5)

    # The scalar-mixed ELMo vectors, and the registered token embedders, agree too.
    with torch.no_grad():
        stock_elmo = AllenNlpElmo(options, weights, 2, dropout=0.0)(character_ids)
        our_elmo = Elmo(options, weights, 2, dropout=0.0)(character_ids)
        stock_embedder = AllenNlpElmoTokenEmbedder(options, weights, dropout=0.0)(character_ids)
        our_embedder = ElmoTokenEmbedder(options_file=options, weight_file=weights, dropout=0.0)(
            character_ids
        )
    for mine, theirs in zip(our_elmo["elmo_representations"], stock_elmo["elmo_representations"]):
        assert torch.allclose(mine, theirs, atol=1e-5)
    assert torch.allclose(our_embedder, stock_embedder, atol=1e-5)


def _loss(model, instances, reader):
    model.eval()
    with torch.no_grad():
        return float(model(**tensorize(instances, model.vocab, reader))["loss"])


def test_training_continues_from_the_export_with_its_softmax(exported):
    """A model built from the export (options, weights, softmax, vocabulary) is the trained
    model: same held-out loss, before any further training."""
    archive, out = exported
    trained = load_archive(archive).model
    resumed = language_model_from_export(out)
    reader = BilmCorpusReader()
    instances = list(reader.read(SENTENCES))[:10]
    assert _loss(resumed, instances, reader) == pytest.approx(
        _loss(trained, instances, reader), rel=1e-5
    )
    # Without the softmax the biLM alone scores far worse.
    fresh = language_model_from_export(out, with_softmax=False)
    assert _loss(fresh, instances, reader) > _loss(trained, instances, reader) + 0.3


def test_a_vocabulary_that_does_not_match_the_softmax_is_an_error(exported, tmp_path):
    _, out = exported
    shutil.copy(os.path.join(out, "softmax.hdf5"), tmp_path / "softmax.hdf5")
    words = open(os.path.join(out, "vocab.txt"), encoding="utf-8").read().splitlines()
    (tmp_path / "vocab.txt").write_text("\n".join(words[:-3]) + "\n", encoding="utf-8")
    vocabulary = CorpusVocabulary.from_corpus(vocab_file=str(tmp_path / "vocab.txt"))
    with pytest.raises(ConfigurationError, match="does not belong to this softmax"):
        BilmLanguageModel(
            vocabulary,
            options_file=os.path.join(out, "options.json"),
            weight_file=os.path.join(out, "weights.hdf5"),
            softmax_file=str(tmp_path / "softmax.hdf5"),
        )


def test_an_archive_whose_vocabulary_was_swapped_is_a_clear_error(exported, tmp_path):
    archive, _ = exported
    unpacked = tmp_path / "unpacked"
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked)
    tokens = unpacked / "vocabulary" / "tokens.txt"
    tokens.write_text(
        "\n".join(tokens.read_text(encoding="utf-8").splitlines()[:-5]) + "\n", encoding="utf-8"
    )
    broken = tmp_path / "broken.tar.gz"
    with tarfile.open(broken, "w:gz") as tar:
        for name in os.listdir(unpacked):
            tar.add(unpacked / name, arcname=name)
    with pytest.raises(ConfigurationError, match="vocabulary does not belong to these weights"):
        run_allennlp("elmo-export", str(broken), str(tmp_path / "out"))


def test_exporting_something_else_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigurationError, match="does not exist"):
        run_allennlp("elmo-export", str(tmp_path / "missing.tar.gz"), str(tmp_path / "out"))


def test_a_float16_softmax_is_half_the_size_and_scores_like_the_trained_model(exported, tmp_path):
    archive, full = exported
    run_allennlp("elmo-export", archive, str(tmp_path), "--include-softmax", "--softmax-float16")
    with h5py.File(tmp_path / "softmax.hdf5", "r") as half, h5py.File(
        os.path.join(full, "softmax.hdf5"), "r"
    ) as whole:
        assert half["softmax/W"].dtype == "float16" and whole["softmax/W"].dtype == "float32"
        assert half["softmax/b"].dtype == "float32"
    resumed = language_model_from_export(str(tmp_path))
    assert resumed.softmax.weight.dtype == torch.float32
    reader = BilmCorpusReader()
    instances = list(reader.read(SENTENCES))[:10]
    trained = load_archive(archive).model
    assert _loss(resumed, instances, reader) == pytest.approx(
        _loss(trained, instances, reader), rel=1e-3
    )


def test_elmo_perplexity_of_the_export_is_the_trained_models(exported, tmp_path):
    archive, out = exported
    output_file = tmp_path / "perplexity.json"
    run_allennlp("elmo-perplexity", out, SENTENCES, "--output-file", str(output_file))
    measured = json.load(open(output_file))
    model = load_archive(archive).model
    assert isinstance(model, BilmLanguageModel)
    expected = held_out_perplexity(model, SENTENCES)
    for key in ["forward_perplexity", "backward_perplexity", "perplexity"]:
        assert measured[key] == pytest.approx(expected[key], rel=1e-5), key
    assert measured["forward_perplexity"] != measured["backward_perplexity"]


def test_elmo_perplexity_of_an_export_without_its_softmax_names_the_missing_file(
    exported, tmp_path
):
    _, out = exported
    for name in ["options.json", "weights.hdf5", "vocab.txt"]:
        shutil.copy(os.path.join(out, name), tmp_path / name)
    with pytest.raises(ConfigurationError, match="softmax.hdf5"):
        run_allennlp("elmo-perplexity", str(tmp_path), SENTENCES)


def test_elmo_perplexity_reads_the_shipped_bilm_from_any_directory(tmp_path, monkeypatch, capsys):
    captions = os.path.abspath("fixtures/lm/captions_valid.txt")
    monkeypatch.chdir(tmp_path)
    run_allennlp("elmo-perplexity", "elmo_plugin://pretrained/elmo_wikipedia_512x128", captions)
    measured = json.loads(capsys.readouterr().out)
    # Wikipedia-trained, so image captions are far from its text, but far better than chance
    # over its vocabulary of tens of thousands of words.
    assert 1 < measured["perplexity"] < 2000


def test_export_refuses_to_write_over_its_own_archive(tmp_path):
    from elmo_plugin.allennlp.lm.export import export_bilm

    archive = tmp_path / "weights.hdf5"  # an archive given a name the export writes
    archive.write_bytes(b"refused before it is read")
    with pytest.raises(ConfigurationError, match=r"weights\.hdf5 is the archive"):
        export_bilm(str(archive), str(tmp_path))
    assert archive.read_bytes() == b"refused before it is read"


def test_an_output_directory_that_is_a_file_is_a_clear_error(tmp_path):
    from elmo_plugin.elmo import ElmoBiLm, save_bilm

    (tmp_path / "file").write_text("mine")
    with pytest.raises(ConfigurationError, match=r"file is not a directory"):
        save_bilm(ElmoBiLm.from_options(TINY_BILM), str(tmp_path / "file"))
    assert (tmp_path / "file").read_text() == "mine"


def test_perplexity_output_may_not_be_its_text_file_or_an_export_file(tmp_path):
    import shutil

    text = tmp_path / "text.txt"
    shutil.copy(SENTENCES, text)
    before = text.read_bytes()
    with pytest.raises(ConfigurationError, match="is the text file"):
        run_allennlp(
            "elmo-perplexity",
            "elmo_plugin://pretrained/elmo_wikipedia_512x128",
            str(text),
            "--output-file",
            str(text),
        )
    assert text.read_bytes() == before


def test_perplexity_batch_size_zero_is_a_clear_error():
    with pytest.raises(ConfigurationError, match="--batch-size must be a positive integer, got 0"):
        run_allennlp(
            "elmo-perplexity",
            "elmo_plugin://pretrained/elmo_wikipedia_512x128",
            SENTENCES,
            "--batch-size",
            "0",
        )
