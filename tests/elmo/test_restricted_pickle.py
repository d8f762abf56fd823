"""No code runs from a weight file a user names: an ELMoForManyLangs `.pkl` whose pickle would
call something (`__reduce__`) is refused naming the file, on both install profiles (torch 1.12
has no `weights_only`; `restricted_pickle` stands in for it), in a folder or a ZIP of one."""

import io
import os
import shutil
import zipfile

import pytest
import torch

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.efml import load_efml_bilm
from elmo_plugin.elmo.files.restricted_pickle import load_tensors
from tests.paths import FIXTURES

MODEL = FIXTURES / "efml" / "model"


class _WritesAMarker:
    """Unpickled, it would create the file `marker`."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _poisoned_model(tmp_path, weights_file: str) -> str:
    model = tmp_path / "model"
    shutil.copytree(MODEL, model)
    state = torch.load(MODEL / weights_file)
    state["payload"] = _WritesAMarker(str(tmp_path / "marker"))
    torch.save(state, model / weights_file)
    return str(model)


@pytest.mark.parametrize("weights_file", ["encoder.pkl", "token_embedder.pkl"])
def test_a_pickle_payload_in_a_model_folder_is_refused_naming_the_file(tmp_path, weights_file):
    model = _poisoned_model(tmp_path, weights_file)
    with pytest.raises(ConfigurationError, match=rf"model/{weights_file}: .*only tensors"):
        load_efml_bilm(model)
    assert not (tmp_path / "marker").exists()


def test_a_pickle_payload_in_a_zipped_model_is_refused(tmp_path):
    model = _poisoned_model(tmp_path, "encoder.pkl")
    archive = tmp_path / "model.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for name in os.listdir(model):
            zipped.write(os.path.join(model, name), f"model/{name}")
    with pytest.raises(ConfigurationError, match=r"model\.zip/model/encoder\.pkl: .*only tensors"):
        load_efml_bilm(f"{archive}/model")
    assert not (tmp_path / "marker").exists()


@pytest.mark.parametrize("zipped", [True, False])
def test_state_dicts_and_parameters_load_exactly_in_either_torch_format(zipped):
    state = torch.load(MODEL / "encoder.pkl")
    state["parameter"] = torch.nn.Parameter(torch.arange(3.0))
    state["half"] = torch.ones(2, dtype=torch.float16)
    saved = io.BytesIO()
    torch.save(state, saved, _use_new_zipfile_serialization=zipped)
    saved.seek(0)
    loaded = load_tensors(saved, "saved")
    assert list(loaded) == list(state)
    assert all(torch.equal(loaded[name], state[name]) for name in state)
    assert loaded["half"].dtype == torch.float16
