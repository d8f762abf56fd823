"""An `Instance`'s fields as the kinds the tests read them as: `instance["tokens"]` is typed a
plain `Field`, which has no `tokens`, `label` or `labels` and cannot be indexed."""

from typing import List, Type, TypeVar

from allennlp.data import Instance, Token
from allennlp.data.fields import Field, MetadataField, TextField

FieldType = TypeVar("FieldType", bound=Field)


def field_of(instance: Instance, name: str, kind: Type[FieldType]) -> FieldType:
    """`instance[name]`, which must be a `kind`."""
    field = instance[name]
    assert isinstance(field, kind), f"{name!r} is a {type(field).__name__}, not a {kind.__name__}"
    return field


def tokens_of(instance: Instance, name: str) -> List[Token]:
    """The tokens of the instance's text field `name`."""
    return field_of(instance, name, TextField).tokens


def metadata_of(instance: Instance) -> MetadataField:
    """The instance's "metadata" field."""
    return field_of(instance, "metadata", MetadataField)
