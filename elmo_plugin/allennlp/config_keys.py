"""
Config keys that name nothing, refused in the `allennlp` command with one line naming the key,
the class that does not take it and the keys it does take, nearest first.

AllenNLP hands a class's unknown keys to its constructor when the constructor takes `**kwargs`
(our models and readers, AllenNLP's trainer), where they end in a `TypeError` deep in a
traceback or, for the trainer's `from_partial_objects`, vanish: a typo such as
`trainer.num_epoch` trains to patience. And it merges an override (`-o`) that adds a key to a
section silently, whatever the key.

- A class's keys are checked in the whole config before `allennlp train` makes its folder or
  reads any data (`checking_config_keys`), in every section whose class the config tells (the
  way the override keys below find it); and in every object where AllenNLP builds its
  arguments, before any of them is built (`checking_constructor_keys`: sections under a `Dict`
  or `List` parameter, the archives `evaluate` and `predict` load). When a class's constructor
  and the ones its `**kwargs` reach end in a constructor that takes no `**kwargs`, its keys are
  exactly the parameters AllenNLP itself accepts (`infer_params`). A constructor that still
  takes any key at the end of the chain is left to itself: nothing tells which keys it uses.
- An override key (`checking_override_keys`) is checked before the config is merged, so before
  any data is read. It is accepted when it names a key of the config, or adds one key to a
  section the config has (or a top-level section) that the section's class takes, the class
  found from the section's `type` as AllenNLP finds it: `trainer.cuda_device` where the config
  leaves the device to its default, `test_data_path`. Where the class cannot be told from the
  config (a type that is not registered, a section under a `Dict`, `List` or `Any` parameter),
  the new key is accepted as AllenNLP accepts it and the class's own check above catches a
  typo. A key under a section the config does not have (`distributed.cuda_devices` without
  `distributed`) is refused, as AllenNLP refuses it, with a one-line error: the whole section
  is given as one value (`{"distributed": {"cuda_devices": [0, 1]}}`).
"""

import functools
import inspect
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from allennlp.commands.train import TrainModel
from allennlp.common import FromParams, Lazy, Params
from allennlp.common.checks import ConfigurationError as AllennlpConfigurationError
from allennlp.common.from_params import infer_params, is_base_registrable, remove_optional

from elmo_plugin.elmo.errors import ConfigurationError

# Top-level keys `allennlp train` reads itself before it builds `TrainModel` from the rest.
TRAIN_COMMAND_KEYS = (
    "random_seed",
    "numpy_seed",
    "pytorch_seed",
    "distributed",
    "evaluation",
    "include_in_archive",
    "type",
)
NEAREST_OVERRIDES = 5

Constructor = Tuple[type, Callable[..., Any]]


class UnknownKeyError(ConfigurationError, AllennlpConfigurationError):
    """Also AllenNLP's `ConfigurationError`, which its `Union` arguments catch to try their next
    type: a key unknown to the first type may be the second's."""


def checking_constructor_keys(create_kwargs: Callable[..., Any]) -> Callable[..., Any]:
    """`allennlp.common.from_params.create_kwargs`, refusing a key its class does not take."""

    @functools.wraps(create_kwargs)
    def checked(constructor: Callable[..., Any], cls: type, params: Params, **extras: Any) -> Any:
        accepted = accepted_keys(cls, constructor)
        unknown = [key for key in params.keys() if key not in (accepted or [])]
        if accepted is not None and unknown:
            raise UnknownKeyError(_unknown_key_message(params.history, unknown, cls, accepted))
        return create_kwargs(constructor, cls, params, **extras)

    return checked


def checking_override_keys(with_overrides: Callable[..., Any]) -> Callable[..., Any]:
    """`allennlp.common.params.with_overrides`, refusing an override key that names nothing."""

    @functools.wraps(with_overrides)
    def checked(original: Any, overrides_dict: Dict[str, Any], prefix: str = "") -> Any:
        if not prefix:  # the whole config; with_overrides calls itself for its sections
            for key in overrides_dict:
                check_override_key(original, key)
        return with_overrides(original, overrides_dict, prefix)

    return checked


def checking_config_keys(train_model: Callable[..., Any]) -> Callable[..., Any]:
    """`allennlp.commands.train.train_model`, refusing a key of the config no class takes
    before the run makes its folder or reads any data."""

    @functools.wraps(train_model)
    def checked(params: Params, *args: Any, **kwargs: Any) -> Any:
        check_config_keys(params.as_dict(quiet=True))
        return train_model(params, *args, **kwargs)

    return checked


def check_config_keys(config: Dict[str, Any]) -> None:
    """Refuses a key of a training config that its section's class does not take, in every
    section whose class the config tells (the rest are checked as they are built)."""
    for path, section in _sections(config, []):
        constructor = _section_constructor(config, path)
        accepted = _section_keys(constructor, top_level=not path)
        unknown = [key for key in section if key != "type" and key not in (accepted or [])]
        if constructor is not None and accepted is not None and unknown:
            where = "".join(f"{name}." for name in path)
            raise UnknownKeyError(_unknown_key_message(where, unknown, constructor[0], accepted))


def accepted_keys(cls: type, constructor: Callable[..., Any]) -> Optional[List[str]]:
    """The keys AllenNLP gives `constructor` of `cls` from a config, or None when it takes any."""
    if _takes_any_key(cls, constructor):
        return None
    variable = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    parameters = infer_params(cls, constructor).items()
    return [
        name for name, parameter in parameters if name != "self" and parameter.kind not in variable
    ]


def check_override_key(config: Dict[str, Any], key: str) -> None:
    """Refuses override `key` of `config` where AllenNLP would refuse it or it names nothing the
    config's classes take (the module's docstring says which)."""
    segments = key.split(".")
    section: Any = config
    for depth, segment in enumerate(segments):
        if isinstance(section, dict) and segment in section:
            section = section[segment]
        elif isinstance(section, list) and segment.isdigit() and int(segment) < len(section):
            section = section[int(segment)]
        else:
            _check_new_key(config, segments, depth, section)
            return


def _check_new_key(config: Dict[str, Any], segments: List[str], depth: int, section: Any) -> None:
    key, new, path = ".".join(segments), segments[depth], segments[:depth]
    prefix = "".join(f"{name}." for name in path)
    if not isinstance(section, dict):
        raise ConfigurationError(f'-o "{key}": {prefix[:-1]} is a value, not a section of keys')
    constructor = _section_constructor(config, path)
    accepted = _section_keys(constructor, top_level=not path)
    if depth == len(segments) - 1:
        if accepted is None or new in accepted:
            return
        owner = _class_name(constructor[0]) if constructor else "its class"
        reason = f"the config has no such key and {owner} takes no {new}"
    elif accepted is not None and new in accepted:
        inside = ".".join(segments[depth + 1 :])
        raise ConfigurationError(
            f'-o "{key}": the config has no {prefix}{new} to set {inside} in; give the '
            f'section whole: -o \'{{"{prefix}{new}": {{"{inside}": ...}}}}\''
        )
    else:
        reason = f"the config has no {prefix}{new}"
    nearest = _nearest_first(new, sorted(set(section) | set(accepted or ())))
    named = ", ".join(prefix + name for name in nearest[:NEAREST_OVERRIDES])
    raise ConfigurationError(f'-o "{key}": {reason}; nearest keys: {named}')


def _sections(node: Any, path: List[str]) -> Iterator[Tuple[List[str], Dict[str, Any]]]:
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _sections(value, path + [key])


def _section_keys(constructor: Optional[Constructor], top_level: bool) -> Optional[List[str]]:
    keys = None if constructor is None else accepted_keys(*constructor)
    return None if keys is None else keys + list(TRAIN_COMMAND_KEYS if top_level else ())


def _section_constructor(config: Dict[str, Any], path: Sequence[str]) -> Optional[Constructor]:
    """The class and constructor AllenNLP builds the section at `path` of a training config
    with, or None where the config does not tell."""
    found = _registered_constructor(TrainModel, config.get("type"))
    section: Any = config
    for segment in path:
        if found is None or not isinstance(section, dict):
            return None
        parameter = infer_params(*found).get(segment)
        section = section.get(segment)
        base = None if parameter is None else _built_class(parameter.annotation)
        kind = section.get("type") if isinstance(section, dict) else None
        found = None if base is None else _registered_constructor(base, kind)
    return found


def _built_class(annotation: Any) -> Optional[type]:
    """The `FromParams` class an argument annotated `annotation` is built as (through `Optional`
    and `Lazy`), or None."""
    annotation = remove_optional(annotation)
    if getattr(annotation, "__origin__", None) is Lazy:
        annotation = annotation.__args__[0]
    if isinstance(annotation, type) and issubclass(annotation, FromParams):
        return annotation
    return None


def _registered_constructor(base: type, name: Optional[str]) -> Optional[Constructor]:
    """What AllenNLP builds for an argument of class `base` whose section's type is `name`."""
    if not is_base_registrable(base):
        return base, base.__init__  # type: ignore[misc]
    name = name or base.default_implementation  # type: ignore[attr-defined]
    if name is None:
        return None
    try:
        subclass, constructor_name = base.resolve_class_name(name)  # type: ignore[attr-defined]
    except AllennlpConfigurationError:  # an unknown type: AllenNLP says so when it builds it
        return None
    return subclass, getattr(subclass, constructor_name) if constructor_name else subclass.__init__


def _takes_any_key(cls: type, constructor: Callable[..., Any]) -> bool:
    """Whether `constructor` takes `**kwargs` that AllenNLP's `infer_params` cannot bound: its
    chain of `**kwargs` up the `FromParams` classes ends in one that still takes them."""
    parameters = inspect.signature(constructor).parameters.values()
    if not any(parameter.kind == inspect.Parameter.VAR_KEYWORD for parameter in parameters):
        return False
    parent = next((base for base in cls.mro()[1:] if issubclass(base, FromParams)), None)
    return parent is None or _takes_any_key(parent, parent.__init__)


def _unknown_key_message(history: str, unknown: List[str], cls: type, accepted: List[str]) -> str:
    first, others = unknown[0], unknown[1:]
    also = f" (nor {', '.join(others)})" if others else ""
    return (
        f"{history}{first}: {_class_name(cls)} takes no key {first}{also}; "
        f"its keys, nearest first: {', '.join(_nearest_first(first, accepted))}"
    )


def _class_name(cls: type) -> str:
    """`cls` as a config names it: `Model "bilm" (BilmLanguageModel)`, or its class name."""
    for base in filter(is_base_registrable, cls.mro()):
        for name in base.list_available():  # type: ignore[attr-defined]
            if base.resolve_class_name(name)[0] is cls:  # type: ignore[attr-defined]
                return f'{base.__name__} "{name}" ({cls.__name__})'
    return cls.__name__


def _nearest_first(key: str, names: Sequence[str]) -> List[str]:
    return sorted(names, key=lambda name: (_edit_distance(key, name), name))


def _edit_distance(first: str, second: str) -> int:
    """Levenshtein's: the fewest insertions, deletions and substitutions from one to the other."""
    previous = list(range(len(second) + 1))
    for row, letter in enumerate(first, 1):
        current = [row]
        for column, other in enumerate(second, 1):
            substitution = previous[column - 1] + (letter != other)
            current.append(min(previous[column] + 1, current[column - 1] + 1, substitution))
        previous = current
    return previous[-1]
