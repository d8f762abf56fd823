from elmo_plugin.lm.modules.sampled_softmax import SampledSoftmax, log_uniform_candidates

__all__ = ["SampledSoftmax", "log_uniform_candidates"]
