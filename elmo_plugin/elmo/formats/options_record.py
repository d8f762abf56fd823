"""
A biLM's options as a model keeps them: recorded in the model's vocabulary when the biLM is
loaded, so that the model's archive carries the biLM's sizes and, for an ELMoForManyLangs
model, that it was one (whose folder a trained model still needs); and found again from there,
from options given inline, or from the options file.
"""

import json
import os
from typing import Any, Dict, Iterable, Optional, Protocol

from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.formats.bilm_tf_options import check_options, read_options
from elmo_plugin.elmo.formats.efml.ids import EFML_INDEXER_NAME
from elmo_plugin.elmo.formats.efml.model import EFML_OPTIONS_KEY

# The vocabulary namespace where a biLM loaded with a model's vocabulary has its options
# recorded, one JSON token `{"options_file": name, "options": {...}}` per file name: AllenNLP
# saves the vocabulary into the model's archive, so the archive carries the biLM's sizes.
OPTIONS_NAMESPACE = "elmo_bilm_options"


class OptionsRecord(Protocol):
    """Where a model keeps the options of its biLM: the part of AllenNLP's `Vocabulary` that
    loading uses (AllenNLP passes the model's vocabulary; the core does not import AllenNLP)."""

    def get_namespaces(self) -> Iterable[str]: ...

    def get_token_to_index_vocabulary(self, namespace: str) -> Dict[str, int]: ...

    def add_token_to_namespace(self, token: str, namespace: str) -> int: ...


def efml_model_gone(name: str, what: str) -> MissingFileError:
    """The error for the ELMoForManyLangs model folder `name`, which `what` names, when it is
    gone (`is_gone`), e.g. after a model trained with it was archived."""
    overrides = {
        "dataset_reader.token_indexers.elmo.model": "/new/place",
        "model.elmo.options_file": "/new/place",
    }
    return MissingFileError(
        f"{what} {name!r}: the ELMoForManyLangs model folder is not there (tried "
        f"{os.path.abspath(name)}). A model trained with it needs the folder at that path: its "
        "tables (char.dic, word.dic) index the text and its architecture JSON builds the biLM "
        "(the archive brings the weights). Put the folder back there, or name where it is now "
        f"for both the \"{EFML_INDEXER_NAME}\" indexer's model and the biLM's options_file, "
        f"e.g. allennlp predict/evaluate ... -o '{json.dumps(overrides)}' (an elmo token "
        "embedder's is model.text_field_embedder.token_embedders.elmo.options_file; a "
        "validation_dataset_reader's indexer too, where the config has one; in Python, "
        "load_archive(..., overrides=...))"
    )


def recorded_efml(vocab: OptionsRecord, name: str) -> bool:
    """Whether `vocab` (a trained model's) recorded `name` as an ELMoForManyLangs model."""
    return EFML_OPTIONS_KEY in (recorded_options(vocab, name) or {})


def find_options(
    options_file: str, known_options: Dict[str, Dict[str, Any]], vocab: Optional[OptionsRecord]
) -> Dict[str, Any]:
    """The options of `options_file` (see `_options`), recorded in `vocab`."""
    options = _options(options_file, known_options, vocab)
    if vocab is not None:
        record_options(vocab, options_file, options)
    return options


def _options(
    options_file: str, known_options: Dict[str, Dict[str, Any]], vocab: Optional[OptionsRecord]
) -> Dict[str, Any]:
    """The options given inline, else those recorded in the model's vocabulary (its archive's),
    else the file's."""
    if options_file in known_options:
        return check_options(known_options[options_file], f"known_options[{options_file!r}]")
    recorded = recorded_options(vocab, options_file) if vocab is not None else None
    if recorded is not None:
        return check_options(recorded, f"the options recorded for {options_file!r}")
    return read_options(options_file)


def recorded_options(vocab: OptionsRecord, options_file: str) -> Optional[Dict[str, Any]]:
    """The options `record_options` kept in `vocab` for `options_file`, or None."""
    if OPTIONS_NAMESPACE not in vocab.get_namespaces():
        return None
    for token in vocab.get_token_to_index_vocabulary(OPTIONS_NAMESPACE):
        if not token.startswith("{"):
            continue  # the namespace's padding and unknown tokens
        try:
            record = json.loads(token)
        except json.JSONDecodeError as error:
            raise ConfigurationError(
                f"the vocabulary's namespace {OPTIONS_NAMESPACE!r} holds {token[:80]!r}, not "
                f"the JSON of a biLM's options ({error.msg}); is its file corrupt?"
            ) from error
        if record.get("options_file") == options_file:
            return record.get("options")
    return None


def record_options(vocab: OptionsRecord, options_file: str, options: Dict[str, Any]) -> None:
    """Keeps `options` for `options_file` in `vocab`, once per file name."""
    if recorded_options(vocab, options_file) is None:
        record = json.dumps({"options_file": options_file, "options": options}, sort_keys=True)
        vocab.add_token_to_namespace(record, OPTIONS_NAMESPACE)
