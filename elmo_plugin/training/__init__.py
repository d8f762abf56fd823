"""
Training pieces that both the biLM pretraining (`elmo_plugin.lm`) and the tasks use: an
atomically writing checkpointer and the callback that makes `--recover` exact. It imports
nothing of `elmo_plugin` but `elmo_plugin.elmo.atomic_files`.
"""

from elmo_plugin.training.atomic_checkpointer import AtomicCheckpointer
from elmo_plugin.training.exact_resume import ExactResume

__all__ = ["AtomicCheckpointer", "ExactResume"]
