"""
Turns a table cell (task, variant, regularization, top layer only, training fraction, seed)
into `allennlp train` runs with the budgets, data, biLM and seeds of a job.
"""

import argparse
import functools
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from elmo_plugin.elmo.formats.bilm_tf_options import read_options

from experiments import configs
from experiments.allennlp_runs import PROJECT_ROOT, Run, project_path
from experiments.samples import (
    FORMATS,
    sample_file_name,
    sample_sentences,
    sample_size,
    write_sentences,
)
from experiments.tasks import TASKS, Task, budgets_with, task_overrides

ELMO_BLOCK = "elmo_plugin/training_configs/common/elmo.libsonnet"
DEFAULT_LAMBDA = 0.001
SEED_KEYS, ALLENNLP_SEEDS = ("random_seed", "numpy_seed", "pytorch_seed"), (13370, 1337, 133)


@dataclass(frozen=True)
class Bilm:
    """The biLM of a job's +ELMo runs; its files as `project_path` gives them."""

    options_file: str
    weight_file: str
    num_layers: int
    output_dim: int

    @classmethod
    def read(cls, options_file: str, weight_file: str, dry_run: bool) -> "Bilm":
        files = project_path(options_file), project_path(weight_file)
        if not os.path.isfile(options_file):
            if dry_run:  # the commands can be listed before the biLM is exported
                return cls(*files, 2, 0)
            raise SystemExit(f"{options_file}: no such biLM options file (see --bilm-options)")
        lstm = read_options(options_file)["lstm"]  # checked: a clear error on a bad file
        # Each layer's output joins the two directions' projections.
        return cls(*files, lstm["n_layers"], 2 * lstm["projection_dim"])

    def description(self) -> str:
        return f"{self.weight_file} ({self.num_layers} LSTM layers, output dim {self.output_dim})"


class Plan:
    """Turns (task, variant, regularization, top layer only, training fraction) into runs,
    with the budgets, data, biLM and seed of this job."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.output_dir = os.path.abspath(args.output_dir)
        # The scores files, one a task (experiments/records.py).
        self.records_dir = os.path.abspath(args.records or args.output_dir)
        # AllenNLP's defaults unless --seed, so a run gets the seeds a plain `allennlp train` would.
        seeds = [args.seed] * 3 if args.seed is not None else ALLENNLP_SEEDS
        self.seeds = dict(zip(SEED_KEYS, seeds))
        self.seed = self.seeds["random_seed"]
        self.extra_seeds = args.extra_seeds
        self.dry_run = args.dry_run
        self.bilm = Bilm.read(args.bilm_options, args.bilm_weights, args.dry_run)
        self.budgets = budgets_with(args.set)
        self.extra_overrides = task_overrides(args.overrides)
        self.elmo_overrides = task_overrides(args.elmo_overrides, "--elmo-overrides")

    def runs(self, task_name: str, variant: str, **settings: Any) -> List[Run]:
        """The run at this job's seeds, then one per `--extra-seeds`: a table cell's runs."""
        return [self.run(task_name, variant, **settings)] + [
            self.run(task_name, variant, seed=seed, **settings) for seed in self.extra_seeds
        ]

    def run(
        self,
        task_name: str,
        variant: str,
        regularization: float = DEFAULT_LAMBDA,
        top_layer_only: bool = False,
        fraction: float = 1.0,
        seed: Optional[int] = None,
        compute_dtype: str = "float32",
    ) -> Run:
        """A run at this job's seeds, or with `seed` as its random, numpy and torch seed (and
        the sample's), named with a `_seed<seed>` suffix; ELMo in `compute_dtype`, named with
        its suffix unless float32."""
        task = TASKS[task_name]
        seeds = self.seeds if seed is None else dict.fromkeys(SEED_KEYS, seed)
        name = variant
        # The settings of the config's own: its hidden fields (experiments/tasks.py).
        fields = task.budget_fields(self.budgets[task_name])
        # AllenNLP's overrides on top: this job's, the seeds, the data.
        overrides = dict(self.extra_overrides[task_name])
        if variant != "baseline":
            fields.update(self.elmo_fields(regularization, top_layer_only, compute_dtype))
            overrides.update(self.elmo_overrides[task_name])
            name += f"_lambda{regularization:g}" if regularization != DEFAULT_LAMBDA else ""
            name += "_top_layer" if top_layer_only else ""
            name += f"_{compute_dtype}" if compute_dtype != "float32" else ""
        if fraction < 1.0:
            sample_fields, sample_overrides = self.subsample(
                task, overrides, fraction, seeds["random_seed"]
            )
            fields.update(sample_fields)
            overrides.update(sample_overrides)
            name += f"_{100 * fraction:g}pct"
        name += "" if seed is None else f"_seed{seed}"
        overrides.update({"evaluate_on_test": True, **seeds})
        return Run(
            f"{task_name}/{name}",
            task.config_file(variant),
            overrides,
            os.path.join(self.output_dir, task_name, name),
            fields=fields,
            records=os.path.join(self.records_dir, f"{task_name}.json"),
            epoch_metrics=(task.epoch_curve_metric,),
            facts=self.facts(task, overrides, fraction),
        )

    def elmo_fields(
        self, regularization: float, top_layer_only: bool, compute_dtype: str
    ) -> Dict[str, Any]:
        """The hidden fields of a run with ELMo: the biLM's files, the regularizer's lambda,
        with `top_layer_only` fixed layer weights on the top one of the biLM's layers, and ELMo's
        compute dtype (left unset for float32, the default)."""
        fields: Dict[str, Any] = {
            "elmo_settings+": {
                "options_file": self.bilm.options_file,
                "weight_file": self.bilm.weight_file,
            },
            "elmo_regularization": regularization,
        }
        if top_layer_only:
            # The biLM's token layer and each LSTM layer, all but the top one weighted 0.
            fields["elmo_scalar_mix_parameters"] = top_layer_only_weights(self.bilm.num_layers + 1)
        if compute_dtype != "float32":
            fields["elmo_compute_dtype"] = compute_dtype
        return fields

    def facts(self, task: Task, overrides: Dict[str, Any], fraction: float) -> Dict[str, Any]:
        """What the tables show of a run's data: the number of training sentences of a
        sampled task's runs, counted when its training data is here (else the record has it)."""
        if task.sample_format is None:
            return {}
        try:
            sentences = self.training_sentences(task, self.extra_overrides[task.name])
        except FileNotFoundError:
            return {}
        return {"training_sentences": sample_size(len(sentences), fraction)}

    def subsample(
        self, task: Task, overrides: Dict[str, Any], fraction: float, seed: int
    ) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """The hidden fields and overrides of a run on a sample of the training sentences for
        `fraction` drawn with `seed` (written unless this is a dry run), trained for as many
        updates as the full set, up to subsample_max_epochs."""
        if task.sample_format is None:
            raise SystemExit(f"{task.name}: no sample_format in experiments/tasks.py to sample by")
        sample = os.path.join(self.output_dir, "data", sample_file_name(task.name, fraction, seed))
        if not self.dry_run:
            sentences = self.training_sentences(task, overrides)
            write_sentences(sample_sentences(sentences, fraction, seed), sample, task.sample_format)
        budget = self.budgets[task.name]
        fields = {
            "num_epochs": min(budget["subsample_max_epochs"], round(budget["epochs"] / fraction)),
            **task.sample_fields,
        }
        return fields, {"train_data_path": project_path(sample)}

    def training_sentences(self, task: Task, overrides: Dict[str, Any]) -> List[str]:
        source = overrides.get("train_data_path") or task.config_value(
            "baseline", "train_data_path"
        )
        return _sentences(os.path.join(PROJECT_ROOT, source), str(task.sample_format))


@functools.lru_cache(maxsize=8)
def _sentences(path: str, file_format: str) -> List[str]:
    return FORMATS[file_format].read(path)


def top_layer_only_weights(num_layers: int) -> List[float]:
    """Fixed pre-softmax layer weights on the top one of `num_layers` (the token layer and the
    LSTM layers): elmo.libsonnet's `top_layer_only`."""
    snippet = f'{{ weights: (import "{ELMO_BLOCK}").top_layer_only({num_layers}) }}'
    return configs.evaluate(os.path.join(PROJECT_ROOT, "top_layer_only.jsonnet"), snippet)[
        "weights"
    ]
