"""
How the plugin's subcommands join `allennlp`'s parser (`allennlp <command> --help` says how
`allennlp` finds the plugin; `allennlp --help` lists the description alone), and how each runs
as a console script of its own (`run_subcommand`, for `elmo_plugin.console`).
"""

import argparse
import logging
import os
from typing import List

from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError as AllennlpConfigurationError

from elmo_plugin.elmo.errors import ConfigurationError


# --include-package is not a way: AllenNLP parses the subcommand before it imports packages.
def found_by_allennlp(name: str) -> str:
    return (
        f"(Also a command of its own, `{name}`, which pip installs. `allennlp {name}` finds the "
        "plugin where a plugins file names elmo_plugin: ./.allennlp_plugins or "
        "~/.allennlp/plugins.)"
    )


def add_command_parser(
    parser: argparse._SubParsersAction, name: str, description: str
) -> argparse.ArgumentParser:
    return parser.add_parser(
        name, description=f"{description} {found_by_allennlp(name)}", help=description
    )


def run_subcommand(name: str, argv: List[str]) -> None:
    """Parses `argv` as `allennlp <name>` does, then runs the subcommand; a user's error is one
    line (`ALLENNLP_DEBUG=1` shows its traceback), as in the `allennlp` command."""
    import elmo_plugin.allennlp.commands  # noqa: F401  (registers the subcommands)

    subparsers = argparse.ArgumentParser(prog=name).add_subparsers()
    parser = Subcommand.by_name(name)().add_subparser(subparsers)
    parser.prog = name
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    try:
        args.func(args)
    except (ConfigurationError, AllennlpConfigurationError) as error:
        if os.environ.get("ALLENNLP_DEBUG"):
            raise
        parser.exit(2, f"{name}: error: {error}\n")
