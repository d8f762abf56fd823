"""
Mapping between character spans of a text and spans of its tokens. AllenNLP core has none;
allennlp-models' `rc.dataset_readers.utils.char_span_to_token_span` (not importable at run time:
`docs/install.md`) returns a best guess with an error flag and raises for most spans past the
last token; ours clips a span that runs past the last token, and says `None` for one that no
token overlaps, which the reader marks as an answer outside the (cut) passage.
"""

import bisect
from typing import List, Optional, Tuple


def char_span_to_token_span(
    token_offsets: List[Tuple[int, int]], char_span: Tuple[int, int]
) -> Optional[Tuple[int, int]]:
    """
    The inclusive token span `(first, last)` covering the characters `[start, end)`: the first
    token ending after `start` and the last token starting before `end`, so an answer that
    starts or ends inside a token takes the whole token. A span running past the last token is
    clipped to it; `None` when no token overlaps the span (it lies after the last token, or
    between two tokens).

    # Parameters

    token_offsets : `List[Tuple[int, int]]`
        `(start, end)` character offsets of each token, in order, end exclusive.
    char_span : `Tuple[int, int]`
        `(start, end)`, end exclusive.
    """
    start, end = char_span
    token_ends = [token_end for _, token_end in token_offsets]
    token_starts = [token_start for token_start, _ in token_offsets]
    first = bisect.bisect_right(token_ends, start)
    last = bisect.bisect_left(token_starts, end) - 1
    if first >= len(token_offsets) or last < first:
        return None
    return first, last
