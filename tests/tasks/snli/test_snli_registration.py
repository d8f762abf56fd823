from allennlp.common.util import import_module_and_submodules
from allennlp.data import DatasetReader
from allennlp.models import Model
from allennlp.predictors import Predictor


def test_snli_names_register_beside_allennlp_models(allennlp_models):
    import_module_and_submodules("allennlp_models.pair_classification")
    import_module_and_submodules("elmo_plugin.allennlp.tasks.snli")
    assert DatasetReader.by_name("snli_jsonl").__name__ == "SnliJsonlReader"
    assert Model.by_name("esim_nli").__name__ == "EsimNli"
    assert Predictor.by_name("nli_pair").__name__ == "NliPairPredictor"
    # allennlp-models' own names still resolve to its classes
    assert Model.by_name("esim").__module__.startswith("allennlp_models")
    assert Predictor.by_name("textual_entailment").__module__.startswith("allennlp_models")
