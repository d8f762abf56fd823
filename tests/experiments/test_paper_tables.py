"""
experiments/paper_tables.py end to end on the fixtures, with the fixture biLM and tiny models
trained one epoch: table3 (4 SNLI runs), sample_efficiency (NER on half and all of the
fixture's sentences) and figure2 (drawn from the runs table3 and sample_efficiency share with
table1), then
the same job again, which reads every run back from the records instead of training it.
"""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from experiments import paper_tables, samples, scores, tables
from experiments.allennlp_runs import Result, Run
from experiments.planning import Plan
from tests.paths import PROJECT_ROOT

# Trains, builds a wheel or runs AllenNLP in a process of its own: `make test-fast` leaves it out.
pytestmark = pytest.mark.slow

NUMBER = r"-?\d+\.\d\d"
FIXTURE_DATA = {
    "snli": {
        split: f"fixtures/snli/{name}.jsonl"
        for split, name in [
            ("train_data_path", "train"),
            ("validation_data_path", "dev"),
            ("test_data_path", "test"),
        ]
    },
    "ner": {
        **{
            split: f"fixtures/ner/{name}.txt"
            for split, name in [
                ("train_data_path", "train"),
                ("validation_data_path", "dev"),
                ("test_data_path", "test"),
            ]
        },
    },
}
TINY = [
    f"{task}.{knob}={value}"
    for task in ("snli", "ner")
    for knob, value in [
        ("epochs", 1),
        ("hidden_size", 4),
        ("word_dim", 4),
        ("char_filters", 4),
        ("batch_size", 8),
    ]
]
JOB = [
    "table3",
    "sample_efficiency",
    "figure2",
    "--tasks",
    "snli",
    "ner",
    "--fractions",
    "0.5",
    "1",
]


def paper_tables_command(output_dir: Path, *args: str) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        str(PROJECT_ROOT / "experiments" / "paper_tables.py"),
        *args,
        "--output-dir",
        str(output_dir),
        "--parallel",
        "1",
        "--threads",
        "1",
        "--bilm-options",
        "fixtures/elmo/options.json",
        "--bilm-weights",
        "fixtures/elmo/lm_weights.hdf5",
        "--set",
        *TINY,
        "ner.subsample_max_epochs=1",
        "--overrides",
        *(f"{task}={json.dumps(data)}" for task, data in FIXTURE_DATA.items()),
    ]
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    return subprocess.run(
        command, cwd=PROJECT_ROOT, env=environment, capture_output=True, text=True, check=True
    )


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """The output dir of one job, and its stdout and stderr."""
    output_dir = tmp_path_factory.mktemp("paper_tables")
    return output_dir, paper_tables_command(output_dir, *JOB)


def record(output_dir: Path, task: str, run: str) -> dict:
    """A run's record in its task's scores file (the records default to the output dir)."""
    return json.loads((output_dir / f"{task}.json").read_text())["runs"][run]


def rows_starting(markdown: str, first_cell: str) -> list:
    return [
        line.split("|")[1:-1]
        for line in markdown.splitlines()
        if line.startswith(f"| {first_cell} |")
    ]


def test_table3_has_dev_and_test_accuracy_for_each_place_of_elmo(job):
    output_dir, process = job
    table = (output_dir / "table3.md").read_text()
    assert table in process.stdout
    [row] = rows_starting(table, "SNLI")
    scores = row[2:6]  # baseline, input only, input & output, output only
    assert all(re.fullmatch(rf" {NUMBER} / {NUMBER} ", cell) for cell in scores), row
    for run in ("baseline", "elmo_input", "elmo_input_output", "elmo_output"):
        [run_row] = rows_starting(table, f"`snli/{run}`")
        assert re.fullmatch(rf" {NUMBER} ", run_row[1]) and re.fullmatch(
            r" \d+\.\d min ", run_row[4]
        )
    assert re.search(
        r"Wall-clock: \d+\.\d min for this table \(4 of its 4 runs trained for it", table
    )


def test_sample_efficiency_trains_on_a_seeded_sample_of_the_sentences(job):
    output_dir, _ = job
    table = (output_dir / "sample_efficiency.md").read_text()
    rows = rows_starting(table, "CoNLL-2003 NER")
    assert [row[2].strip() for row in rows] == ["50%", "100%"]
    for row, count in zip(rows, (10, 21)):
        assert row[1].strip() == "span F1" and int(row[3]) == count and int(row[4]) == 1
        assert all(re.fullmatch(rf" {NUMBER} ", cell) for cell in row[5:7]), row
    sample = (output_dir / "data" / "ner_train_50pct_seed13370.txt").read_text()
    assert sample.count("\n\n") == 9 and "-DOCSTART-" not in sample


def test_figure2_draws_the_layer_weights_of_both_snli_mixes(job):
    output_dir, _ = job
    assert Image.open(output_dir / "figure2.png").size[0] > 100
    table = (output_dir / "figure2.md").read_text()
    for mix in ("snli input", "snli output"):
        [row] = rows_starting(table, mix)
        token, lstm_1, lstm_2, gamma = (float(cell) for cell in row[1:])
        assert token + lstm_1 + lstm_2 == pytest.approx(1.0, abs=2e-3) and gamma > 0


def test_a_second_job_reads_every_finished_run_back(job):
    output_dir, first = job
    scores = sorted(output_dir.glob("*.json"))
    assert [path.name for path in scores] == ["ner.json", "snli.json"]
    assert sum(len(json.loads(path.read_text())["runs"]) for path in scores) == 8
    modified = [path.stat().st_mtime for path in scores]
    # The records are all a job reads back: not the runs' dirs.
    for metrics in output_dir.glob("*/*/metrics.json"):
        metrics.rename(metrics.with_name("metrics.moved"))
    second = paper_tables_command(output_dir, *JOB)
    assert "training " not in second.stderr and second.stderr.count("cached ") == 8
    assert [path.stat().st_mtime for path in scores] == modified
    for moved in output_dir.glob("*/*/metrics.moved"):
        moved.rename(moved.with_name("metrics.json"))
    first_table3, second_table3 = (
        rows_starting(process.stdout, "SNLI") for process in (first, second)
    )
    assert first_table3 == second_table3


def test_convergence_shows_each_table1_runs_dev_score_after_every_epoch(job):
    output_dir, _ = job
    process = paper_tables_command(output_dir, "convergence", "--tasks", "snli")
    # Table 1's SNLI runs are table 3's baseline and input-and-output runs: nothing trains.
    assert process.stderr.count("cached ") == 2 and "training " not in process.stderr
    rows = rows_starting((output_dir / "convergence.md").read_text(), "SNLI")
    assert [row[1].strip() for row in rows] == ["baseline", "elmo_input_output"]
    for row, run in zip(rows, ("baseline", "elmo_input_output")):
        epoch = json.loads((output_dir / "snli" / run / "metrics_epoch_0.json").read_text())
        assert row[2].strip() == "validation_accuracy"
        assert row[3].strip() == f"{100 * epoch['validation_accuracy']:.1f}"
        assert row[4].strip() == "1 of 1" and row[5].strip() == "-"
        # The record keeps the curve the table shows, and only it.
        assert record(output_dir, "snli", run)["epochs"] == {
            "validation_accuracy": [epoch["validation_accuracy"]]
        }


def test_a_curve_is_averaged_over_the_epochs_every_seed_reached(tmp_path):
    results = []
    for seed, curve in [
        (1, [0.40, 0.42, 0.47, 0.50, 0.49, 0.48, 0.47, 0.46, 0.45, 0.44, 0.43]),
        (2, [0.30, 0.44, 0.45]),
    ]:
        run = Run(f"snli/baseline_seed{seed}", "c.jsonnet", {}, str(tmp_path / f"seed{seed}"))
        results.append(Result(run, epochs={"validation_accuracy": curve}))
    assert tables.epoch_curve(results[0], "validation_accuracy")[9:] == pytest.approx([44.0, 43.0])
    curve = tables.mean_epoch_curve(results, "validation_accuracy")
    assert curve == pytest.approx([35.0, 43.0, 46.0])
    assert tables.curve_summary(curve) == ["35.0, 43.0, 46.0", "3 of 3", "+3.00"]
    assert tables.curve_summary([]) == ["-", "-", "-"]


def test_a_runs_record_names_files_in_the_project_relative_to_its_root(job):
    output_dir, _ = job
    elmo_input = record(output_dir, "snli", "elmo_input")
    assert re.fullmatch(
        r"Python 3\.\d+\.\d+, torch \S+, allennlp 2\.10\.\d+, \w+", elmo_input["environment"]
    )
    assert (
        f"Trained with: {elmo_input['environment']} (4 runs)"
        in (output_dir / "table3.md").read_text()
    )
    changes = elmo_input["config_changes"]
    assert changes["/model/elmo/options_file"] == "fixtures/elmo/options.json"
    assert changes["/model/elmo/weight_file"] == "fixtures/elmo/lm_weights.hdf5"
    # The job's output dir lies outside the project: its sample is named absolutely.
    sample = record(output_dir, "ner", "baseline_50pct")
    assert sample["config_changes"]["/train_data_path"] == str(
        output_dir / "data" / "ner_train_50pct_seed13370.txt"
    )
    assert sample["facts"] == {"training_sentences": 10}


@pytest.mark.skipif(not (PROJECT_ROOT / ".git").exists(), reason="needs the project's git checkout")
@pytest.mark.parametrize(
    "path, kept",
    [
        ("ner.json", True),
        ("sst.json", True),
        ("ner/baseline/run.json", False),
        ("ner/baseline/metrics.json", False),
        ("ner/baseline/metrics_epoch_3.json", False),
        ("table1.md", False),
        ("ner/baseline/model.tar.gz", False),
        ("ner/baseline/best.th", False),
        ("ner/baseline.log", False),
        ("data/ner_train_1pct_seed1.txt", False),
        (".ner.json.lock", False),
    ],
)
def test_git_keeps_only_the_records_of_the_runs_behind_the_tables(path, kept):
    ignored = (
        subprocess.run(
            ["git", "check-ignore", "--no-index", "-q", f"experiments/results/paper_tables/{path}"],
            cwd=PROJECT_ROOT,
        ).returncode
        == 0
    )
    assert ignored != kept


def test_a_dry_run_lists_only_the_runs_whose_settings_changed(job):
    output_dir, _ = job
    same = paper_tables_command(output_dir, "table3", "--dry-run")
    assert same.stdout == "" and same.stderr.count("cached ") == 4
    other_seed = paper_tables_command(output_dir, "table3", "--dry-run", "--seed", "7")
    commands = other_seed.stdout.splitlines()
    assert len(commands) == 4 and all(" -m allennlp train " in command for command in commands)
    assert all('"random_seed": 7' in command and "--force" in command for command in commands)
    assert record(output_dir, "snli", "baseline")["config_changes"]["/random_seed"] == 13370


def test_extra_seeds_train_every_cell_again_and_show_mean_and_spread(job):
    output_dir, _ = job
    process = paper_tables_command(output_dir, "table3", "--extra-seeds", "7")
    assert process.stderr.count("cached ") == 4 and process.stderr.count("training ") == 4
    for run in ("baseline", "elmo_input", "elmo_input_output", "elmo_output"):
        seeded = record(output_dir, "snli", f"{run}_seed7")
        assert seeded["settings"]["overrides"]["random_seed"] == 7
        assert seeded["config_changes"]["/pytorch_seed"] == 7
        assert re.fullmatch(r"[0-9a-f]{64}", seeded["config_digest"])
    [row] = rows_starting((output_dir / "table3.md").read_text(), "SNLI")
    spread = rf"{NUMBER} ± {NUMBER}"
    assert all(re.fullmatch(rf" {spread} / {spread} ", cell) for cell in row[2:6]), row
    assert "mean ± sample standard deviation of 2 runs" in process.stdout


def test_bfloat16_table_trains_elmo_in_bfloat16_beside_table1s_float32_run(job):
    output_dir, _ = job
    process = paper_tables_command(output_dir, "bfloat16", "--tasks", "snli")
    # The float32 cell is table1's (and table3's) input-and-output run, already trained.
    assert process.stderr.count("cached ") == 1 and process.stderr.count("training ") == 1
    bfloat16 = record(output_dir, "snli", "elmo_input_output_bfloat16")
    assert bfloat16["config_changes"]["/model/elmo/compute_dtype"] == "bfloat16"
    float32 = record(output_dir, "snli", "elmo_input_output")
    assert not any("compute_dtype" in key for key in float32["config_changes"])
    [row] = rows_starting((output_dir / "bfloat16.md").read_text(), "SNLI")
    assert re.fullmatch(rf" {NUMBER} ", row[2]) and re.fullmatch(rf" {NUMBER} ", row[3])
    assert re.fullmatch(r" [+-]\d+\.\d\d ", row[4]), row


def test_seed_mean_averages_metrics_and_reports_their_spread():
    run = Run("ner/elmo", "c.jsonnet", {}, "/tmp/x")
    results = [
        Result(run, {"test_f1": f1, "epoch": 2, "best": True}, wall_clock_s=60.0)
        for f1 in (0.70, 0.74, 0.78)
    ]
    mean = scores.seed_mean(results)
    assert mean.metrics["test_f1"] == pytest.approx(0.74) and mean.spread[
        "test_f1"
    ] == pytest.approx(0.04)
    assert "best" not in mean.metrics and mean.seeds == 3 and mean.wall_clock_s == 180.0
    assert scores.percent(mean, "test_f1") == "74.00 ± 4.00"
    failed = scores.seed_mean(results[:2] + [Result(run, error="exit 1")])
    assert not failed.ok and failed.error == "exit 1"
    assert scores.seed_mean(results[:1]) is results[0]


def test_table1_states_the_increase_at_each_seed():
    def ner(name, f1):
        run = Run(name, "c.jsonnet", {}, "/tmp/x")
        return Result(run, {"test_f1-measure-overall": f1})

    assert scores.headline_increase(ner("ner/baseline", 0.7660), ner("ner/elmo", 0.7735)) == "+0.75"
    assert scores.headline_increase(ner("ner/baseline", 0.8), ner("ner/elmo", 0.79)) == "-1.00"
    failed = Result(Run("ner/elmo", "c", {}, "/x"), error="exit 1")
    assert scores.headline_increase(ner("ner/baseline", 0.8), failed) == "-"


def test_sampling_is_seeded_and_keeps_the_file_order():
    sentences = [f"word{i} NN I-NP O" for i in range(200)]
    sample = samples.sample_sentences(sentences, 0.1, seed=3)
    assert sample == samples.sample_sentences(sentences, 0.1, seed=3)
    assert sample != samples.sample_sentences(sentences, 0.1, seed=4)
    assert len(sample) == 20 and sample == sorted(sample, key=sentences.index)
    assert samples.sample_sentences(sentences, 0.0001, seed=3) != []


def test_an_sst_sample_is_a_tree_a_line_trained_with_the_configs_patience(tmp_path):
    args = paper_tables.parse_args(
        ["sample_efficiency", "--output-dir", str(tmp_path), "--overrides"]
        + ['sst={"train_data_path": "fixtures/sst/train.txt"}']
    )
    run = Plan(args).run("sst", "elmo", fraction=0.5, seed=3)
    trees = samples.line_sentences(str(PROJECT_ROOT / "fixtures" / "sst" / "train.txt"))
    sample = (tmp_path / "data" / "sst_train_50pct_seed3.txt").read_text(encoding="utf-8")
    assert sample.splitlines() == samples.sample_sentences(trees, 0.5, seed=3)
    assert run.name == "sst/elmo_50pct_seed3" and run.facts == {
        "training_sentences": round(len(trees) / 2)
    }
    # 4 epochs on all of it: 8 on half; no NER fields, so SST keeps its patience.
    assert run.fields["num_epochs"] == 8 and "patience" not in run.fields


def test_every_tag_of_the_scheme_is_in_the_label_vocabulary_of_a_sample(job):
    output_dir, _ = job
    sample = record(output_dir, "ner", "baseline_50pct")
    expected = ["O"] + [
        f"{prefix}-{kind}" for kind in ("PER", "LOC", "ORG", "MISC") for prefix in "BIUL"
    ]
    assert sample["config_changes"]["/vocabulary/tokens_to_add/labels"] == expected
    assert sample["settings"]["fields"]["all_tags_in_vocabulary"] is True
    assert (
        "/vocabulary/tokens_to_add/labels"
        not in record(output_dir, "ner", "baseline")["config_changes"]
    )


def test_elmo_overrides_reach_the_runs_with_elmo_only(job):
    output_dir, _ = job
    dropout = {"model.elmo.dropout": 0.3}
    process = paper_tables_command(
        output_dir,
        "table3",
        "--dry-run",
        "--force",
        "--elmo-overrides",
        f"snli={json.dumps(dropout)}",
    )
    commands = process.stdout.splitlines()
    assert len(commands) == 4
    with_elmo = [command for command in commands if "/snli/elmo_" in command]
    assert len(with_elmo) == 3 and all(
        '"model.elmo.dropout": 0.3' in command for command in with_elmo
    )
    [baseline] = [command for command in commands if "/snli/baseline " in command]
    assert "model.elmo" not in baseline


def test_finetuned_trains_srl_with_the_bilm_frozen_and_fine_tuned_in_bfloat16(tmp_path):
    process = paper_tables_command(tmp_path, "finetuned", "--dry-run")
    commands = {}
    for command in process.stdout.splitlines():
        match = re.search(r" -s \S+/srl/(\S+) ", command)
        assert match is not None, command
        commands[match.group(1)] = command
    assert sorted(commands) == ["baseline", "elmo", "elmo_finetuned_bfloat16"]
    # Each command trains the wrapper config the dry run wrote: the task config, hidden fields set.
    wrappers = {}
    for run, command in commands.items():
        words = shlex.split(command)
        wrappers[run] = (PROJECT_ROOT / words[words.index("train") + 1]).read_text()
    finetuned = wrappers["elmo_finetuned_bfloat16"]
    assert '(import "elmo_plugin/training_configs/srl/srl_elmo_finetuned.jsonnet")' in finetuned
    assert '  elmo_compute_dtype:: "bfloat16",' in finetuned and "  hidden_size:: 200," in finetuned
    assert "compute_dtype" not in wrappers["elmo"] and "srl/srl_elmo.jsonnet" in wrappers["elmo"]
    assert (
        "elmo_settings" not in wrappers["baseline"] and "  num_epochs:: 20," in wrappers["baseline"]
    )
