"""
Training pieces that both the biLM pretraining (`elmo_plugin.lm`) and the tasks use: an
atomically writing checkpointer, the callback that makes `--recover` exact, and a trainer
that clips sparse gradients. It imports nothing of `elmo_plugin` but
`elmo_plugin.elmo.atomic_files`.
"""

from elmo_plugin.training.atomic_checkpointer import AtomicCheckpointer
from elmo_plugin.training.exact_resume import ExactResume
from elmo_plugin.training.sparse_gradient_trainer import SparseGradientDescentTrainer

__all__ = ["AtomicCheckpointer", "ExactResume", "SparseGradientDescentTrainer"]
