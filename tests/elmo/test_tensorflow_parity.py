"""The parity chain with TensorFlow made anew: bilm-tf trains a fresh checkpoint and computes
its references (fixtures/tensorflow/make_bilm_checkpoint.py), and the TensorFlow-free reading
of it passes the checks that the stored fixtures pass. Runs only with a TensorFlow venv
(`tf_reference`, tests/tensorflow_reference.py); about a minute."""

import os

import numpy
import pytest

from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo.formats.loading import load_bilm
from elmo_plugin.elmo.formats.tensorflow.hub_module import module_aggregation
from elmo_plugin.elmo.formats.tensorflow.language_model import CheckpointLanguageModel
from elmo_plugin.embedding.simple_elmo import ElmoModel
from tests.tensorflow_reference import (
    CHECKPOINT_FOLDER,
    HUB_PATH_VARIABLE,
    SIMPLE_ELMO_VECTORS,
    assert_layers_are_bilm_tfs,
    assert_losses_are_bilm_tfs,
    assert_module_outputs_are_hubs,
    assert_substitutes_are_simple_elmos,
    assert_tensors_are_tensorflows,
    assert_vectors_are_simple_elmos,
    make_with_tensorflow,
)


@pytest.mark.tf_reference
def test_a_fresh_checkpoint_made_by_tensorflow_reads_as_tensorflow_reads_it(tmp_path):
    make_with_tensorflow(tmp_path)
    folder = str(tmp_path / CHECKPOINT_FOLDER)
    assert_tensors_are_tensorflows(tmp_path)
    assert_layers_are_bilm_tfs(ElmoEmbedder(folder), tmp_path)
    language_model = CheckpointLanguageModel(folder)
    assert_losses_are_bilm_tfs(language_model, tmp_path)
    assert_substitutes_are_simple_elmos(language_model, tmp_path)
    model = ElmoModel()
    model.load(folder, max_batch_size=int(numpy.load(tmp_path / SIMPLE_ELMO_VECTORS)["batch"]))
    assert_vectors_are_simple_elmos(model, tmp_path)


@pytest.mark.tf_reference
@pytest.mark.skipif(HUB_PATH_VARIABLE not in os.environ, reason=f"needs {HUB_PATH_VARIABLE}")
def test_a_fresh_hub_module_made_by_tensorflow_hub_reads_as_hub_reads_it(tmp_path):
    make_with_tensorflow(tmp_path, hub_module=True)
    module = str(tmp_path / "hub_module")
    assert_layers_are_bilm_tfs(ElmoEmbedder(module), tmp_path)
    bilm = load_bilm(module, None).eval()
    assert_module_outputs_are_hubs(bilm, module_aggregation(module), tmp_path)
