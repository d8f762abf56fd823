"""
The console scripts pip installs, which work from any directory with no plugins file:
`elmo-embed` (no AllenNLP needed; with `--archive`, a trained model's biLM, through AllenNLP),
`elmo-export` and `elmo-perplexity` (the plugin's `allennlp` subcommands, with the same
arguments). Each imports only what it runs, so `elmo-embed` starts without AllenNLP. A user's
error is one line (`ALLENNLP_DEBUG=1` shows its traceback), as in the `allennlp` command.
"""

import sys
from typing import List, Optional

ARCHIVE_FLAG = "--archive"


def run_allennlp_subcommand(name: str, argv: Optional[List[str]] = None) -> None:
    from elmo_plugin.allennlp.commands.subparsers import run_subcommand

    run_subcommand(name, sys.argv[1:] if argv is None else argv)


def elmo_embed(argv: Optional[List[str]] = None) -> None:
    arguments = sys.argv[1:] if argv is None else argv
    if any(arg == ARCHIVE_FLAG or arg.startswith(ARCHIVE_FLAG + "=") for arg in arguments):
        run_allennlp_subcommand("elmo-embed", arguments)
        return
    from elmo_plugin.embedding.cli import main

    main(arguments)


def elmo_export() -> None:
    run_allennlp_subcommand("elmo-export")


def elmo_perplexity() -> None:
    run_allennlp_subcommand("elmo-perplexity")
