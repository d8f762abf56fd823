from allennlp.common.util import import_module_and_submodules
from allennlp.data import DatasetReader
from allennlp.models import Model
from allennlp.predictors import Predictor


def test_sentiment_names_register_beside_allennlp_models(allennlp_models):
    import_module_and_submodules("allennlp_models.classification")
    import_module_and_submodules("elmo_plugin.tasks.sentiment")
    assert DatasetReader.by_name("sst_trees").__name__ == "SstTreesReader"
    assert Model.by_name("bcn_classifier").__name__ == "BcnClassifier"
    assert Predictor.by_name("sentence_sentiment").__name__ == "SentenceSentimentPredictor"
    # allennlp-models' and AllenNLP's own names still resolve to their classes
    assert DatasetReader.by_name("sst_tokens").__module__.startswith("allennlp_models")
    assert Model.by_name("bcn").__module__.startswith("allennlp_models")
    assert Predictor.by_name("text_classifier").__module__.startswith("allennlp.")
