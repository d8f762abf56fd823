"""The `Instance` both SRL readers (and the predictor) make: one sentence, one predicate; its
token indexers are attached by the readers' `apply_token_indexers`."""

from typing import Dict, List, Optional, cast

from allennlp.data.fields import Field, MetadataField, SequenceLabelField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import TokenIndexer
from allennlp.data.tokenizers import Token

from elmo_plugin.allennlp.tasks.srl.label_modes import LabelMode


def srl_instance(
    words: List[str],
    predicate_index: int,
    label_mode: LabelMode,
    label_namespace: str,
    tags: Optional[List[str]] = None,
) -> Instance:
    """
    Fields: "tokens" (`TextField`, its indexers given by `attach_token_indexers`),
    "predicate_indicator" (`SequenceLabelField` of 0/1, 1 on the predicate), "tags"
    (`SequenceLabelField` in `label_namespace`, when `tags` are given) and "metadata" with
    "words", "predicate_index", "gold_tags" (`None` without tags) and "label_mode" (the name
    of the mode that made the tags: `"span"` for BIO tags, `"head"` for head-word tags),
    which the model checks against its own.
    """
    if not 0 <= predicate_index < len(words):
        raise ValueError(
            f"predicate index {predicate_index} is outside the sentence of {len(words)} words"
        )
    text_field = TextField([Token(word) for word in words])
    indicator = [1 if i == predicate_index else 0 for i in range(len(words))]
    fields: Dict[str, Field] = {
        "tokens": text_field,
        "predicate_indicator": SequenceLabelField(indicator, text_field),
        "metadata": MetadataField(
            {
                "words": words,
                "predicate_index": predicate_index,
                "gold_tags": tags,
                "label_mode": label_mode.name,
            }
        ),
    }
    if tags is not None:
        fields["tags"] = SequenceLabelField(tags, text_field, label_namespace)
    return Instance(fields)


def attach_token_indexers(instance: Instance, token_indexers: Dict[str, TokenIndexer]) -> None:
    """Gives the "tokens" field of an `srl_instance` its token indexers (what a reader's
    `apply_token_indexers` does)."""
    cast(TextField, instance["tokens"]).token_indexers = token_indexers
