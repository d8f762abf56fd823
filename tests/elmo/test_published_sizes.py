"""The published ELMo architectures are stated once for Python
(tests.published_sizes) and once for the configs (bilm.libsonnet): the two
must agree."""

import json

from allennlp.common import params
import pytest

from elmo_plugin.elmo import ElmoBiLm
from tests.published_sizes import (
    ELMO_FILTERS,
    PUBLISHED_SIZES,
    published_options,
)

BILM_LIBSONNET = "training_configs/bilm/bilm.libsonnet"


def libsonnet_field(field: str):
    snippet = f'(import "{BILM_LIBSONNET}").{field}'
    return json.loads(params.evaluate_snippet("published_sizes", snippet, jpathdir=["."]))


@pytest.mark.parametrize("size", PUBLISHED_SIZES)
def test_bilm_libsonnet_states_the_published_sizes(size):
    # bilm-tf trains with 261 characters (see bilm.libsonnet).
    assert libsonnet_field(f"elmo_{size}") == published_options(size, n_characters=261)


def test_the_published_filters_are_the_libsonnets_and_2048():
    assert libsonnet_field("elmo_filters") == ELMO_FILTERS
    assert sum(count for _, count in ELMO_FILTERS) == 2048


def test_published_options_describe_the_published_models():
    small, original = published_options("small"), published_options("original")
    assert (
        small["lstm"]["dim"],
        small["lstm"]["projection_dim"],
        small["char_cnn"]["n_highway"],
    ) == (1024, 128, 1)
    assert (original["lstm"]["dim"], original["lstm"]["projection_dim"]) == (4096, 512)
    assert original["char_cnn"]["n_highway"] == 2
    # A fresh copy each time: a caller's changes stay its own.
    small["char_cnn"]["filters"].append([8, 1])
    assert published_options("small")["char_cnn"]["filters"] == ELMO_FILTERS


def test_a_built_biLM_gives_back_the_published_options():
    options = published_options("small")
    assert {
        k: v for k, v in ElmoBiLm.from_options(options).options().items() if k != "bidirectional"
    } == options


def test_an_unknown_size_names_the_known_ones():
    with pytest.raises(
        ValueError, match=r"no published ELMo size 'large'; expected one of \['small', 'original'\]"
    ):
        published_options("large")
