"""`allennlp elmo-perplexity` on a bilm-tf training checkpoint: its softmax and vocabulary give
the perplexities that bilm-tf's own `test()` does (fixtures/tensorflow)."""

import json
import math
import shutil

import pytest

import elmo_plugin.allennlp.commands  # noqa: F401
from elmo_plugin.elmo.errors import ConfigurationError
from tests.lm.conftest import run_allennlp
from tests.paths import FIXTURES

FOLDER = FIXTURES / "tensorflow" / "bilm_checkpoint"
REFERENCE = json.loads((FIXTURES / "tensorflow" / "bilm_checkpoint_perplexity.json").read_text())


@pytest.fixture
def one_sentence(tmp_path):
    path = tmp_path / "heldout.txt"
    path.write_text("\n" + " ".join(REFERENCE["sentences"][0]) + "\n", encoding="utf-8")
    return str(path)


def test_a_checkpoint_folders_perplexity_is_bilm_tfs(one_sentence, tmp_path):
    output = tmp_path / "metrics.json"
    run_allennlp("elmo-perplexity", str(FOLDER), one_sentence, "--output-file", str(output))
    measured = json.loads(output.read_text())
    expected = REFERENCE["results"][0]
    # bilm-tf's test() averages the two directions' losses step by step: the same mean.
    assert measured["perplexity"] == pytest.approx(expected["perplexity"], rel=1e-4)
    both = math.sqrt(measured["forward_perplexity"] * measured["backward_perplexity"])
    assert both == pytest.approx(measured["perplexity"], rel=1e-9)


def test_the_vocabulary_is_named_when_the_folder_has_none(one_sentence, tmp_path):
    folder = tmp_path / "save"
    shutil.copytree(FOLDER, folder)
    vocabulary = tmp_path / "words.txt"
    (folder / "vocab.txt").rename(vocabulary)
    output = tmp_path / "metrics.json"
    with pytest.raises(ConfigurationError, match="needs the vocabulary it was trained with"):
        run_allennlp("elmo-perplexity", str(folder), one_sentence)
    run_allennlp(
        "elmo-perplexity",
        str(folder / "model.ckpt-74"),
        one_sentence,
        "--vocab-file",
        str(vocabulary),
        "--output-file",
        str(output),
    )
    measured = json.loads(output.read_text())
    assert measured["perplexity"] == pytest.approx(REFERENCE["results"][0]["perplexity"], rel=1e-4)


def test_an_export_of_the_checkpoint_with_its_softmax_scores_as_the_checkpoint(
    one_sentence, tmp_path
):
    """The export is what a `bilm` model's `softmax_file` continues training from."""
    export = tmp_path / "export"
    run_allennlp("elmo-export", str(FOLDER), str(export), "--include-softmax")
    assert sorted(path.name for path in export.iterdir()) == [
        "manifest.json",
        "options.json",
        "softmax.hdf5",
        "vocab.txt",
        "weights.hdf5",
    ]
    from_export, from_checkpoint = tmp_path / "export.json", tmp_path / "checkpoint.json"
    run_allennlp("elmo-perplexity", str(export), one_sentence, "--output-file", str(from_export))
    run_allennlp(
        "elmo-perplexity", str(FOLDER), one_sentence, "--output-file", str(from_checkpoint)
    )
    exported, original = (json.loads(path.read_text()) for path in (from_export, from_checkpoint))
    for key in ("forward_perplexity", "backward_perplexity", "perplexity"):
        assert exported[key] == pytest.approx(original[key], rel=1e-5), key
