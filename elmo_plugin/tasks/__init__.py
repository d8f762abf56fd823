"""The task models that use ELMo: each subpackage is one task (reader, model, predictor)."""

import elmo_plugin.tasks.coref  # noqa: F401
import elmo_plugin.tasks.ner  # noqa: F401
import elmo_plugin.tasks.sentiment  # noqa: F401
import elmo_plugin.tasks.snli  # noqa: F401
import elmo_plugin.tasks.squad  # noqa: F401
import elmo_plugin.tasks.srl  # noqa: F401
