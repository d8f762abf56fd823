"""A run killed anywhere and resumed with `allennlp train --recover` ends bit-identical (weights
and metrics) to an uninterrupted run, with dropout and sampled softmax on: the shipped configs'
trainers (`exact_resume_gradient_descent`, and `sparse_gradient_descent` built on it), with
`trainer.callbacks` overridden, as these tests do (the deprecated `exact_resume` callback was
lost that way)."""

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Tuple

from allennlp.common import params
import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.training import Trainer
from allennlp.training.callbacks import TrainerCallback

import elmo_plugin.allennlp.tasks.ner  # noqa: F401
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.allennlp.training import ExactResumeTrainer
from tests.lm.conftest import TINY_BILM
from tests.paths import TRAINING_CONFIGS
from tests.tasks.ner.ner_small_overrides import SMALL as NER_SMALL
from tests.tasks.training_helpers import FIXTURE_BILM, bilm_files
from tests.training.batch_callbacks import TrainedBatchCallback, interrupt_once_at

SENTENCES = "fixtures/lm/sentences.txt"


@TrainerCallback.register("test_interrupt_after")
class InterruptAfter(TrainedBatchCallback):
    """Logs each trained batch (epoch, number, digests of its data, of its loss and of the
    weights after it) and raises KeyboardInterrupt (what Ctrl-C raises) after the
    `interrupt_after`-th of the whole run, once (the `marker` file remembers it across the
    resumed run); 0 never interrupts."""

    def __init__(
        self, serialization_dir: str, log: str, interrupt_after: int = 0, marker: str = ""
    ) -> None:
        super().__init__(serialization_dir)
        self.log, self.interrupt_after, self.marker = log, interrupt_after, marker

    def on_trained_batch(self, trainer, batch_inputs, batch_outputs, epoch, batch_number) -> None:
        data = sum(float(t.float().sum()) for t in _tensors(batch_inputs))
        weights = sum(float(p.detach().double().sum()) for p in trainer.model.parameters())
        with open(self.log, "a") as log:
            loss = float(batch_outputs[0]["loss"].detach())
            log.write(f"{epoch} {batch_number} {data} {loss!r} {weights!r}\n")
        interrupt_once_at(self.log, self.interrupt_after, self.marker)


def _tensors(value: Any) -> List[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [t for v in value for t in _tensors(v)] if isinstance(value, (list, tuple)) else []


BILM_TINY = (
    "training_configs/bilm/bilm_tiny.jsonnet",
    {
        "train_data_path": SENTENCES,
        "validation_data_path": SENTENCES,
        "vocabulary.corpus": SENTENCES,
        "model.bilm": TINY_BILM,
        "model.num_samples": 16,  # sampled softmax, as shipped (dropout 0.1 kept)
        "data_loader.batch_sampler.batch_size": 4,  # 10 batches an epoch
        "trainer.num_epochs": 2,
        "trainer.checkpointer.save_every_num_batches": 3,
    },
)
NER_ELMO = (
    "training_configs/ner/ner_elmo.jsonnet",
    {
        **NER_SMALL,
        **bilm_files("model.text_field_embedder.token_embedders.elmo", FIXTURE_BILM),
        "trainer.num_epochs": 2,
        "data_loader.batch_sampler.batch_size": 4,  # 6 batches an epoch; dropout 0.5 kept
        "trainer.checkpointer.save_every_num_batches": 2,
    },
)
# ELMo's caches (of character-CNN outputs by token type, of biLM activations by sentence) hold
# values computed in the batches of the interrupted run, which the resumed one computes afresh in
# other batches: equal to float rounding only. Without them a resumed run is bit-identical.
ELMO = "model.text_field_embedder.token_embedders.elmo"
NER_ELMO_UNCACHED = (
    NER_ELMO[0],
    {**NER_ELMO[1], f"{ELMO}.activation_cache": None, f"{ELMO}.char_cnn_cache_size": 0},
)


def _train(
    config: Tuple[str, Dict],
    directory: Path,
    interrupt_after: int = 0,
    recover: bool = False,
    exact_resume: bool = True,
    callbacks: Tuple[Dict, ...] = (),
) -> List[str]:
    """Trains the config with the logging (and interrupting) callback after `callbacks`, with the
    config's trainer, or AllenNLP's `gradient_descent` when not `exact_resume`."""
    path, overrides = config
    interrupt = {
        "type": "test_interrupt_after",
        "log": str(directory) + ".log",
        "interrupt_after": interrupt_after,
        "marker": str(directory) + ".marker",
    }
    overrides = {**overrides, "trainer.callbacks": [*callbacks, interrupt]}
    if not exact_resume:
        overrides["trainer.type"] = "gradient_descent"
    train_model_from_file(path, str(directory), overrides=json.dumps(overrides), recover=recover)
    return open(str(directory) + ".log").read().splitlines()


def _interrupted_and_resumed(config, directory: Path, interrupt_after: int, **kwargs) -> List[str]:
    with pytest.raises(KeyboardInterrupt):
        _train(config, directory, interrupt_after, **kwargs)
    return _train(config, directory, interrupt_after, recover=True, **kwargs)


def _weights(directory: Path) -> Dict[str, Dict[str, torch.Tensor]]:
    last = max(directory.glob("model_state_e*_b0.th"), key=lambda p: int(p.name.split("_")[2][1:]))
    return {name: torch.load(directory / name) for name in ("best.th", last.name)}


def _metrics(directory: Path) -> Dict[str, Dict[str, float]]:
    """The metrics of each epoch (`metrics_epoch_*.json`) and of the run (`metrics.json`),
    less times and memory."""
    files = sorted(directory.glob("metrics_epoch_*.json")) + [directory / "metrics.json"]
    return {
        file.name: {
            k: v
            for k, v in json.loads(file.read_text()).items()
            if not (k.endswith("duration") or "memory" in k)
        }
        for file in files
    }


def _training_loss(log: List[str], epoch: int, batches: int) -> float:
    """AllenNLP's epoch `training_loss`, from the logged losses: their sum over `batches`."""
    return sum(float(line.split()[3]) for line in log if int(line.split()[0]) == epoch) / batches


@pytest.fixture(scope="module")
def straight_runs(tmp_path_factory):
    runs = {}
    for name, config in (
        ("bilm_tiny", BILM_TINY),
        ("ner_elmo", NER_ELMO_UNCACHED),
        ("ner_elmo_cached", NER_ELMO),
    ):
        directory = tmp_path_factory.mktemp(name) / "straight"
        runs[name] = (_train(config, directory), _weights(directory), _metrics(directory))
    return runs


@pytest.mark.parametrize(
    "name, config, interrupt_after, resumed_from",
    [
        # Killed one batch after a mid-epoch checkpoint: resumes at the checkpoint.
        ("bilm_tiny", BILM_TINY, 14, 13),
        # Killed in the middle of epoch 2 before its first checkpoint: resumes at epoch 1's end.
        ("bilm_tiny", BILM_TINY, 12, 10),
        # Killed in the middle of the first epoch, after its checkpoint.
        ("bilm_tiny", BILM_TINY, 5, 3),
        ("ner_elmo", NER_ELMO_UNCACHED, 9, 8),
        ("ner_elmo", NER_ELMO_UNCACHED, 7, 6),
    ],
)
def test_killed_and_resumed_ends_bit_identical_to_the_uninterrupted_run(
    tmp_path, straight_runs, name, config, interrupt_after, resumed_from
):
    log = _interrupted_and_resumed(config, tmp_path / "run", interrupt_after)
    _assert_ends_as_the_straight_run(
        straight_runs[name], log, tmp_path / "run", interrupt_after, resumed_from
    )


def _assert_ends_as_the_straight_run(
    straight,
    log: List[str],
    directory: Path,
    interrupt_after: int,
    resumed_from: int,
    check_training_loss: bool = True,
) -> None:
    """The run in `directory`, killed after batch `interrupt_after` and resumed at batch
    `resumed_from` (its `log`), ended as `straight` (log, weights, metrics) did."""
    straight_log, straight_weights, straight_metrics = straight
    # Before the kill and after the resume, the very batches (data and loss) of the straight run.
    assert log[:interrupt_after] == straight_log[:interrupt_after]
    assert log[interrupt_after:] == straight_log[resumed_from:]
    weights = _weights(directory)
    assert weights.keys() == straight_weights.keys()
    for file, state in straight_weights.items():
        for parameter, value in state.items():
            assert torch.equal(value, weights[file][parameter]), (file, parameter)
    # Every validation metric, the best epoch and its metrics, exactly; the training metrics
    # too, except those of an epoch resumed in its middle: AllenNLP's trainer keeps the epoch's
    # running loss and the model's metric counts in memory only, so there they cover the batches
    # trained after the resume (the loss summed over those, divided by all the epoch's batches).
    metrics = _metrics(directory)
    assert metrics.keys() == straight_metrics.keys()
    batches = int(straight_log[-1].split()[1])
    resumed_epoch = resumed_from // batches if resumed_from % batches else None
    for file, expected in straight_metrics.items():
        epoch = expected["epoch"]
        for key, value in expected.items():
            if key.startswith("training_") and epoch == resumed_epoch:
                continue
            assert metrics[file][key] == value, (file, key)
        if epoch == resumed_epoch and check_training_loss:
            assert expected["training_loss"] == pytest.approx(
                _training_loss(straight_log, epoch, batches), rel=1e-9
            )
            resumed_log = log[interrupt_after:]
            assert metrics[file]["training_loss"] == pytest.approx(
                _training_loss(resumed_log, epoch, batches), rel=1e-9
            )


def test_without_exact_resume_the_resumed_run_ends_elsewhere(tmp_path, straight_runs):
    """What AllenNLP's trainer alone gives (why the shipped configs use ours)."""
    straight_log, straight_weights, straight_metrics = straight_runs["bilm_tiny"]
    log = _interrupted_and_resumed(BILM_TINY, tmp_path / "run", 14, exact_resume=False)
    assert [line.split()[:3] for line in log[14:]] == [
        line.split()[:3] for line in straight_log[13:]
    ]
    assert log[14:] != straight_log[13:]  # the same data, other dropout masks and samples
    assert _metrics(tmp_path / "run")["metrics.json"]["best_validation_perplexity"] != (
        straight_metrics["metrics.json"]["best_validation_perplexity"]
    )


def test_with_elmo_caches_a_resumed_run_ends_equal_to_float_rounding(tmp_path, straight_runs):
    straight_log, straight_weights, straight_metrics = straight_runs["ner_elmo_cached"]
    log = _interrupted_and_resumed(NER_ELMO, tmp_path / "run", 9)
    assert [line.split()[:3] for line in log[9:]] == [line.split()[:3] for line in straight_log[8:]]
    weights = _weights(tmp_path / "run")
    for file, state in straight_weights.items():
        for parameter, value in state.items():
            assert torch.allclose(value, weights[file][parameter], rtol=0, atol=1e-6), (
                file,
                parameter,
            )
    expected = straight_metrics["metrics.json"]
    metrics = _metrics(tmp_path / "run")["metrics.json"]
    for key in (
        "best_epoch",
        "best_validation_f1-measure-overall",
        "validation_f1-measure-overall",
    ):
        assert metrics[key] == expected[key], key
    assert metrics["validation_loss"] == pytest.approx(expected["validation_loss"], rel=1e-5)


def test_a_run_not_resumed_trains_as_allennlps_trainer_does(tmp_path, straight_runs):
    """What the trainer adds to a run that is not resumed changes nothing in it (so runs
    trained with AllenNLP's `gradient_descent` and the deprecated callback stand)."""
    straight_log, straight_weights, straight_metrics = straight_runs["bilm_tiny"]
    assert _train(BILM_TINY, tmp_path / "run", exact_resume=False) == straight_log
    weights = _weights(tmp_path / "run")
    for file, state in straight_weights.items():
        for parameter, value in state.items():
            assert torch.equal(value, weights[file][parameter]), (file, parameter)
    assert _metrics(tmp_path / "run") == straight_metrics


BILM_TINY_SPARSE = (
    BILM_TINY[0],
    {
        **BILM_TINY[1],
        # The paper recipe's trainer, sparse softmax gradient and optimizer.
        "trainer.type": "sparse_gradient_descent",
        "model.sparse_softmax_gradient": True,
        "trainer.optimizer": {"type": "adagrad", "lr": 0.2, "initial_accumulator_value": 1.0},
    },
)


def test_the_sparse_gradient_trainer_resumes_exactly_too(tmp_path):
    straight = _train(BILM_TINY_SPARSE, tmp_path / "straight")
    log = _interrupted_and_resumed(BILM_TINY_SPARSE, tmp_path / "run", 14)
    straight_run = (straight, _weights(tmp_path / "straight"), _metrics(tmp_path / "straight"))
    _assert_ends_as_the_straight_run(straight_run, log, tmp_path / "run", 14, 13)


def test_with_gradient_accumulation_a_resumed_run_ends_bit_identical_too(tmp_path):
    # Two batches a step, 5 steps an epoch, a checkpoint every 2 steps: killed after the 8th
    # step, resumed at the checkpoint after the 7th (the first batch after it is the 15th).
    # The data loader shuffles every 8 sentences (2 batches) as it reaches them, so the
    # states must be set back right before the 15th batch, not at the 8th.
    config = (
        BILM_TINY[0],
        {
            **BILM_TINY[1],
            "trainer.num_gradient_accumulation_steps": 2,
            "trainer.checkpointer.save_every_num_batches": 2,
            "data_loader.max_instances_in_memory": 8,
        },
    )
    straight = _train(config, tmp_path / "straight")
    assert len(straight) == 10
    log = _interrupted_and_resumed(config, tmp_path / "run", 8)
    straight_run = (straight, _weights(tmp_path / "straight"), _metrics(tmp_path / "straight"))
    # (The log holds each step's first batch's loss, not AllenNLP's training loss of a step.)
    _assert_ends_as_the_straight_run(
        straight_run, log, tmp_path / "run", 8, 7, check_training_loss=False
    )


def test_every_shipped_config_trains_with_an_exact_resume_trainer():
    configs = sorted(TRAINING_CONFIGS.rglob("*.jsonnet"))
    assert len(configs) > 20
    for config in configs:
        trainer = json.loads(params.evaluate_file(str(config)))["trainer"]
        trainer_class, _ = Trainer.resolve_class_name(
            trainer.get("type", Trainer.default_implementation)
        )
        assert issubclass(trainer_class, ExactResumeTrainer), config
        assert "exact_resume" not in [
            callback["type"] for callback in trainer.get("callbacks", [])
        ], config


def test_the_deprecated_callback_stops_another_trainer_before_it_trains(tmp_path):
    with pytest.raises(ConfigurationError, match='"type": "exact_resume_gradient_descent"'):
        _train(
            BILM_TINY, tmp_path / "run", exact_resume=False, callbacks=({"type": "exact_resume"},)
        )
    assert not os.path.exists(str(tmp_path / "run") + ".log")  # not one batch trained


def test_a_checkpoint_of_the_deprecated_callback_resumes_exactly(tmp_path, straight_runs):
    """A run started with the `exact_resume` callback of earlier versions (its checkpoints hold
    the random states as the callback's state, and no state of the trainer's own callback),
    recovered with its config, which names the callback: with the trainer, bit-identical."""
    deprecated = ({"type": "exact_resume"},)
    with pytest.raises(KeyboardInterrupt):
        _train(BILM_TINY, tmp_path / "run", 14, callbacks=deprecated)
    for path in (tmp_path / "run").glob("training_state_*.th"):
        state = torch.load(path)
        callbacks = state["callbacks"]
        ours = [i for i, callback in enumerate(callbacks) if "epoch_start" in callback]
        assert callbacks[0] == {} and len(ours) == 1  # the deprecated callback saves nothing now
        callbacks[0] = callbacks.pop(ours[0])  # as the callback saved them
        torch.save(state, path)
    log = _train(BILM_TINY, tmp_path / "run", 14, recover=True, callbacks=deprecated)
    _assert_ends_as_the_straight_run(straight_runs["bilm_tiny"], log, tmp_path / "run", 14, 13)
