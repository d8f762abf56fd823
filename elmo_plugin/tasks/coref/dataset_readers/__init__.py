"""Reading CoNLL-2012-style coreference files."""
