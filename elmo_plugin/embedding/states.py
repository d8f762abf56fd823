"""
Whether `ElmoEmbedder` carries the biLM's LSTM states from one call to the next
(docs/elmo.md, "Stateless or carried states: when each matters").

- `"stateless"` (the default): every run starts from zero states, so a sentence gets the same
  vectors in every call, whatever else is in its batch.
- `"carried"`: AllenNLP 0.9's `ElmoEmbedder`, whose `_ElmoBiLm` was always stateful, and
  bilm-tf's (simple_elmo's) graph: the final states of batch row `i` start row `i` of the next
  run, the rows beyond a shorter batch keep theirs. The carrying is the core's stateful biLM
  (`ElmoBiLm(stateful=True)`, AllenNLP's `_EncoderBase._update_states`); here each call of
  0.9's API is one run, as in 0.9, since splitting a batch would change which states its rows
  start from.
"""

from typing import TYPE_CHECKING, List

from elmo_plugin.elmo import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError

if TYPE_CHECKING:
    from elmo_plugin.embedding.elmo_embedder import ElmoEmbedder

STATELESS = "stateless"
CARRIED = "carried"
STATES = (STATELESS, CARRIED)


def carries_states(state: str) -> bool:
    """Whether `state` (one of `STATES`) carries LSTM states from run to run."""
    if state not in STATES:
        raise ConfigurationError(
            f"state must be one of {STATES} ('carried' is AllenNLP 0.9's ElmoEmbedder and "
            f"bilm-tf's), got {state!r}"
        )
    return state == CARRIED


def set_state(bilm: ElmoBiLm, state: str) -> None:
    """Makes `bilm` carry its states (`"carried"`) or not, starting from zero states."""
    bilm.stateful = carries_states(state)
    bilm.reset_states()


def warm_up(embedder: "ElmoEmbedder", sentences: List[List[str]], batch_size: int) -> None:
    """simple_elmo's `warmup`: the first batch of `sentences` run once, its vectors dropped, so
    that the carried states the real first batch starts from are its own final ones. Nothing
    to warm without carried states."""
    if embedder.elmo_bilm.stateful:
        embedder.embed_batch(sentences[:batch_size])


def refuse_carried_bulk(bilm: ElmoBiLm) -> None:
    """`embed_file` runs sentences sorted by length, in resumable batches: with carried states
    its vectors would depend on that order and on where a job resumed."""
    if bilm.stateful:
        raise ConfigurationError(
            "embed_file runs sentences sorted by length and resumes killed jobs, so it cannot "
            "carry LSTM states (state='carried'): use embed_sentences in file order and write "
            "the vectors yourself, or state='stateless'"
        )
