"""The tag schemes a NER model can learn, and the recoding between them."""

from typing import List

from allennlp.data.dataset_readers.dataset_utils.span_utils import to_bioul

TAG_SCHEMES = ("BIO", "BIOUL")


def bioul_to_bio(tags: List[str]) -> List[str]:
    """Folds BIOUL into BIO (IOB2): U becomes B and L becomes I. Any sequence of B, I, L, U
    and O tags folds, valid or not."""
    folded = {"U": "B", "L": "I"}
    return [folded.get(tag[0], tag[0]) + tag[1:] for tag in tags]


def iob1_to_scheme(tags: List[str], tag_scheme: str) -> List[str]:
    """Recodes IOB1 tags (CoNLL-2003's) to `tag_scheme`, "BIO" or "BIOUL"."""
    bioul = to_bioul(tags, encoding="IOB1")
    return bioul if tag_scheme == "BIOUL" else bioul_to_bio(bioul)
