from typing import Any, Dict, List, Optional, Tuple, cast

import torch

from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.modules.activation_cache import ActivationCache


class CachedBiLm:
    """
    A frozen, stateless biLM behind its `ActivationCache`: called as the biLM is, with the
    same outputs, it runs the biLM only on the sentences the cache has not seen, so that a
    task model's epochs after the first skip the biLM.

    Not a module: the biLM stays where its owner registered it (`Elmo._bilm`, whose parameter
    names trained archives hold), and a state dict loaded into it makes it another biLM as far
    as the cache is concerned.

    # Parameters

    bilm : `ElmoBiLm`
        Frozen (no parameter requires a gradient) and stateless.
    cache : `ActivationCache`
    """

    def __init__(self, bilm: ElmoBiLm, cache: ActivationCache) -> None:
        if bilm.stateful or any(parameter.requires_grad for parameter in bilm.parameters()):
            raise ConfigurationError(
                "activation_cache needs a frozen, stateless biLM (requires_grad: false, "
                "stateful: false); to fine-tune the biLM or carry states, drop the cache too "
                "(the elmo block's embedder(requires_grad=true), or the override "
                "'<path to the elmo module>.activation_cache': null)"
            )
        self.bilm = bilm
        self._cache = cache
        bilm.activation_cache_described = cache.described()
        self._digest: Optional[bytes] = None
        bilm._register_load_state_dict_pre_hook(self._forget_digest)

    def _forget_digest(self, *args: Any) -> None:
        self._digest = None

    def __call__(self, character_ids: torch.Tensor) -> Dict[str, Any]:
        """
        # Parameters

        character_ids : `torch.Tensor`
            `(batch_size, num_tokens, 50)` ids from the `elmo_characters` indexer.

        # Returns

        As `ElmoBiLm.forward`: `{"activations": [(batch_size, num_tokens + 2, dim)] * (L + 1),
        "mask": (batch_size, num_tokens + 2)}`.
        """
        if self._digest is None:
            self._digest = self.bilm.digest()
        self._cache.bind(self._digest)
        lengths = (character_ids > 0).any(dim=-1).sum(dim=1).tolist()
        keys = [
            character_ids[row, :length].to(torch.int16).cpu().numpy().tobytes()
            for row, length in enumerate(lengths)
        ]
        found = [self._checked(self._cache.get(key), length) for key, length in zip(keys, lengths)]
        missing = [row for row, value in enumerate(found) if value is None]
        if missing:
            self._compute(character_ids, missing, lengths, keys, found)
        # Every row is found now: from the cache or just computed.
        activations, mask = self._padded(cast(List[torch.Tensor], found), lengths, character_ids)
        return {"activations": activations, "mask": mask}

    def _compute(
        self,
        character_ids: torch.Tensor,
        missing: List[int],
        lengths: List[int],
        keys: List[bytes],
        found: List[Optional[torch.Tensor]],
    ) -> None:
        """Runs the biLM on the `missing` rows, into `found` and the cache."""
        longest = max(lengths[row] for row in missing)
        computed = self.bilm(character_ids[missing, :longest])
        stacked = torch.stack(computed["activations"])
        for i, row in enumerate(missing):
            value = stacked[:, i, : lengths[row] + 2]
            found[row] = value
            self._cache.put(keys[row], value)

    def _checked(self, value: Optional[torch.Tensor], length: int) -> Optional[torch.Tensor]:
        expected = (self.bilm.num_layers, length + 2, self.bilm.get_output_dim())
        if value is not None and tuple(value.shape) != expected:
            raise ConfigurationError(
                f"an activation cache entry has shape {tuple(value.shape)} but this biLM gives "
                f"{expected}; is the cache corrupt? delete its directory to start afresh"
            )
        return value

    def _padded(
        self, per_sentence: List[torch.Tensor], lengths: List[int], like: torch.Tensor
    ) -> Tuple[List[torch.Tensor], torch.Tensor]:
        batch_size, num_tokens = like.shape[:2]
        padded = torch.zeros(
            self.bilm.num_layers,
            batch_size,
            num_tokens + 2,
            self.bilm.get_output_dim(),
            device=like.device,
        )
        for row, value in enumerate(per_sentence):
            padded[:, row, : value.size(1)] = value.to(device=like.device, dtype=padded.dtype)
        positions = torch.arange(num_tokens + 2, device=like.device)
        mask = positions.unsqueeze(0) < (torch.tensor(lengths, device=like.device) + 2).unsqueeze(1)
        return list(padded.unbind(0)), mask
