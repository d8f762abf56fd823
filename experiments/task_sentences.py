"""
A task's text as a language-model corpus, for adapting the biLM to it (Peters et al. 2018,
appendix A.1: the biLM trained further on the task's training sentences, labels discarded).

Reads a split with the task's own dataset reader (its baseline config's; its
`validation_dataset_reader` where it has one, which reads whole sentences where training reads
parts of them, as SST-5's labelled phrases), so the sentences are tokenised as the task model
sees them, and writes every distinct text field (a sentence, a
premise, a question, a passage) once, in reading order, its tokens separated by spaces: the
format of the `bilm_corpus` reader.

    python experiments/task_sentences.py srl train runs/srl_text/train.txt
"""

import argparse
import os
import sys
from typing import Iterable, Iterator, List, Optional, Sequence, cast

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from allennlp.common import Params  # noqa: E402
from allennlp.common.util import import_module_and_submodules  # noqa: E402
from allennlp.data import DatasetReader, Instance  # noqa: E402
from allennlp.data.fields import TextField  # noqa: E402

from experiments.allennlp_runs import PROJECT_ROOT  # noqa: E402
from experiments.tasks import TASKS, Task  # noqa: E402

SPLIT_KEYS = {
    "train": "train_data_path",
    "dev": "validation_data_path",
    "test": "test_data_path",
}


def split_path(task: Task, split: str) -> str:
    """The split's file as the task's baseline config names it (relative to the project root)."""
    key = SPLIT_KEYS[split]
    try:
        path = task.config_value("baseline", key)
    except KeyError:
        raise ValueError(
            f"{task.config_file('baseline')} has no {key}: task {task.name} has no {split} split"
        ) from None
    return os.path.normpath(os.path.join(PROJECT_ROOT, path))


def task_reader(task: Task) -> DatasetReader:
    import_module_and_submodules("elmo_plugin")
    try:
        reader = task.config_value("baseline", "validation_dataset_reader")
    except KeyError:
        reader = task.config_value("baseline", "dataset_reader")
    params = Params(reader)
    return DatasetReader.from_params(params)


def instance_texts(instance: Instance) -> Iterator[str]:
    for field in instance.fields.values():
        if isinstance(field, TextField) and field.tokens:
            yield " ".join(cast(str, token.text) for token in field.tokens)


def distinct_texts(instances: Iterable[Instance]) -> List[str]:
    """Every text field once, in reading order (an SRL sentence recurs for each predicate, an
    SNLI premise for each hypothesis)."""
    return list(dict.fromkeys(text for instance in instances for text in instance_texts(instance)))


def write_task_sentences(task_name: str, data_path: str, output: str) -> int:
    texts = distinct_texts(task_reader(TASKS[task_name]).read(data_path))
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    with open(output, "w", encoding="utf-8") as file:
        file.writelines(text + "\n" for text in texts)
    return len(texts)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task", choices=sorted(TASKS))
    parser.add_argument("split", choices=sorted(SPLIT_KEYS), help="the split its config names")
    parser.add_argument("output", help="the corpus file to write (one sentence a line)")
    parser.add_argument("--data-path", help="read this file instead of the split's")
    args = parser.parse_args(argv)
    data_path = args.data_path or split_path(TASKS[args.task], args.split)
    count = write_task_sentences(args.task, data_path, args.output)
    print(f"{count} sentences of {data_path} -> {args.output}")


if __name__ == "__main__":
    main()
