"""TensorFlow V2 checkpoints read without TensorFlow: every tensor of a checkpoint written by
bilm-tf's own training equals `tf.train.load_checkpoint(...).get_tensor` bit for bit (stored
by fixtures/tensorflow/make_bilm_checkpoint.py), and corrupt or missing files are refused."""

import shutil

import numpy
import pytest

from elmo_plugin.elmo.errors import ConfigurationError, MissingFileError
from elmo_plugin.elmo.formats.tensorflow.checkpoint import Checkpoint, data_file
from elmo_plugin.elmo.formats.tensorflow.crc32c import crc32c, masked
from tests.paths import FIXTURES
from tests.tensorflow_reference import assert_tensors_are_tensorflows

FOLDER = FIXTURES / "tensorflow" / "bilm_checkpoint"
PREFIX = str(FOLDER / "model.ckpt-74")


def _crc_bytewise(data: bytes) -> int:
    register = 0xFFFFFFFF
    for byte in data:
        register ^= byte
        for _ in range(8):
            register = (register >> 1) ^ (0x82F63B78 if register & 1 else 0)
    return register ^ 0xFFFFFFFF


def test_crc32c_of_the_standard_check_string_and_of_random_bytes():
    assert crc32c(numpy.frombuffer(b"123456789", numpy.uint8)) == 0xE3069283
    rng = numpy.random.default_rng(0)
    for length in (0, 1, 5, 1023, 1024, 4099, 70001):
        data = rng.integers(0, 256, length, dtype=numpy.uint8)
        assert crc32c(data) == _crc_bytewise(data.tobytes()), length


def test_masking_is_tensorflows():
    # crc32c::Mask of 0: a rotation by 15 bits, plus kMaskDelta.
    assert masked(0) == 0xA282EAD8
    assert masked(1) == (1 << 17) + 0xA282EAD8


def test_every_tensor_equals_tensorflows_bit_for_bit():
    assert_tensors_are_tensorflows()


def test_tensors_are_memory_mapped_read_only():
    tensor = Checkpoint(PREFIX).tensor("lm/softmax/W")
    assert isinstance(tensor.base, numpy.memmap) or isinstance(tensor, numpy.memmap)
    assert not tensor.flags.writeable


def _copy(tmp_path):
    for path in FOLDER.iterdir():
        shutil.copy(path, tmp_path / path.name)
    return str(tmp_path / "model.ckpt-74")


def test_a_flipped_byte_in_the_data_fails_the_tensors_crc(tmp_path):
    prefix = _copy(tmp_path)
    checkpoint = Checkpoint(prefix)
    entry = checkpoint.entry("lm/softmax/W")
    path = data_file(prefix, 0, 1)
    with open(path, "r+b") as handle:
        handle.seek(entry.offset + 3)
        byte = handle.read(1)
        handle.seek(entry.offset + 3)
        handle.write(bytes([byte[0] ^ 1]))
    checkpoint = Checkpoint(prefix)
    checkpoint.tensor("lm/softmax/b")  # others still read
    with pytest.raises(ConfigurationError, match="'lm/softmax/W' fails its CRC-32C check"):
        checkpoint.tensor("lm/softmax/W")


def test_a_corrupt_index_is_refused_naming_it(tmp_path):
    prefix = _copy(tmp_path)
    index = tmp_path / "model.ckpt-74.index"
    data = bytearray(index.read_bytes())
    data[20] ^= 0xFF
    index.write_bytes(bytes(data))
    with pytest.raises(ConfigurationError, match=r"model.ckpt-74.index: not a TensorFlow V2"):
        Checkpoint(prefix)
    index.write_bytes(b"not a table" * 10)
    with pytest.raises(ConfigurationError, match="magic number"):
        Checkpoint(prefix)


def test_a_truncated_or_missing_data_file_is_named(tmp_path):
    prefix = _copy(tmp_path)
    path = data_file(prefix, 0, 1)
    with open(path, "r+b") as handle:
        handle.truncate(100)
    with pytest.raises(ConfigurationError, match="is it truncated"):
        Checkpoint(prefix).tensor("lm/softmax/W")
    (tmp_path / path.split("/")[-1]).unlink()
    with pytest.raises(MissingFileError, match="data file is not there"):
        Checkpoint(prefix).tensor("lm/softmax/W")


def test_an_unknown_name_lists_some_of_the_tensors():
    with pytest.raises(ConfigurationError, match="holds no tensor 'lm/nothing'.*global_step"):
        Checkpoint(PREFIX).tensor("lm/nothing")


def test_a_missing_index_is_a_missing_file(tmp_path):
    with pytest.raises(MissingFileError, match="no such TensorFlow checkpoint index"):
        Checkpoint(str(tmp_path / "model.ckpt-1"))
