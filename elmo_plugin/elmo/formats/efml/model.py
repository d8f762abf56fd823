"""
An ELMoForManyLangs (EFML) model as a biLM of ours: `EfmlBiLm` is an `ElmoBiLm` whose token
layer is `EfmlTokenEncoder` and whose LSTM is our `ElmoBiLstm` holding EFML's weights, which
is exact: EFML's `ElmobiLm` is AllenNLP 0.x's ELMo LSTM (`LstmCellWithProjection`: gates input,
forget, candidate, output; cell clip then projection clip, both skipped when 0; the residual
from the second layer on; the directions as `forward_layer_<i>`/`backward_layer_<i>`), with the
forget bias trained into the bias rather than added at run time as bilm-tf's is.
"""

import math
import os
from typing import Any, Dict, Optional, Sequence

import torch

from elmo_plugin.elmo.bilm.lstm.module import ElmoBiLstm
from elmo_plugin.elmo.bilm.model import ElmoBiLm, bilstm_from_options
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.execution.settings import Execution
from elmo_plugin.elmo.formats.bilm_tf_options import activation_check, filters_check, integer_check
from elmo_plugin.elmo.formats.efml import directory
from elmo_plugin.elmo.formats.efml.ids import EfmlIds
from elmo_plugin.elmo.formats.efml.token_encoder import EfmlTokenEncoder
from elmo_plugin.elmo.files.zip_archives import file_size, is_file

# The key of an EFML biLM's `options()`, which a model's vocabulary records (`loading`).
EFML_OPTIONS_KEY = "elmoformanylangs"
# The fewest bytes a weight takes in a state dict (float16): files hold at least this a weight.
SMALLEST_WEIGHT_BYTES = 2


class EfmlBiLm(ElmoBiLm):
    """
    An EFML model's biLM, used as an `ElmoBiLm` is (`Elmo`, `ElmoEmbedder`, `CachedBiLm`):
    `forward(ids)` gives the token layer (duplicated) and each LSTM layer with `<bos>` and
    `<eos>` at the sentence ends, equal to EFML's `Embedder.sents2elmo(..., output_layer=-2)`
    between them. Its input is not the `elmo_characters` indexer's but `batch_to_ids`'s (the
    model's character table and its word ids, `EfmlIds`). With `compute_dtype` bfloat16 only
    the LSTM's products are reduced: the token layer, encoded once per token type and a small
    part of the time, stays float32.

    Build it with `load_efml_bilm`.

    # Parameters

    token_encoder : `EfmlTokenEncoder`
    lstm : `ElmoBiLstm`
    ids : `EfmlIds`
    architecture : `Dict[str, Any]`
        The model's architecture JSON.
    stateful : `bool`, optional (default = `False`)
        As `ElmoBiLm`'s, which is how EFML's `Embedder` runs (always stateful).
    """

    def __init__(
        self,
        token_encoder: EfmlTokenEncoder,
        lstm: ElmoBiLstm,
        ids: EfmlIds,
        architecture: Dict[str, Any],
        stateful: bool = False,
    ) -> None:
        super().__init__(token_encoder, lstm, stateful)  # type: ignore[arg-type]
        self.ids = ids
        self.architecture = architecture

    def batch_to_ids(self, batch: Sequence[Sequence[str]]) -> torch.Tensor:
        """This biLM's input for tokenised sentences (`EfmlIds.batch_to_ids`)."""
        return self.ids.batch_to_ids(batch)

    def _check_compute_dtypes(self, token_layer: torch.nn.Module, lstm: ElmoBiLstm) -> None:
        """Any LSTM dtype: the token layer is float32 whatever the LSTM's."""

    def set_compute_dtype(self, dtype: torch.dtype) -> None:
        """The LSTM's compute dtype (the token layer's stays float32)."""
        for layer in self.lstm.bilstm_layers:
            layer.compute_dtype = dtype

    def options(self) -> Dict[str, Any]:
        """The EFML architecture (what `digest` hashes); not bilm-tf options."""
        return {EFML_OPTIONS_KEY: self.architecture}


def load_efml_bilm(
    model_dir: str,
    stateful: bool = False,
    char_cnn_cache_size: int = 50000,
    compute_dtype: torch.dtype = torch.float32,
    execution: Execution = Execution(),
    efml_configs_dir: Optional[str] = None,
) -> EfmlBiLm:
    """
    The biLM of the EFML model in `model_dir` (`directory.is_efml_directory`), its weights
    loaded.

    # Parameters

    model_dir : `str`
    stateful, char_cnn_cache_size, execution :
        As `ElmoBiLm.from_options`.
    compute_dtype : `torch.dtype`, optional (default = `torch.float32`)
        The LSTM's (`elmo_plugin.elmo.execution.compute_dtype`); the token layer's is float32.
    efml_configs_dir : `str`, optional
        EFML's packaged `configs/`, a last place to look for the architecture JSON.
    """
    if not directory.is_efml_directory(model_dir):
        raise ConfigurationError(
            f"{model_dir} is not {directory.DESCRIPTION}; it lacks "
            f"{', '.join(directory.missing_files(model_dir)) or 'nothing, but is no directory'}"
        )
    architecture = directory.read_architecture(model_dir, efml_configs_dir)
    cnn, lstm_config = _checked_architecture(architecture, model_dir)
    ids = _read_ids(model_dir, cnn)
    _refuse_ids_beyond_the_tables(model_dir, ids)
    _refuse_more_than_the_files_hold(model_dir, cnn, lstm_config, ids)
    encoder = EfmlTokenEncoder(
        num_characters=len(ids.characters),
        char_embedding_dim=cnn["char_dim"],
        filters=[(int(width), int(num)) for width, num in cnn["filters"]],
        num_highway=cnn["n_highway"],
        projection_dim=lstm_config["projection_dim"],
        num_words=0 if ids.words is None else len(ids.words),
        word_embedding_dim=cnn["word_dim"],
        max_characters_per_token=cnn["max_characters_per_token"],
        activation=cnn["activation"],
        markers=ids.markers(),
        padding_character=ids.padding_character,
        cache_size=char_cnn_cache_size,
    )
    # EFML clips only where the value is truthy (a clip of 0 is none) and always adds the
    # residual from the second layer on.
    clips = {name: lstm_config.get(name) or None for name in ("cell_clip", "proj_clip")}
    lstm = bilstm_from_options(
        {**lstm_config, **clips, "use_skip_connections": True}, compute_dtype=compute_dtype
    )
    bilm = EfmlBiLm(encoder, lstm, ids, architecture, stateful)
    bilm.set_execution(execution)
    _load_weights(bilm, model_dir)
    return bilm


# Above this a token's ids alone would take more memory than any model (EFML's are 50).
MAX_CHARACTERS_PER_TOKEN = 1000


def _clip_check(value: Any) -> Optional[str]:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    ok = value is None or (number and math.isfinite(value) and value >= 0)
    return None if ok else "a non-negative number or null (0 and null: no clipping)"


def _token_length_check(value: Any) -> Optional[str]:
    expected = f"an integer from 3 to {MAX_CHARACTERS_PER_TOKEN}"
    return expected if integer_check(3)(value) or value > MAX_CHARACTERS_PER_TOKEN else None


# What each architecture value must be, as a check giving what was expected when it is not.
_ARCHITECTURE_TYPES = {
    "encoder": {
        "projection_dim": integer_check(1),
        "dim": integer_check(1),
        "n_layers": integer_check(1),
        "cell_clip": _clip_check,
        "proj_clip": _clip_check,
    },
    "token_embedder": {
        "filters": filters_check,
        "n_highway": integer_check(0),
        "word_dim": integer_check(0),
        "char_dim": integer_check(1),
        "max_characters_per_token": _token_length_check,
        "activation": activation_check,
    },
}
_OPTIONAL = ("cell_clip", "proj_clip", "activation")


def _checked_architecture(architecture: Dict[str, Any], model_dir: str) -> Any:
    where = f"the architecture JSON of the ELMoForManyLangs model {model_dir}"
    for section in _ARCHITECTURE_TYPES:
        if not isinstance(architecture.get(section), dict):
            raise ConfigurationError(
                f"{where}: '{section}' is {repr(architecture.get(section))[:100]}, expected "
                "an object"
            )
    encoder, cnn = architecture["encoder"], architecture["token_embedder"]
    if str(encoder.get("name", "")).lower() != "elmo":
        raise ConfigurationError(
            f"{where}: encoder 'name' is {encoder.get('name')!r}; only 'elmo' (the biLSTM of "
            "every published EFML model) loads here"
        )
    if str(cnn.get("name", "")).lower() != "cnn" or not cnn.get("char_dim"):
        raise ConfigurationError(
            f"{where}: token_embedder is {cnn.get('name')!r} with char_dim "
            f"{cnn.get('char_dim')!r}; only a 'cnn' with characters (every published EFML "
            "model's) loads here"
        )
    for section, checks in _ARCHITECTURE_TYPES.items():
        absent = [key for key in checks if key not in architecture[section]]
        absent = [key for key in absent if key not in _OPTIONAL]
        if absent:
            raise ConfigurationError(f"{where}: '{section}' lacks {', '.join(absent)}")
        for key, check in checks.items():
            value = architecture[section].get(key)
            expected = None if key in _OPTIONAL and value is None else check(value)
            if expected is not None:
                raise ConfigurationError(
                    f"{where}: '{section}'.'{key}' expected {expected}, got {repr(value)[:200]}"
                )
    widest = max(width for width, _ in cnn["filters"])
    if widest > cnn["max_characters_per_token"]:
        raise ConfigurationError(
            f"{where}: 'token_embedder'.'filters' has a filter of width {widest}, wider than a "
            f"token of {cnn['max_characters_per_token']} characters (max_characters_per_token)"
        )
    cnn.setdefault("activation", "relu")
    return cnn, encoder


def _refuse_ids_beyond_the_tables(model_dir: str, ids: EfmlIds) -> None:
    """The embeddings have a row a table entry, as EFML's have: a larger id would index past
    them when that token came."""
    tables = {directory.CHARACTER_TABLE: ids.characters, directory.WORD_TABLE: ids.words}
    for name, table in tables.items():
        largest = max(table.values()) if table else 0
        if table and largest >= len(table):
            raise ConfigurationError(
                f"{os.path.join(model_dir, name)}: has the id {largest}, beyond its "
                f"{len(table)} entries; expected ids from 0 to {len(table) - 1}, one an entry"
            )


def _refuse_more_than_the_files_hold(
    model_dir: str, cnn: Dict[str, Any], lstm: Dict[str, Any], ids: EfmlIds
) -> None:
    """Before the modules are made: an architecture implying more weights than its files hold
    would allocate them (a few wrong numbers, gigabytes) only to be refused at loading."""
    filters = sum(count for _, count in cnn["filters"])
    words = 0 if ids.words is None else len(ids.words)
    implied = {
        directory.TOKEN_EMBEDDER_WEIGHTS: len(ids.characters) * cnn["char_dim"]
        + words * cnn["word_dim"]
        + cnn["n_highway"] * 2 * filters * filters,
        directory.ENCODER_WEIGHTS: lstm["n_layers"] * 2 * 9 * lstm["dim"] * lstm["projection_dim"],
    }
    for name, values in implied.items():
        path = os.path.join(model_dir, name)
        held = file_size(path)
        if values * SMALLEST_WEIGHT_BYTES > held:
            raise ConfigurationError(
                f"{path}: holds {held} bytes, but the model's architecture JSON and tables imply "
                f"at least {values} weights (at least {values * SMALLEST_WEIGHT_BYTES} bytes); "
                "is the architecture JSON the model's own?"
            )


def load_efml_ids(model_dir: str, efml_configs_dir: Optional[str] = None) -> EfmlIds:
    """The ids of the EFML model in `model_dir` (its tables and its architecture's token
    length), which its biLM's `batch_to_ids` makes, with no weights read: for a data pipeline
    that indexes tokens apart from the model."""
    if not directory.is_efml_directory(model_dir):
        raise ConfigurationError(f"{model_dir} is not {directory.DESCRIPTION}")
    architecture = directory.read_architecture(model_dir, efml_configs_dir)
    cnn, _ = _checked_architecture(architecture, model_dir)
    return _read_ids(model_dir, cnn)


def _read_ids(model_dir: str, cnn: Dict[str, Any]) -> EfmlIds:
    characters = directory.read_table(os.path.join(model_dir, directory.CHARACTER_TABLE))
    words = None
    if cnn["word_dim"] > 0:
        word_path = os.path.join(model_dir, directory.WORD_TABLE)
        if not is_file(word_path):
            raise ConfigurationError(
                f"the ELMoForManyLangs model {model_dir} has word embeddings (word_dim "
                f"{cnn['word_dim']}) but no {directory.WORD_TABLE}"
            )
        words = directory.read_table(word_path)
    return EfmlIds(characters, words, cnn["max_characters_per_token"], source=model_dir)


# EFML's gate blocks (AllenNLP 0.x's order: input, forget, candidate, output) for ours
# (input, forget, output, candidate).
_EFML_GATES = (0, 1, 3, 2)


def _load_weights(bilm: EfmlBiLm, model_dir: str) -> None:
    token_path = os.path.join(model_dir, directory.TOKEN_EMBEDDER_WEIGHTS)
    encoder_path = os.path.join(model_dir, directory.ENCODER_WEIGHTS)
    tokens = _Weights(directory.read_state_dict(token_path), token_path)
    encoder = _Weights(directory.read_state_dict(encoder_path), encoder_path)
    with torch.no_grad():
        _load_token_encoder(bilm.character_encoder, tokens)  # type: ignore[arg-type]
        for index, layer in enumerate(bilm.lstm.bilstm_layers):
            for direction, name in enumerate(("forward", "backward")):
                _load_direction(layer, direction, encoder, f"{name}_layer_{index}")
    tokens.refuse_unread()
    encoder.refuse_unread()


def _load_token_encoder(encoder: EfmlTokenEncoder, weights: "_Weights") -> None:
    encoder.char_embedding.copy_(
        weights.take("char_emb_layer.embedding.weight", encoder.char_embedding)
    )
    if encoder.word_embedding.size(0):
        encoder.word_embedding.copy_(
            weights.take("word_emb_layer.embedding.weight", encoder.word_embedding)
        )
    for index, convolution in enumerate(encoder.convolutions):
        for part in ("weight", "bias"):
            target = getattr(convolution, part)
            target.copy_(weights.take(f"convolutions.{index}.{part}", target))
    for name, target in encoder.highways.named_parameters():
        target.copy_(weights.take(f"highways.{name}", target))
    for part in ("weight", "bias"):
        target = getattr(encoder.projection, part)
        target.copy_(weights.take(f"projection.{part}", target))


def _load_direction(layer: Any, direction: int, weights: "_Weights", prefix: str) -> None:
    cell = layer.cell_size
    gates = 4 * cell
    input_weight = weights.take(f"{prefix}.input_linearity.weight", (gates, layer.input_size))
    state_weight = weights.take(f"{prefix}.state_linearity.weight", (gates, layer.hidden_size))
    bias = weights.take(f"{prefix}.state_linearity.bias", (gates,))
    projection = weights.take(f"{prefix}.state_projection.weight", (layer.hidden_size, cell))
    layer.input_weight[direction] = _our_gates(input_weight, cell).t()
    layer.state_weight[direction] = _our_gates(state_weight, cell).t()
    layer.bias[direction, 0] = _our_gates(bias, cell)
    layer.projection_weight[direction] = projection.t()


def _our_gates(matrix: torch.Tensor, cell: int) -> torch.Tensor:
    return torch.cat([matrix[g * cell : (g + 1) * cell] for g in _EFML_GATES])


class _Weights:
    """A state dict read by name, each tensor checked for its shape, unread names refused."""

    def __init__(self, state: Dict[str, torch.Tensor], path: str) -> None:
        self._state = state
        self._path = path
        self._unread = set(state)

    def take(self, name: str, like: Any) -> torch.Tensor:
        shape = tuple(like.shape) if isinstance(like, torch.Tensor) else tuple(like)
        if name not in self._state:
            raise ConfigurationError(
                f"{self._path} has no {name!r}, which the model's architecture JSON implies"
            )
        tensor = self._state[name]
        if tuple(tensor.shape) != shape:
            raise ConfigurationError(
                f"{self._path}: {name!r} has shape {tuple(tensor.shape)}, but the model's "
                f"architecture JSON and tables imply {shape}"
            )
        self._unread.discard(name)
        return tensor.float()

    def refuse_unread(self) -> None:
        if self._unread:
            raise ConfigurationError(
                f"{self._path} holds {', '.join(sorted(self._unread))}, which the model's "
                "architecture JSON does not describe; is the JSON the model's own?"
            )
