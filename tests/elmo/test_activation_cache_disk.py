"""An activation cache directory that cannot be used (a file, damaged, read-only, a full disk)
is a ConfigurationError naming its path, at start or at the write that fails."""

import sqlite3
from typing import cast

import pytest
import torch

from elmo_plugin.elmo import ActivationCache
from elmo_plugin.elmo.errors import ConfigurationError


def test_a_directory_that_is_a_file(tmp_path):
    (tmp_path / "cache").write_text("mine")
    with pytest.raises(ConfigurationError, match=f"activation_cache directory {tmp_path}/cache"):
        ActivationCache(directory=str(tmp_path / "cache"))
    assert (tmp_path / "cache").read_text() == "mine"


def test_a_damaged_cache_file(tmp_path):
    damaged = tmp_path / "elmo_activations_float32.sqlite"
    damaged.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(ConfigurationError, match=f"{damaged}.*not a database.*remove"):
        ActivationCache(directory=str(tmp_path))


def test_a_read_only_directory(tmp_path, monkeypatch):
    ActivationCache(directory=str(tmp_path))  # the file exists, then the directory turns read-only
    real_connect = sqlite3.connect
    # As root, permissions do not stop writes: open the file read-only instead.
    monkeypatch.setattr(
        sqlite3, "connect", lambda path, **k: real_connect(f"file:{path}?mode=ro", uri=True, **k)
    )
    with pytest.raises(
        ConfigurationError, match=f"{tmp_path}/elmo_activations_float32.sqlite.*readonly"
    ):
        ActivationCache(directory=str(tmp_path))


def test_a_row_of_another_shape_is_named(tmp_path):
    cache = ActivationCache(directory=str(tmp_path))
    cache.bind(b"digest")
    cache.put(b"key", torch.ones(3, 4, 8))
    assert cache._disk is not None
    cache._disk.execute("UPDATE activations SET shape = '5,5,5'")
    cache._disk.commit()
    fresh = ActivationCache(directory=str(tmp_path))
    fresh.bind(b"digest")
    with pytest.raises(
        ConfigurationError, match=f"{tmp_path}/elmo_activations_float32.sqlite.*damaged"
    ):
        fresh.get(b"key")


def test_a_failing_write_names_the_file(tmp_path):
    cache = ActivationCache(directory=str(tmp_path))
    cache.bind(b"digest")

    class FullDisk:
        def execute(self, *args):
            raise sqlite3.OperationalError("database or disk is full")

    cache._disk = cast(sqlite3.Connection, FullDisk())  # a stand-in for the connection
    with pytest.raises(
        ConfigurationError, match=f"{tmp_path}/elmo_activations_float32.sqlite.*disk is full"
    ):
        cache.put(b"key", torch.ones(2, 2))
