"""A biLM whose weights changed between loading and the first forward pass is an error naming
the weights: AllenNLP runs a model's initializer after its modules are built, and a regex that
matches the biLM's parameters (SRL's ".*_encoder.*weight" matched `character_encoder`) silently
replaced the pretrained weights with random ones in every SRL run with ELMo."""

import pytest
import torch
from allennlp.nn.initializers import InitializerApplicator, OrthogonalInitializer

from elmo_plugin.elmo import Elmo
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.weight_provenance import BILM_PARAMETERS_REGEX

# Character ids of two sentences of two and one words (bilm-tf's ids: 258 begins a word, 259
# ends it, 260 pads; each id is its byte + 1).
WORD = [258, 105, 260] + [261] * 47


def character_ids() -> torch.Tensor:
    padding = [0] * 50
    return torch.tensor([[WORD, WORD], [WORD, padding]])


def he_et_al_initializer(**prevent) -> InitializerApplicator:
    return InitializerApplicator(
        regexes=[(".*_encoder.*weight", OrthogonalInitializer())], **prevent
    )


@pytest.fixture
def elmo(elmo_options, elmo_weights) -> Elmo:
    return Elmo(elmo_options, elmo_weights, num_output_representations=1)


def test_an_initializer_that_reaches_the_bilm_is_an_error_naming_its_weights(elmo):
    he_et_al_initializer()(elmo)
    with pytest.raises(
        ConfigurationError, match=r"character_encoder\.convolutions\.0\.weight.*prevent_regexes"
    ):
        elmo(character_ids())


def test_an_initializer_kept_off_the_bilm_by_its_regex_is_fine(elmo):
    he_et_al_initializer(prevent_regexes=[BILM_PARAMETERS_REGEX])(elmo)
    assert elmo(character_ids())["elmo_representations"][0].shape == (2, 2, 32)


def test_a_loaded_state_dict_is_the_biLMs_weights_from_then_on(elmo, elmo_options):
    state = {name: value.clone() for name, value in elmo.state_dict().items()}
    he_et_al_initializer()(elmo)
    elmo.load_state_dict(state)  # as a trained archive does
    elmo(character_ids())
    archived = Elmo(elmo_options, None, num_output_representations=1)
    archived.load_state_dict(state)
    archived(character_ids())


def test_weights_may_change_after_the_first_forward_pass(elmo):
    elmo(character_ids())
    with torch.no_grad():  # as training a fine-tuned biLM does
        next(elmo.bilm.parameters()).add_(1.0)
    elmo(character_ids())
