"""
SHA-256 digests of what the shipped biLM gives on fixed sentences, to check a change leaves
outputs bit for bit as they were: run it on two checkouts and compare the lines.

    PYTHONPATH=<checkout> python scripts/output_digests.py

Each line: the path (packed or fused LSTM), the compute dtype, and the digests of the biLM's
activations, of an `Elmo` mix (with its gradient for the weights) and of `ElmoEmbedder`'s layers.
It reads the execution switches of either layout (`Execution` now, attributes before).
"""

import hashlib
import sys

import torch

import elmo_plugin
from elmo_plugin import ElmoEmbedder
from elmo_plugin.elmo import Elmo, batch_to_ids

SHIPPED = "elmo_plugin://pretrained/elmo_wikipedia_512x128"
SENTENCES = [
    "The quick brown fox jumps over the lazy dog .".split(),
    "ELMo 's layers , mixed .".split(),
    ["Supercalifragilisticexpialidocious" * 2],
    "A".split(),
]


def _digest(*tensors: torch.Tensor) -> str:
    hashed = hashlib.sha256()
    for tensor in tensors:
        hashed.update(tensor.detach().float().contiguous().numpy().tobytes())
    return hashed.hexdigest()[:16]


def _set_fused(bilm, fused: bool) -> None:
    if hasattr(bilm, "set_execution"):
        from elmo_plugin.elmo import Execution

        bilm.set_execution(Execution(fused=fused))
    else:
        bilm.lstm.fused = fused


def main() -> None:
    print(f"# elmo_plugin from {elmo_plugin.__file__}", file=sys.stderr)
    ids = batch_to_ids(SENTENCES)
    for fused in (False, True):
        for dtype in ("float32", "bfloat16"):
            torch.manual_seed(0)
            elmo = Elmo(
                f"{SHIPPED}/options.json",
                f"{SHIPPED}/weights.hdf5",
                1,
                dropout=0.0,
                compute_dtype=dtype,
                requires_grad=True,
            )
            _set_fused(elmo.bilm, fused)
            activations = elmo.bilm(ids)["activations"]
            mixed = elmo(ids)["elmo_representations"][0]
            mixed.pow(2).sum().backward()
            gradients = [p.grad for p in elmo.bilm.parameters() if p.grad is not None]
            embedder = ElmoEmbedder()
            _set_fused(embedder.elmo_bilm, fused)
            embedder.elmo_bilm.set_compute_dtype(elmo.bilm.compute_dtype)
            layers = [torch.from_numpy(v) for v in embedder.embed_batch(SENTENCES)]
            print(
                f"{'fused' if fused else 'packed'} {dtype}: activations {_digest(*activations)}"
                f" mix {_digest(mixed)} gradients {_digest(*gradients)}"
                f" embedder {_digest(*layers)}"
            )


if __name__ == "__main__":
    main()
