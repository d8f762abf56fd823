"""
The options of a bilm-tf biLM (`options.json`): read, checked (every size typed and in range,
the sections a biLM needs, the filters' widths), unknown keys warned about. The weights are
`formats.bilm_tf`'s.
"""

import json
import logging
import math
from typing import Any, Callable, Dict, Optional

from elmo_plugin.elmo.bilm.characters.encoder import ACTIVATIONS
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import SCHEME
from elmo_plugin.elmo.formats.naming.published_models import PREFIX, check_published_options
from elmo_plugin.elmo.formats.naming.package_files import local_source

logger = logging.getLogger(__name__)

_REQUIRED_OPTIONS = {
    "char_cnn": ("embedding", "filters", "n_highway"),
    "lstm": ("dim", "projection_dim", "n_layers"),
}


def integer_check(minimum: int) -> Callable[[Any], Optional[str]]:
    """A check of an integer option: None when it is one of at least `minimum`, else what was
    expected (for the error)."""
    what = "a positive integer" if minimum == 1 else "a non-negative integer"

    def check(value: Any) -> Optional[str]:
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
        return None if ok else what

    return check


def _clip(value: Any) -> Optional[str]:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    ok = value is None or (number and math.isfinite(value) and value > 0)
    return None if ok else "a positive number or null (no clipping)"


def _boolean(value: Any) -> Optional[str]:
    return None if isinstance(value, bool) else "true or false"


def _embedding(value: Any) -> Optional[str]:
    ok = isinstance(value, dict) and integer_check(1)(value.get("dim")) is None
    return None if ok else 'an object {"dim": positive integer}'


def filters_check(value: Any) -> Optional[str]:
    ok = (
        isinstance(value, list)
        and len(value) > 0
        and all(
            isinstance(f, list) and len(f) == 2 and all(integer_check(1)(n) is None for n in f)
            for f in value
        )
    )
    return None if ok else "a list of [width, count] pairs of positive integers"


def activation_check(value: Any) -> Optional[str]:
    return None if value in ACTIVATIONS else f"one of {sorted(ACTIVATIONS)}"


# What each option must be, as a check giving what was expected when it is not.
_OPTION_TYPES = {
    "char_cnn": {
        "embedding": _embedding,
        "filters": filters_check,
        "n_highway": integer_check(0),
        "n_characters": integer_check(1),
        "max_characters_per_token": integer_check(1),
        "activation": activation_check,
    },
    "lstm": {
        "dim": integer_check(1),
        "projection_dim": integer_check(1),
        "n_layers": integer_check(1),
        "cell_clip": _clip,
        "proj_clip": _clip,
        "use_skip_connections": _boolean,
    },
}


def read_options(options_file: str) -> Dict[str, Any]:
    """Reads and checks a bilm-tf `options.json`."""
    source = local_source(options_file, "biLM options_file")
    try:
        with open(source, "rb") if isinstance(source, str) else source as handle:
            options = json.load(handle)
    except json.JSONDecodeError as error:
        raise ConfigurationError(
            f"{options_file}, line {error.lineno}, column {error.colno}: not valid JSON "
            f"({error.msg}); expected a bilm-tf options.json"
        ) from error
    except UnicodeDecodeError as error:
        raise ConfigurationError(
            f"{options_file}: not UTF-8 text; expected an options.json"
        ) from error
    options = check_options(options, options_file)
    if options_file.startswith(SCHEME + PREFIX):
        check_published_options(options_file[len(SCHEME) :], options)
    return options


def _warn_unknown(values: Dict[str, Any], section: str, source: str) -> None:
    """A typo in an optional key (`cell_clp`) would otherwise silently mean its default."""
    for key in sorted(set(values) - set(_OPTION_TYPES[section]))[:10]:
        logger.warning(
            "%s: '%s' has %r, which is not a bilm-tf option (known: %s); it is ignored",
            source,
            section,
            key[:100],
            ", ".join(sorted(_OPTION_TYPES[section])),
        )


def check_options(options: Any, source: str) -> Dict[str, Any]:
    """Checks bilm-tf options read from `source` (a file, or "options" given inline)."""
    if not isinstance(options, dict):
        raise ConfigurationError(
            f"{source}: expected a JSON object (a bilm-tf options.json), "
            f"got a {type(options).__name__}"
        )
    for section, keys in _REQUIRED_OPTIONS.items():
        if not isinstance(options.get(section), dict):
            raise ConfigurationError(f"{source}: missing the '{section}' section")
        for key in keys:
            if key not in options[section]:
                raise ConfigurationError(f"{source}: '{section}' has no '{key}'")
        _warn_unknown(options[section], section, source)
        for key, check in _OPTION_TYPES[section].items():
            expected = check(options[section][key]) if key in options[section] else None
            if expected is not None:
                raise ConfigurationError(
                    f"{source}: '{section}'.'{key}' expected {expected}, "
                    f"got {repr(options[section][key])[:200]}"
                )
    _check_filter_widths(options["char_cnn"], source)
    if options.get("bidirectional") is False:
        raise ConfigurationError(f"{source}: a unidirectional LM cannot give ELMo vectors")
    return options


def _check_filter_widths(char_cnn: Dict[str, Any], source: str) -> None:
    longest = char_cnn.get("max_characters_per_token", 50)
    for width, _ in char_cnn["filters"]:
        if width > longest:
            raise ConfigurationError(
                f"{source}: 'char_cnn'.'filters' has a filter of width {width}, wider than a "
                f"token of {longest} characters (max_characters_per_token)"
            )
