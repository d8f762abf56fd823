from elmo_plugin.allennlp.tasks.ner.models.bilstm_crf_tagger import BiLstmCrfTagger

__all__ = ["BiLstmCrfTagger"]
