"""
The ids a biLM reads, picked by their key from a token indexer's output, for the `elmo` token
embedder and every model that holds an `Elmo` alike: a bilm-tf biLM reads the `elmo_characters`
indexer's `ELMO_TOKENS`, an ELMoForManyLangs (EFML) one the `elmo_efml_characters` indexer's
`EFML_TOKENS`. Ids of the other format's indexer, or of another EFML model's tables
(`EFML_TABLES`, their digest, beside the ids), are refused: they would be silently wrong
numbers.
"""

from typing import Mapping, Optional

import torch

from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.efml import EfmlBiLm
from elmo_plugin.elmo.formats.efml.ids import EFML_INDEXER_NAME, source_of

__all__ = [
    "EFML_INDEXER_NAME",
    "EFML_TABLES",
    "EFML_TOKENS",
    "ELMO_INDEXER_NAME",
    "ELMO_TOKENS",
    "bilm_ids",
    "check_tables",
]

# The registered names of the two indexers (AllenNLP's and ours), and the keys of their ids.
ELMO_INDEXER_NAME = "elmo_characters"
ELMO_TOKENS = "elmo_tokens"
EFML_TOKENS = "efml_tokens"
# The digest of the EFML tables that made the ids (`EfmlIds.digest`), one per text field.
EFML_TABLES = "efml_tables"


def bilm_ids(bilm: ElmoBiLm, indexed: Mapping[str, torch.Tensor], bilm_name: str) -> torch.Tensor:
    """
    The ids in `indexed` (one indexer's tensors, by key) that `bilm` reads, refused with the
    indexer to use instead when they are the other format's. `bilm_name` names the biLM in
    errors (its `options_file`). The EFML tables are checked by `check_tables`.
    """
    if isinstance(bilm, EfmlBiLm):
        if EFML_TOKENS in indexed:
            return indexed[EFML_TOKENS]
        raise ConfigurationError(
            f"the biLM {bilm_name!r} is an ELMoForManyLangs model, which reads its own "
            f"characters and word ids, but its input is {_described(indexed)}: index the tokens "
            f'with {{"type": "{EFML_INDEXER_NAME}", "model": "{bilm_name}"}}'
        )
    if ELMO_TOKENS in indexed:
        return indexed[ELMO_TOKENS]
    raise ConfigurationError(
        f"the biLM {bilm_name!r} is a bilm-tf model, but its input is {_described(indexed)}: "
        f'index the tokens with {{"type": "{ELMO_INDEXER_NAME}"}}'
    )


def check_tables(bilm: ElmoBiLm, tables: Optional[torch.Tensor], bilm_name: str) -> None:
    """Refuses EFML ids made from other tables than `bilm`'s, naming both models; `tables` is
    the indexer's `EFML_TABLES` (absent from ids made otherwise, e.g. by `batch_to_ids`)."""
    if tables is None or not isinstance(bilm, EfmlBiLm) or not tables.numel():
        return
    # One sync with the device; the caller checks once, not every batch.
    made_by = int(tables.reshape(-1)[0])
    if made_by != bilm.ids.digest:
        raise ConfigurationError(
            f"the ELMoForManyLangs ids come from the tables of {source_of(made_by)}, but the "
            f"biLM {bilm_name!r} is the model {bilm.ids.source}, whose tables differ: its "
            "characters and words would get another model's ids. Give the "
            f"\"{EFML_INDEXER_NAME}\" indexer's `model` and the biLM's `options_file` the same "
            "model (elmo.libsonnet's efml(model) sets both)"
        )


def _described(indexed: Mapping[str, torch.Tensor]) -> str:
    if EFML_TOKENS in indexed:
        return f"the \"{EFML_INDEXER_NAME}\" indexer's (an ELMoForManyLangs model's ids)"
    if ELMO_TOKENS in indexed:
        return f"the \"{ELMO_INDEXER_NAME}\" indexer's (bilm-tf's characters)"
    return f"tensors {sorted(indexed)}, of neither ELMo indexer"
