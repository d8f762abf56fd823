import threading
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, cast

import numpy
import torch


def row_keys(type_ids: torch.Tensor) -> List[bytes]:
    """One hashable key a row of `(num_types, 50)` character ids: its int16 bytes, read from the
    device in one copy and split by numpy, not by a Python step a tensor row."""
    rows = numpy.ascontiguousarray(type_ids.to(torch.int16).cpu().numpy())
    whole_rows = rows.view(numpy.dtype((numpy.void, rows.shape[1] * rows.itemsize))).ravel()
    # A void scalar of a structure-free dtype converts to `bytes`, which numpy's stubs do not say.
    return cast(List[bytes], whole_rows.tolist())


class TokenTypeCache:
    """
    The character CNN's encodings of the token types (rows of character ids) a frozen encoder
    has seen, at most `capacity` of them, the oldest dropped first: one tensor of encodings on
    the encoder's device, and a dictionary on the host from a row's bytes to its slot there.

    A batch costs one copy of its distinct rows to the host, a dictionary lookup a row, the
    encoding of the rows not found, and a few indexing operations on the device, however many
    rows it has. Keeping each encoding as its own tensor cost a tensor operation a row, to
    store it and to stack it back: thousands of small operations a batch, each microseconds of
    host time that a GPU waits on. (On the CPU too the one tensor is faster from an empty
    cache, and as fast once every type is remembered, most of that time `torch.unique`;
    docs/performance.md has the figures.)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.clear()

    def clear(self) -> None:
        with self._lock:
            self._slots: "OrderedDict[bytes, int]" = OrderedDict()
            self._encodings: Optional[torch.Tensor] = None

    def __len__(self) -> int:
        return len(self._slots)

    def __getstate__(self) -> Dict[str, Any]:
        # A lock neither pickles nor copies (`copy.deepcopy` of a model); a copy gets its own.
        return {name: value for name, value in self.__dict__.items() if name != "_lock"}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def encode(
        self,
        type_ids: torch.Tensor,
        encode: Callable[[torch.Tensor], torch.Tensor],
        capacity: int,
    ) -> torch.Tensor:
        """The encodings of the distinct rows `type_ids`, `encode` run only on the rows not
        remembered, which are then remembered. One call at a time: threads sharing a model
        (a web server's, a pool's) would otherwise read slots that another call is giving to
        other rows, or a tensor it is replacing."""
        if not len(type_ids):
            return encode(type_ids)
        keys = row_keys(type_ids)
        with self._lock:
            return self._encode_locked(type_ids, keys, encode, capacity)

    def _encode_locked(
        self,
        type_ids: torch.Tensor,
        keys: List[bytes],
        encode: Callable[[torch.Tensor], torch.Tensor],
        capacity: int,
    ) -> torch.Tensor:
        slots = [self._slots.get(key, -1) for key in keys]
        missing = [row for row, slot in enumerate(slots) if slot < 0]
        device = type_ids.device
        if not missing:
            return self._stored()[torch.tensor(slots, device=device)]
        encoded = encode(type_ids[torch.tensor(missing, device=device)]).detach()
        if len(missing) == len(keys):
            result = encoded
        else:
            found = [row for row, slot in enumerate(slots) if slot >= 0]
            result = encoded.new_empty(len(keys), encoded.size(1))
            result[torch.tensor(found, device=device)] = self._stored()[
                torch.tensor([slots[row] for row in found], device=device)
            ]
            result[torch.tensor(missing, device=device)] = encoded
        # After the gathers above (in stream order on a GPU), so that the slots they read may
        # be given to new rows.
        self._remember([keys[row] for row in missing], encoded, capacity)
        return result

    def _stored(self) -> torch.Tensor:
        assert self._encodings is not None, "a slot was found in an empty cache"
        return self._encodings

    def _remember(self, keys: List[bytes], encoded: torch.Tensor, capacity: int) -> None:
        if len(keys) > capacity:
            keys, encoded = keys[-capacity:], encoded[-capacity:]
        slots = []
        for key in keys:
            if len(self._slots) < capacity:
                slot = len(self._slots)
            else:
                _, slot = self._slots.popitem(last=False)
            self._slots[key] = slot
            slots.append(slot)
        self._make_room(max(slots) + 1, encoded, capacity)
        stored = self._stored()
        stored[torch.tensor(slots, device=stored.device)] = encoded

    def _make_room(self, rows: int, like: torch.Tensor, capacity: int) -> None:
        """At least `rows` slots, grown by doubling: a small cache stays small."""
        current = 0 if self._encodings is None else self._encodings.size(0)
        if rows <= current:
            return
        grown = like.new_empty(max(rows, min(capacity, max(2 * current, 1024))), like.size(1))
        if self._encodings is not None:
            grown[:current] = self._encodings
        self._encodings = grown


class CachingTokenEncoder(torch.nn.Module):
    """
    A character encoder that remembers its token types' encodings in a `TokenTypeCache`, for
    both the bilm-tf and the ELMoForManyLangs encoders. The cache is used only where no
    gradient can change the weights (frozen, or no grad), and forgotten whenever what it holds
    may be stale: a change of mode or weights, or a move to another device or dtype.
    Subclasses set `cache_size`, `padding_id` and `widest_filter`.
    """

    cache_size: int
    padding_id: int
    widest_filter: int

    def __init__(self) -> None:
        super().__init__()
        self._type_cache = TokenTypeCache()

    def cached_encoding(
        self, type_ids: torch.Tensor, encode: Callable[[torch.Tensor], torch.Tensor]
    ) -> torch.Tensor:
        """`encode(type_ids)`, through the cache where it is usable."""
        if not self.uses_cache():
            return encode(type_ids)
        return self._type_cache.encode(type_ids, encode, self.cache_size)

    def trim_padding(self, type_ids: torch.Tensor) -> torch.Tensor:
        """Drops the character positions that only padding reaches, keeping one all-padding
        window of the widest filter: every window made only of padding gives the same features,
        so max-pooling over fewer of them changes nothing, and most words are far shorter than
        the rows."""
        used = (type_ids != self.padding_id).any(dim=0).nonzero()
        length = int(used.max()) + 1 if used.numel() else 0
        return type_ids[:, : min(type_ids.size(1), length + self.widest_filter)]

    def uses_cache(self) -> bool:
        """Whether a forward pass now goes through the cache: frozen, or no gradients."""
        if self.cache_size <= 0:
            return False
        frozen = not any(p.requires_grad for p in self.parameters())
        return frozen or not torch.is_grad_enabled()

    def clear_cache(self) -> None:
        self._type_cache.clear()

    def train(self, mode: bool = True):
        # Weights may change in training; anything remembered under other weights is stale.
        self.clear_cache()
        return super().train(mode)

    def _load_from_state_dict(self, *args, **kwargs) -> None:
        self.clear_cache()
        super()._load_from_state_dict(*args, **kwargs)

    def _apply(self, fn, *args, **kwargs):
        # A move to another device or dtype (`.to`, `.cuda`, `.half`) leaves the remembered
        # encodings behind on the old one.
        self.clear_cache()
        return super()._apply(fn, *args, **kwargs)
