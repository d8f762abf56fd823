"""The plugin's `allennlp` subcommands."""

from elmo_plugin.allennlp.commands.elmo_embed import ElmoEmbed
from elmo_plugin.allennlp.commands.elmo_export import ElmoExport
from elmo_plugin.allennlp.commands.elmo_perplexity import ElmoPerplexity

__all__ = ["ElmoEmbed", "ElmoExport", "ElmoPerplexity"]
