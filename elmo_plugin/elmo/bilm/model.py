import contextlib
import dataclasses
import hashlib
import json
import logging
from typing import Any, Dict, Iterator, List, Optional, Sequence

import torch

from elmo_plugin.elmo.bilm.characters.encoder import ElmoCharacterEncoder
from elmo_plugin.elmo.bilm.characters.ids import batch_to_ids
from elmo_plugin.elmo.bilm.layer_names import bilm_layer_names
from elmo_plugin.elmo.bilm.lstm.module import ElmoBiLstm, LstmState
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution import devices
from elmo_plugin.elmo.execution.compute_dtype import compute_dtype_name, cpu_has_native_bfloat16
from elmo_plugin.elmo.execution.settings import Execution

logger = logging.getLogger(__name__)


class ElmoBiLm(torch.nn.Module):
    """
    ELMo's bidirectional language model body: the character encoder and the biLSTM. It returns
    the activations of its `L + 1` layers: the token layer (duplicated to the width of the
    LSTM layers, as in the paper) and each LSTM layer's forward and backward states with the
    sentence markers.

    Stateless by default: a sentence gets the same vectors in any batch. With `stateful`,
    the final LSTM states of batch row `i` start row `i` of the next batch, as bilm-tf and
    AllenNLP's `Elmo` do; `reset_states()` forgets them.

    Build it from a bilm-tf model with `elmo_plugin.elmo.formats.loading.load_bilm`.

    What ran is logged (INFO) at its first forward pass and again whenever it changes (from
    training to inference, another device or setting): the LSTM path, the compute dtype, the
    threads and the caches (`run_described`), so that what `"auto"` chose is on record.

    # Parameters

    character_encoder : `ElmoCharacterEncoder`
    lstm : `ElmoBiLstm`
        Built with the character encoder's `compute_dtype`.
    stateful : `bool`, optional (default = `False`)
    """

    # Set by whatever serves this biLM's activations from a cache (`CachedBiLm`), for the log.
    # Class attributes, as the next one: a biLM pickled whole before they existed still runs.
    activation_cache_described = "none"
    _logged_run: Optional[str] = None

    def __init__(
        self, character_encoder: ElmoCharacterEncoder, lstm: ElmoBiLstm, stateful: bool = False
    ) -> None:
        super().__init__()
        self._check_compute_dtypes(character_encoder, lstm)
        self.character_encoder = character_encoder
        self.lstm = lstm
        self.stateful = stateful
        self._states: Optional[LstmState] = None

    def _check_compute_dtypes(self, character_encoder: torch.nn.Module, lstm: ElmoBiLstm) -> None:
        if character_encoder.compute_dtype != lstm.compute_dtype:
            raise ValueError(
                f"the character encoder computes in {character_encoder.compute_dtype}, the LSTM "
                f"in {lstm.compute_dtype}: a biLM has one compute dtype"
            )

    @property
    def num_layers(self) -> int:
        """The number of layers a scalar mix combines: the token layer and each LSTM layer
        (each of which joins its two directions, so 2L + 1 representations in all)."""
        return self.lstm.num_layers + 1

    def get_output_dim(self) -> int:
        return 2 * self.lstm.hidden_size

    @property
    def compute_dtype(self) -> torch.dtype:
        """The dtype of the character encoder's and the LSTM's products, given at construction
        (`from_options`); the parameters and outputs are float32 (see
        `elmo_plugin.elmo.execution.compute_dtype`)."""
        return self.lstm.compute_dtype

    def set_compute_dtype(self, dtype: torch.dtype) -> None:
        """
        Changes the compute dtype of a built biLM: of one loaded from a model archive
        (`allennlp elmo-embed --compute-dtype`), and for the benchmarks that time one biLM in
        both dtypes. The one setter: the encoder and the LSTM layers otherwise keep the dtype
        they were built with.

        # Parameters

        dtype : `torch.dtype`
            `torch.float32` (exact) or `torch.bfloat16` (see
            `elmo_plugin.elmo.execution.compute_dtype`).
        """
        # Encodings remembered in one precision are not those of the other.
        self.character_encoder.clear_cache()
        self.character_encoder.compute_dtype = dtype
        for layer in self.lstm.bilstm_layers:
            layer.compute_dtype = dtype

    def batch_to_ids(self, batch: Sequence[Sequence[str]]) -> torch.Tensor:
        """This biLM's input for tokenised sentences: the `elmo_characters` ids (a biLM of
        another format, e.g. ELMoForManyLangs', makes its own)."""
        return batch_to_ids(batch)

    @property
    def execution(self) -> Execution:
        """How the biLM runs (`elmo_plugin.elmo.execution.settings`), its compute dtype too."""
        name = compute_dtype_name(self.compute_dtype)
        return dataclasses.replace(self.lstm.execution, compute_dtype=name)

    def set_execution(self, execution: Execution) -> None:
        """How the biLM runs from now on: the LSTM's path, the encoder's deduplication and,
        where `execution` gives one, the compute dtype (`set_compute_dtype`)."""
        self.lstm.execution = execution
        self.character_encoder.deduplicates = execution.deduplicates
        if execution.compute_dtype is not None and execution.dtype != self.compute_dtype:
            self.set_compute_dtype(execution.dtype)

    def forward(self, character_ids: torch.Tensor) -> Dict[str, Any]:
        """
        # Parameters

        character_ids : `torch.Tensor`
            `(batch_size, num_tokens, 50)` ids from the `elmo_characters` indexer.

        # Returns

        `{"activations": [(batch_size, num_tokens + 2, 2 * hidden_size)] * (L + 1),
        "mask": (batch_size, num_tokens + 2)}`, the markers at each sentence's ends.
        """
        # The stored setting: `execution` builds a copy carrying the dtype, not needed here.
        with self.lstm.execution.products():
            return self._forward(character_ids)

    def _forward(self, character_ids: torch.Tensor) -> Dict[str, Any]:
        encoded = self.character_encoder(character_ids)
        token_embedding, mask = encoded["token_embedding"], encoded["mask"]
        lstm_outputs, final_state = self.lstm(
            token_embedding, mask, self._initial_state(mask.size(0))
        )
        self.log_run(character_ids.device)
        if self.stateful:
            self._remember(final_state, mask)
        token_layer = torch.cat([token_embedding, token_embedding], dim=-1)
        activations = self.lstm.execution.tf32_backward([token_layer] + lstm_outputs)
        return {"activations": activations, "mask": mask}

    def log_run(self, device: torch.device) -> None:
        """Logs `run_described` where it differs from the last line logged: called after each
        forward pass, and by code that runs the encoder and the LSTM apart (the `bilm` model's
        lanes, a long sentence's windows)."""
        described = self.run_described(device)
        if described != self._logged_run:
            logger.info("biLM ran: %s", described)
            self._logged_run = described

    def run_described(self, device: torch.device) -> str:
        """What the latest forward pass on `device` ran: the LSTM path, the compute dtype, the
        threads and the caches."""
        path = self.lstm.last_path
        dtype = compute_dtype_name(self.compute_dtype)
        if self.compute_dtype == torch.bfloat16:
            emulated = devices.emulates_bfloat16(device, cpu_has_native_bfloat16())
            dtype += " (emulated: weights rounded, products float32)" if emulated else " (native)"
        return (
            f"LSTM {'none' if path is None else path.described()} on {device}; compute dtype "
            f"{dtype}; torch threads {torch.get_num_threads()}; character CNN "
            f"{self._encoder_described()}; activation cache {self.activation_cache_described}"
        )

    def _encoder_described(self) -> str:
        encoder = self.character_encoder
        if not encoder.deduplicates:
            return "every position (deduplicates false: no token cache)"
        if encoder.cache_size <= 0:
            return "distinct tokens, token cache off (cache size 0)"
        if not encoder.uses_cache():
            return "distinct tokens, token cache off while gradients reach the encoder"
        return f"distinct tokens, token cache on ({encoder.cache_size} types)"

    def _initial_state(self, batch_size: int) -> Optional[LstmState]:
        if not self.stateful or self._states is None:
            return None
        stored = self._states.hidden.size(2)
        if batch_size > stored:
            extra = self.lstm.zero_state(batch_size - stored, self._states.hidden)
            self._states = LstmState(
                torch.cat([self._states.hidden, extra.hidden], dim=2),
                torch.cat([self._states.memory, extra.memory], dim=2),
            )
        return LstmState(
            self._states.hidden[:, :, :batch_size], self._states.memory[:, :, :batch_size]
        )

    def _remember(self, final_state: LstmState, mask: torch.BoolTensor) -> None:
        final_state = LstmState(final_state.hidden.detach(), final_state.memory.detach())
        if self._states is None:
            self._states = final_state
            return
        # Rows that were all padding keep the state they had.
        ran = mask.any(dim=1).view(1, 1, -1, 1)
        batch_size = mask.size(0)
        hidden, memory = self._states.hidden.clone(), self._states.memory.clone()
        hidden[:, :, :batch_size] = torch.where(ran, final_state.hidden, hidden[:, :, :batch_size])
        memory[:, :, :batch_size] = torch.where(ran, final_state.memory, memory[:, :, :batch_size])
        self._states = LstmState(hidden, memory)

    def reset_states(self, rows: Optional[torch.BoolTensor] = None) -> None:
        """Forgets the carried states: of every row, or of the rows where `rows` is true."""
        if rows is None or self._states is None:
            self._states = None
            return
        keep = (~rows).view(1, 1, -1, 1).to(self._states.hidden.dtype)
        self._states = LstmState(self._states.hidden * keep, self._states.memory * keep)

    @contextlib.contextmanager
    def states_kept_on_failure(self) -> Iterator[None]:
        """The carried states as they were before this block when it fails (an error, Ctrl-C):
        a call made of several runs must not leave its first runs' states behind. A generator
        closed early (`GeneratorExit`) keeps what its consumer took."""
        kept = self._states
        try:
            yield
        except GeneratorExit:
            raise
        except BaseException:
            self._states = kept
            raise

    def _apply(self, fn, *args, **kwargs):
        # Carried states stay on the device they were computed on; a moved biLM starts afresh.
        self.reset_states()
        return super()._apply(fn, *args, **kwargs)

    def options(self) -> Dict[str, Any]:
        """The bilm-tf `options.json` content describing this biLM."""
        encoder, lstm = self.character_encoder, self.lstm
        first = lstm.layers[0]
        return {
            "bidirectional": True,
            "char_cnn": {
                "activation": encoder.activation,
                "embedding": {"dim": encoder.char_embedding_dim},
                "filters": [list(f) for f in encoder.filters],
                "max_characters_per_token": encoder.max_characters_per_token,
                "n_characters": encoder.num_characters,
                "n_highway": encoder.num_highway,
            },
            "lstm": {
                "cell_clip": first.cell_clip,
                "dim": lstm.cell_size,
                "n_layers": lstm.num_layers,
                "proj_clip": first.proj_clip,
                "projection_dim": lstm.hidden_size,
                "use_skip_connections": lstm.use_skip_connections,
            },
        }

    @classmethod
    def from_options(
        cls,
        options: Dict[str, Any],
        stateful: bool = False,
        char_cnn_cache_size: int = 50000,
        dropout: float = 0.0,
        compute_dtype: torch.dtype = torch.float32,
        execution: Execution = Execution(),
    ) -> "ElmoBiLm":
        """A randomly initialised biLM of the size that bilm-tf `options` describe, with
        `dropout` on each LSTM layer's input in training (bilm-tf's, for pretraining), its
        products in `compute_dtype` (see `elmo_plugin.elmo.execution.compute_dtype`) or in
        `execution`'s where it gives one, run as `execution` says."""
        if execution.compute_dtype is not None:
            if compute_dtype not in (torch.float32, execution.dtype):
                raise ConfigurationError(
                    f"compute_dtype {compute_dtype_name(compute_dtype)!r} and "
                    f"execution's compute_dtype {execution.compute_dtype!r} disagree: give the "
                    "compute dtype once"
                )
            compute_dtype = execution.dtype
        cnn, lstm = options["char_cnn"], options["lstm"]
        encoder = ElmoCharacterEncoder(
            char_embedding_dim=cnn["embedding"]["dim"],
            filters=[tuple(f) for f in cnn["filters"]],
            num_highway=cnn["n_highway"],
            projection_dim=lstm["projection_dim"],
            num_characters=cnn.get("n_characters", 262),
            max_characters_per_token=cnn.get("max_characters_per_token", 50),
            activation=cnn.get("activation", "relu"),
            cache_size=char_cnn_cache_size,
            compute_dtype=compute_dtype,
        )
        bilstm = bilstm_from_options(lstm, dropout, compute_dtype)
        bilm = cls(encoder, bilstm, stateful=stateful)
        bilm.set_execution(execution)
        return bilm

    def digest(self) -> bytes:
        """16 bytes that differ between biLMs of different options, weights or compute dtypes."""
        digest = hashlib.blake2b(digest_size=16)
        digest.update(json.dumps(self.options(), sort_keys=True).encode("utf-8"))
        if self.compute_dtype != torch.float32:
            # Other activations; float32 digests stay as they were, so do existing caches.
            digest.update(compute_dtype_name(self.compute_dtype).encode("utf-8"))
        for name, tensor in self.state_dict().items():
            digest.update(f"{name}{tuple(tensor.shape)}{tensor.dtype}".encode("utf-8"))
            digest.update(_tensor_bytes(tensor))
        return digest.digest()

    def weight_digests(self) -> Dict[str, bytes]:
        """A digest of each weight by name: which of them changed, where `digest` says whether
        any did."""
        return {
            name: hashlib.blake2b(_tensor_bytes(tensor)).digest()
            for name, tensor in self.state_dict().items()
        }

    def layer_names(self) -> List[str]:
        return bilm_layer_names(self.lstm.num_layers)


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    return tensor.detach().cpu().contiguous().numpy().tobytes()


def bilstm_from_options(
    lstm: Dict[str, Any], dropout: float = 0.0, compute_dtype: torch.dtype = torch.float32
) -> ElmoBiLstm:
    """The randomly initialised `ElmoBiLstm` that the `lstm` part of bilm-tf options describes
    (the inverse of `ElmoBiLm.options()["lstm"]`), with `dropout` and `compute_dtype` as
    `ElmoBiLm.from_options` takes them."""
    return ElmoBiLstm(
        input_size=lstm["projection_dim"],
        hidden_size=lstm["projection_dim"],
        cell_size=lstm["dim"],
        num_layers=lstm["n_layers"],
        cell_clip=lstm.get("cell_clip"),
        proj_clip=lstm.get("proj_clip"),
        use_skip_connections=lstm.get("use_skip_connections", True),
        dropout=dropout,
        compute_dtype=compute_dtype,
    )
