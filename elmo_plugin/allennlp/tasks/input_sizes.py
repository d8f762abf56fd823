"""
Building a task model's layers with the input size its embeddings give them, so that a
config never states the ELMo size: switching the biLM is an override of the ELMo
`options_file`/`weight_file` only.
"""

from typing import Protocol, TypeVar, Union

from allennlp.common import Lazy

from elmo_plugin.elmo.errors import ConfigurationError


class _HasInputDim(Protocol):
    """A module that reports its input size, as `Seq2SeqEncoder` and `FeedForward` do."""

    def get_input_dim(self) -> int: ...


ModuleT = TypeVar("ModuleT", bound=_HasInputDim)


def construct_with_input_dim(
    module: Union[Lazy[ModuleT], ModuleT], input_dim: int, name: str, input_description: str
) -> ModuleT:
    """
    Builds a `Lazy` module with its input size set to `input_dim`, or checks a built one.

    The size is passed both as `input_size` (as AllenNLP's RNN encoders, e.g. `lstm` and
    `alternating_lstm`, name it) and as `input_dim` (as `FeedForward`, `pass_through` or
    `pytorch_transformer` name it); `FromParams` gives each constructor the one it takes. A
    size the config states wins over these, and must then equal `input_dim`.

    # Parameters

    module : `Union[Lazy[ModuleT], ModuleT]`
        A module with a `get_input_dim()` method (`Seq2SeqEncoder`, `FeedForward`), lazy or
        already built.
    input_dim : `int`
        The size of the vectors the model feeds it.
    name : `str`
        The model parameter, for the error message (e.g. `"encoder"`).
    input_description : `str`
        What makes up `input_dim`, for the error message (e.g. `"text field embedding dim"`).

    # Returns

    The built module, whose `get_input_dim()` is `input_dim`.

    # Raises

    `ConfigurationError`
        When the module's input size is not `input_dim`.
    """
    if isinstance(module, Lazy):
        module = module.construct(input_size=input_dim, input_dim=input_dim)
    actual = module.get_input_dim()
    if actual != input_dim:
        raise ConfigurationError(
            f"{name} input dim is {actual} but the {input_description} is {input_dim}: leave "
            f"the input size out of the {name!r} config (the model sets it from the embedder "
            "and the ELMo module, so another biLM needs no size changes) or make it match"
        )
    return module
