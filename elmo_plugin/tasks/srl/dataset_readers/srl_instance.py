"""The `Instance` both SRL readers (and the predictor) make: one sentence, one predicate."""

from typing import Dict, List, Optional

from allennlp.data.fields import Field, MetadataField, SequenceLabelField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import TokenIndexer
from allennlp.data.tokenizers import Token

from elmo_plugin.tasks.srl.label_modes import LabelMode


def srl_instance(
    words: List[str],
    predicate_index: int,
    token_indexers: Dict[str, TokenIndexer],
    label_mode: LabelMode,
    label_namespace: str,
    tags: Optional[List[str]] = None,
) -> Instance:
    """
    Fields: "tokens" (`TextField`), "predicate_indicator" (`SequenceLabelField` of 0/1, 1 on
    the predicate), "tags" (`SequenceLabelField` in `label_namespace`, when `tags` are given)
    and "metadata" with "words", "predicate_index", "gold_tags" (`None` without tags) and
    "label_mode" (the name of the mode that made the tags: `"span"` for BIO tags, `"head"`
    for head-word tags), which the model checks against its own.
    """
    if not 0 <= predicate_index < len(words):
        raise ValueError(
            f"predicate index {predicate_index} is outside the sentence of {len(words)} words"
        )
    text_field = TextField([Token(word) for word in words], token_indexers)
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
