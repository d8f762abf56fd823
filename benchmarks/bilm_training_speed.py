"""
Training throughput and equal-wall-clock perplexity of the `bilm` model against its peer,
allennlp-models' `language_model` (bidirectional, sampled softmax), on the tokenised
Wikipedia corpus of ../shared/data.

Both models get the same sentences in the same batches of 64 (grouped by length), the same
vocabulary (the 50,000 most frequent words of shard-00 with `<S>`, `</S>`), 4096 negative
samples, Adam 1e-3 and the same character CNN (16-dim characters, filters
[[1,32],[2,32],[3,64],[4,128],[5,256],[6,512]], one highway layer, projection 128):

* peer: `character_encoding` + `cnn-highway`, a 2-layer bidirectional `lstm` of 512 hidden
  units, `num_samples` 4096.
* ours: the full ELMo biLM at the same CNN: 2 layers of 512 cells with 128-dim projections,
  cell and projection clipping 3, a residual connection, dropout 0.1, one softmax shared by
  both directions.

`speed` times training steps (forward, backward, optimizer step; batches are tensorised
beforehand for both) in a fresh subprocess per measurement, alternating the two models, and
reports the medians of `--runs` runs, their ratio and each process's peak memory.
`race` trains both at once, one process each, for the same wall-clock time, then measures
held-out perplexity with the full softmax on the first `--held-out` sentences of valid.
`quality` is the cost of `--compute-dtype bfloat16` in training: ours trained in float32 and
in bfloat16 at once, one process each, for the same `--steps` batches from the same initial
weights, then held-out perplexity of each direction (each model in its own compute dtype).

    python benchmarks/bilm_training_speed.py speed --runs 5
    python benchmarks/bilm_training_speed.py speed --runs 5 --compute-dtype bfloat16
    python benchmarks/bilm_training_speed.py race --seconds 900
    python benchmarks/bilm_training_speed.py quality --steps 1000

With `--compute-dtype bfloat16` ours runs its matrix products and convolutions in bfloat16
(float32 master weights, gate math and states: the `bilm` model's `compute_dtype`); the peer
stays float32, the reference.

Words are counted without the sentence markers. One thread per process (`--threads`): the
machine these numbers come from is shared, and several OpenMP threads spinning while
descheduled make every step many times slower.
"""

import argparse
import json
import math
import os
import statistics
import sys
import time
from typing import Dict, List, Tuple

from common import (
    answer,
    child_result,
    header,
    peak_rss_mb,
    read_sentences,
    run_child,
    shared_data,
    start_child,
)
from tests.published_sizes import ELMO_FILTERS

CORPUS = ("lm_wikipedia_en_2015", "tokenized")
TRAIN = CORPUS + ("train", "shard-00.txt.xz")
VALID = CORPUS + ("valid.txt.xz",)
VOCAB_DIR = os.path.join("/tmp", "bilm_benchmark_vocabulary")

# The published CNN without its widest filters (1024 filters; bilm_wikipedia_cpu.jsonnet's).
FILTERS = ELMO_FILTERS[:6]
BATCH_SIZE = 64
NUM_SAMPLES = 4096
MAX_LENGTH = 100

OURS = {
    "type": "bilm",
    "bilm": {
        "char_cnn": {
            "embedding": {"dim": 16},
            "filters": FILTERS,
            "n_highway": 1,
            "activation": "relu",
        },
        "lstm": {
            "dim": 512,
            "projection_dim": 128,
            "n_layers": 2,
            "cell_clip": 3,
            "proj_clip": 3,
            "use_skip_connections": True,
        },
    },
    "num_samples": NUM_SAMPLES,
    "dropout": 0.1,
}
PEER = {
    "type": "language_model",
    "bidirectional": True,
    "num_samples": NUM_SAMPLES,
    "text_field_embedder": {
        "token_embedders": {
            "tokens": {"type": "empty"},
            "token_characters": {
                "type": "character_encoding",
                "embedding": {"num_embeddings": 262, "embedding_dim": 16},
                "encoder": {
                    "type": "cnn-highway",
                    "activation": "relu",
                    "embedding_dim": 16,
                    "filters": FILTERS,
                    "num_highway": 1,
                    "projection_dim": 128,
                    "projection_location": "after_highway",
                    "do_layer_norm": False,
                },
            },
        }
    },
    "contextualizer": {
        "type": "lstm",
        "input_size": 128,
        "hidden_size": 512,
        "num_layers": 2,
        "bidirectional": True,
    },
}


def corpus_sentences(split: Tuple[str, ...], count: int) -> List[List[str]]:
    """The first `count` sentences of TRAIN or VALID of at most MAX_LENGTH words."""
    return read_sentences(shared_data(*split), count, max_length=MAX_LENGTH)


def batches_of(sentences: List[List[str]]) -> List[List[List[str]]]:
    """Batches of similar length, as a bucket sampler makes them, in a fixed order."""
    import random

    ordered = sorted(sentences, key=len)
    batches = [ordered[i : i + BATCH_SIZE] for i in range(0, len(ordered), BATCH_SIZE)]
    random.Random(0).shuffle(batches)
    return batches


def vocabulary():
    from allennlp.data import Vocabulary

    from elmo_plugin.allennlp.lm.corpus_vocabulary import CorpusVocabulary

    if not os.path.isdir(VOCAB_DIR):
        CorpusVocabulary.from_corpus(
            corpus=shared_data(*TRAIN), max_vocab_size=50_000
        ).save_to_files(VOCAB_DIR)
    return Vocabulary.from_files(VOCAB_DIR)


def build(which: str, vocab, compute_dtype: str = "float32"):
    """The model and a function making its tensors for a batch of sentences."""
    import torch
    from allennlp.common import Params
    from allennlp.data import Batch, Instance, Token
    from allennlp.data.fields import TextField
    from allennlp.data.token_indexers import ELMoTokenCharactersIndexer, SingleIdTokenIndexer
    from allennlp.models import Model

    import elmo_plugin.allennlp.lm  # noqa: F401
    from elmo_plugin.allennlp.lm.dataset_readers import BilmCorpusReader

    if which == "peer":
        # The Makefile installs allennlp-models off the default import path (its NarrativeQA
        # tools download NLTK data on import): `make venv`'s folder for it, or an installed one.
        sys.path.insert(0, os.path.join(sys.prefix, "allennlp-models"))
        import allennlp_models.lm  # noqa: F401

    torch.manual_seed(0)
    config = dict(OURS, compute_dtype=compute_dtype) if which == "bilm" else PEER
    model = Model.from_params(vocab=vocab, params=Params(json.loads(json.dumps(config))))
    reader = BilmCorpusReader()
    peer_indexers = {
        "tokens": SingleIdTokenIndexer(),
        "token_characters": ELMoTokenCharactersIndexer(),
    }

    def tensors(sentences: List[List[str]]) -> Dict:
        if which == "bilm":
            instances = [reader.text_to_instance(s) for s in sentences]
            for instance in instances:
                reader.apply_token_indexers(instance)
        else:
            # What the peer's `simple_language_modeling` reader makes, with <S> and </S>.
            instances = [
                Instance(
                    {"source": TextField([Token(w) for w in ["<S>"] + s + ["</S>"]], peer_indexers)}
                )
                for s in sentences
            ]
        batch = Batch(instances)
        batch.index_instances(vocab)
        return batch.as_tensor_dict()

    return model, tensors


def measure_speed(which: str, num_batches: int, threads: int, compute_dtype: str) -> Dict:
    import torch

    torch.set_num_threads(threads)
    vocab = vocabulary()
    model, tensors = build(which, vocab, compute_dtype)
    sentences = corpus_sentences(TRAIN, BATCH_SIZE * (num_batches + 1))
    batches = [(tensors(b), sum(map(len, b))) for b in batches_of(sentences)]
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()

    def step(batch):
        optimizer.zero_grad()
        model(**batch)["loss"].backward()
        optimizer.step()

    step(batches[0][0])  # warm-up, not timed
    start = time.perf_counter()
    for batch, _ in batches[1:]:
        step(batch)
    seconds = time.perf_counter() - start
    words = sum(count for _, count in batches[1:])
    return {
        "model": which,
        "words": words,
        "seconds": seconds,
        "words_per_second": words / seconds,
        "peak_rss_mb": peak_rss_mb(),
        "parameters": sum(p.numel() for p in model.parameters()),
    }


def held_out_perplexities(model, tensors, sentences: List[List[str]]) -> Dict[str, float]:
    """Perplexity with the full softmax on `sentences`: forward, backward and both."""
    import torch

    model.eval()
    totals = {"forward": 0.0, "backward": 0.0}
    count = 0
    with torch.no_grad():
        for batch in batches_of(sentences):
            output = model(**tensors(batch))
            predictions = sum(len(s) + 1 for s in batch)  # per direction
            for direction in totals:
                totals[direction] += float(output[f"{direction}_loss"]) * predictions
            count += predictions
    model.train()
    perplexities = {direction: math.exp(total / count) for direction, total in totals.items()}
    perplexities["both"] = math.exp(sum(totals.values()) / (2 * count))
    return perplexities


def train_until(model, tensors, stop) -> Dict:
    """Adam 1e-3 (gradient norm clipped at 10) on the training batches, in a fixed order,
    until `stop(steps, seconds)`: the steps, words and seconds it took."""
    import torch

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    sentences = corpus_sentences(TRAIN, 10**9)
    words, steps, start = 0, 0, time.perf_counter()
    model.train()
    for chunk_start in range(0, len(sentences), 100 * BATCH_SIZE):
        for batch in batches_of(sentences[chunk_start : chunk_start + 100 * BATCH_SIZE]):
            optimizer.zero_grad()
            loss = model(**tensors(batch))["loss"]
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            optimizer.step()
            words += sum(map(len, batch))
            steps += 1
            seconds = time.perf_counter() - start
            if stop(steps, seconds):
                return {"steps": steps, "words": words, "seconds": seconds}
    raise RuntimeError("ran out of training data")


def train_for(which: str, seconds: float, threads: int, held_out: int) -> Dict:
    import torch

    torch.set_num_threads(threads)
    model, tensors = build(which, vocabulary())
    trained = train_until(model, tensors, lambda _, elapsed: elapsed >= seconds)
    valid = corpus_sentences(VALID, held_out)
    return {
        "model": which,
        **trained,
        "held_out_perplexity": held_out_perplexities(model, tensors, valid)["both"],
        "peak_rss_mb": peak_rss_mb(),
    }


def train_steps(compute_dtype: str, steps: int, threads: int, held_out: int) -> Dict:
    """Ours in `compute_dtype` for `steps` batches, then its held-out perplexities."""
    import torch

    torch.set_num_threads(threads)
    model, tensors = build("bilm", vocabulary(), compute_dtype)
    trained = train_until(model, tensors, lambda done, _: done >= steps)
    valid = corpus_sentences(VALID, held_out)
    return {
        "compute_dtype": compute_dtype,
        **trained,
        "words_per_second": trained["words"] / trained["seconds"],
        "held_out_perplexity": held_out_perplexities(model, tensors, valid),
    }


def compare_speed(runs: int, num_batches: int, threads: int, compute_dtype: str) -> None:
    vocabulary()  # built once, before any timing
    results: Dict[str, List[Dict]] = {"peer": [], "bilm": []}
    for run in range(runs):
        for which in ("peer", "bilm"):
            result = run_child(
                __file__, "child-speed", which, str(num_batches), str(threads), compute_dtype
            )
            results[which].append(result)
            print(
                f"run {run + 1} {which}: {result['words_per_second']:.0f} words/s, "
                f"peak {result['peak_rss_mb']:.0f} MB",
                flush=True,
            )
    summary = {}
    for which, found in results.items():
        summary[which] = {
            "median_words_per_second": statistics.median(r["words_per_second"] for r in found),
            "median_peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in found),
            "parameters": found[0]["parameters"],
        }
    summary["speedup"] = (
        summary["bilm"]["median_words_per_second"] / summary["peer"]["median_words_per_second"]
    )
    print(json.dumps(summary, indent=2))


def race(seconds: float, threads: int, held_out: int) -> None:
    vocabulary()
    children = {
        which: start_child(__file__, "child-race", which, str(seconds), str(threads), str(held_out))
        for which in ("peer", "bilm")
    }
    results = {which: child_result(child) for which, child in children.items()}
    print(json.dumps(results, indent=2))


def quality(steps: int, threads: int, held_out: int) -> None:
    """Ours trained in float32 and in bfloat16 at once, one process each, from the same
    initial weights on the same batches (and the same dropout and sample draws)."""
    vocabulary()
    children = {
        dtype: start_child(
            __file__, "child-quality", dtype, str(steps), str(threads), str(held_out)
        )
        for dtype in ("float32", "bfloat16")
    }
    results = {dtype: child_result(child) for dtype, child in children.items()}
    print(json.dumps(results, indent=2))


def main() -> None:
    if sys.argv[1:2] == ["child-speed"]:
        answer(measure_speed(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]))
        return
    if sys.argv[1:2] == ["child-race"]:
        answer(train_for(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])))
        return
    if sys.argv[1:2] == ["child-quality"]:
        answer(train_steps(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])))
        return
    from elmo_plugin.elmo.execution.compute_dtype import COMPUTE_DTYPES

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    speed = commands.add_parser("speed")
    speed.add_argument("--runs", type=int, default=5)
    speed.add_argument("--batches", type=int, default=8)
    speed.add_argument("--threads", type=int, default=1)
    speed.add_argument(
        "--compute-dtype",
        choices=sorted(COMPUTE_DTYPES),
        default="float32",
        help="ours computes in this dtype; the peer stays float32",
    )
    race_parser = commands.add_parser("race")
    race_parser.add_argument("--seconds", type=float, default=900)
    race_parser.add_argument("--threads", type=int, default=1)
    race_parser.add_argument("--held-out", type=int, default=500)
    quality_parser = commands.add_parser("quality")
    quality_parser.add_argument("--steps", type=int, default=1000)
    quality_parser.add_argument("--threads", type=int, default=1)
    quality_parser.add_argument("--held-out", type=int, default=1000)
    args = parser.parse_args()
    shared_data(*TRAIN)
    print(header("cpu", f"{args.threads} per process"), flush=True)
    if args.command == "speed":
        compare_speed(args.runs, args.batches, args.threads, args.compute_dtype)
    elif args.command == "race":
        race(args.seconds, args.threads, args.held_out)
    else:
        quality(args.steps, args.threads, args.held_out)


if __name__ == "__main__":
    main()
