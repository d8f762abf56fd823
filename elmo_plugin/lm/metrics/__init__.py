from elmo_plugin.lm.metrics.token_perplexity import TokenPerplexity

__all__ = ["TokenPerplexity"]
