"""
`ElmoEmbedder`: the ELMo layers of tokenised sentences as numpy arrays, with AllenNLP 0.9's
`allennlp.commands.elmo.ElmoEmbedder` API (what SeqVec and bio_embeddings call; flair, which
imports that module itself, through `elmo_plugin.embedding.allennlp_commands_elmo`) and
simple_elmo's `get_elmo_vectors` as `embed`, and `embed_file`, what `allennlp elmo-embed` runs.
It builds on the ELMo core (`elmo_plugin.elmo`) and writes files through
`elmo_plugin.embedding.embeddings_file`; nothing of it is registered.
"""

import logging
import os
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy
import torch

from elmo_plugin.elmo import ElmoBiLm, load_bilm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.settings import AUTO, Execution
from elmo_plugin.elmo.formats.naming.names import (
    SHIPPED_OPTIONS,
    require_weights,
    resolve_bilm,
)
from elmo_plugin.elmo.modules.elmo import remove_sentence_boundaries
from elmo_plugin.embedding.bulk import embed_in_bulk, plan_batches
from elmo_plugin.embedding.embeddings_file import InputFile
from elmo_plugin.embedding.long_sequences import embed_long_sequence
from elmo_plugin.embedding.outputs import EmbeddingOutput
from elmo_plugin.embedding.progress import Progress
from elmo_plugin.embedding.states import (
    STATELESS,
    carries_states,
    refuse_carried_bulk,
    set_state,
    warm_up,
)

logger = logging.getLogger(__name__)

DEFAULT_OPTIONS_FILE = SHIPPED_OPTIONS
DEFAULT_BATCH_SIZE = 64
# Token positions (rows times the longest row, <S> and </S> included) of one biLM run.
DEFAULT_MAX_TOKENS = 4096
# Seconds between two progress lines of a long `embed` call (none for a shorter call).
PROGRESS_INTERVAL = 30.0
# What `embed`'s `layers` names pick from a sentence's `(L + 1, n, dim)` layers.
_LAYER_PICKS = {
    "average": lambda stacked: stacked.mean(axis=0),
    "top": lambda stacked: stacked[-1],
    "all": lambda stacked: stacked,
}
LAYER_CHOICES = tuple(_LAYER_PICKS)

Sentence = List[str]
Layers = Union[str, Sequence[int], numpy.ndarray]


class ElmoEmbedder:
    """
    The ELMo layers of tokenised sentences, as AllenNLP 0.9's `ElmoEmbedder` gave them: for a
    sentence of `n` tokens a float32 numpy array `(L + 1, n, 2 * projection_dim)`, the token
    layer (duplicated to the LSTM layers' width) and then each LSTM layer, without `<S>` and
    `</S>`: `(3, n, 1024)` for the original ELMo, `(3, n, 256)` for the shipped biLM, which is
    the default (0.9 downloaded the original). Code written for 0.9 runs unchanged after
    `from elmo_plugin import ElmoEmbedder`; code that imports 0.9's module inside a library
    (flair) after `elmo_plugin.embedding.allennlp_commands_elmo.install()`.

    States: by default a sentence gets the same vectors in every call, whatever else is in its
    batch (0.9's first batch equals ours). 0.9 carried the LSTM states from one batch to the
    next, so its vectors depended on what was embedded before; `state="carried"` does so too,
    equal to 0.9's to 1e-5 over successive batches of any sizes, to regenerate vectors stored
    by 0.9 or bilm-tf (`elmo_plugin.embedding.states`; docs/elmo.md says when each matters).

    Memory: each biLM run sees at most `max_tokens` token positions (sentences times the
    longest of them, markers included); a longer sentence runs alone in windows of half that,
    its LSTM states carried from window to window, equal to one run over it to float32
    rounding (`elmo_plugin.embedding.long_sequences`). Every method but `batch_to_embeddings`
    (0.9's single run) splits its input so (not with `state="carried"`), and copies each
    sentence's layers out of the run.
    A run's peak memory beyond the weights grows with its positions, so `max_tokens` bounds it
    (docs/performance.md has the measured peaks of the original size's biLM and the shipped
    one). On a device out of memory, a run is split in halves and retried, a single sentence
    in smaller windows, each with a warning. `embed_sentences` holds one batch of results at a
    time, whatever the number of sentences; `embed` returns one padded array; `embed_file` is
    the bulk job of `elmo-embed` (docs/bulk_embedding.md).

    # Parameters

    options_file : `str` or `os.PathLike`, optional (default = the shipped biLM's)
        bilm-tf `options.json`: a path, a URL, `elmo_plugin://pretrained/...`; or a whole biLM:
        the short name of one AllenNLP published (`"original"`, `"small"`, ...: the names of
        `elmo_plugin.elmo.formats.naming.published_models`), whose two files are then downloaded
        once, or a folder holding `options.json` and `weights.hdf5` (an `elmo-export`), or a
        ZIP holding a biLM (as NLPL publishes them), read in place (docs/elmo.md).
    weight_file : `str` or `os.PathLike`, optional
        bilm-tf `weights.hdf5`: needed with an options file (but the shipped biLM's), left out
        with a whole biLM.
    cuda_device : `int`, optional (default = `-1`)
        The GPU to run on; `-1` for the CPU.
    max_tokens : `int`, optional (default = `4096`)
        The token positions of one biLM run (see above).
    execution : `Execution` or its config, optional (default = `"auto"`)
        How the biLM runs (`elmo_plugin.elmo.execution.settings`), e.g. `{"fused": true}` or
        `{"compute_dtype": "bfloat16"}`.
    compute_dtype : `str`, optional (default = `"float32"`)
        The same as `execution.compute_dtype`, as `Elmo` and `elmo-embed` take it too.
    state : `str`, optional (default = `"stateless"`)
        `"carried"`: each call of 0.9's API (`batch_to_embeddings`, `embed_batch`,
        `embed_sentence`, each batch of `embed_sentences` and `embed`) is one biLM run, as in
        0.9, not split by `max_tokens`, starting from the LSTM states the earlier runs left in
        its rows (`reset_states()` forgets them); `embed_file` refuses it.
    """

    def __init__(
        self,
        options_file: Union[str, "os.PathLike[str]"] = DEFAULT_OPTIONS_FILE,
        weight_file: Union[None, str, "os.PathLike[str]"] = None,
        cuda_device: int = -1,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        execution: Union[str, Dict[str, Any], Execution] = AUTO,
        state: str = STATELESS,
        compute_dtype: Optional[str] = None,
    ) -> None:
        _check_positive("max_tokens", max_tokens)
        _check_cuda_device(cuda_device)
        carries_states(state)
        setting = Execution.resolve(execution, compute_dtype)
        files = require_weights(resolve_bilm(options_file, weight_file))
        bilm = load_bilm(files, None, compute_dtype=setting.dtype, execution=setting)
        self._hold(bilm, cuda_device, max_tokens, state)

    @classmethod
    def from_bilm(
        cls,
        bilm: ElmoBiLm,
        cuda_device: int = -1,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        state: str = STATELESS,
    ) -> "ElmoEmbedder":
        """
        An `ElmoEmbedder` over a biLM already built (an archive's, or one in a compute dtype).

        # Parameters

        bilm : `ElmoBiLm`
            Put in eval mode, its parameters frozen, and moved to `cuda_device`.
        cuda_device : `int`, optional (default = `-1`)
        max_tokens : `int`, optional (default = `4096`)
        state : `str`, optional (default = `"stateless"`)
            Made the biLM's (its `stateful`), from zero states.
        """
        _check_positive("max_tokens", max_tokens)
        _check_cuda_device(cuda_device)
        embedder = cls.__new__(cls)
        embedder._hold(bilm, cuda_device, max_tokens, state)
        return embedder

    def _hold(self, bilm: ElmoBiLm, cuda_device: int, max_tokens: int, state: str) -> None:
        set_state(bilm, state)
        bilm = bilm.eval()
        for parameter in bilm.parameters():
            parameter.requires_grad_(False)
        if cuda_device >= 0:
            bilm = bilm.cuda(cuda_device)
        # 0.9's attribute names: flair moves `elmo_bilm` and sets `cuda_device` itself.
        self.elmo_bilm: ElmoBiLm = bilm
        self.cuda_device = cuda_device
        self.max_tokens = max_tokens

    @property
    def num_layers(self) -> int:
        """`L + 1`: the token layer and each LSTM layer."""
        return self.elmo_bilm.num_layers

    def get_output_dim(self) -> int:
        return self.elmo_bilm.get_output_dim()

    def reset_states(self) -> None:
        """With `state="carried"`, forgets the carried LSTM states: the next run starts from
        zeros, as a new 0.9 `ElmoEmbedder` or a new simple_elmo session did."""
        self.elmo_bilm.reset_states()

    def batch_to_embeddings(self, batch: List[Sentence]) -> Tuple[torch.Tensor, torch.Tensor]:
        """
        One biLM run over `batch`, as 0.9's: `(activations, mask)`, the activations
        `(batch_size, L + 1, num_tokens, dim)` without `<S>` and `</S>`, zeros past each
        sentence, and the mask `(batch_size, num_tokens)`. Not split by `max_tokens`.
        """
        _check_sentences(batch)
        device = next(self.elmo_bilm.parameters()).device
        longest = max((len(sentence) for sentence in batch), default=0)
        if longest == 0:  # no token axis for the biLM to run over
            empty = torch.zeros(len(batch), self.num_layers, 0, self.get_output_dim())
            return empty.to(device), torch.zeros(len(batch), 0, dtype=torch.bool, device=device)
        with torch.no_grad(), self.elmo_bilm.states_kept_on_failure():
            output = self.elmo_bilm(self.elmo_bilm.batch_to_ids(batch).to(device))
            stripped = [
                remove_sentence_boundaries(layer, output["mask"]) for layer in output["activations"]
            ]
            return torch.stack([layer for layer, _ in stripped], dim=1), stripped[0][1]

    def embed_sentence(self, sentence: Sentence) -> numpy.ndarray:
        """The layers of one tokenised sentence, `(L + 1, num_tokens, dim)`."""
        return self.embed_batch([sentence])[0]

    def embed_batch(self, batch: List[Sentence]) -> List[numpy.ndarray]:
        """The layers of each sentence of `batch`, `(L + 1, num_tokens, dim)` each."""
        _check_sentences(batch)
        if self.elmo_bilm.stateful:  # one run, as 0.9's: each row starts from its state
            with self.elmo_bilm.states_kept_on_failure():
                return self._embed_run(batch)
        embedded: List[numpy.ndarray] = []
        for chunk in _chunks(batch, self.max_tokens):
            embedded.extend(self._embed_fitting(chunk, self.max_tokens))
        return embedded

    def _embed_fitting(self, chunk: List[Sentence], max_tokens: int) -> List[numpy.ndarray]:
        """The layers of `chunk` (within `max_tokens`, or one sentence longer, embedded in
        windows); on a device out of memory, the halves of `chunk` one after the other, and a
        sentence alone in windows of half the positions, down to single positions."""
        try:
            if len(chunk) == 1 and len(chunk[0]) + 2 > max_tokens:
                return [embed_long_sequence(self.elmo_bilm, chunk[0], max_tokens)]
            return self._embed_run(chunk)
        except RuntimeError as error:
            if not is_out_of_memory(error) or (len(chunk) == 1 and max_tokens <= 2):
                raise
        _release_device_memory()
        if len(chunk) > 1:
            half = len(chunk) // 2
            logger.warning(
                "device out of memory on %d sentences: embedding them in two halves", len(chunk)
            )
            return self._embed_fitting(chunk[:half], max_tokens) + self._embed_fitting(
                chunk[half:], max_tokens
            )
        smaller = min(max_tokens, len(chunk[0]) + 2) // 2
        logger.warning(
            "device out of memory on a sentence of %d tokens: embedding it in windows of %d "
            "positions",
            len(chunk[0]),
            max(1, smaller // 2),
        )
        return self._embed_fitting(chunk, smaller)

    def _embed_run(self, chunk: List[Sentence]) -> List[numpy.ndarray]:
        """The layers of each sentence of `chunk` from one biLM run."""
        activations, mask = self.batch_to_embeddings(chunk)
        lengths = mask.sum(dim=1).tolist()
        activations = activations.cpu()
        # Copies: a view would keep the whole run's padded activations alive.
        return [
            numpy.array(activations[row, :, :length].numpy(), copy=True)
            for row, length in enumerate(lengths)
        ]

    def embed_sentences(
        self, sentences: Iterable[Sentence], batch_size: int = DEFAULT_BATCH_SIZE
    ) -> Iterator[numpy.ndarray]:
        """The layers of each sentence, in order, computed `batch_size` sentences at a time."""
        _check_positive("batch_size", batch_size)
        batch: List[Sentence] = []
        with self.elmo_bilm.states_kept_on_failure():
            for sentence in sentences:
                batch.append(sentence)
                if len(batch) == batch_size:
                    yield from self.embed_batch(batch)
                    batch = []
            if batch:
                yield from self.embed_batch(batch)

    def embed(
        self,
        sentences: List[Sentence],
        layers: Layers = "average",
        batch_size: int = DEFAULT_BATCH_SIZE,
        warmup: bool = False,
    ) -> numpy.ndarray:
        """
        simple_elmo's `get_elmo_vectors`: one zero-padded float32 array for all `sentences`, in
        their order. Stateless, they run sorted by length in batches of at most `batch_size`
        sentences and `max_tokens` positions, as `embed_file` runs them; with
        `state="carried"`, in the given order. A call that runs longer than 30 s logs its
        progress (INFO) every 30 s, as `embed_file` does.

        # Parameters

        sentences : `List[List[str]]`
            Tokenised sentences.
        layers : `str` or `List[int]`, optional (default = `"average"`)
            `"average"` (the mean of the layers) or `"top"` give `(num_sentences, max_tokens,
            dim)`; `"all"` gives `(num_sentences, L + 1, max_tokens, dim)`; a list of layer
            indices (0 the token layer) gives those layers, `(num_sentences, len(layers),
            max_tokens, dim)`.
        batch_size : `int`, optional (default = `64`)
            simple_elmo's is the `max_batch_size` its model was loaded with, 32 by default.
        warmup : `bool`, optional (default = `False`)
            simple_elmo's (whose default is `True`): with `state="carried"`, the first batch
            is run once first, its vectors dropped; nothing to warm up when stateless.
        """
        pick = _layer_picker(layers, self.num_layers)
        _check_sentences(sentences)
        _check_positive("batch_size", batch_size)
        with self.elmo_bilm.states_kept_on_failure():
            return self._embed_all(sentences, pick, batch_size, warmup)

    def _embed_all(
        self, sentences: List[Sentence], pick: Callable, batch_size: int, warmup: bool
    ) -> numpy.ndarray:
        if warmup:
            warm_up(self, sentences, batch_size)
        longest = max((len(sentence) for sentence in sentences), default=0)
        # The picked shape of a sentence of 0 tokens, widened to the longest sentence.
        shape = pick(numpy.zeros((self.num_layers, 0, self.get_output_dim()))).shape
        result = numpy.zeros((len(sentences), *shape[:-2], longest, shape[-1]), "float32")
        progress = Progress(
            0,
            1,
            len(sentences),
            sum(len(sentence) for sentence in sentences),
            PROGRESS_INTERVAL,
            name="embed",
            only_if_long=True,
        )
        for row, layers_of_row in self._rows_embedded(sentences, batch_size):
            picked = pick(layers_of_row)
            result[row, ..., : picked.shape[-2], :] = picked
            progress.advance(1, len(sentences[row]))
        progress.finish()
        return result

    def _rows_embedded(
        self, sentences: List[Sentence], batch_size: int
    ) -> Iterator[Tuple[int, numpy.ndarray]]:
        """`(row, layers)` of each sentence. Stateless, in batches sorted by length under the
        token budget, as `embed_file` plans them (`plan_batches`): where padding is computed (a
        GPU) each batch pads little. With carried states, in the given order, as 0.9's."""
        if self.elmo_bilm.stateful:
            yield from enumerate(self.embed_sentences(sentences, batch_size))
            return
        lengths = [len(sentence) for sentence in sentences]
        for batch in plan_batches(lengths, batch_size, self.max_tokens):
            yield from zip(batch, self.embed_batch([sentences[row] for row in batch]))

    def embed_file(
        self,
        input_file: InputFile,
        output_file_path: str,
        output_format: str = "all",
        batch_size: int = DEFAULT_BATCH_SIZE,
        forget_sentences: bool = False,
        use_sentence_keys: bool = False,
        output: EmbeddingOutput = EmbeddingOutput(),
    ) -> int:
        """
        Embeds each line of `input_file` (one whitespace-tokenised sentence a line) into the
        hdf5 file `output_file_path`, in the layout of 0.9's `allennlp elmo`: one float32
        dataset per sentence named by its 0-based line number, `(L + 1, num_tokens, dim)` or
        `(num_tokens, dim)` for `output_format` `"top"` or `"average"`, and `sentence_to_index`,
        a JSON map from each line's text to its dataset name. The sentences run sorted by
        length; each finished batch goes to a journal beside the output, from which a killed
        call resumes when repeated, and the file is written from it in line order and renamed
        onto `output_file_path` once complete (docs/bulk_embedding.md). An empty line gives a
        dataset of 0 tokens, with one warning. Returns the number of sentences. (The job is
        `elmo_plugin.embedding.bulk.embed_in_bulk`, the writer with its checks
        `elmo_plugin.embedding.embeddings_file.write_hdf5`.)

        # Parameters

        input_file : `str`, `os.PathLike` or a text file object
        output_file_path : `str`
        output_format : `str`, optional (default = `"all"`)
            `"all"`, `"top"` or `"average"`.
        batch_size : `int`, optional (default = `64`)
        forget_sentences : `bool`, optional (default = `False`)
            Leave out `sentence_to_index`.
        use_sentence_keys : `bool`, optional (default = `False`)
            Name each dataset by its line's text instead (no `sentence_to_index`); a repeated
            line, or one holding `/` (a path in hdf5), is an error naming the line.
        output : `EmbeddingOutput`, optional (default = per-token float32, one hdf5 file)
            Pooled vectors, float16, Parquet, one shard a process (`outputs`).
        """
        refuse_carried_bulk(self.elmo_bilm)
        return embed_in_bulk(
            self,
            input_file,
            output_file_path,
            output_format,
            batch_size,
            forget_sentences,
            use_sentence_keys,
            output=output,
        )


def embed_file(
    bilm: ElmoBiLm,
    input_file: InputFile,
    output_file: str,
    output_format: str = "all",
    batch_size: int = DEFAULT_BATCH_SIZE,
    cuda_device: int = -1,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    output: EmbeddingOutput = EmbeddingOutput(),
) -> int:
    """
    `ElmoEmbedder.embed_file` with a biLM already built (an archive's, or one in a compute
    dtype): what `elmo-embed` and `allennlp elmo-embed` run. Returns the number of lines.

    # Parameters

    bilm : `ElmoBiLm`
        Put in eval mode, its parameters frozen, and moved to `cuda_device`.
    input_file : `str`, `os.PathLike` or a text file object
    output_file : `str`
    output_format : `str`, optional (default = `"all"`)
    batch_size : `int`, optional (default = `64`)
    cuda_device : `int`, optional (default = `-1`)
    max_tokens : `int`, optional (default = `4096`)
    output : `EmbeddingOutput`, optional (default = per-token float32, one hdf5 file)
    """
    embedder = ElmoEmbedder.from_bilm(bilm, cuda_device, max_tokens)
    return embedder.embed_file(input_file, output_file, output_format, batch_size, output=output)


def is_out_of_memory(error: BaseException) -> bool:
    """Whether `error` is a device running out of memory (`torch.cuda.OutOfMemoryError` since
    torch 1.13, a `RuntimeError` saying so before)."""
    return "out of memory" in str(error)


def _release_device_memory() -> None:
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _check_positive(name: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigurationError(f"{name} must be a positive integer, got {value!r}")


def _check_cuda_device(cuda_device: int) -> None:
    ok = isinstance(cuda_device, int) and not isinstance(cuda_device, bool) and cuda_device >= -1
    if not ok:
        raise ConfigurationError(
            f"cuda_device must be an integer, -1 for the CPU or a GPU's index, got "
            f"{_shown(cuda_device)}"
        )


def _check_sentences(sentences: Sequence[Sentence]) -> None:
    if isinstance(sentences, str):
        raise ConfigurationError(
            f"expected a list of tokenised sentences, got the string {sentences[:50]!r}"
        )
    for number, sentence in enumerate(sentences):
        if isinstance(sentence, str) or not isinstance(sentence, (list, tuple)):
            raise ConfigurationError(
                f"sentence {number} is {_shown(sentence)}; expected a list of tokens "
                f"(strings), e.g. 'Hello world .'.split()"
            )
        for position, token in enumerate(sentence):
            if not isinstance(token, str):
                raise ConfigurationError(
                    f"sentence {number}, token {position} is {_shown(token)}; expected a string"
                )


def _shown(value: object) -> str:
    text = repr(value)
    return f"the {type(value).__name__} {text[:50]}{'...' if len(text) > 50 else ''}"


def _chunks(batch: List[Sentence], max_tokens: int) -> Iterator[List[Sentence]]:
    """Consecutive groups of sentences whose padded size (count times the longest, plus
    the two markers) is at most `max_tokens`, or one sentence that alone is over it (embedded
    in windows)."""
    lengths = [len(sentence) for sentence in batch]
    for rows in plan_batches(lengths, max(len(batch), 1), max_tokens, by_length=False):
        yield [batch[row] for row in rows]


def _layer_picker(layers: Layers, num_layers: int):
    if isinstance(layers, numpy.ndarray) and layers.ndim == 1 and layers.dtype.kind in "iu":
        layers = layers.tolist()  # layer indices as numpy gives them
    if isinstance(layers, str) and layers in _LAYER_PICKS:
        return _LAYER_PICKS[layers]
    if (
        isinstance(layers, (list, tuple))
        and layers
        and all(isinstance(i, (int, numpy.integer)) and not isinstance(i, bool) for i in layers)
        and all(-num_layers <= i < num_layers for i in layers)
    ):
        indices = [int(i) for i in layers]
        return lambda stacked: stacked[indices]
    raise ConfigurationError(
        f"layers must be one of {LAYER_CHOICES} or a non-empty list of layer indices in "
        f"[0, {num_layers}) (0 the token layer, {num_layers - 1} the top), got {layers!r}"
    )
