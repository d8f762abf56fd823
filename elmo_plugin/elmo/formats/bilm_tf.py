"""
The bilm-tf model format that the published ELMo models use: an `options.json` describing the
sizes and a `weights.hdf5` holding TensorFlow's variables. Reading gives an `ElmoBiLm` whose
outputs equal bilm-tf's and AllenNLP's; writing gives files both of them load.
"""

import os
from typing import Any, Iterator, List, Optional, Protocol, Tuple

import h5py
import numpy
import torch

from elmo_plugin.elmo.bilm.characters.encoder import weight_and_bias
from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.package_files import CACHE_DIRECTORY
from elmo_plugin.elmo.formats.naming.package_files import local_source


def _tensor_pairs(bilm: ElmoBiLm) -> Iterator[Tuple[str, torch.Tensor, str]]:
    """Each hdf5 dataset name with the tensor it maps to and how: "T" for a transpose, "conv"
    for a CNN kernel, "neg" for a negated highway gate, "" for a plain copy."""
    encoder = bilm.character_encoder
    for i, convolution in enumerate(encoder.convolutions):
        weight, bias = weight_and_bias(convolution)
        yield f"CNN/W_cnn_{i}", weight, "conv"
        yield f"CNN/b_cnn_{i}", bias, ""
    num_filters = encoder.projection.in_features
    for k, layer in enumerate(encoder.highways.layers):
        weight, bias = weight_and_bias(layer)
        # Our Highway computes g * x + (1 - g) * f(x); TensorFlow's carry gate is 1 - g.
        yield f"CNN_high_{k}/W_transform", weight[:num_filters], "T"
        yield f"CNN_high_{k}/W_carry", weight[num_filters:], "negT"
        yield f"CNN_high_{k}/b_transform", bias[:num_filters], ""
        yield f"CNN_high_{k}/b_carry", bias[num_filters:], "neg"
    yield "CNN_proj/W_proj", encoder.projection.weight, "T"
    yield "CNN_proj/b_proj", encoder.projection.bias, ""


def _lstm_name(direction: int, layer: int, variable: str) -> str:
    return f"RNN_{direction}/RNN/MultiRNNCell/Cell{layer}/LSTMCell/{variable}"


# TensorFlow orders the gates input, candidate ("j"), forget, output; we use input, forget,
# output, candidate. TF_GATES[k] is the TensorFlow block holding our gate k.
_TF_GATES = (0, 2, 3, 1)
_FORGET = 1


def _gates_from_tf(matrix: numpy.ndarray, cell_size: int) -> numpy.ndarray:
    blocks = [matrix[..., g * cell_size : (g + 1) * cell_size] for g in _TF_GATES]
    return numpy.concatenate(blocks, axis=-1)


def _gates_to_tf(matrix: numpy.ndarray, cell_size: int) -> numpy.ndarray:
    # TensorFlow's block `theirs` is our gate `_TF_GATES.index(theirs)`.
    ours = [_TF_GATES.index(theirs) for theirs in range(len(_TF_GATES))]
    blocks = [matrix[..., g * cell_size : (g + 1) * cell_size] for g in ours]
    return numpy.concatenate(blocks, axis=-1)


class _WeightReader:
    def __init__(self, handle: h5py.File, weight_file: str) -> None:
        self.handle = handle
        self.weight_file = weight_file

    def get(self, name: str) -> Optional[Any]:
        """The hdf5 object `name`, or None; a corrupt file is a `ConfigurationError`."""
        try:
            return self.handle[name] if name in self.handle else None
        except (KeyError, RuntimeError, OSError, ValueError) as error:
            raise self._corrupt(name, error) from error

    def _corrupt(self, name: str, error: Exception) -> ConfigurationError:
        return ConfigurationError(
            f"{self.weight_file}: tensor '{name}' cannot be read ({error}); "
            "is the file truncated or corrupt?"
        )

    def names(self) -> List[str]:
        """The names of every dataset in the file."""
        stored: List[str] = []
        try:
            self.handle.visititems(
                lambda name, item: stored.append(name) if isinstance(item, h5py.Dataset) else None
            )
        except (KeyError, RuntimeError, OSError, ValueError) as error:
            raise self._corrupt("/", error) from error
        return stored

    def rows(self, name: str) -> Optional[int]:
        """The first dimension of the dataset `name`, None when it has none or is not there."""
        stored = self.get(name)
        return stored.shape[0] if isinstance(stored, h5py.Dataset) and stored.ndim else None

    def read(self, name: str, expected_shape: Tuple[int, ...]) -> numpy.ndarray:
        dataset = self.get(name)
        if dataset is None:
            raise ConfigurationError(f"{self.weight_file}: no tensor '{name}' in the weights")
        if not isinstance(dataset, h5py.Dataset):
            raise ConfigurationError(
                f"{self.weight_file}: tensor '{name}' holds a group; expected floating point"
            )
        try:
            value = dataset[...]
        except (KeyError, RuntimeError, OSError, ValueError) as error:
            raise self._corrupt(name, error) from error
        return checked_weight(value, self.weight_file, name, expected_shape)


class WeightSource(Protocol):
    """Where a biLM's weights are read from, under bilm-tf's hdf5 names: `weights.hdf5`, or a
    TensorFlow checkpoint whose names are translated (`formats.tensorflow`)."""

    weight_file: str

    def names(self) -> List[str]: ...

    def rows(self, name: str) -> Optional[int]: ...

    def read(self, name: str, expected_shape: Tuple[int, ...]) -> numpy.ndarray: ...


def checked_weight(
    value: numpy.ndarray, weight_file: str, name: str, expected_shape: Tuple[int, ...]
) -> numpy.ndarray:
    """`value`, the tensor `name` of `weight_file`, checked: floating point, of the shape the
    options ask for, finite."""
    if value.dtype.kind != "f":
        raise ConfigurationError(
            f"{weight_file}: tensor '{name}' holds {value.dtype}; expected floating point"
        )
    if tuple(value.shape) != tuple(expected_shape):
        raise ConfigurationError(
            f"{weight_file}: tensor '{name}' has shape {tuple(value.shape)} but the "
            f"options ask for {tuple(expected_shape)}"
        )
    bad = value.size - int(numpy.isfinite(value).sum())
    if bad:
        raise ConfigurationError(
            f"{weight_file}: tensor '{name}' has {bad} non-finite (NaN or infinite) "
            f"values; expected finite weights"
        )
    return value


def _open_hdf5(weight_file: str) -> h5py.File:
    source = local_source(weight_file, "biLM weight_file")  # h5py reads a file object too
    try:
        return h5py.File(source, "r")
    except OSError as error:
        path = source if isinstance(source, str) else weight_file
        raise ConfigurationError(_unreadable(weight_file, path, error)) from error


def _unreadable(weight_file: str, path: str, error: OSError) -> str:
    """Names the local file behind `weight_file` and, for a download, how to fetch it anew."""
    where = "" if path == weight_file else f" (the local file {path})"
    message = f"{weight_file}{where}: not a readable hdf5 file ({error}); is it truncated?"
    if os.path.realpath(path).startswith(os.path.realpath(CACHE_DIRECTORY) + os.sep):
        message += (
            f" It is a download in the cache: delete {path} (and {path}.json) and load it again "
            "where there is a connection, to download it afresh"
        )
    return message


def read_weights(bilm: ElmoBiLm, weight_file: str) -> None:
    """Copies bilm-tf's weights into `bilm`, checking every shape against the options."""
    with _open_hdf5(weight_file) as handle:
        copy_weights(bilm, _WeightReader(handle, weight_file))


def copy_weights(bilm: ElmoBiLm, reader: WeightSource) -> None:
    """Copies the weights of `reader` into `bilm`, checking every shape against the options."""
    with torch.no_grad():
        _refuse_undescribed(bilm, reader)
        _read_char_embedding(bilm, reader)
        for name, tensor, how in _tensor_pairs(bilm):
            tensor.copy_(torch.from_numpy(_from_tf(reader, name, tensor, how)))
        for i, layer in enumerate(bilm.lstm.layers):
            for direction in range(2):
                _read_lstm_direction(reader, layer, i, direction)
    bilm.character_encoder.clear_cache()


def _described_names(bilm: ElmoBiLm) -> List[str]:
    lstm = [
        _lstm_name(direction, i, variable)
        for i in range(len(bilm.lstm.layers))
        for direction in range(2)
        for variable in ("W_0", "B", "W_P_0")
    ]
    return ["char_embed"] + [name for name, _, _ in _tensor_pairs(bilm)] + lstm


def _refuse_undescribed(bilm: ElmoBiLm, reader: WeightSource) -> None:
    """Weights the options do not describe (another LSTM or highway layer, another filter)
    mean that the options are not the weights' own: the biLM would silently lose layers."""
    described = set(_described_names(bilm))
    stored = reader.names()
    extra = sorted(name for name in stored if name not in described)
    if extra:
        lstm, cnn = bilm.options()["lstm"], bilm.options()["char_cnn"]
        raise ConfigurationError(
            f"{reader.weight_file}: holds {len(extra)} tensors that the options do not describe "
            f"({lstm['n_layers']} LSTM layers, {cnn['n_highway']} highway layers, "
            f"{len(cnn['filters'])} filters), e.g. {extra[:3]}; the options do not belong to "
            "these weights"
        )


def _read_char_embedding(bilm: ElmoBiLm, reader: WeightSource) -> None:
    encoder = bilm.character_encoder
    # bilm-tf stores 261 characters, or 262 when trained with the padding character.
    rows = reader.rows("char_embed") or encoder.num_characters
    if rows not in (261, 262) or rows > encoder.num_characters:
        rows = encoder.num_characters
    value = reader.read("char_embed", (rows, encoder.char_embedding_dim))
    encoder.char_embedding.zero_()
    encoder.char_embedding[1 : rows + 1] = torch.from_numpy(value)


def _from_tf(reader: WeightSource, name: str, tensor: torch.Tensor, how: str) -> numpy.ndarray:
    shape = tuple(tensor.shape)
    if how == "conv":  # (1, width, char_dim, filters) <-> (filters, char_dim, width)
        stored = reader.read(name, (1, shape[2], shape[1], shape[0]))
        return numpy.ascontiguousarray(numpy.transpose(stored[0], (2, 1, 0)))
    if how in ("T", "negT"):
        stored = reader.read(name, shape[::-1]).T
    else:
        stored = reader.read(name, shape)
    return numpy.ascontiguousarray(-stored if how.startswith("neg") else stored)


def _read_lstm_direction(reader: WeightSource, layer, index: int, direction: int) -> None:
    cell, hidden, inputs = layer.cell_size, layer.hidden_size, layer.input_size
    kernel = reader.read(_lstm_name(direction, index, "W_0"), (inputs + hidden, 4 * cell))
    bias = reader.read(_lstm_name(direction, index, "B"), (4 * cell,)).copy()
    projection = reader.read(_lstm_name(direction, index, "W_P_0"), (cell, hidden))
    kernel = _gates_from_tf(kernel, cell)
    bias = _gates_from_tf(bias, cell)
    # TensorFlow adds forget_bias=1 at run time rather than storing it.
    bias[_FORGET * cell : (_FORGET + 1) * cell] += 1.0
    layer.input_weight[direction] = torch.from_numpy(kernel[:inputs])
    layer.state_weight[direction] = torch.from_numpy(kernel[inputs:])
    layer.bias[direction, 0] = torch.from_numpy(bias)
    layer.projection_weight[direction] = torch.from_numpy(numpy.ascontiguousarray(projection))


def write_weights(bilm: ElmoBiLm, weight_file: str) -> None:
    """Writes `bilm` as a bilm-tf `weights.hdf5`, in place (`exports.save_bilm` writes it whole)."""
    with h5py.File(weight_file, "w") as handle, torch.no_grad():
        encoder = bilm.character_encoder
        # bilm-tf's table has no padding row; AllenNLP and bilm-tf both read 261 rows.
        handle["char_embed"] = encoder.char_embedding[1:262].cpu().numpy()
        for name, tensor, how in _tensor_pairs(bilm):
            handle[name] = _to_tf(tensor.detach().cpu().numpy(), how)
        for i, layer in enumerate(bilm.lstm.layers):
            for direction in range(2):
                _write_lstm_direction(handle, layer, i, direction)


def _to_tf(value: numpy.ndarray, how: str) -> numpy.ndarray:
    if how == "conv":
        return numpy.transpose(value, (2, 1, 0))[numpy.newaxis]
    if how in ("T", "negT"):
        value = value.T
    return numpy.ascontiguousarray(-value if how.startswith("neg") else value)


def _write_lstm_direction(handle: h5py.File, layer, index: int, direction: int) -> None:
    cell = layer.cell_size
    kernel = torch.cat([layer.input_weight[direction], layer.state_weight[direction]], dim=0)
    bias = layer.bias[direction, 0].cpu().numpy().copy()
    bias[_FORGET * cell : (_FORGET + 1) * cell] -= 1.0
    handle[_lstm_name(direction, index, "W_0")] = _gates_to_tf(kernel.cpu().numpy(), cell)
    handle[_lstm_name(direction, index, "B")] = _gates_to_tf(bias, cell)
    handle[_lstm_name(direction, index, "W_P_0")] = layer.projection_weight[direction].cpu().numpy()
