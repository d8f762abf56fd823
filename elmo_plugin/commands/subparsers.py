"""
How the plugin's subcommands join `allennlp`'s parser: `allennlp <command> --help` says how
`allennlp` finds the plugin; `allennlp --help` lists the description alone.
"""

import argparse

# --include-package is not a way: AllenNLP parses the subcommand before it imports packages.
FOUND_BY_ALLENNLP = (
    "(Found by `allennlp` from any directory once elmo_plugin is pip-installed; from a clone's "
    "editable install, in its root or where a plugins file names elmo_plugin: "
    "~/.allennlp/plugins or ./.allennlp_plugins.)"
)


def add_command_parser(
    parser: argparse._SubParsersAction, name: str, description: str
) -> argparse.ArgumentParser:
    return parser.add_parser(
        name, description=f"{description} {FOUND_BY_ALLENNLP}", help=description
    )
