"""The regex that names the learned layer weights (for AllenNLP's `regularizer`) is exported once
by the core; the configs' elmo.libsonnet states the same, and it must match the scalar-mix
weights of real models: a renamed attribute would otherwise silently regularize nothing."""

import json
import re

from allennlp.common import params
import torch
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.models import Model

from elmo_plugin.elmo import Elmo, ScalarMix
from elmo_plugin.elmo.formats.weight_provenance import BILM_PARAMETERS_REGEX
from elmo_plugin.elmo.modules.elmo import LAYER_WEIGHTS_REGEX

ELMO_LIBSONNET = "training_configs/common/elmo.libsonnet"


def evaluate(snippet: str):
    return json.loads(params.evaluate_snippet("layer_weights_regex", snippet, jpathdir=["."]))


def layer_weights(module: torch.nn.Module):
    return {id(m.scalar_parameters) for m in module.modules() if isinstance(m, ScalarMix)}


def matched(module: torch.nn.Module):
    return {id(p) for name, p in module.named_parameters() if re.search(LAYER_WEIGHTS_REGEX, name)}


def test_elmo_libsonnet_states_the_cores_regex():
    assert evaluate(f'(import "{ELMO_LIBSONNET}").layer_weights_regex') == LAYER_WEIGHTS_REGEX
    regularizer = evaluate(f'(import "{ELMO_LIBSONNET}").regularizer(0.5)')
    assert regularizer == {"regexes": [[LAYER_WEIGHTS_REGEX, {"type": "l2", "alpha": 0.5}]]}


def test_the_regex_matches_every_mix_of_an_elmo_module_and_nothing_else(elmo_options, elmo_weights):
    elmo = Elmo(elmo_options, elmo_weights, num_output_representations=2, requires_grad=True)
    assert len(layer_weights(elmo)) == 2
    assert matched(elmo) == layer_weights(elmo)


def test_the_config_regularizer_penalises_the_layer_weights_of_a_model_built_from_config(
    elmo_options, elmo_weights
):
    """A model as a user's config builds it from elmo.libsonnet's blocks."""
    model_config = f"""
    local elmo = (import "{ELMO_LIBSONNET}") + {{
      options_file: "{elmo_options}", weight_file: "{elmo_weights}",
    }};
    {{
      type: "basic_classifier",
      text_field_embedder: {{ token_embedders: elmo.embedders(elmo.embedder()) }},
      seq2vec_encoder: {{ type: "boe", embedding_dim: 32 }},
      regularizer: elmo.regularizer(0.5),
    }}
    """
    vocab = Vocabulary(tokens_to_add={"labels": ["yes", "no"]})
    model = Model.from_params(vocab=vocab, params=Params(evaluate(model_config)))
    assert len(layer_weights(model)) == 1 and matched(model) == layer_weights(model)
    mix = next(m for m in model.modules() if isinstance(m, ScalarMix))
    with torch.no_grad():
        mix.scalar_parameters.copy_(torch.tensor([1.0, -2.0, 0.5]))
    torch.testing.assert_close(model.get_regularization_penalty(), torch.tensor(0.5 * 5.25))


def test_elmo_libsonnet_states_the_cores_bilm_regex_and_it_names_exactly_the_bilm(
    elmo_options, elmo_weights
):
    assert evaluate(f'(import "{ELMO_LIBSONNET}").bilm_parameters_regex') == BILM_PARAMETERS_REGEX
    elmo = Elmo(elmo_options, elmo_weights, num_output_representations=1)
    bilm = {id(p) for p in elmo.bilm.parameters()}
    for prefix in ("", "_text_field_embedder.token_embedder_elmo._elmo."):
        named = {
            id(p)
            for name, p in elmo.named_parameters()
            if re.search(BILM_PARAMETERS_REGEX, prefix + name)
        }
        assert bilm and named == bilm
