"""Steps the task tests share: training a config at small sizes, pointing its ELMo module at
a biLM, and checking that an input size given in a config must match the model's."""

import copy
import json
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.data.data_loaders import SimpleDataLoader
from allennlp.data.dataset_readers import DatasetReader
from allennlp.models import Model

from elmo_plugin.elmo.errors import ConfigurationError
from tests.paths import FIXTURES

# The tiny test biLM of AllenNLP (output size 32): `(options_file, weight_file)`.
FIXTURE_BILM = (
    str(FIXTURES / "elmo" / "options.json"),
    str(FIXTURES / "elmo" / "lm_weights.hdf5"),
)


# The test ELMoForManyLangs model (output size 32), and the suffix of a config name that
# `task_config` reads as that config with this model as its biLM.
EFML_MODEL = FIXTURES / "efml" / "model"
EFML_VARIANT = "+efml"


# torch before 2 has no float16 autocast on the CPU: the AMP tests skip there.
FLOAT16_AUTOCAST_ON_CPU = int(torch.__version__.split(".")[0]) >= 2


def assert_float16_autocast_step_is_finite(
    config: str, overrides: Dict[str, Any], batch_size: int
) -> None:
    """One training step of `config` (with `overrides`) on its first `batch_size` training
    instances under the CPU's float16 autocast gives a finite loss and finite gradients."""
    params = Params.from_file(config, params_overrides=json.dumps(overrides))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(overrides["train_data_path"]))
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    loader = SimpleDataLoader(instances, batch_size)
    loader.index_with(vocab)
    with torch.autocast("cpu", dtype=torch.float16):
        loss = model(**next(iter(loader)))["loss"]
    loss.backward()
    assert torch.isfinite(loss)
    for name, parameter in model.named_parameters():
        if parameter.grad is not None:
            assert torch.isfinite(parameter.grad).all(), name


def bilm_files(elmo: str, bilm: Tuple[str, str]) -> Dict[str, str]:
    """Overrides pointing the ELMo module at config path `elmo` to `bilm`'s (options, weights)."""
    options_file, weight_file = bilm
    return {f"{elmo}.options_file": options_file, f"{elmo}.weight_file": weight_file}


def train_config(
    config: Path, serialization_dir: Path, overrides: Dict[str, Any]
) -> Tuple[Model, Dict]:
    """`allennlp train` in-process; returns the model and the run's metrics.json."""
    model = train_model_from_file(
        str(config), str(serialization_dir), overrides=json.dumps(overrides)
    )
    assert model is not None  # None only from a dry run or a distributed one
    return model, json.loads((serialization_dir / "metrics.json").read_text())


def trained_once(
    tmp_path_factory: Any, configs: Path, overrides_of: Callable[[Path], Dict[str, Any]]
) -> Callable[[str], Path]:
    """A function training the config `name` of `configs` (`task_config`'s names, with
    `overrides_of(config)`) the first time it is asked for it and returning its serialization
    directory: for a module fixture, so that a module's tests share each config's run."""
    directories: Dict[str, Path] = {}

    def train(name: str) -> Path:
        if name not in directories:
            config = task_config(configs, name, tmp_path_factory.mktemp("config"))
            directory = tmp_path_factory.mktemp(name.replace(EFML_VARIANT, "_efml"))
            train_model_from_file(
                str(config), str(directory), overrides=json.dumps(overrides_of(config))
            )
            directories[name] = directory
        return directories[name]

    return train


def task_config(configs: Path, name: str, directory: Path) -> Path:
    """
    The config `name` of `configs` (`<name>.jsonnet`), or for `<base>+efml` (`EFML_VARIANT`)
    the config `base` with `EFML_MODEL` as its biLM, chosen by the config alone as a user
    would (`elmo_settings:: elmo.efml(folder)`, which sets the biLM and its indexer): then
    written into `directory`.
    """
    base = name.removesuffix(EFML_VARIANT)
    config = configs / f"{base}.jsonnet"
    if base == name:
        return config
    variant = directory / f"{base}_efml.jsonnet"
    variant.write_text(
        'local elmo = import "elmo_plugin/training_configs/common/elmo.libsonnet";\n'
        f"(import {json.dumps(str(config))})\n"
        f"+ {{ elmo_settings:: elmo.efml({json.dumps(str(EFML_MODEL))}) }}\n"
    )
    return variant


def assert_input_size_must_match(
    config: Path,
    overrides: Dict[str, Any],
    vocab: Vocabulary,
    module: str,
    size_key: str,
    right: int,
) -> None:
    """`module`'s `size_key` set in the config: `right` is accepted, `right + 1` is a
    ConfigurationError naming both sizes."""
    model_params = Params.from_file(str(config), json.dumps(overrides)).pop("model").as_dict()
    model_params[module][size_key] = right
    # from_params consumes its Params; the copy keeps model_params for the second build.
    model = Model.from_params(vocab=vocab, params=Params(copy.deepcopy(model_params)))
    assert getattr(model, f"_{module}").get_input_dim() == right
    model_params[module][size_key] = right + 1
    with pytest.raises(
        ConfigurationError, match=f"{module} input dim is {right + 1} but .* is {right}"
    ):
        Model.from_params(vocab=vocab, params=Params(model_params))
