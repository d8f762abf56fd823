import pytest
import torch
from allennlp.modules.elmo import batch_to_ids

from elmo_plugin.elmo import ELMO_INDEXER_KEY, Elmo
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.tasks.elmo_places import ElmoPlaces

ELMO_DIM = 32


def text_field(sentences):
    """A text field's tensors as a batch holds them: word ids and the ELMo indexer's ids."""
    ids = batch_to_ids(sentences)
    return {
        "tokens": {"tokens": torch.ones(ids.shape[:2], dtype=torch.long)},
        ELMO_INDEXER_KEY: {"elmo_tokens": ids},
    }


def elmo_of(elmo_options, elmo_weights, num_places):
    return Elmo(elmo_options, elmo_weights, num_places, dropout=0.0).eval()


@pytest.mark.parametrize("use_input, use_output", [(True, False), (False, True), (True, True)])
def test_one_biLM_run_hands_out_representation_0_to_the_input_and_the_next_to_the_output(
    elmo_options, elmo_weights, sentences, use_input, use_output
):
    elmo = elmo_of(elmo_options, elmo_weights, int(use_input) + int(use_output))
    with torch.no_grad():
        for m, mix in enumerate(elmo.scalar_mixes):
            mix.gamma.fill_(1.0 + m)  # tells the representations apart
    places = ElmoPlaces("a_model", elmo, use_input, use_output)
    text = text_field(sentences[:3])
    runs = []
    elmo.bilm.register_forward_hook(lambda *args: runs.append(1))
    with torch.no_grad():
        placed = places(text)
        expected = iter(elmo(text[ELMO_INDEXER_KEY]["elmo_tokens"])["elmo_representations"])
    assert len(runs) == 2  # one for the places, one for `expected`
    for representation, used in [(placed.input, use_input), (placed.output, use_output)]:
        if used:
            torch.testing.assert_close(representation, next(expected), atol=0, rtol=0)
        else:
            assert representation is None
    assert (places.input_dim, places.output_dim) == (ELMO_DIM * use_input, ELMO_DIM * use_output)


def test_the_callers_text_field_is_left_as_it_was(elmo_options, elmo_weights, sentences):
    places = ElmoPlaces("a_model", elmo_of(elmo_options, elmo_weights, 2), True, True)
    text = text_field(sentences[:2])
    before = dict(text)
    placed = places(text)
    assert text == before and set(text) == {"tokens", ELMO_INDEXER_KEY}
    assert placed.text == {"tokens": before["tokens"]}


def test_without_elmo_the_elmo_ids_still_never_reach_the_embedder(sentences):
    places = ElmoPlaces("a_model", None, False, False)
    text = text_field(sentences[:2])
    placed = places(text)
    assert placed == ({"tokens": text["tokens"]}, None, None)
    assert set(text) == {"tokens", ELMO_INDEXER_KEY}
    assert (places.input_dim, places.output_dim) == (0, 0)


def test_a_missing_elmo_indexer_is_a_clear_error(elmo_options, elmo_weights, sentences):
    places = ElmoPlaces("a_model", elmo_of(elmo_options, elmo_weights, 1), True, False)
    expected = r"a_model .* no \"elmo\" token indexer.*\['tokens'\]"
    with pytest.raises(ConfigurationError, match=expected):
        places({"tokens": text_field(sentences[:2])["tokens"]})


@pytest.mark.parametrize(
    "num_mixes, use_input, use_output, message",
    [
        (0, True, False, "a_model: use_input_elmo/use_output_elmo need an `elmo` module"),
        (0, False, True, "a_model: use_input_elmo/use_output_elmo need an `elmo` module"),
        (2, False, True, "a_model: elmo.num_output_representations is 2 but 1 ELMo places"),
        (1, True, True, "a_model: elmo.num_output_representations is 1 but 2 ELMo places"),
        (1, False, False, "a_model: elmo.num_output_representations is 1 but 0 ELMo places"),
    ],
)
def test_the_places_must_match_the_elmo_module(
    elmo_options, elmo_weights, num_mixes, use_input, use_output, message
):
    elmo = elmo_of(elmo_options, elmo_weights, num_mixes) if num_mixes else None
    with pytest.raises(ConfigurationError) as error:
        ElmoPlaces("a_model", elmo, use_input, use_output)
    assert message in str(error.value)
