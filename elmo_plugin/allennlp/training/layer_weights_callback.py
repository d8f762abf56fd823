from allennlp.training.callbacks.callback import TrainerCallback
from overrides import overrides

from elmo_plugin.allennlp.framework import add_metrics
from elmo_plugin.elmo.modules.layer_weights import elmo_layer_weight_metrics


@TrainerCallback.register("elmo_layer_weights")
class ElmoLayerWeightsCallback(TrainerCallback):
    """
    Adds the learned ELMo layer weights (`elmo_layer_weight_metrics`) to the metrics of any
    model that holds an `Elmo`, e.g. AllenNLP's `basic_classifier` with our `elmo` embedder, so
    that they are logged each epoch as our own models log them. Metrics the model already
    reports keep its values.

    It does so by wrapping the model's `get_metrics` when training starts (`on_start`, below):
    the only change it makes, and to the model, not the trainer.

    Registered as a `TrainerCallback` with name "elmo_layer_weights".
    """

    @overrides
    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        """Adds the layer weights to `trainer.model`'s metrics (`framework.add_metrics`: why a
        wrap rather than a hook is said there). With `--recover` it wraps the model once again,
        in the new process; nothing of it is saved in the archive."""
        super().on_start(trainer, is_primary, **kwargs)
        add_metrics(trainer.model, elmo_layer_weight_metrics)
