from elmo_plugin.allennlp.tasks.srl.metrics.dependency_srl_f1 import DependencySrlF1

__all__ = ["DependencySrlF1"]
