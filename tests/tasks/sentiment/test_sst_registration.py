import pytest
from allennlp.common.util import import_module_and_submodules
from allennlp.data import DatasetReader
from allennlp.models import Model
from allennlp.predictors import Predictor

from tests.tasks.sentiment.sst_small_overrides import FIXTURES


def test_sentiment_names_register_beside_allennlp_models(allennlp_models):
    import_module_and_submodules("allennlp_models.classification")
    import_module_and_submodules("elmo_plugin.allennlp.tasks.sentiment")
    assert DatasetReader.by_name("sst_trees").__name__ == "SstTreesReader"
    assert Model.by_name("bcn_classifier").__name__ == "BcnClassifier"
    assert Predictor.by_name("sentence_sentiment").__name__ == "SentenceSentimentPredictor"
    # allennlp-models' and AllenNLP's own names still resolve to their classes
    assert DatasetReader.by_name("sst_tokens").__module__.startswith("allennlp_models")
    assert Model.by_name("bcn").__module__.startswith("allennlp_models")
    assert Predictor.by_name("text_classifier").__module__.startswith("allennlp.")


@pytest.mark.parametrize("use_subtrees", [False, True])
@pytest.mark.parametrize("granularity", ["5-class", "3-class", "2-class"])
def test_the_instances_are_those_of_sst_tokens(allennlp_models, use_subtrees, granularity):
    from allennlp_models.classification.dataset_readers.stanford_sentiment_tree_bank import (
        StanfordSentimentTreeBankDatasetReader,
    )

    from elmo_plugin.allennlp.tasks.sentiment.dataset_readers import SstTreesReader

    def words_and_labels(reader):
        return [
            ([token.text for token in i["tokens"].tokens], i["label"].label)
            for i in reader.read(str(FIXTURES / "train.txt"))
        ]

    settings = {"use_subtrees": use_subtrees, "granularity": granularity}
    ours = words_and_labels(SstTreesReader(unescape_ptb=False, **settings))
    assert ours == words_and_labels(StanfordSentimentTreeBankDatasetReader(**settings))
    assert ours
