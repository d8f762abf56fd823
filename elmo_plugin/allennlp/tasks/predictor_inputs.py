"""
What `allennlp predict` gives each of our predictors: one JSON object a line (`load_line`).
A line that is not JSON, not an object (`null`, a number, an array, a string), or holds a
string that is not valid Unicode (a lone surrogate such as `"\\ud800"`, which JSON allows and
spaCy and the tokenizers cannot encode) is a `ConfigurationError` quoting the line, at most 200
characters of it.
"""

import json
from typing import Any, Callable, Iterable, List

from allennlp.common.util import JsonDict

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.embedding.text_files import lone_surrogate, quoted


def json_object_line(line: str) -> JsonDict:
    """The JSON object on `line`, checked as above."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise ConfigurationError(
            f"input line {_quoted(line)}: not JSON ({error.msg} at column {error.colno}); "
            "expected one JSON object a line"
        ) from error
    if not isinstance(value, dict):
        raise ConfigurationError(
            f'input line {_quoted(line)}: expected a JSON object such as {{"sentence": ...}}, '
            f"got {_kind(value)}"
        )
    check_unicode(value, f"input line {_quoted(line)}")
    return value


def sentence_or_tokens(
    json_dict: JsonDict,
    tokenizer: Callable[[str], Iterable[Any]],
    task: str,
    drop_blank_given_tokens: bool,
) -> List[str]:
    """The tokens of a predictor's input: its `"tokens"` list of strings, or its `"sentence"`
    string split by `tokenizer` (spaCy's, whose tokens have `.text`), without blank tokens. A
    `ConfigurationError` for anything else, or for no tokens ("no tokens to {task} in ...").
    `drop_blank_given_tokens` drops blank tokens from a `"tokens"` list too."""
    if "tokens" in json_dict:
        tokens = json_dict["tokens"]
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise ConfigurationError(f"'tokens' must be a list of strings, got {quoted(tokens)}")
        if drop_blank_given_tokens:
            tokens = [token for token in tokens if token.strip()]
    elif "sentence" in json_dict:
        if not isinstance(json_dict["sentence"], str):
            raise ConfigurationError(
                f"'sentence' must be a string, got {quoted(json_dict['sentence'])}"
            )
        tokens = [token.text for token in tokenizer(json_dict["sentence"])]
        tokens = [token for token in tokens if token.strip()]
    else:
        raise ConfigurationError(
            f"expected a 'sentence' string or a 'tokens' list, got keys {sorted(json_dict)}"
        )
    if not tokens:
        raise ConfigurationError(f"no tokens to {task} in {quoted(json_dict)}")
    return tokens


def check_unicode(value: Any, where: str, path: str = "") -> None:
    """A `ConfigurationError` naming `where` and the key path of the first string in `value` (a JSON
    value) that holds a lone surrogate."""
    if isinstance(value, str):
        problem = lone_surrogate(value)
        if problem is not None:
            raise ConfigurationError(f"{where}: {path or 'the text'} {problem}")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_unicode(item, where, f"{path}[{key!r}]" if path else repr(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_unicode(item, where, f"{path}[{index}]")


def _quoted(line: str) -> str:
    return quoted(line.rstrip("\r\n"))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    return "an array" if isinstance(value, list) else "a string"
