from elmo_plugin.allennlp.lm.modules.sampled_softmax import SampledSoftmax, log_uniform_candidates

__all__ = ["SampledSoftmax", "log_uniform_candidates"]
