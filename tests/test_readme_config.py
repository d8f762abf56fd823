"""The README's own config ("ELMo in your own config"), run as a user runs it from their own
directory: it takes the encoder's size from the biLM (`elmo.output_dim`), with the shipped biLM
and with another one set as its comment says; without that biLM's options the error names the
file and the line to add."""

import json
import re
import sys

import pytest
from allennlp.commands import main
from allennlp.commands.train import train_model
from allennlp.common import Params

import elmo_plugin.allennlp  # noqa: F401  (registers the blocks' names and resolves their imports)
from tests.paths import PROJECT_ROOT

BLOCK_IMPORT = 'local elmo = import "elmo_plugin/training_configs/common/elmo.libsonnet";'


def readme_config() -> str:
    readme = open(f"{PROJECT_ROOT}/README.md", encoding="utf-8").read()
    section = readme.split("### ELMo in your own config", 1)[1]
    block = re.search(r"```jsonnet\n(.*?)```", section, re.DOTALL)
    assert block is not None, "no jsonnet block under 'ELMo in your own config'"
    config = block.group(1)
    assert BLOCK_IMPORT in config and "embedding_dim: elmo.output_dim" in config
    return config


def another_bilm(config: str, options: str, weights: str, known: bool) -> str:
    """The config changed as its comment says for another biLM."""
    known_options = f'known_options+: {{ "{options}": import "{options}" }}' if known else ""
    return config.replace(
        BLOCK_IMPORT,
        f'local elmo = (import "elmo_plugin/training_configs/common/elmo.libsonnet") + '
        f'{{ options_file: "{options}", weight_file: "{weights}", {known_options} }};',
    )


@pytest.fixture
def user_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.jsonl").write_text(
        "".join(
            json.dumps({"text": text, "label": label}) + "\n"
            for text, label in [("a good film", "pos"), ("a bad film", "neg")]
        )
    )
    return tmp_path


def _train(config: str, directory) -> Params:
    (directory / "config.jsonnet").write_text(config)
    params = Params.from_file("config.jsonnet")
    size = params["model"]["seq2vec_encoder"]["embedding_dim"]
    train_model(params, str(directory / "run"))
    return size


def test_the_readme_config_trains_with_the_shipped_bilms_size_and_predicts_as_shown(
    user_directory, monkeypatch
):
    assert _train(readme_config(), user_directory) == 256
    readme = open(f"{PROJECT_ROOT}/README.md", encoding="utf-8").read()
    commands = re.findall(r"^allennlp predict run/model.tar.gz .*$", readme, re.MULTILINE)
    assert commands
    (user_directory / "in.jsonl").write_text(json.dumps({"sentence": "a good film"}) + "\n")
    outputs = []
    for command in commands:
        argv = command.split("#")[0].split()
        outputs.append(argv[argv.index("--output-file") + 1])
        monkeypatch.setattr(sys, "argv", argv)
        main()
    for output in outputs:
        lines = (user_directory / output).read_text().splitlines()
        assert lines and all(json.loads(line)["label"] in ("pos", "neg") for line in lines)


def test_with_another_bilm_the_size_follows_its_options(user_directory, elmo_options, elmo_weights):
    config = another_bilm(readme_config(), elmo_options, elmo_weights, known=True)
    assert _train(config, user_directory) == 32


def test_without_its_options_the_error_names_the_file_and_the_fix(
    user_directory, elmo_options, elmo_weights
):
    (user_directory / "config.jsonnet").write_text(
        another_bilm(readme_config(), elmo_options, elmo_weights, known=False)
    )
    with pytest.raises(RuntimeError) as error:
        Params.from_file("config.jsonnet")
    assert f"does not know the size of the biLM '{elmo_options}'" in str(error.value)
    assert f'known_options+: {{ "{elmo_options}": import "{elmo_options}" }}' in str(error.value)
