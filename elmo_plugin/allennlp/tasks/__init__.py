"""The task models that use ELMo: each subpackage is one task (reader, model, predictor)."""

import elmo_plugin.allennlp.tasks.coref  # noqa: F401
import elmo_plugin.allennlp.tasks.ner  # noqa: F401
import elmo_plugin.allennlp.tasks.sentiment  # noqa: F401
import elmo_plugin.allennlp.tasks.snli  # noqa: F401
import elmo_plugin.allennlp.tasks.squad  # noqa: F401
import elmo_plugin.allennlp.tasks.srl  # noqa: F401
