from elmo_plugin.allennlp.tasks.squad.dataset_readers.spacy_rules_tokenizer import (
    SpacyRulesTokenizer,
)
from elmo_plugin.allennlp.tasks.squad.dataset_readers.squad_v1 import SquadV1Reader

__all__ = ["SpacyRulesTokenizer", "SquadV1Reader"]
