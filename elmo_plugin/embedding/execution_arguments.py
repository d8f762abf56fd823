"""
The command line's way to say how the biLM runs, the same keys as a config's `execution` block
(`elmo_plugin.elmo.execution.settings.Execution`): `--execution` (`auto`, a JSON object or
`key=value,...`) and the older `--compute-dtype` beside it, which must agree with it.
"""

import argparse
import json
from typing import Any, Dict, Union

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.compute_dtype import COMPUTE_DTYPES
from elmo_plugin.elmo.execution.settings import AUTO, KEYS, Execution

EXECUTION_FLAG = "--execution"
COMPUTE_DTYPE_FLAG = "--compute-dtype"
# The words of `key=value` that are not strings.
_WORDS = {"true": True, "false": False, "null": None}


def add_execution_arguments(parser: argparse._ActionsContainer) -> None:
    parser.add_argument(
        EXECUTION_FLAG,
        default=AUTO,
        help=f"how the biLM runs: {AUTO} (by device), a JSON object or key=value,... of the keys "
        f"{', '.join(KEYS)} (e.g. fused=true,compute_dtype=bfloat16); it replaces an "
        "archive's",
    )
    parser.add_argument(
        COMPUTE_DTYPE_FLAG,
        choices=sorted(COMPUTE_DTYPES),
        help="float32 (the default) is exact; bfloat16 runs the biLM's products in bfloat16 "
        "(faster on CPUs with AVX512_BF16 and on recent GPUs) and writes float32 layers within "
        f"~1e-2 relative of float32's; the same as {EXECUTION_FLAG} compute_dtype=...",
    )


def execution_of(args: argparse.Namespace) -> Execution:
    """The setting `--execution` and `--compute-dtype` give, or a one-line error naming them."""
    try:
        return Execution.resolve(
            _parsed(args.execution), args.compute_dtype, COMPUTE_DTYPE_FLAG, EXECUTION_FLAG
        )
    except ConfigurationError as error:
        raise ConfigurationError(f"{EXECUTION_FLAG} {args.execution}: {error}") from None


def _parsed(text: str) -> Union[str, Dict[str, Any]]:
    if text.strip() == AUTO:
        return AUTO
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigurationError(f"not a JSON object ({error})") from None
        return value
    pairs = [pair.split("=", 1) for pair in text.split(",") if pair.strip()]
    malformed = [pair[0] for pair in pairs if len(pair) != 2]
    if not pairs or malformed:
        raise ConfigurationError(
            f'expected "{AUTO}", a JSON object or key=value,... (e.g. fused=true), got {text!r}'
        )
    return {key.strip(): _value(value.strip()) for key, value in pairs}


def _value(word: str) -> Any:
    return _WORDS[word.lower()] if word.lower() in _WORDS else word
