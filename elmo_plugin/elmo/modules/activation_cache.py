import os
import sqlite3
from collections import OrderedDict
from typing import Any, Dict, Optional, Union

import numpy
import torch

from elmo_plugin.elmo.errors import ConfigurationError

_DTYPES = {"float32": torch.float32, "float16": torch.float16}


class ActivationCache:
    """
    Remembers a frozen, stateless biLM's layer activations for each distinct sentence, so
    that later epochs of a task model skip the biLM. Keys are a digest of the biLM (its options
    and weights, see `bind`) followed by the sentence's character ids, so a directory reused
    with another biLM never returns that biLM's entries; values are
    `(L + 1, num_tokens + 2, dim)` tensors.

    Entries live in memory, least recently used first out past `max_memory_mb`; with a
    `directory` they also go to an sqlite file there (up to `max_disk_mb`), which outlives
    the process, so a rerun or `--recover` starts warm.

    # Parameters

    max_memory_mb : `float`, optional (default = `2048`)
    dtype : `str`, optional (default = `"float32"`)
        `"float16"` halves the memory at a precision cost of about 1e-3 relative.
    directory : `str`, optional
        Where the on-disk cache lives; none by default.
    max_disk_mb : `float`, optional (default = `20480`)
    """

    def __init__(
        self,
        max_memory_mb: float = 2048,
        dtype: str = "float32",
        directory: Optional[str] = None,
        max_disk_mb: float = 20480,
    ) -> None:
        if dtype not in _DTYPES:
            raise ConfigurationError(
                f"activation_cache dtype must be one of {sorted(_DTYPES)}, got {dtype!r}"
            )
        self.max_memory_bytes = int(max_memory_mb * 2**20)
        self.max_disk_bytes = int(max_disk_mb * 2**20)
        self.dtype = _DTYPES[dtype]
        self._dtype_name = dtype
        self._memory: "OrderedDict[bytes, torch.Tensor]" = OrderedDict()
        self._memory_bytes = 0
        self._disk: Optional[sqlite3.Connection] = None
        self._disk_bytes = 0
        self._bilm_digest: Optional[bytes] = None
        self._in_use = False  # whether an entry was read or stored for the bound biLM
        self._disk_path = ""
        if directory is not None:
            self._open_disk(directory, dtype)

    @classmethod
    def from_config(cls, config: Union["ActivationCache", Dict[str, Any]]) -> "ActivationCache":
        """A cache from its config block (a config's `activation_cache: {...}`), or `config`
        itself when it is one already; an unknown key is an error naming the known ones."""
        if isinstance(config, cls):
            return config
        if not isinstance(config, dict):
            raise ConfigurationError(
                f'activation_cache must be an object such as {{"max_memory_mb": 2048}}, '
                f"got {config!r}"
            )
        known = ("max_memory_mb", "dtype", "directory", "max_disk_mb")
        unknown = sorted(set(config) - set(known))
        if unknown:
            raise ConfigurationError(
                f"activation_cache has no key {', '.join(map(repr, unknown))}; its keys are "
                f"{', '.join(known)}"
            )
        return cls(**config)

    def _open_disk(self, directory: str, dtype: str) -> None:
        self._disk_path = os.path.join(directory, f"elmo_activations_{dtype}.sqlite")
        try:
            os.makedirs(directory, exist_ok=True)
            disk = sqlite3.connect(self._disk_path, check_same_thread=False)
            # A lost write only costs recomputing one sentence, so skip the fsyncs.
            disk.execute("PRAGMA synchronous=OFF")
            disk.execute(
                "CREATE TABLE IF NOT EXISTS activations "
                "(key BLOB PRIMARY KEY, shape TEXT, value BLOB)"
            )
            # A write that changes nothing: read-only fails here, not mid-training.
            disk.execute("DELETE FROM activations WHERE 0")
            disk.rollback()
            row = disk.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM activations")
            self._disk_bytes = row.fetchone()[0]
        except (OSError, sqlite3.Error) as error:
            raise ConfigurationError(
                f"activation_cache directory {directory}: cannot use {self._disk_path} "
                f"({error}); give another directory, or remove {self._disk_path} to start the "
                "cache afresh"
            ) from error
        self._disk = disk

    def described(self) -> str:
        """Its sizes and where it keeps entries, for the biLM's log."""
        memory = f"{self.max_memory_bytes / 2**20:g} MB in memory"
        if not self._disk_path:
            return f"{memory}, {self._dtype_name}"
        disk = f"{self.max_disk_bytes / 2**20:g} MB on disk at {self._disk_path}"
        return f"{memory} and {disk}, {self._dtype_name}"

    def __len__(self) -> int:
        return len(self._memory)

    def bind(self, bilm_digest: bytes) -> None:
        """Ties the cache to the biLM whose options and weights give `bilm_digest`; entries
        are only ever read back for it. A second, different biLM is refused once the first
        one has read or stored entries: one `Elmo` would otherwise evict the other's entries
        (give each its own cache)."""
        if self._bilm_digest not in (None, bilm_digest) and self._in_use:
            raise ConfigurationError(
                "this activation_cache already holds another biLM's activations; "
                "give each Elmo its own activation_cache"
            )
        self._bilm_digest = bilm_digest

    def get(self, key: bytes) -> Optional[torch.Tensor]:
        key = self._full_key(key)
        value = self._memory.get(key)
        if value is not None:
            self._memory.move_to_end(key)
        elif self._disk is not None:
            value = self._read_disk(self._disk, key)
            if value is not None:
                self._remember(key, value)
        self._in_use = self._in_use or value is not None
        return value

    def put(self, key: bytes, activations: torch.Tensor) -> None:
        key = self._full_key(key)
        value = activations.detach().to(device="cpu", dtype=self.dtype).contiguous()
        self._in_use = True
        self._remember(key, value)
        if self._disk is not None and self._disk_bytes < self.max_disk_bytes:
            self._write_disk(self._disk, key, value)

    def _full_key(self, key: bytes) -> bytes:
        if self._bilm_digest is None:
            raise RuntimeError("ActivationCache.bind(digest) must come before get/put")
        return self._bilm_digest + key

    def _remember(self, key: bytes, value: torch.Tensor) -> None:
        size = value.numel() * value.element_size()
        if size > self.max_memory_bytes:
            return
        if key in self._memory:
            return
        while self._memory and self._memory_bytes + size > self.max_memory_bytes:
            _, dropped = self._memory.popitem(last=False)
            self._memory_bytes -= dropped.numel() * dropped.element_size()
        self._memory[key] = value
        self._memory_bytes += size

    def _read_disk(self, disk: sqlite3.Connection, key: bytes) -> Optional[torch.Tensor]:
        try:
            row = disk.execute(
                "SELECT shape, value FROM activations WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                return None
            shape = tuple(int(n) for n in row[0].split(","))
            array = numpy.frombuffer(row[1], dtype=str(self.dtype).replace("torch.", ""))
            return torch.from_numpy(array.copy()).view(shape)
        except (sqlite3.Error, ValueError, RuntimeError, AttributeError) as error:
            raise self._failed("an entry is damaged", error) from error

    def _write_disk(self, disk: sqlite3.Connection, key: bytes, value: torch.Tensor) -> None:
        blob = value.numpy().tobytes()
        shape = ",".join(str(n) for n in value.shape)
        try:
            disk.execute("INSERT OR IGNORE INTO activations VALUES (?, ?, ?)", (key, shape, blob))
            disk.commit()
        except sqlite3.Error as error:
            raise self._failed("cannot write", error) from error
        self._disk_bytes += len(blob)

    def _failed(self, what: str, error: Exception) -> ConfigurationError:
        return ConfigurationError(
            f"activation_cache {self._disk_path}: {what} ({error}); remove the file to start "
            "the cache afresh, or give another directory"
        )

    def clear(self) -> None:
        self._memory.clear()
        self._memory_bytes = 0
