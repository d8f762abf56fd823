"""The task models that use ELMo: each subpackage is one task (reader, model, predictor)."""
