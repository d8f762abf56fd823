"""
Trains the small archive of this install profile that tests/test_profiles.py loads on both
profiles: `ner_elmo.jsonnet` (our `elmo` embedder and NER model) at toy size with the fixture
biLM on the bundled CoNLL-2003 slice, and records its logits and tags on the test slice.

    .venv/bin/python scripts/make_profile_archive.py                # the current profile
    .venv-allennlp-2.10/bin/python scripts/make_profile_archive.py  # the allennlp-2.10 profile

Writes fixtures/archives/<profile>/model.tar.gz and predictions.json (paths in the archive's
config are relative to the project root, where the tests run).
"""

import json
import os
import platform
import shutil
import sys
import tempfile

import torch
from allennlp.commands.train import train_model_from_file

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, PROJECT_ROOT)

from tests.profile_archives import ARCHIVES, profile_of_this_process, predict  # noqa: E402

CONFIG = "training_configs/ner/ner_elmo.jsonnet"
OVERRIDES = {
    "train_data_path": "fixtures/ner/train.txt",
    "validation_data_path": "fixtures/ner/dev.txt",
    "test_data_path": "fixtures/ner/test.txt",
    "trainer.num_epochs": 2,
    "data_loader.batch_sampler.batch_size": 8,
    "model.text_field_embedder.token_embedders.tokens.embedding_dim": 8,
    "model.text_field_embedder.token_embedders.token_characters.encoder.num_filters": 8,
    "model.encoder.hidden_size": 8,
    "model.text_field_embedder.token_embedders.elmo.options_file": "fixtures/elmo/options.json",
    "model.text_field_embedder.token_embedders.elmo.weight_file": "fixtures/elmo/lm_weights.hdf5",
}


def main() -> None:
    os.chdir(PROJECT_ROOT)
    import elmo_plugin.allennlp.tasks.ner  # noqa: F401

    torch.manual_seed(0)
    profile = profile_of_this_process()
    target = os.path.join(ARCHIVES, profile)
    os.makedirs(target, exist_ok=True)
    with tempfile.TemporaryDirectory() as run:
        train_model_from_file(CONFIG, os.path.join(run, "ner"), overrides=json.dumps(OVERRIDES))
        shutil.copy(os.path.join(run, "ner", "model.tar.gz"), os.path.join(target, "model.tar.gz"))
    recorded = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "sentences": predict(os.path.join(target, "model.tar.gz")),
    }
    with open(os.path.join(target, "predictions.json"), "w") as handle:
        json.dump(recorded, handle, indent=1)
    print(
        f"wrote {target}/model.tar.gz and predictions.json "
        f"(Python {recorded['python']}, torch {recorded['torch']})"
    )


if __name__ == "__main__":
    main()
