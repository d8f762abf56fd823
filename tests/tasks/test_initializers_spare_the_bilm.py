"""A task model's initializer must leave the pretrained biLM as loaded: SRL's He et al. regex
".*_encoder.*weight" also matched the biLM's `character_encoder`, so every SRL +ELMo run had a
randomly re-initialised character CNN under a frozen biLM, and no error said so. Every task
config with ELMo builds its model here, and its biLM must equal the shipped one."""

import pytest
import torch
from allennlp.common import Params
from allennlp.common.util import import_module_and_submodules
from allennlp.data import Vocabulary
from allennlp.models import Model

from elmo_plugin.elmo import Elmo
from tests.paths import PROJECT_ROOT, TRAINING_CONFIGS

SHIPPED = PROJECT_ROOT / "elmo_plugin" / "pretrained" / "elmo_wikipedia_512x128"
ELMO_CONFIGS = sorted(
    path.relative_to(TRAINING_CONFIGS).as_posix()
    for path in TRAINING_CONFIGS.glob("*/*elmo*.jsonnet")
    if path.parent.name != "bilm"
)


def model_of(config: str) -> Model:
    params = Params.from_file(str(TRAINING_CONFIGS / config))
    labels = {"labels": ["O", "B-PER", "I-PER", "L-PER", "U-PER"]}  # enough for the NER CRF
    added = params.get("vocabulary", {}).get("tokens_to_add", {})
    vocab = Vocabulary(tokens_to_add={"tokens": ["the"], **labels, **dict(added)})
    return Model.from_params(vocab=vocab, params=params.pop("model"))


def bilm_parameters(module: torch.nn.Module) -> dict:
    """The biLM's parameters by their name inside the biLM."""
    return {
        name.split("_bilm.", 1)[1]: value
        for name, value in module.named_parameters()
        if "_bilm." in name
    }


def test_every_task_with_elmo_has_a_config_here():
    tasks = {config.split("/")[0] for config in ELMO_CONFIGS}
    assert (
        tasks == {"coref", "ner", "sentiment", "srl", "snli", "squad"}
        and "srl/srl_elmo_finetuned.jsonnet" in ELMO_CONFIGS
    )


@pytest.mark.parametrize("config", ELMO_CONFIGS)
def test_the_models_initializer_leaves_the_pretrained_bilm_as_loaded(config, monkeypatch):
    import_module_and_submodules("elmo_plugin")
    monkeypatch.chdir(PROJECT_ROOT)  # configs refer to their data from the repository root
    shipped = bilm_parameters(Elmo(str(SHIPPED / "options.json"), str(SHIPPED / "weights.hdf5"), 1))
    built = bilm_parameters(model_of(config))
    assert built.keys() == shipped.keys()
    changed = [name for name in shipped if not torch.equal(built[name], shipped[name])]
    assert changed == [], f"{config}: the initializer re-initialised the biLM's {changed}"
