"""
SQuAD v1.1 extractive question answering: the `squad_v1` reader, the `bidaf_rc` model (BiDAF
with ELMo at its input and/or output), the `squad_v1_em_f1` metric and the `squad_answer`
predictor.
"""

import elmo_plugin.allennlp.tasks.squad.dataset_readers  # noqa: F401
import elmo_plugin.allennlp.tasks.squad.metrics  # noqa: F401
import elmo_plugin.allennlp.tasks.squad.models  # noqa: F401
import elmo_plugin.allennlp.tasks.squad.predictors  # noqa: F401
