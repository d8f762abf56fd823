"""
One sequence too long for a biLM run of `max_tokens` positions, embedded in windows in bounded
memory, equal to the run over the whole sequence: each window's LSTM states carried to the
next, the forward LSTM left to right and the backward one right to left.

ELMo's two directions are independent stacks (each layer of a direction reads only that
direction's layer below), and the character CNN sees one token at a time. So step `j` of `K`
runs one biLM call on two rows: window `j` (of which the forward half is kept, its forward
states carried from window `j - 1`) and window `K - 1 - j` (of which the backward half is kept,
its backward states carried from window `K - j`). Both rows together hold at most `max_tokens`
positions; the other two halves are computed and dropped, which on a batch of two rows costs
little next to a step's read of the weights. Nothing of the core is changed: the encoder's
`encode_without_markers` and the LSTM's `initial_state` are its public API.

Memory: the result itself, `(L + 1, n, dim)` float32, plus one run of `max_tokens` positions.
"""

from typing import List, Tuple

import numpy
import torch

from elmo_plugin.elmo import ElmoBiLm, LstmState

# The two rows of a step: the forward one, then the backward one.
_FORWARD, _BACKWARD = 0, 1


def window_bounds(positions: int, max_tokens: int) -> List[Tuple[int, int]]:
    """`[start, end)` of consecutive windows covering `positions`, each at most half of
    `max_tokens` (a step runs two of them together), at least one position each."""
    width = max(1, max_tokens // 2)
    return [(start, min(positions, start + width)) for start in range(0, positions, width)]


def embed_long_sequence(bilm: ElmoBiLm, sentence: List[str], max_tokens: int) -> numpy.ndarray:
    """The layers of `sentence` without `<S>` and `</S>`, `(L + 1, len(sentence), dim)` float32,
    as one run over the whole sentence gives them, in runs of at most `max_tokens` positions."""
    device = next(bilm.parameters()).device
    marked = _marked_character_ids(bilm, sentence).to(device)
    windows = window_bounds(marked.size(0), max_tokens)
    hidden = bilm.lstm.hidden_size
    result = numpy.zeros((bilm.num_layers, marked.size(0), 2 * hidden), dtype=numpy.float32)
    carried = bilm.lstm.zero_state(2, torch.zeros(1, device=device))
    with torch.no_grad(), bilm.execution.products():
        for step in range(len(windows)):
            forward, backward = windows[step], windows[len(windows) - 1 - step]
            carried = _run_step(bilm, marked, forward, backward, carried, result)
    return result[:, 1:-1]


def _marked_character_ids(bilm: ElmoBiLm, sentence: List[str]) -> torch.Tensor:
    """The biLM's ids of `sentence` (`(len(sentence) + 2, width)`), its sentence start marker
    first and its end marker last (bilm-tf's `<S>`, `</S>`; ELMoForManyLangs' `<bos>`, `<eos>`)."""
    ids = bilm.batch_to_ids([sentence])[0]
    markers = bilm.character_encoder.sentence_markers()
    begin, end = (marker.to(ids.dtype).cpu().unsqueeze(0) for marker in markers)
    return torch.cat([begin, ids, end])


def _run_step(
    bilm: ElmoBiLm,
    marked: torch.Tensor,
    forward: Tuple[int, int],
    backward: Tuple[int, int],
    carried: LstmState,
    result: numpy.ndarray,
) -> LstmState:
    """One biLM call on the two windows; writes the kept halves into `result` and returns the
    states to carry: the forward row's forward states and the backward row's backward ones."""
    rows = torch.nn.utils.rnn.pad_sequence(
        [marked[slice(*forward)], marked[slice(*backward)]], batch_first=True
    )
    encoded = bilm.character_encoder.encode_without_markers(rows)
    tokens, mask = encoded["token_embedding"], encoded["mask"]
    outputs, final = bilm.lstm(tokens, mask, _initial_state(carried))
    bilm.log_run(tokens.device)
    hidden = bilm.lstm.hidden_size
    forward_length, backward_length = forward[1] - forward[0], backward[1] - backward[0]
    token_layer = tokens[_FORWARD, :forward_length].float().cpu().numpy()
    result[0, slice(*forward)] = numpy.concatenate([token_layer, token_layer], axis=-1)
    for layer, output in enumerate(outputs, start=1):
        kept_forward = output[_FORWARD, :forward_length, :hidden]
        kept_backward = output[_BACKWARD, :backward_length, hidden:]
        result[layer, slice(*forward), :hidden] = kept_forward.cpu().numpy()
        result[layer, slice(*backward), hidden:] = kept_backward.cpu().numpy()
    return final


def _initial_state(carried: LstmState) -> LstmState:
    """The states of a step's two rows from the last step's: each row starts its kept direction
    where that direction stopped, and the dropped direction from zeros."""
    hidden, memory = torch.zeros_like(carried.hidden), torch.zeros_like(carried.memory)
    for row in (_FORWARD, _BACKWARD):
        hidden[:, row, row] = carried.hidden[:, row, row]
        memory[:, row, row] = carried.memory[:, row, row]
    return LstmState(hidden, memory)
