import json
import math
import os
import sys
from typing import Any

import pytest
import torch
from allennlp.commands import main
from allennlp.common.util import import_module_and_submodules
from allennlp.models import Model
from allennlp.models.archival import load_archive

from tests.paths import PROJECT_ROOT, TRAINING_CONFIGS
from tests.tasks.srl.srl_small_overrides import SMALL
from elmo_plugin.elmo.formats.efml import EfmlBiLm
from tests.tasks.training_helpers import EFML_VARIANT, task_config, train_config

# No config gives the encoder's input size: the model sets it from the embedders and the
# predicate embedding (with ELMo, the default biLM's output size too). The fine-tuned config
# also trains with an ELMoForManyLangs model chosen by the config alone.
CONFIGS = [
    ("srl_baseline", "span"),
    ("srl_elmo", "span"),
    ("srl_elmo_finetuned", "span"),
    ("srl_elmo_finetuned" + EFML_VARIANT, "span"),
    ("srl_baseline", "head"),
]


@pytest.fixture(scope="module", params=CONFIGS, ids=lambda c: f"{c[0]}-{c[1]}")
def trained(request, tmp_path_factory):
    config, label_mode = request.param
    import_module_and_submodules("elmo_plugin")
    overrides = dict(
        SMALL, **{"dataset_reader.label_mode": label_mode, "model.label_mode": label_mode}
    )
    config_path = task_config(TRAINING_CONFIGS / "srl", config, tmp_path_factory.mktemp("config"))
    serialization_dir = tmp_path_factory.mktemp("srl")
    cwd = os.getcwd()
    os.chdir(PROJECT_ROOT)  # configs refer to fixtures/ and ../shared/data from the repository root
    try:
        train_config(config_path, serialization_dir, overrides)
    finally:
        os.chdir(cwd)
    return config, label_mode, serialization_dir


def test_one_epoch_gives_sensible_metrics(trained):
    config, _, serialization_dir = trained
    metrics = json.loads((serialization_dir / "metrics.json").read_text())
    assert math.isfinite(metrics["training_loss"]) and metrics["training_loss"] > 0
    for split in ("training", "validation", "test"):
        for name in ("precision-overall", "recall-overall", "f1-measure-overall"):
            assert 0.0 <= metrics[f"{split}_{name}"] <= 1.0
    elmo_weights = [name for name in metrics if name.startswith("training__elmo_mix0_")]
    assert bool(elmo_weights) == ("elmo" in config)


def test_only_the_finetuned_config_trains_the_bilm(trained):
    config, _, serialization_dir = trained
    if "elmo" not in config:
        pytest.skip("no biLM")
    archive = load_archive(str(serialization_dir / "model.tar.gz"))
    # A model built from the same config holds the biLM as loaded from its weight file.
    untrained = Model.from_params(
        vocab=archive.model.vocab, params=archive.config.duplicate()["model"]
    )
    before = {name: value for name, value in untrained.named_parameters() if "._bilm." in name}
    after = {name: value for name, value in archive.model.named_parameters() if "._bilm." in name}
    assert before and before.keys() == after.keys()
    changed = [name for name in before if not torch.equal(before[name], after[name])]
    finetuned = config.startswith("srl_elmo_finetuned")
    assert bool(changed) == finetuned, changed
    assert all(value.requires_grad == finetuned for value in after.values())
    elmo = archive.config["model"]["text_field_embedder"]["token_embedders"]["elmo"]
    assert ("activation_cache" in elmo) != finetuned  # a fine-tuned biLM's activations change
    model: Any = archive.model  # its submodules, as the config built them
    bilm = model._text_field_embedder.token_embedder_elmo.elmo.bilm
    assert isinstance(bilm, EfmlBiLm) == config.endswith(EFML_VARIANT)


def test_allennlp_predict_on_the_archive(trained, tmp_path, monkeypatch):
    _, label_mode, serialization_dir = trained
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text(
        json.dumps({"sentence": "Bush nominated Anderson for a term.", "verbs": ["nominated"]})
        + "\n"
        + json.dumps({"tokens": ["He", "said", "she", "left"], "predicate_indices": [1, 3]})
        + "\n"
    )
    output = tmp_path / "predictions.jsonl"
    monkeypatch.chdir(PROJECT_ROOT)
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "allennlp",
            "predict",
            str(serialization_dir / "model.tar.gz"),
            str(inputs),
            "--output-file",
            str(output),
            "--include-package",
            "elmo_plugin",
            "--silent",
        ],
    )
    main()
    first, second = [json.loads(line) for line in output.read_text().splitlines()]
    assert first["words"] == ["Bush", "nominated", "Anderson", "for", "a", "term", "."]
    (nominated,) = first["verbs"]
    assert nominated["predicate_index"] == 1 and len(nominated["tags"]) == 7
    assert [v["verb"] for v in second["verbs"]] == ["said", "left"]
    for verb in first["verbs"] + second["verbs"]:
        assert verb["description"]
        if label_mode == "span":
            assert all(t == "O" or t[:2] in ("B-", "I-") for t in verb["tags"])
