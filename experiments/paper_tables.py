"""
The ELMo paper's (Peters et al. 2018) results in miniature, every number from `allennlp train`
runs of the configs in training_configs/, each in a fresh process on `--threads`
threads, `--parallel` at a time, on the fixed splits of ../shared/data (its README, section 8):

  table1             NER, SRL, SNLI, SQuAD, SST-5, coreference: baseline against +ELMo (ELMo
                     at the input for NER, SRL and coreference, at the input and output for SNLI
                     and SQuAD, as in the paper; at the input for SST-5, as AllenNLP's config)
  table2             NER and SNLI with ELMo at the input: the top biLM layer only against all
                     layers with lambda = 1 and lambda = 0.001 on the layer weights
  table3             SNLI (and SQuAD with --tasks): ELMo at the input only, at the input and
                     output, at the output only
  sample_efficiency  NER test F1 and SST-5 test accuracy against the fraction of training
                     sentences, with and without ELMo
  figure2            the softmax-normalised layer weights learned by the +ELMo runs of table1,
                     as a PNG and a table
  all                all of these, in this order
  convergence        how far table1's runs are from converged: each one's dev score (train
                     score for SQuAD, which has no dev split) after every epoch, mean over seeds
  bfloat16           not the paper's: table1's +ELMo runs (NER by default) against the same
                     runs with ELMo's compute_dtype "bfloat16", at the same seeds
  finetuned          not the paper's (it keeps the biLM frozen): table1's +ELMo runs of SRL
                     and the same with the biLM fine-tuned with the task model (ELMo in
                     bfloat16: a fine-tuned biLM has no activation cache), against table1's
                     baselines

Baseline and +ELMo runs of a task share the budget (epochs and sizes, `--set`) and the seed
(`--seed`: AllenNLP's random_seed, numpy_seed and pytorch_seed). A run shared by several tables
trains once. With `--extra-seeds S ...` every cell is trained again at each seed S (runs named
`<run>_seed<S>`) and shows the mean ± sample standard deviation over the seeds. Each table's
markdown goes to `<output-dir>/<table>.md` and to stdout: the table, the runs behind it (test
and dev scores, wall-clock, whether read from an earlier job) and the wall-clock the table took.
A finished run leaves a record in its task's scores file, `<records>/<task>.json` (its settings
and effective config, wall-clock, final metrics and the per-epoch values the tables show), and
is read back from it, not trained again, unless `--force`: an interrupted job resumes when
started again with the same options, and with `--records experiments/results/paper_tables`
(git keeps those files) a fresh clone renders every table at once. A run whose effective config
(the config as AllenNLP trains it) is not the recorded one trains again, naming the keys that
differ.

sample_efficiency trains on a seeded sample of a fraction f of a task's training sentences
(CoNLL-2003's, SST's trees; written to `<output-dir>/data/`) for epochs / f epochs, as many
updates as the full set, up to the task's `subsample_max_epochs`; NER without early stopping,
SST-5 with its config's patience. Run from the project root:

    python experiments/paper_tables.py all
    python experiments/paper_tables.py table1 --tasks ner srl --set ner.epochs=6
    python experiments/paper_tables.py table3 --tasks snli squad
    python experiments/paper_tables.py table3 --dry-run
    python experiments/paper_tables.py figure2 --figure docs/elmo_layer_weights.png

(`python -m experiments.paper_tables` is the same.) The parts are modules of the `experiments`
package. A run sets its budget, biLM and ELMo settings as hidden fields of its task's config
(`num_epochs:: 6, ...`, experiments/tasks.py), in a wrapper config written beside its dir,
`<output-dir>/<task>/<run>.jsonnet`, which its `allennlp train` command trains.

Budgets default to a few minutes a run on 2 CPU cores (see `--set` in --help); other data or
any other setting go through `--overrides TASK=JSON` (AllenNLP overrides; relative paths are
read from the project root, as the configs' own), or `--elmo-overrides TASK=JSON` for the runs
with ELMo only.
"""

import argparse
import os
import sys
import time
from typing import Optional, Sequence

if __package__ in (None, ""):  # run as a file: the project root, not experiments/, on the path
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from experiments.allennlp_runs import Runner  # noqa: E402
from experiments.planning import Plan  # noqa: E402
from experiments.report import report_table  # noqa: E402
from experiments.tables import DEFAULT_TASKS, PAPER_TABLES, TABLES, PaperTables  # noqa: E402
from experiments.tasks import TASKS, knob_list  # noqa: E402


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("tables", nargs="+", choices=TABLES + ["all"])
    parser.add_argument(
        "--bilm-options", default="elmo_plugin/pretrained/elmo_wikipedia_512x128/options.json"
    )
    parser.add_argument(
        "--bilm-weights", default="elmo_plugin/pretrained/elmo_wikipedia_512x128/weights.hdf5"
    )
    parser.add_argument(
        "--output-dir",
        default="runs/paper_tables",
        help="where the runs train (a dir a run, `<task>/<run>`) and each table's report goes",
    )
    parser.add_argument(
        "--records",
        metavar="DIR",
        help="where each task's scores file, `<task>.json`, keeps the records of its finished "
        "runs, read back instead of training them again (default: the output dir); "
        "`make tables` keeps them in git, in experiments/results/paper_tables",
    )
    parser.add_argument(
        "--tasks",
        nargs="+",
        choices=sorted(TASKS),
        help="the tasks of table1, table2, table3 (snli, squad), figure2, convergence, "
        "bfloat16 and finetuned (srl); default: "
        + "; ".join(f"{table} {' '.join(names)}" for table, names in DEFAULT_TASKS.items()),
    )
    parser.add_argument(
        "--seed",
        type=int,
        help="every run's random, numpy and torch seed (default: "
        "AllenNLP's own, 13370, 1337 and 133), and the sample's",
    )
    parser.add_argument(
        "--extra-seeds",
        nargs="+",
        type=int,
        default=[],
        metavar="SEED",
        help="train every cell of table1, table2, table3 and sample_efficiency "
        "again at each of these seeds (random, numpy and torch seed, and the "
        "sample's) and show the mean ± standard deviation over all seeds",
    )
    parser.add_argument(
        "--set",
        nargs="+",
        action="extend",
        default=[],
        metavar="TASK.KNOB=VALUE",
        help=f"budget knobs, defaults: {knob_list()}",
    )
    parser.add_argument(
        "--overrides",
        nargs="+",
        action="extend",
        default=[],
        metavar="TASK=JSON",
        help="AllenNLP overrides for every run of a task, e.g. "
        'ner=\'{"train_data_path": "fixtures/ner/train.txt"}\'',
    )
    parser.add_argument(
        "--elmo-overrides",
        nargs="+",
        action="extend",
        default=[],
        metavar="TASK=JSON",
        help="AllenNLP overrides for a task's runs with ELMo only (not its baseline), e.g. "
        "srl='{\"model.text_field_embedder.token_embedders.elmo.dropout\": 0.1}'",
    )
    parser.add_argument(
        "--fractions",
        nargs="+",
        type=float,
        default=[0.01, 0.1, 1.0],
        help="sample_efficiency's fractions of the training sentences",
    )
    parser.add_argument("--figure", help="figure2's PNG (default <output-dir>/figure2.png)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--parallel", type=int, default=2, help="runs trained at once")
    parser.add_argument(
        "--force", action="store_true", help="retrain runs finished by an earlier job"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the commands of the runs to train"
    )
    args = parser.parse_args(argv)
    args.tables = PAPER_TABLES if "all" in args.tables else [t for t in TABLES if t in args.tables]
    args.figure = args.figure or os.path.join(args.output_dir, "figure2.png")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    plan = Plan(args)
    runner = Runner(args.parallel, args.threads, args.force, args.dry_run)
    tables = PaperTables(plan, runner, args.tasks, args.fractions, args.figure)
    for table in args.tables:
        start, trained_before = time.perf_counter(), len(runner.trained)
        body, results = getattr(tables, table)()
        if args.dry_run:
            continue
        seconds, trained = time.perf_counter() - start, len(runner.trained) - trained_before
        markdown = report_table(table, body, results, seconds, trained, plan, runner)
        os.makedirs(plan.output_dir, exist_ok=True)
        with open(os.path.join(plan.output_dir, f"{table}.md"), "w", encoding="utf-8") as handle:
            handle.write(markdown)
        print(markdown, flush=True)
    failed = [result for result in runner.results.values() if not result.ok and not args.dry_run]
    for result in failed:
        print(f"FAILED {result.run.name}: {result.error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
