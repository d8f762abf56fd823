"""
An `ElmoBiLm` as an ONNX model, for ONNX Runtime from Java, C#, C++, JavaScript or Rust, with no
PyTorch: `export_onnx`. Needs the `onnx` package (`pip install "elmo_plugin[onnx]"`), imported
only here and only when called.

The model (docs/elmo.md has the details and a Java snippet):

- input `character_ids`, int64 `(batch, tokens, 50)`: `batch_to_ids`' ids of the sentences
  *without* `<S>` and `</S>`, 0 past each sentence's end (any batch size and length); the model
  adds the sentence markers as `Elmo` does. `elmo_plugin.elmo.formats.onnx.tokenizer` makes
  them in plain Python.
- of an ELMoForManyLangs (EFML) biLM, instead: `character_ids`, int64 `(batch, tokens,
  max_characters_per_token)`, ids of the model's character table, and, where the model has
  word embeddings, `word_ids`, int64 `(batch, tokens)`, ids of its word table, each plus one,
  0 past each sentence's end, without `<bos>` and `<eos>` (`efml.onnx_inputs` of
  `EfmlIds.batch_to_ids`). The tables are in the model's metadata (`efml`), from which
  `elmo_plugin.elmo.formats.onnx.efml_tokenizer` makes the ids in plain Python.
- output `layers`, float32 `(L + 1, batch, tokens, 2 * hidden)`: the biLM's `activations`
  (the token layer twice, then each LSTM layer's forward and backward states), without the
  markers' positions as `Elmo` removes them, zero past each sentence's end; with
  `keep_sentence_boundaries`, `(L + 1, batch, tokens + 2, 2 * hidden)` with them.
- output `mask`, bool `(batch, tokens)` (`tokens + 2` with the markers): `Elmo`'s mask.
- output `mixed`, float32 `(batch, tokens, 2 * hidden)`, only when a `ScalarMixWeights` is
  given: `Elmo`'s representation with those fixed layer weights (no layer norm, no dropout).

The export is stateless, as `ElmoBiLm` is by default: every sentence starts from zero states.
"""

import json
import math
from typing import NamedTuple, Optional, Sequence

from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.atomic_files import replaced_when_complete
from elmo_plugin.elmo.formats.efml.model import EfmlBiLm
from elmo_plugin.elmo.formats.onnx.efml import table_metadata
from elmo_plugin.elmo.formats.onnx.graph import build_model
from elmo_plugin.elmo.formats.onnx.names import ONNX_EXTRA


class ScalarMixWeights(NamedTuple):
    """Fixed weights of a scalar mix: `gamma * sum_k softmax(scalar_parameters)_k * layer_k`,
    as `ScalarMix` (`elmo_plugin.elmo.modules.scalar_mix`) mixes with `trainable=False`."""

    scalar_parameters: Sequence[float]
    gamma: float = 1.0


def export_onnx(
    bilm: ElmoBiLm,
    path: str,
    scalar_mix: Optional[ScalarMixWeights] = None,
    keep_sentence_boundaries: bool = False,
) -> str:
    """
    Writes `bilm` as an ONNX model to `path` (replacing it only once complete) and returns the
    path. Float32 whatever the biLM's compute dtype.

    # Parameters

    bilm : `ElmoBiLm`
        A stateless biLM: of bilm-tf files (`load_bilm`), of a trained `bilm` archive, or of
        an ELMoForManyLangs model (`load_efml_bilm`).
    path : `str`
    scalar_mix : `ScalarMixWeights`, optional
        Adds the `mixed` output.
    keep_sentence_boundaries : `bool`, optional (default = `False`)
        Keep the `<S>` and `</S>` positions in the outputs, as `Elmo`'s option of that name.
    """
    onnx = import_onnx()
    check_scalar_mix(scalar_mix)
    if type(bilm) not in (ElmoBiLm, EfmlBiLm):
        # A subclass may read other input or compute otherwise: not these graphs.
        raise ConfigurationError(
            f"cannot export a {type(bilm).__name__} to ONNX: supported are the ElmoBiLm of "
            "bilm-tf files or of a trained `bilm` model, and the EfmlBiLm of an "
            "ELMoForManyLangs model"
        )
    if bilm.stateful:
        raise ConfigurationError(
            "the biLM is stateful (it carries LSTM states between batches); the ONNX export is "
            "stateless: load the biLM with stateful=False"
        )
    if scalar_mix is not None and len(scalar_mix.scalar_parameters) != bilm.num_layers:
        raise ConfigurationError(
            f"the scalar mix has {len(scalar_mix.scalar_parameters)} weights but the biLM has "
            f"{bilm.num_layers} layers to mix"
        )
    model = build_model(bilm, scalar_mix, keep_sentence_boundaries)
    model.metadata_props.add(key="bilm_options", value=json.dumps(bilm.options(), sort_keys=True))
    model.metadata_props.add(key="layer_names", value=json.dumps(bilm.layer_names()))
    if isinstance(bilm, EfmlBiLm):
        for key, table in table_metadata(bilm.ids).items():
            model.metadata_props.add(key=key, value=table)
    onnx.checker.check_model(model)
    with replaced_when_complete(path) as partial:
        onnx.save(model, partial)
    return path


class MissingExtraError(ConfigurationError, ImportError):
    """A package of an optional extra is not installed: a user's error (one line in the
    commands), and an `ImportError` for code that catches those."""


def import_onnx():
    """The `onnx` package, or a `MissingExtraError` naming the extra that installs it."""
    try:
        import onnx
    except ImportError as error:
        raise MissingExtraError(
            f"exporting ELMo to ONNX needs the `onnx` package: pip install "
            f'"elmo_plugin[{ONNX_EXTRA}]" (or pip install onnx onnxruntime)'
        ) from error
    return onnx


def check_scalar_mix(scalar_mix: Optional[ScalarMixWeights]) -> None:
    """A mix of NaN or infinite weights or gamma would give NaN vectors: refused."""
    if scalar_mix is None:
        return
    values = [*scalar_mix.scalar_parameters, scalar_mix.gamma]
    if not all(isinstance(value, (int, float)) and math.isfinite(value) for value in values):
        raise ConfigurationError(
            f"the scalar mix's weights {list(scalar_mix.scalar_parameters)} and gamma "
            f"{scalar_mix.gamma} must be finite numbers (no nan or inf)"
        )


def parameter_bytes(bilm: ElmoBiLm) -> int:
    """The bytes of the biLM's float32 weights, which the ONNX file is about the size of."""
    return sum(p.numel() * 4 for p in bilm.parameters())
