"""The plugin's `allennlp` subcommands."""

from elmo_plugin.commands.elmo_embed import ElmoEmbed
from elmo_plugin.commands.elmo_export import ElmoExport

__all__ = ["ElmoEmbed", "ElmoExport"]
