"""
Training pieces that both the biLM pretraining (`elmo_plugin.lm`) and the tasks use: an
atomically writing checkpointer, the trainer that makes `--recover` exact (and the deprecated
callback it replaces), and a subclass of it that clips sparse gradients. It imports nothing of
`elmo_plugin` but `elmo_plugin.elmo.atomic_files`.
"""

from elmo_plugin.training.atomic_checkpointer import AtomicCheckpointer
from elmo_plugin.training.exact_resume import ExactResume, ExactResumeTrainer
from elmo_plugin.training.sparse_gradient_trainer import SparseGradientDescentTrainer

__all__ = [
    "AtomicCheckpointer",
    "ExactResume",
    "ExactResumeTrainer",
    "SparseGradientDescentTrainer",
]
