from elmo_plugin.allennlp.lm.metrics.token_perplexity import TokenPerplexity

__all__ = ["TokenPerplexity"]
