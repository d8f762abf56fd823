import logging
import os
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy
import torch
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.nn import InitializerApplicator
from overrides import overrides

from elmo_plugin.elmo import ELMO_INDEXER_KEY, ElmoBiLm, load_bilm
from elmo_plugin.elmo.bilm.lstm.module import LstmState
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.settings import AUTO, Execution
from elmo_plugin.elmo.formats.bilm_tf_options import check_options
from elmo_plugin.elmo.files.file_sets import read_together
from elmo_plugin.allennlp.lm.corpus import (
    SENTENCE_END,
    SENTENCE_START,
    TARGET_NAMESPACE,
)
from elmo_plugin.allennlp.lm.metrics import TokenPerplexity
from elmo_plugin.allennlp.lm.modules import SampledSoftmax
from elmo_plugin.allennlp.lm.softmax_file import VOCAB_NAME, read_softmax

logger = logging.getLogger(__name__)


@Model.register("bilm")
class BilmLanguageModel(Model):
    """
    ELMo's bidirectional language model (Peters et al. 2018) for pretraining: the character
    CNN and biLSTM of the ELMo core, a forward LM and a backward LM over its top layer, and one
    softmax shared by both directions (as the token representation is). Training uses the
    sampled softmax; evaluation (`allennlp evaluate`, validation) the exact softmax, so the
    reported perplexities are true held-out perplexities.

    The loss is the mean negative log-likelihood over the predictions of both directions.
    Metrics: `forward_perplexity`, `backward_perplexity` and `perplexity` (both directions
    together), each `exp` of a mean over tokens.

    It reads the instances of the `bilm_corpus` reader. In its packed mode the forward LSTM
    state of each lane is carried from one window to the next (truncated backpropagation, as
    bilm-tf); the backward direction reads each window right to left, and the window to its
    right has not been read yet, so it starts every window from zeros.

    The biLM comes from bilm-tf `options` (`bilm`) for training from scratch, or from a
    bilm-tf `options_file` and `weight_file` to continue training a published or exported
    biLM (domain adaptation); `softmax_file` adds the softmax of an
    `allennlp elmo-export --include-softmax` export, matched to this vocabulary word by word.

    Registered as a `Model` with name "bilm".

    # Parameters

    vocab : `Vocabulary`
        Needs the namespace `tokens` with `<S>` and `</S>`, ordered by descending frequency
        when sampling (see the `from_corpus` vocabulary).
    bilm : `Dict[str, Any]`, optional
        bilm-tf options, `{"char_cnn": {...}, "lstm": {...}}`, for a randomly initialised biLM.
    options_file : `str`, optional
        bilm-tf `options.json` of a biLM to start from (instead of `bilm`).
    weight_file : `str`, optional
        Its `weights.hdf5`.
    softmax_file : `str`, optional
        `softmax.hdf5` of an export; its vocabulary is `softmax_vocab_file`.
    softmax_vocab_file : `str`, optional
        Defaults to `vocab.txt` beside `softmax_file`.
    num_samples : `int`, optional (default = `8192`)
        Negative samples of the sampled softmax; `None` trains with the full softmax.
    dropout : `float`, optional (default = `0.1`)
        Dropout on each LSTM layer's input and on the top layer before the softmax, in
        training (bilm-tf's `dropout`).
    initializer : `InitializerApplicator`, optional
    sparse_softmax_gradient : `bool`, optional (default = `False`)
        A sparse gradient for the softmax weight: only the rows a step touches (see
        `SampledSoftmax`); needs an optimizer that takes sparse gradients, e.g. the paper's
        Adagrad, for which the update is exactly the dense one.
    execution : `Execution` or its config, optional (default = `"auto"`)
        How the biLM runs (`elmo_plugin.elmo.execution.settings.Execution`): e.g.
        `{"cuda_graphs": true}` replays the LSTM's step loops (forward and backward) as CUDA
        graphs once a batch shape has come twice (packed training has one shape), and
        `{"tf32": true}` trains in float32 with TF32 products on CUDA (Ampere and later), for
        the model's forward and backward passes only (docs/performance.md has both figures).
    compute_dtype : `str`, optional (default = `"float32"`)
        The same as `execution.compute_dtype` (either way, or both if they agree).
        `"bfloat16"` runs the biLM's matrix products and convolutions in bfloat16 (weights cast
        once per batch, the parameters and the optimizer's master weights staying float32,
        the LSTM's gate math and states float32), and the sampled softmax's products too (its
        sums float32; evaluation's exact softmax float32). `"float32"` is exact. See
        `elmo_plugin.elmo.execution.compute_dtype`.
    """

    def __init__(
        self,
        vocab: Vocabulary,
        bilm: Optional[Dict[str, Any]] = None,
        options_file: Optional[str] = None,
        weight_file: Optional[str] = None,
        softmax_file: Optional[str] = None,
        softmax_vocab_file: Optional[str] = None,
        num_samples: Optional[int] = 8192,
        dropout: float = 0.1,
        initializer: Optional[InitializerApplicator] = None,
        compute_dtype: Optional[str] = None,
        sparse_softmax_gradient: bool = False,
        execution: Union[str, Dict[str, Any], Execution] = AUTO,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        setting = Execution.resolve(execution, compute_dtype)
        dtype = setting.dtype
        # Read as one set: a softmax from another export than the weights is an error.
        with read_together(
            _files_read(options_file, weight_file, softmax_file, softmax_vocab_file)
        ):
            self._bilm = _build_bilm(bilm, options_file, weight_file, dropout, dtype)
            exported = (
                None if softmax_file is None else read_softmax(softmax_file, softmax_vocab_file)
            )
        self._bilm.set_execution(setting)
        logger.info("bilm: execution %s", self._bilm.execution.described())
        self._dropout = torch.nn.Dropout(dropout)
        _check_vocabulary(vocab)
        # Class k of the softmax is the word with id k + 1: id 0 is padding, never a target.
        self._softmax = SampledSoftmax(
            vocab.get_vocab_size(TARGET_NAMESPACE) - 1,
            self._bilm.lstm.hidden_size,
            num_samples,
            sparse_gradient=sparse_softmax_gradient,
            compute_dtype=dtype,
        )
        self._perplexity = TokenPerplexity()
        self._lane_states: Dict[bool, _LaneStates] = {}
        if initializer is not None:
            initializer(self)
        if softmax_file is not None and exported is not None:
            self._copy_softmax(softmax_file, *exported)

    @property
    def bilm(self) -> ElmoBiLm:
        return self._bilm

    @property
    def softmax(self) -> SampledSoftmax:
        return self._softmax

    @overrides(check_signature=False)
    def forward(
        self,
        tokens: TextFieldTensors,
        targets: TextFieldTensors,
        lane: Optional[torch.Tensor] = None,
        window: Optional[torch.Tensor] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        # Parameters

        tokens : `TextFieldTensors`
            ELMo character ids, `(batch_size, num_tokens, 50)`.
        targets : `TextFieldTensors`
            Word ids `(batch_size, num_tokens + 2)`: each sentence with `<S>` and `</S>`, or
            in packed mode each window with the tokens before and after it.
        lane, window : `torch.Tensor`, optional
            `(batch_size,)`, given in packed mode.

        # Returns

        `loss` (the mean negative log-likelihood over both directions' predictions),
        `forward_loss` and `backward_loss` (each direction's mean), and `num_targets`, the
        number of forward predictions.
        """
        character_ids = tokens[ELMO_INDEXER_KEY]["elmo_tokens"]
        # The model runs in its own compute dtype: AMP's autocast would make the sampled
        # softmax's products float16 (the biLM itself turns autocast off as well).
        execution = self._bilm.execution
        with torch.autocast(character_ids.device.type, enabled=False), execution.products():
            output = self._forward(character_ids, targets, lane, window)
        output["loss"] = execution.tf32_backward([output["loss"]])[0]
        return output

    def _forward(
        self,
        character_ids: torch.Tensor,
        targets: TextFieldTensors,
        lane: Optional[torch.Tensor],
        window: Optional[torch.Tensor],
    ) -> Dict[str, torch.Tensor]:
        if lane is None:
            output = self._bilm(character_ids)
            top, positions = output["activations"][-1], output["mask"]
        elif window is None:
            raise ValueError("the packed mode needs a window with each lane")
        else:
            top, positions = self._packed_top_layer(character_ids, lane, window)
        word_ids = targets["tokens"]["tokens"]
        forward_targets = torch.nn.functional.pad(word_ids[:, 1:], (0, 1))
        backward_targets = torch.nn.functional.pad(word_ids[:, :-1], (1, 0))
        forward_valid = positions & (forward_targets > 0)
        backward_valid = positions & (backward_targets > 0)
        forward_top, backward_top = top.chunk(2, dim=-1)
        if self._bilm.lstm.runs_fused(top):
            # As the fused LSTM (the GPU's path): every position scored, the invalid ones
            # weighted 0, no count read back to the host.
            valid = torch.stack([forward_valid, backward_valid])
            nll = self._softmax(
                self._dropout(torch.stack([forward_top, backward_top]).flatten(0, 2)),
                torch.stack([forward_targets, backward_targets]).flatten().clamp(min=1) - 1,
            ).view(valid.shape)
            nll = nll.masked_fill(~valid, 0.0)
            forward_nll, backward_nll = nll.flatten(1)
            counts = valid.flatten(1).sum(dim=1)
            loss = nll.sum() / counts.sum().clamp(min=1)
        else:
            embeddings = torch.cat([forward_top[forward_valid], backward_top[backward_valid]])
            classes = torch.cat([forward_targets[forward_valid], backward_targets[backward_valid]])
            nll = self._softmax(self._dropout(embeddings), classes - 1)
            forward_nll, backward_nll = nll.split(
                [int(forward_valid.sum()), int(backward_valid.sum())]
            )
            counts = torch.tensor([forward_nll.numel(), backward_nll.numel()])
            loss = nll.mean() if nll.numel() else top.sum() * 0.0
        self._perplexity(forward_nll, backward_nll, counts)
        return {
            "loss": loss,
            "forward_loss": forward_nll.detach().sum() / counts[0].clamp(min=1),
            "backward_loss": backward_nll.detach().sum() / counts[1].clamp(min=1),
            "num_targets": counts[0],
        }

    def _packed_top_layer(
        self, character_ids: torch.Tensor, lane: torch.Tensor, window: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """The top layer of windows that already hold their sentence markers, padded by one
        position at each end to line up with the targets."""
        # Read before anything is queued on the device, where the read costs no stall.
        num_lanes = int(lane.max()) + 1
        encoded = self._bilm.character_encoder.encode_without_markers(character_ids)
        embedding, mask = encoded["token_embedding"], encoded["mask"]
        states = self._lane_states.setdefault(self.training, _LaneStates())
        zeros = self._bilm.lstm.zero_state(lane.size(0), embedding)
        initial = states.initial(lane, window, num_lanes, zeros)
        outputs, final = self._bilm.lstm(embedding, mask, initial)
        self._bilm.log_run(embedding.device)
        states.remember(lane, window, final)
        top = torch.nn.functional.pad(outputs[-1], (0, 0, 1, 1))
        return top, torch.nn.functional.pad(mask, (1, 1))

    def reset_states(self) -> None:
        """Forgets the LSTM states carried along the lanes of the packed mode."""
        self._lane_states.clear()

    def load_softmax(self, softmax_file: str, vocab_file: Optional[str] = None) -> None:
        """Copies the rows of an exported softmax into this one, word by word; words the
        export does not know keep their initial weights."""
        with read_together(_files_read(None, None, softmax_file, vocab_file)):
            words, weight, bias = read_softmax(softmax_file, vocab_file)
        self._copy_softmax(softmax_file, words, weight, bias)

    def _copy_softmax(
        self, softmax_file: str, words: List[str], weight: numpy.ndarray, bias: numpy.ndarray
    ) -> None:
        if weight.shape[1] != self._softmax.embedding_dim:
            raise ConfigurationError(
                f"{softmax_file}: softmax of dimension {weight.shape[1]}, but the biLM's top "
                f"layer has {self._softmax.embedding_dim}"
            )
        row_of = {word: row for row, word in enumerate(words)}
        ours, theirs = [], []
        for index, word in self.vocab.get_index_to_token_vocabulary(TARGET_NAMESPACE).items():
            if index > 0 and word in row_of:
                ours.append(index - 1)
                theirs.append(row_of[word])
        with torch.no_grad():
            self._softmax.weight[ours] = torch.from_numpy(weight[theirs]).to(self._softmax.weight)
            self._softmax.bias[ours] = torch.from_numpy(bias[theirs]).to(self._softmax.bias)
        logger.info(
            "softmax: %d of %d words from %s", len(ours), self._softmax.num_words, softmax_file
        )

    @overrides
    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return self._perplexity.get_metric(reset)


class _LaneStates:
    """The forward LSTM state at the end of the last window of each lane, and past the last
    lane a scratch slot that `remember` writes what it drops to."""

    def __init__(self) -> None:
        self.hidden: Optional[torch.Tensor] = None  # (num_layers, lanes + 1, hidden)
        self.memory: Optional[torch.Tensor] = None
        self.window: Optional[torch.Tensor] = None  # (lanes + 1,), -1 before the first window

    def initial(
        self, lane: torch.Tensor, window: torch.Tensor, num_lanes: int, zeros: LstmState
    ) -> LstmState:
        """The initial states of a batch's lanes (`lane`, below `num_lanes`), `zeros` where a
        lane does not continue."""
        self._grow(num_lanes, zeros)
        assert self.hidden is not None and self.memory is not None and self.window is not None
        # A lane continues only from the window just before; anything else (a new epoch,
        # shuffled data, a lane twice in a batch) starts from zeros.
        continues = (self.window[lane] == window - 1).view(1, -1, 1)
        hidden, memory = zeros.hidden.clone(), zeros.memory.clone()
        hidden[:, 0] = torch.where(continues, self.hidden[:, lane], hidden[:, 0])
        memory[:, 0] = torch.where(continues, self.memory[:, lane], memory[:, 0])
        return LstmState(hidden, memory)

    def remember(self, lane: torch.Tensor, window: torch.Tensor, final: LstmState) -> None:
        assert self.hidden is not None and self.memory is not None and self.window is not None
        # A lane twice in a batch keeps the state of its later window.
        same_lane = lane.unsqueeze(0) == lane.unsqueeze(1)
        later = same_lane & (window.unsqueeze(0) > window.unsqueeze(1))
        keep = ~later.any(dim=1)
        # The others go to the scratch slot: selecting the kept ones would read their count
        # back to the host, a stall of the device's queue between the LSTM and the softmax.
        slots = torch.where(keep, lane, self.window.size(0) - 1)
        self.hidden[:, slots] = final.hidden[:, 0].detach()
        self.memory[:, slots] = final.memory[:, 0].detach()
        self.window[slots] = window

    def _grow(self, num_lanes: int, zeros: LstmState) -> None:
        known = 0 if self.window is None else self.window.size(0) - 1
        if num_lanes <= known:
            return
        fresh = num_lanes - known + 1  # the new lanes and a new scratch slot
        layers, _, _, hidden_size = zeros.hidden.shape
        cell_size = zeros.memory.size(-1)
        new_hidden = zeros.hidden.new_zeros(layers, fresh, hidden_size)
        new_memory = zeros.memory.new_zeros(layers, fresh, cell_size)
        new_window = torch.full((fresh,), -1, dtype=torch.long, device=zeros.hidden.device)
        if self.hidden is None or self.memory is None or self.window is None:  # set together
            self.hidden, self.memory, self.window = new_hidden, new_memory, new_window
        else:  # the old scratch slot, which may hold anything, is dropped
            self.hidden = torch.cat([self.hidden[:, :known], new_hidden], dim=1)
            self.memory = torch.cat([self.memory[:, :known], new_memory], dim=1)
            self.window = torch.cat([self.window[:known], new_window])


def _files_read(
    options_file: Optional[str],
    weight_file: Optional[str],
    softmax_file: Optional[str],
    vocab_file: Optional[str],
) -> List[str]:
    """The files a model of these arguments reads (`read_softmax`'s default vocabulary too)."""
    if softmax_file is not None and vocab_file is None:
        vocab_file = os.path.join(os.path.dirname(softmax_file), VOCAB_NAME)
    return [path for path in (options_file, weight_file, softmax_file, vocab_file) if path]


def _build_bilm(
    options: Optional[Dict[str, Any]],
    options_file: Optional[str],
    weight_file: Optional[str],
    dropout: float,
    compute_dtype: torch.dtype,
) -> ElmoBiLm:
    if (options is None) == (options_file is None):
        raise ConfigurationError(
            "the bilm model needs either `bilm` (bilm-tf options, to train from scratch) or "
            "`options_file` (with `weight_file`, to continue training a biLM)"
        )
    if options_file is not None:
        return load_bilm(options_file, weight_file, dropout=dropout, compute_dtype=compute_dtype)
    if weight_file is not None:
        raise ConfigurationError("weight_file needs options_file, not bilm")
    checked = check_options(options, "bilm options")
    return ElmoBiLm.from_options(checked, dropout=dropout, compute_dtype=compute_dtype)


def _check_vocabulary(vocab: Vocabulary) -> None:
    words = vocab.get_token_to_index_vocabulary(TARGET_NAMESPACE)
    missing = [marker for marker in (SENTENCE_START, SENTENCE_END) if marker not in words]
    if missing:
        raise ConfigurationError(
            f"the vocabulary's '{TARGET_NAMESPACE}' namespace has no {' or '.join(missing)}; "
            "build it with the `from_corpus` vocabulary, or from the bilm_corpus reader's "
            "instances, whose targets include the sentence markers"
        )
