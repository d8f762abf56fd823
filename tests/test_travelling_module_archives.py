"""An archive of a model that holds ELMo, as an `Elmo` module (SNLI's and SQuAD's ELMo at the
input and the output) or as the `elmo` embedder (NER's), carries its biLM, weights and options,
with nothing written by hand: after the biLM files it was trained from are deleted,
`Predictor.from_path` after `import elmo_plugin.allennlp` predicts the same from another directory.
"""

import json
import shutil

from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

import elmo_plugin.allennlp  # noqa: F401  (the one documented import: registers every task)
from elmo_plugin.allennlp.archives import bilm_from_archive
from elmo_plugin.elmo.formats.options_record import OPTIONS_NAMESPACE
from elmo_plugin.allennlp.tasks.ner.predictors import ConllNerPredictor
from tests.paths import TRAINING_CONFIGS
from tests.tasks.ner.ner_small_overrides import SMALL as NER_SMALL
from tests.tasks.snli.snli_small_overrides import SMALL
from tests.tasks.training_helpers import FIXTURE_BILM, train_config

CONFIG = TRAINING_CONFIGS / "snli" / "snli_elmo_input_output.jsonnet"
NER_CONFIG = TRAINING_CONFIGS / "ner" / "ner_elmo.jsonnet"
NER_ELMO = "model.text_field_embedder.token_embedders.elmo"
SENTENCES = ["Peter Blackburn lives in Brussels .", "EU rejects German call ."]
PAIRS = [
    {"premise": "A man plays a guitar on stage .", "hypothesis": "A person makes music ."},
    {"premise": "Two dogs run in the snow .", "hypothesis": "The animals are asleep ."},
]


def test_an_snli_archive_predicts_the_same_after_its_bilm_files_are_deleted(tmp_path, monkeypatch):
    bilm = tmp_path / "my_bilm"
    bilm.mkdir()
    options_file, weight_file = (str(shutil.copy(path, bilm)) for path in FIXTURE_BILM)
    overrides = {
        **SMALL,
        "model.elmo.options_file": options_file,
        "model.elmo.weight_file": weight_file,
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


def test_an_ner_archive_with_the_elmo_embedder_predicts_the_same_without_its_bilm_files(
    tmp_path, monkeypatch
):
    bilm = tmp_path / "mybilm"
    bilm.mkdir()
    options_file, weight_file = (str(shutil.copy(path, bilm)) for path in FIXTURE_BILM)
    overrides = {
        **NER_SMALL,
        f"{NER_ELMO}.options_file": options_file,
        f"{NER_ELMO}.weight_file": weight_file,
    }
    train_config(NER_CONFIG, tmp_path / "run", overrides)
    archive = str(tmp_path / "run" / "model.tar.gz")
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    elmo = config["model"]["text_field_embedder"]["token_embedders"]["elmo"]
    assert options_file not in elmo.get("known_options", {})  # nothing written by hand
    assert (tmp_path / "run" / "vocabulary" / f"{OPTIONS_NAMESPACE}.txt").is_file()
    before = _ner_outputs(archive)

    shutil.rmtree(bilm)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert _ner_outputs(archive) == before
    with open(FIXTURE_BILM[0]) as handle:
        assert bilm_from_archive(archive).options() == _sized(json.load(handle))
    assert load_archive(archive).model.vocab.get_vocab_size(OPTIONS_NAMESPACE) == 3


def _ner_outputs(archive):
    """Each sentence's tags and logits from the archive's predictor."""
    predictor = Predictor.from_path(archive, "conll_ner")
    assert isinstance(predictor, ConllNerPredictor)
    instances = [predictor._json_to_instance({"sentence": s}) for s in SENTENCES]
    for instance in instances:
        predictor._dataset_reader.apply_token_indexers(instance)
    outputs = predictor._model.forward_on_instances(instances)
    tags = [predictor.predict(s)["tags"] for s in SENTENCES]
    return tags, [output["logits"].tolist() for output in outputs]


def _sized(options):
    """The options an `ElmoBiLm` reports for a bilm-tf options.json (its defaults filled in)."""
    from elmo_plugin.elmo import ElmoBiLm

    return ElmoBiLm.from_options(options).options()
