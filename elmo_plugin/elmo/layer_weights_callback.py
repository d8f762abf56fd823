from typing import Dict

from allennlp.training.callbacks.callback import TrainerCallback
from overrides import overrides

from elmo_plugin.elmo.layer_weights import elmo_layer_weight_metrics


@TrainerCallback.register("elmo_layer_weights")
class ElmoLayerWeightsCallback(TrainerCallback):
    """
    Adds the learned ELMo layer weights (`elmo_layer_weight_metrics`) to the metrics of any
    model that holds an `Elmo`, e.g. AllenNLP's `basic_classifier` with our `elmo` embedder, so
    that they are logged each epoch as our own models log them. Metrics the model already
    reports keep its values.

    Registered as a `TrainerCallback` with name "elmo_layer_weights".
    """

    @overrides
    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        super().on_start(trainer, is_primary, **kwargs)
        model = trainer.model
        model_metrics = model.get_metrics

        def get_metrics(reset: bool = False) -> Dict[str, float]:
            metrics = model_metrics(reset)
            for name, value in elmo_layer_weight_metrics(model).items():
                metrics.setdefault(name, value)
            return metrics

        model.get_metrics = get_metrics
