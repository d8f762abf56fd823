"""No training config states a layer's input size: every model sizes its layers from the
embedders, the ELMo module and the layers before, so another biLM or another embedding size
needs no arithmetic in a config or in the scripts that override it."""

import json

from allennlp.common import params
import pytest

from tests.paths import TRAINING_CONFIGS

SIZE_KEYS = {"input_size", "input_dim"}


def size_keys(value, path="config"):
    if isinstance(value, dict):
        for key, item in value.items():
            if key in SIZE_KEYS:
                yield f"{path}.{key}"
            yield from size_keys(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from size_keys(item, f"{path}[{i}]")


@pytest.mark.parametrize(
    "config", sorted(TRAINING_CONFIGS.rglob("*.jsonnet")), ids=lambda p: p.name
)
def test_config_states_no_input_size(config):
    assert list(size_keys(json.loads(params.evaluate_file(str(config))))) == []
