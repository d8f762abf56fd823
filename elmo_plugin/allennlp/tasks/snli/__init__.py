"""
Natural language inference on SNLI: the SNLI jsonl reader, the ESIM model with ELMo at its
input and/or output (Peters et al. 2018, Table 3), and the premise/hypothesis predictor.
"""

import elmo_plugin.allennlp.tasks.snli.dataset_readers  # noqa: F401
import elmo_plugin.allennlp.tasks.snli.models  # noqa: F401
import elmo_plugin.allennlp.tasks.snli.predictors  # noqa: F401
