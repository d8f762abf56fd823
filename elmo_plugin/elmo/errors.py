"""
The one error the ELMo core raises for what a user gives it and must fix.

AllenNLP's `ConfigurationError` lives in AllenNLP, which the core does not import; every module
of elmo_plugin, the AllenNLP plugin layer included, raises this one, so a caller catches one
class whatever it called. It takes one message, as AllenNLP's does, and pickles with it.
"""


class ConfigurationError(Exception):
    """What a user gave (a file, a config key, an argument) cannot be used; the message names
    it and, where it helps, the fix."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class MissingFileError(ConfigurationError):
    """A file a config names does not exist."""
