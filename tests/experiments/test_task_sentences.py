"""experiments/task_sentences.py: a task's text, read by its own reader, as a biLM corpus."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from elmo_plugin.allennlp.tasks.sentiment.dataset_readers import SstTreesReader
from elmo_plugin.allennlp.tasks.srl.dataset_readers import UniversalPropbankSrlReader
from tests.fields import tokens_of
from tests.paths import PROJECT_ROOT


def task_sentences(task: str, data_path: str, output: Path, split: str = "train") -> list:
    subprocess.run(
        [
            sys.executable,
            "experiments/task_sentences.py",
            task,
            split,
            str(output),
            "--data-path",
            data_path,
        ],
        cwd=PROJECT_ROOT,
        check=True,
        capture_output=True,
    )
    return output.read_text(encoding="utf-8").splitlines()


def test_srl_gives_each_sentence_once_however_many_predicates_it_has(tmp_path):
    fixture = "fixtures/srl/up_english_ewt_train_slice.conllu"
    sentences = task_sentences("srl", fixture, tmp_path / "srl.txt")
    instances = list(UniversalPropbankSrlReader().read(PROJECT_ROOT / fixture))
    per_predicate = [
        " ".join(token.ensure_text() for token in tokens_of(i, "tokens")) for i in instances
    ]
    assert len(per_predicate) > len(sentences) > 1
    assert sentences == list(dict.fromkeys(per_predicate))


def test_snli_gives_premises_and_hypotheses_once_each(tmp_path):
    fixture = "fixtures/snli/train.jsonl"
    sentences = task_sentences("snli", fixture, tmp_path / "snli.txt")
    pairs = [json.loads(line) for line in (PROJECT_ROOT / fixture).read_text().splitlines()]
    pairs = [pair for pair in pairs if pair["gold_label"] != "-"]
    premises = {pair["sentence1"] for pair in pairs}
    assert len(sentences) == len(set(sentences))
    assert len(sentences) == len(premises | {pair["sentence2"] for pair in pairs})


def test_sst_gives_the_sentences_not_the_phrases_it_trains_on(tmp_path):
    fixture = PROJECT_ROOT / "fixtures/sst/train.txt"
    sentences = task_sentences("sst", str(fixture), tmp_path / "sst.txt")
    roots = [tokens_of(i, "tokens") for i in SstTreesReader(use_subtrees=False).read(fixture)]
    phrases = list(SstTreesReader(use_subtrees=True).read(fixture))
    assert len(phrases) > len(sentences) > 1
    assert sentences == list(dict.fromkeys(" ".join(t.ensure_text() for t in r) for r in roots))


def test_a_task_without_the_split_says_so(tmp_path):
    result = subprocess.run(
        [sys.executable, "experiments/task_sentences.py", "squad", "dev", str(tmp_path / "x.txt")],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "squad_baseline.jsonnet has no validation_data_path" in result.stderr


if __name__ == "__main__":
    pytest.main([__file__])
