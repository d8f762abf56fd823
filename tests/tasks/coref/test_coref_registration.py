from typing import List, Tuple, Type

from allennlp.common import Registrable
from allennlp.common.util import import_module_and_submodules
from allennlp.data import DatasetReader
from allennlp.models import Model
from allennlp.predictors import Predictor
from allennlp.training.metrics import Metric


def test_coref_names_register_beside_allennlp_models(allennlp_models):
    import_module_and_submodules("allennlp_models.coref")
    import_module_and_submodules("elmo_plugin.allennlp.tasks.coref")
    assert DatasetReader.by_name("litbank_coref").__name__ == "LitbankCorefReader"
    assert Model.by_name("span_ranking_coref").__name__ == "SpanRankingCoref"
    assert Predictor.by_name("coref_clusters").__name__ == "CorefClustersPredictor"
    assert Metric.by_name("conll2012_coref_scores").__name__ == "Conll2012CorefScores"
    assert Metric.by_name("coref_mention_recall").__name__ == "CorefMentionRecall"
    # allennlp-models' names still resolve to their classes
    registered: List[Tuple[Type[Registrable], str]] = [
        (DatasetReader, "coref"),
        (DatasetReader, "preco"),
        (DatasetReader, "winobias"),
        (Model, "coref"),
        (Predictor, "coreference_resolution"),
        (Metric, "conll_coref_scores"),
        (Metric, "mention_recall"),
    ]
    for registry, name in registered:
        assert registry.by_name(name).__module__.startswith("allennlp_models"), name
    model_class = Model.by_name("span_ranking_coref")
    assert isinstance(model_class, type) and issubclass(model_class, Model)
    assert model_class.default_predictor == "coref_clusters"
