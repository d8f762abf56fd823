"""An archive of a model that holds ELMo as an `Elmo` module (SNLI's and SQuAD's ELMo at the
input and the output) carries its biLM: after the biLM files it was trained from are deleted,
`Predictor.from_path` after `import elmo_plugin` predicts the same from another directory."""
import json
import shutil

import elmo_plugin  # noqa: F401  (the one documented import: registers every task)
from allennlp.predictors import Predictor

from tests.tasks.snli.snli_small_overrides import SMALL
from tests.tasks.training_helpers import FIXTURE_BILM, train_config, ROOT

CONFIG = ROOT / "elmo_plugin" / "training_configs" / "snli" / "snli_elmo_input_output.jsonnet"
PAIRS = [
    {"premise": "A man plays a guitar on stage .", "hypothesis": "A person makes music ."},
    {"premise": "Two dogs run in the snow .", "hypothesis": "The animals are asleep ."},
]


def test_an_snli_archive_predicts_the_same_after_its_bilm_files_are_deleted(tmp_path, monkeypatch):
    bilm = tmp_path / "my_bilm"
    bilm.mkdir()
    options_file, weight_file = (str(shutil.copy(path, bilm)) for path in FIXTURE_BILM)
    with open(options_file) as handle:
        options = json.load(handle)
    overrides = {
        **SMALL,
        "model.elmo.options_file": options_file,
        "model.elmo.weight_file": weight_file,
        # The README's way to make another biLM's archives travel (the block's known_options).
        "model.elmo.known_options": {options_file: options},
    }
    train_config(CONFIG, tmp_path / "run", overrides)
    archive = str(tmp_path / "run" / "model.tar.gz")
    before = Predictor.from_path(archive, "nli_pair").predict_batch_json(PAIRS)

    shutil.rmtree(bilm)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    after = Predictor.from_path(archive, "nli_pair").predict_batch_json(PAIRS)
    assert [p["label_probs"] for p in after] == [p["label_probs"] for p in before]
