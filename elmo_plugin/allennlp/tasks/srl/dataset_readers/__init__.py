from elmo_plugin.allennlp.tasks.srl.dataset_readers.conll_srl_columns import ConllSrlColumnsReader
from elmo_plugin.allennlp.tasks.srl.dataset_readers.universal_propbank_srl import (
    UniversalPropbankSrlReader,
)

__all__ = ["ConllSrlColumnsReader", "UniversalPropbankSrlReader"]
