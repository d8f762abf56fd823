import json
from pathlib import Path
from typing import Callable, Dict, Tuple

import pytest
from allennlp.models import Model

from elmo_plugin.elmo import ElmoBiLm, save_bilm
from tests.tasks.training_helpers import FIXTURE_BILM, bilm_files, train_config

FIXTURE_OPTIONS, _ = FIXTURE_BILM
OTHER_BILM_PROJECTION_DIM = 8


@pytest.fixture(scope="session")
def other_size_bilm(tmp_path_factory) -> Tuple[str, str]:
    """
    A random bilm-tf-format biLM like `fixtures/elmo` but with `projection_dim` 8, so its ELMo
    output size (16) differs from the fixture's (32); returns its `(options_file, weight_file)`.
    """
    with open(FIXTURE_OPTIONS) as handle:
        options = json.load(handle)
    options["lstm"].update(dim=24, projection_dim=OTHER_BILM_PROJECTION_DIM)
    options["char_cnn"].update(filters=[[1, 4], [2, 8], [3, 8]], n_highway=1)
    directory = tmp_path_factory.mktemp("other_size_bilm")
    save_bilm(ElmoBiLm.from_options(options), str(directory))
    return str(directory / "options.json"), str(directory / "weights.hdf5")


@pytest.fixture(scope="session")
def other_bilm_output_dim() -> int:
    return 2 * OTHER_BILM_PROJECTION_DIM


@pytest.fixture
def train_with_other_size_bilm(
    tmp_path, other_size_bilm
) -> Callable[[Path, Dict, str], Tuple[Model, Dict]]:
    """
    `train(config, overrides, elmo)`: trains `config` with `overrides` and the ELMo module at
    config path `elmo` switched to `other_size_bilm` by its files, nothing else; returns the
    model and its metrics.
    """

    def train(config: Path, overrides: Dict, elmo: str) -> Tuple[Model, Dict]:
        return train_config(
            config, tmp_path / "run", {**overrides, **bilm_files(elmo, other_size_bilm)}
        )

    return train
