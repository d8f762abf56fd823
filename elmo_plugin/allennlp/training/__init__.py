"""
Training pieces that both the biLM pretraining (`elmo_plugin.allennlp.lm`) and the tasks use: an
atomically writing checkpointer, the trainer that makes `--recover` exact (and the deprecated
callback it replaces), the callback that logs ELMo's layer weights, and a subclass of it that
clips sparse gradients. It imports nothing of `elmo_plugin` but the core (`elmo_plugin.elmo`).
"""

from elmo_plugin.allennlp.training.atomic_checkpointer import AtomicCheckpointer
from elmo_plugin.allennlp.training.exact_resume import ExactResume, ExactResumeTrainer
from elmo_plugin.allennlp.training.layer_weights_callback import ElmoLayerWeightsCallback
from elmo_plugin.allennlp.training.sparse_gradient_trainer import SparseGradientDescentTrainer

__all__ = [
    "AtomicCheckpointer",
    "ElmoLayerWeightsCallback",
    "ExactResume",
    "ExactResumeTrainer",
    "SparseGradientDescentTrainer",
]
