"""`allennlp train` with the plugin refuses a mistake in one line and leaves nothing behind: a key
no class takes (elmo_plugin/allennlp/config_keys.py), an override key that names nothing, a run
without its data, whose serialization folder is removed so that the same command can run again
(elmo_plugin/allennlp/unsaved_runs.py)."""

import json
import os
import subprocess
import sys

import pytest
from allennlp.common import Params

from elmo_plugin.allennlp.config_keys import check_config_keys, check_override_key
from elmo_plugin.allennlp.data_paths import DATA_VARIABLE
from elmo_plugin.allennlp.unsaved_runs import removing_unsaved_run
from elmo_plugin.elmo.errors import ConfigurationError
from tests.lm.conftest import one_file_corpus, run_allennlp
from tests.paths import PROJECT_ROOT, TRAINING_CONFIGS
from tests.tasks.ner.ner_small_overrides import SMALL

BILM = TRAINING_CONFIGS / "bilm" / "bilm_tiny.jsonnet"
NER = "elmo_plugin://training_configs/ner/ner_baseline.jsonnet"
ON_SENTENCES = json.dumps(one_file_corpus("fixtures/lm/sentences.txt"))


@pytest.fixture(autouse=True)
def _in_the_command(command_changes):
    command_changes()  # what the allennlp command makes when it loads the plugin


def _refused(*argv: str) -> str:
    with pytest.raises(ConfigurationError) as error:
        run_allennlp("train", *argv)
    return str(error.value)


@pytest.mark.parametrize(
    "section, typo, message",
    [
        ("model", "num_sample", 'Model "bilm" (BilmLanguageModel) takes no key num_sample; '),
        ("dataset_reader", "max_instance", 'DatasetReader "bilm_corpus" (BilmCorpusReader)'),
        ("trainer", "num_epoch", 'Trainer "exact_resume_gradient_descent" (ExactResumeTrainer)'),
    ],
)
def test_a_key_no_class_takes_is_named_with_the_nearest_keys(section, typo, message, tmp_path):
    config = tmp_path / "typo.jsonnet"
    config.write_text(f'(import "{BILM}") + {{ {section}+: {{ {typo}: 1 }} }}')
    run = tmp_path / "run"
    refused = _refused(str(config), "-s", str(run), "-o", ON_SENTENCES)
    assert refused.startswith(f"{section}.{typo}: {message}")
    assert f"its keys, nearest first: {typo}s," in refused  # the key meant comes first
    assert not run.exists()


def test_a_typo_in_an_allennlp_encoder_is_named_before_the_missing_key(tmp_path):
    config = tmp_path / "typo.jsonnet"
    config.write_text(
        f'local ner = import "{TRAINING_CONFIGS}/ner/ner_baseline.jsonnet";\n'
        "ner + { model+: { encoder: { type: 'lstm', input_size: 58, hiden_size: 8 } } }"
    )
    overrides = {key: value for key, value in SMALL.items() if key != "model.encoder.hidden_size"}
    refused = _refused(str(config), "-s", str(tmp_path / "run"), "-o", json.dumps(overrides))
    assert refused.startswith(
        'model.encoder.hiden_size: Seq2SeqEncoder "lstm" (LstmSeq2SeqEncoder) takes no key '
        "hiden_size; its keys, nearest first: hidden_size, "
    )


def test_a_typo_under_a_dict_section_is_named_when_its_object_is_built(tmp_path):
    # token_embedders is a Dict parameter: the class of each entry is known once it is built.
    config = tmp_path / "typo.jsonnet"
    config.write_text(
        f'local ner = import "{TRAINING_CONFIGS}/ner/ner_baseline.jsonnet";\n'
        "ner + { model+: { text_field_embedder+: { token_embedders+: { tokens+: {"
        " embeding_dim: 8 } } } } }"
    )
    run = tmp_path / "run"
    refused = _refused(str(config), "-s", str(run), "-o", json.dumps(SMALL))
    assert refused.startswith(
        "model.text_field_embedder.token_embedders.tokens.embeding_dim: TokenEmbedder "
        '"embedding" (Embedding) takes no key embeding_dim; its keys, nearest first: '
        "embedding_dim, "
    )
    assert not run.exists()


def test_every_shipped_config_has_only_keys_its_classes_take():
    configs = sorted(TRAINING_CONFIGS.glob("*/*.jsonnet"))
    assert len(configs) > 20
    for config in configs:
        check_config_keys(Params.from_file(str(config)).as_dict(quiet=True))


def test_an_override_key_that_names_nothing_is_refused_before_the_run(tmp_path):
    overrides = json.dumps({**one_file_corpus("fixtures/lm/sentences.txt"), "trainer.num_epoch": 1})
    run = tmp_path / "run"
    refused = _refused(str(BILM), "-s", str(run), "-o", overrides)
    assert refused.startswith(
        '-o "trainer.num_epoch": the config has no such key and Trainer '
        '"exact_resume_gradient_descent" (ExactResumeTrainer) takes no num_epoch; nearest keys: '
        "trainer.num_epochs, "
    )
    assert not run.exists()


@pytest.fixture(scope="module")
def bilm_config() -> dict:
    return Params.from_file(str(BILM)).as_dict(quiet=True)


@pytest.mark.parametrize(
    "key",
    [
        "trainer.num_epochs",  # in the config
        "trainer.cuda_device",  # a key the trainer takes, left to its default by the config
        "trainer.checkpointer.keep_most_recent_by_count",  # in a section of its own type
        "model.regularizer",  # the bilm model's base class's key
        "test_data_path",  # a top-level key `allennlp train` takes
        "distributed",  # a whole section it takes
        "random_seed",  # read by the command itself
        "data_loader.batch_sampler.sorting_keys",  # a key of the registered batch sampler
    ],
)
def test_an_override_key_a_class_takes_is_accepted(key, bilm_config):
    check_override_key(bilm_config, key)


@pytest.mark.parametrize(
    "key, message",
    [
        ("trainr.num_epochs", "the config has no trainr; nearest keys: trainer, "),
        ("test_data_pth", 'the config has no such key and TrainModel "default" (TrainModel) '),
        (
            "distributed.cuda_devices",
            "the config has no distributed to set cuda_devices in; give the section whole: "
            '-o \'{"distributed": {"cuda_devices": ...}}\'',
        ),
        ("trainer.num_epochs.x", "trainer.num_epochs is a value, not a section of keys"),
        ("model.lr", 'the config has no such key and Model "bilm" (BilmLanguageModel) '),
    ],
)
def test_an_override_key_that_names_nothing_says_what_there_is(key, message, bilm_config):
    with pytest.raises(ConfigurationError) as error:
        check_override_key(bilm_config, key)
    assert str(error.value).startswith(f'-o "{key}": {message}')


def test_a_run_without_its_data_leaves_no_folder_and_can_run_again(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_VARIABLE)
    run = tmp_path / "run"
    arguments = [NER, "-s", str(run), "-o", json.dumps({"trainer.num_epochs": 1})]
    for _ in range(2):  # not "already exists" the second time
        assert _refused(*arguments).startswith("$ELMO_PLUGIN_DATA/conll2003/train.txt: ")
        assert not run.exists()


def _failing(made: list):
    def train_model(params, serialization_dir, *args, **kwargs):
        os.makedirs(serialization_dir, exist_ok=True)
        for name in made:
            open(os.path.join(serialization_dir, name), "w").close()
        raise ConfigurationError("no data")

    return removing_unsaved_run(train_model)


@pytest.mark.parametrize(
    "before, made, left",
    [
        (None, ["config.json", "out.log"], None),  # made by the run: removed
        ([], ["config.json", "out.log"], []),  # an empty folder of the user's: emptied
        (["notes.txt"], [], ["notes.txt"]),  # the user's files: left as they were
        (None, ["out.log", "model_state_e0_b0.th"], ["model_state_e0_b0.th", "out.log"]),
        (None, ["out.log", "metrics_epoch_0.json"], ["metrics_epoch_0.json", "out.log"]),
    ],
)
def test_a_failed_run_removes_only_what_it_made_before_saving(before, made, left, tmp_path):
    run = tmp_path / "run"
    if before is not None:
        run.mkdir()
        for name in before:
            (run / name).write_text("kept")
    with pytest.raises(ConfigurationError):
        _failing(made)(Params({}), str(run))
    assert (sorted(os.listdir(run)) if run.exists() else None) == left


def test_a_failed_run_removes_the_parent_folders_it_made(tmp_path):
    with pytest.raises(ConfigurationError):
        _failing(["out.log"])(Params({}), str(tmp_path / "runs" / "ner" / "run"))
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_the_command_says_a_missing_data_folder_in_one_line(tmp_path):
    environment = {k: v for k, v in os.environ.items() if k != DATA_VARIABLE}
    environment.update(PYTHONPATH=str(PROJECT_ROOT), PYTHONWARNINGS="ignore::FutureWarning")
    runs = tmp_path / "runs"
    command = [sys.executable, "-m", "allennlp", "train", NER, "-s", str(runs / "run")]
    result = subprocess.run(
        [*command, "--include-package", "elmo_plugin"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    errors = result.stderr.strip().splitlines()
    assert errors[-1].startswith("allennlp: error: $ELMO_PLUGIN_DATA/conll2003/train.txt: ")
    assert "Traceback" not in result.stdout + result.stderr
    assert not runs.exists()
