"""
From dependency-based SRL (a role on each argument's head word) to span-based BIO tags:
each argument spans its head's dependency subtree, as Universal PropBank projected the
original constituent spans.
"""

from typing import Dict, List, Set, Tuple

from elmo_plugin.allennlp.tasks.srl.tags import (
    OUTSIDE_TAG,
    PREDICATE_PART_TAG,
    PREDICATE_TAG,
    PREDICATE_TAGS,
)

# "_" is the Universal PropBank files' empty cell.
NO_ROLE_LABELS = ("_", OUTSIDE_TAG)


def dependency_subtrees(heads: List[int]) -> List[Set[int]]:
    """
    The set of tokens in each token's subtree (the token included). `heads[i]` is token
    i's head (0-based), `-1` for the root. Raises `ValueError` when the heads are not a tree.
    """
    children: List[List[int]] = [[] for _ in heads]
    for token, head in enumerate(heads):
        if head >= 0:
            children[head].append(token)
    roots = [token for token, head in enumerate(heads) if head < 0]
    subtrees: List[Set[int]] = [set() for _ in heads]
    visited: Set[int] = set()
    for root in roots:
        _collect_subtrees(root, children, subtrees, visited)
    if len(visited) != len(heads):
        cyclic = sorted(set(range(len(heads))) - visited)
        raise ValueError(
            f"the HEAD column does not form a tree: tokens {cyclic} (0-based) do not lead "
            "to the root (a HEAD cycle)"
        )
    return subtrees


def _collect_subtrees(
    root: int, children: List[List[int]], subtrees: List[Set[int]], visited: Set[int]
) -> None:
    # Iterative post-order walk: sentences can be deep enough to exhaust Python's recursion.
    stack = [(root, False)]
    while stack:
        token, children_done = stack.pop()
        if children_done:
            subtrees[token] = {token}.union(*(subtrees[child] for child in children[token]))
            continue
        visited.add(token)
        stack.append((token, True))
        stack.extend((child, False) for child in children[token])


def argument_spans(
    heads: List[int], predicate_tokens: Set[int], argument_heads: List[int]
) -> Dict[int, Tuple[int, int]]:
    """
    The inclusive token span of each argument head, built by these rules so spans never
    overlap each other or the predicate:

    1. An argument starts as its head's dependency subtree.
    2. The predicate's tokens and the subtrees of the predicate's other arguments that lie
       inside it are cut out (a nested argument keeps its own words).
    3. The span is the longest run of consecutive remaining tokens that contains the head
       (so a non-projective subtree, or one the predicate splits, keeps the head's side).
    """
    subtrees = dependency_subtrees(heads)
    spans: Dict[int, Tuple[int, int]] = {}
    for head in argument_heads:
        blocked = set(predicate_tokens)
        for other in argument_heads:
            if other != head and other in subtrees[head]:
                blocked |= subtrees[other]
        allowed = subtrees[head] - blocked
        start = end = head
        while start - 1 in allowed:
            start -= 1
        while end + 1 in allowed:
            end += 1
        spans[head] = (start, end)
    return spans


def head_labels_to_tags(predicate_index: int, labels: List[str]) -> List[str]:
    """
    Head-mode tags for one predicate from its argument column (`labels`: a role on each
    argument head, "V" on the predicate, "_" elsewhere): the role on each argument head,
    `V` on the predicate (the token with the roleset), `C-V` on the other parts of a
    multiword predicate (tokens the column marks `V` or `C-V`, e.g. the particle of
    "blow up"), `O` elsewhere.
    """
    tags = [OUTSIDE_TAG if label in NO_ROLE_LABELS else label for label in labels]
    for token, label in enumerate(labels):
        if label in PREDICATE_TAGS:
            tags[token] = PREDICATE_PART_TAG
    tags[predicate_index] = PREDICATE_TAG
    return tags


def head_labels_to_bio(heads: List[int], predicate_index: int, labels: List[str]) -> List[str]:
    """
    BIO tags for one predicate from its argument column: `B-V` on the predicate, `B-C-V`
    on the other parts of a multiword predicate, `B-ROLE I-ROLE ...` over each argument's
    span (see `argument_spans`), `O` elsewhere.
    """
    head_tags = head_labels_to_tags(predicate_index, labels)
    predicate_tokens = {token for token, tag in enumerate(head_tags) if tag in PREDICATE_TAGS}
    roles = {
        token: tag
        for token, tag in enumerate(head_tags)
        if tag != OUTSIDE_TAG and token not in predicate_tokens
    }
    tags = [OUTSIDE_TAG] * len(labels)
    for token in predicate_tokens:
        tags[token] = "B-" + head_tags[token]
    for head, (start, end) in argument_spans(heads, predicate_tokens, list(roles)).items():
        tags[start] = "B-" + roles[head]
        for token in range(start + 1, end + 1):
            tags[token] = "I-" + roles[head]
    return tags
