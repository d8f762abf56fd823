"""What tests/test_profiles.py and scripts/make_profile_archive.py share: where each install
profile's archive lives, and how it is read back."""

import os
from typing import Any, Dict, List

import torch
from allennlp.data import Instance, Token
from allennlp.data.fields import TextField
from allennlp.models.archival import load_archive

from tests.paths import FIXTURES

ARCHIVES = os.path.join(FIXTURES, "archives")
TEST_SENTENCES = os.path.join("fixtures", "ner", "test.txt")


def profile_of_this_process() -> str:
    """The profile this interpreter was installed with (README "Install")."""
    return "allennlp-2.10" if torch.__version__.startswith("1.") else "current"


def predict(archive_file: str) -> List[Dict[str, Any]]:
    """Words, Viterbi tags and tag logits of every test sentence, from the archive alone."""
    archive = load_archive(archive_file)
    model, reader = archive.model, archive.dataset_reader
    model.eval()
    instances = list(reader.read(TEST_SENTENCES))
    outputs = model.forward_on_instances(instances)
    return [
        {
            "words": [token.text for token in _tokens(instance)],
            "tags": list(output["tags"]),
            "logits": output["logits"][: len(_tokens(instance))].tolist(),
        }
        for instance, output in zip(instances, outputs)
    ]


def _tokens(instance: Instance) -> List[Token]:
    field = instance["tokens"]
    assert isinstance(field, TextField)
    return field.tokens
