from elmo_plugin.allennlp.tasks.snli.dataset_readers.snli_jsonl import SnliJsonlReader

__all__ = ["SnliJsonlReader"]
