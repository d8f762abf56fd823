from typing import Dict

from allennlp.training.callbacks.callback import TrainerCallback
from overrides import overrides

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
        """
        Replaces `trainer.model.get_metrics` with a function that returns the model's metrics
        and, for names the model does not report, the layer weights. It is set on the model
        object (an instance attribute over the class's method), for as long as that object
        lives: `allennlp train`'s evaluation of the test set after training reports them too.
        Nothing of it is saved: a model loaded from the archive reports what its class does.
        With `--recover` it wraps the model once again, in the new process.

        Why wrap rather than use a public hook: AllenNLP's trainer (2.10.1) takes every metric
        it reports from `model.get_metrics`, through `training_util.get_metrics`: the progress
        bar and the metrics each `on_batch` receives, each epoch's `training_*` and
        `validation_*` metrics, `metrics_epoch_<n>.json`, `metrics.json`, the console table and
        the `best_validation_*` copies of the best epoch. The hooks that see metrics come too
        late for some of these: `on_epoch` runs after `metrics_epoch_<n>.json` is written and
        the `best_validation_*` metrics are copied (gradient_descent_trainer.py lines 855-877),
        so weights added there would be missing from them. Wrapping `get_metrics` puts the
        weights everywhere the model's own metrics go, as a model that reports them itself
        (ours do) would.
        """
        super().on_start(trainer, is_primary, **kwargs)
        model = trainer.model
        model_metrics = model.get_metrics

        def get_metrics(reset: bool = False) -> Dict[str, float]:
            metrics = model_metrics(reset)
            for name, value in elmo_layer_weight_metrics(model).items():
                metrics.setdefault(name, value)
            return metrics

        model.get_metrics = get_metrics
