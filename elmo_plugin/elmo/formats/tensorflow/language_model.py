"""
A bilm-tf training checkpoint as the language model it was trained as: its biLM, its softmax
and the vocabulary it was trained with, giving each direction's scores for the next word as
bilm-tf's training graph computes them (`test()`, simple_elmo's `get_elmo_substitutes`), for
perplexity and lexical substitutes. The softmax is read when first used (`read_softmax`).
"""

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy
import torch

from elmo_plugin.elmo.bilm.characters.ids import BOS_TOKEN, EOS_TOKEN, batch_to_ids
from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.execution.settings import Execution
from elmo_plugin.elmo.formats.tensorflow.bilm_checkpoint import (
    load_checkpoint_bilm,
    locate,
    read_softmax,
)
from elmo_plugin.elmo.files.zip_archives import is_file, open_file

VOCABULARY_NAME = "vocab.txt"
UNKNOWN_TOKEN = "<UNK>"


@dataclass(frozen=True)
class Vocabulary:
    """bilm-tf's vocabulary: one word a line, the line's number its softmax row."""

    words: List[str]
    ids: Dict[str, int]

    def id_of(self, word: str) -> int:
        return self.ids.get(word, self.ids[UNKNOWN_TOKEN])


def read_vocabulary(path: str) -> Vocabulary:
    """The vocabulary file `path` (bilm-tf's `vocab.txt`), which must hold `<S>`, `</S>` and
    `<UNK>` as bilm-tf's own reader requires."""
    if not is_file(path):
        raise MissingFileError(
            f"{path}: no vocabulary file; a checkpoint's softmax needs the vocabulary it was "
            f"trained with (bilm-tf's vocab file, one word a line): put it in the folder as "
            f"{VOCABULARY_NAME} or name it"
        )
    with open_file(path) as handle:
        try:
            lines = handle.read().decode("utf-8").splitlines()
        except UnicodeDecodeError as error:
            raise ConfigurationError(f"{path}: not UTF-8 text; expected a vocabulary") from error
    words = [line.strip() for line in lines]
    ids: Dict[str, int] = {}
    for number, word in enumerate(words):
        ids.setdefault(word, number)  # bilm-tf's reader keeps a repeated word's first row
    missing = [token for token in (BOS_TOKEN, EOS_TOKEN, UNKNOWN_TOKEN) if token not in ids]
    if missing:
        raise ConfigurationError(
            f"{path}: the vocabulary has no {', '.join(missing)}, which bilm-tf's vocabulary "
            "holds; is it the vocabulary the checkpoint was trained with?"
        )
    return Vocabulary(words, ids)


class CheckpointLanguageModel:
    """
    The language model of the training checkpoint `name` (a folder or a `model.ckpt-N`
    prefix): `scores` gives, for a sentence of n words, the n + 1 steps of each direction as
    bilm-tf runs them, the forward LM reading `<S> w1 ... wn` to predict `w1 ... wn </S>` and
    the backward LM reading `</S> wn ... w1` to predict `wn ... w1 <S>`, each sentence from
    zero states.

    # Parameters

    name : `str`
    vocab_file : `str`, optional
        The vocabulary it was trained with; by default the folder's `vocab.txt`.
    execution : `Execution`, optional
    cuda_device : `int`, optional (default = `-1`, the CPU)
    """

    def __init__(
        self,
        name: str,
        vocab_file: Optional[str] = None,
        execution: Execution = Execution(),
        cuda_device: int = -1,
    ) -> None:
        folder, prefix = locate(name)
        self._device = torch.device("cpu" if cuda_device < 0 else f"cuda:{cuda_device}")
        self.bilm = load_checkpoint_bilm(prefix, execution=execution).eval().to(self._device)
        self.vocabulary = read_vocabulary(vocab_file or f"{folder}/{VOCABULARY_NAME}")
        weight, bias = read_softmax(prefix)
        if weight.shape[0] != len(self.vocabulary.words):
            raise ConfigurationError(
                f"{vocab_file or folder + '/' + VOCABULARY_NAME} has "
                f"{len(self.vocabulary.words)} words but the softmax of {prefix} has "
                f"{weight.shape[0]} rows: it is not the vocabulary the checkpoint was trained with"
            )
        self._weight = torch.from_numpy(numpy.array(weight)).to(self._device)
        self._bias = torch.from_numpy(numpy.array(bias)).to(self._device)

    def softmax(self) -> Tuple[torch.Tensor, torch.Tensor]:
        """The softmax's weight `(vocabulary, dim)` and bias, on the CPU."""
        return self._weight.cpu(), self._bias.cpu()

    def _targets(self, sentence: Sequence[str]) -> Tuple[torch.Tensor, torch.Tensor]:
        ids = [self.vocabulary.id_of(word) for word in [BOS_TOKEN, *sentence, EOS_TOKEN]]
        return (
            torch.tensor(ids[1:], device=self._device),
            torch.tensor(ids[:-1][::-1], device=self._device),
        )

    def scores(self, sentences: Sequence[Sequence[str]]) -> List[Tuple[torch.Tensor, torch.Tensor]]:
        """For each sentence, each direction's softmax logits at its n + 1 steps, in the
        order the direction runs: `(forward (n + 1, vocabulary), backward (n + 1, vocabulary))`.
        """
        with torch.no_grad():
            top = self.bilm(batch_to_ids(sentences).to(self._device))["activations"][-1]
            forward, backward = top.chunk(2, dim=-1)
            found = []
            for row, sentence in enumerate(sentences):
                steps = len(sentence) + 1
                # The backward LM's step t reads position n + 1 - t.
                found.append(
                    (
                        self._logits(forward[row, :steps]),
                        self._logits(backward[row, 1 : steps + 1].flip(0)),
                    )
                )
        return found

    def one_word_scores(self, sentence: Sequence[str]) -> Tuple[torch.Tensor, torch.Tensor]:
        """Like `scores` for one sentence, but each step from the LSTMs' zero states, reading
        that step's word alone: simple_elmo's `get_elmo_substitutes` feeds bilm-tf's initial
        states at every step of its one-step batches, so its predictions see one word."""
        with torch.no_grad():
            encoded = self.bilm.character_encoder(batch_to_ids([sentence]).to(self._device))
            words = encoded["token_embedding"][0].unsqueeze(1)  # each word its own sequence
            mask = torch.ones(words.shape[:2], dtype=torch.bool, device=self._device)
            top = self.bilm.lstm(words, mask)[0][-1][:, 0]
            forward, backward = top.chunk(2, dim=-1)
            steps = len(sentence) + 1
            return self._logits(forward[:steps]), self._logits(backward[1 : steps + 1].flip(0))

    def substitutes(
        self, sentences: Sequence[Sequence[str]], topn: int = 3, nodelimiters: bool = True
    ) -> List[List[Dict[str, Any]]]:
        """
        simple_elmo's `get_elmo_substitutes`: for each word of each sentence, the `topn` words
        each LM finds likeliest there, `{"word": w, "forward": {...}, "backward": {...}}`,
        each direction `{"candidates": ids, "candidate_words": words, "logp": scores}`. As
        simple_elmo does: the scores are the softmax's logits (not log-probabilities), rounded
        to 4 places; a word outside the vocabulary is `<UNK>`; each prediction reads one word
        (`one_word_scores`); with `nodelimiters`, rows 0 and 1 (`<S>` and `</S>` in bilm-tf's
        vocabularies) score 0. Unlike simple_elmo, every sentence is answered, in order, and
        candidates come best first (simple_elmo's order is `argpartition`'s).
        """
        if topn < 1:
            raise ConfigurationError(f"topn must be a positive integer, got {topn}")
        found = []
        for sentence in sentences:
            forward, backward = self.one_word_scores(sentence)
            if nodelimiters:
                forward[:, :2], backward[:, :2] = 0.0, 0.0
            words = [self.vocabulary.words[self.vocabulary.id_of(word)] for word in sentence]
            ahead = [self._top(row, topn) for row in forward[:-1]]
            behind = [self._top(row, topn) for row in backward[:-1].flip(0)]
            found.append(
                [
                    {"word": word, "forward": forward_top, "backward": backward_top}
                    for word, forward_top, backward_top in zip(words, ahead, behind)
                ]
            )
        return found

    def _top(self, scores: torch.Tensor, topn: int) -> Dict[str, Any]:
        values, ids = scores.topk(min(topn, scores.numel()))
        return {
            "candidates": ids.tolist(),
            "candidate_words": [self.vocabulary.words[i] for i in ids.tolist()],
            "logp": [round(float(value), 4) for value in values.tolist()],
        }

    def _logits(self, outputs: torch.Tensor) -> torch.Tensor:
        return outputs @ self._weight.T + self._bias

    def step_losses(
        self, sentences: Sequence[Sequence[str]]
    ) -> List[Tuple[numpy.ndarray, numpy.ndarray]]:
        """For each sentence, each direction's negative log-likelihood of the word it predicts
        at each step: `(forward (n + 1,), backward (n + 1,))`."""
        losses: List[Tuple[numpy.ndarray, numpy.ndarray]] = []
        for sentence, (forward, backward) in zip(sentences, self.scores(sentences)):
            forward_targets, backward_targets = self._targets(sentence)
            losses.append(
                (
                    _negative_log_likelihood(forward, forward_targets),
                    _negative_log_likelihood(backward, backward_targets),
                )
            )
        return losses

    def perplexity(
        self, sentences: Sequence[Sequence[str]], batch_size: int = 32
    ) -> Dict[str, float]:
        """`forward_perplexity`, `backward_perplexity` and `perplexity` (both together),
        weighted by tokens, as `elmo-perplexity` reports an export's."""
        totals = numpy.zeros(3)
        for start in range(0, len(sentences), batch_size):
            for forward, backward in self.step_losses(sentences[start : start + batch_size]):
                totals += (forward.sum(), backward.sum(), len(forward))
        forward_nll, backward_nll, count = totals
        if not count:
            raise ConfigurationError("no sentences to compute a perplexity on")
        return {
            "forward_perplexity": math.exp(forward_nll / count),
            "backward_perplexity": math.exp(backward_nll / count),
            "perplexity": math.exp((forward_nll + backward_nll) / (2 * count)),
        }


def _negative_log_likelihood(logits: torch.Tensor, targets: torch.Tensor) -> numpy.ndarray:
    losses = torch.nn.functional.cross_entropy(logits, targets, reduction="none")
    return losses.double().cpu().numpy()


def read_sentences(text_file: str) -> List[List[str]]:
    """The tokenised sentences of `text_file`, one a line; empty lines are skipped."""
    try:
        with open(text_file, encoding="utf-8") as handle:
            return [line.split() for line in handle if line.split()]
    except UnicodeDecodeError as error:
        raise ConfigurationError(f"{text_file}: not UTF-8 text ({error.reason})") from error
    except FileNotFoundError as error:
        raise MissingFileError(f"{text_file}: no such text file") from error
