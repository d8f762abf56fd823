"""
Embedding throughput of our `Elmo` against AllenNLP's `Elmo`, same weights, same sentences,
same threads, in one run.

Sentences are real: the first ones of ../shared/data/lm_wikipedia_en_2015/tokenized/valid.txt.xz.
Weights are random at the published sizes ("small": 2x1024_128_2048cnn_1xhighway, "original":
2x4096_512_2048cnn_2xhighway), written once in the bilm-tf format and loaded by both.
Each measurement runs in a fresh subprocess (so each has its own peak memory); one batch of
other sentences warms each process up untimed (thread pools, MKL's buffers, first
allocations), after which our character-CNN cache is emptied, so that the timed sentences
start with no token or activation cache carried over; the two implementations alternate, and
the medians of `--runs` runs are reported with their ratio. Outputs are compared too.

Both implementations run with the same MKL kernels: MKL's own choice by default
(`--mkl-dispatch default`), or, with `--mkl-dispatch avx2`, its AVX2 code path on AMD processors
for both (`elmo_plugin/elmo/bilm/lstm/mkl_dispatch.py`: only the MKL of torch 1.12, the
"allennlp-2.10" profile, honours it).

With `--compute-dtype bfloat16` ours runs its products in bfloat16 (AllenNLP's stays float32,
the reference), and the table adds the largest difference of each layer's activations on the
first timed batch, relative to that layer's largest float32 activation (the measure of
`tests/elmo/test_compute_dtype.py`, which bounds it by 2e-2).

    python benchmarks/embedding_speed.py --sizes small original --runs 3
    python benchmarks/embedding_speed.py --sizes small original --runs 3 --mkl-dispatch avx2
    python benchmarks/embedding_speed.py --sizes small original --runs 3 --compute-dtype bfloat16
"""

import argparse
import json
import os
import statistics
import tempfile
import time
from typing import Any, Dict, List

from common import (
    answer,
    header,
    peak_rss_mb,
    read_sentences,
    run_child,
    shared_data,
    write_random_bilm,
)

CORPUS = ("lm_wikipedia_en_2015", "tokenized", "valid.txt.xz")


def batches(sentences, batch_size):
    for start in range(0, len(sentences), batch_size):
        yield sentences[start : start + batch_size]


def worker(
    implementation: str,
    model_dir: str,
    sentences_file: str,
    batch_size: int,
    first_batch_file: str,
    device: str = "cpu",
    compute_dtype: str = "float32",
):
    import torch
    from allennlp.modules.elmo import batch_to_ids

    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "2")))
    # Exact float32 on a GPU too: cuDNN's convolutions default to TF32 on Ampere and later.
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    options = os.path.join(model_dir, "options.json")
    weights = os.path.join(model_dir, "weights.hdf5")
    elmo: torch.nn.Module
    if implementation == "allennlp":
        from allennlp.modules.elmo import Elmo as AllenNlpElmo

        elmo = AllenNlpElmo(options, weights, 1, dropout=0.0)
        # Its private biLM (`_ElmoBiLm`), assigned in `__init__` without a type mypy can infer.
        bilm: Any = elmo._elmo_lstm  # type: ignore[has-type]

        def run(ids):
            bilm._elmo_lstm.reset_states()  # stateless, like ours by default
            return bilm(ids)["activations"]

    else:
        from elmo_plugin.elmo import Elmo

        ours = Elmo(options, weights, 1, dropout=0.0, compute_dtype=compute_dtype)
        elmo = ours
        run = lambda ids: ours.bilm(ids)["activations"]  # noqa: E731
    elmo.eval().to(device)
    synchronize = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    with open(sentences_file) as handle:
        sentences = json.load(handle)
    warm_up, sentences = sentences["warm_up"], sentences["timed"]
    tokens = sum(len(s) for s in sentences)
    checksum, first_batch = [], None
    with torch.no_grad():
        run(batch_to_ids(warm_up).to(device))
        if implementation == "ours":
            ours.bilm.character_encoder.clear_cache()
        synchronize()
        start = time.perf_counter()
        for batch in batches(sentences, batch_size):
            activations = run(batch_to_ids(batch).to(device))
            checksum.append([float(layer.abs().sum()) for layer in activations])
            if first_batch is None:
                first_batch = [layer.cpu() for layer in activations]
        synchronize()
        elapsed = time.perf_counter() - start
    if device.startswith("cuda"):
        peak_mb = torch.cuda.max_memory_allocated() / 2**20
    else:
        peak_mb = peak_rss_mb()
    torch.save(first_batch, first_batch_file)
    answer(
        {
            "tokens_per_s": tokens / elapsed,
            "seconds": elapsed,
            "peak_mb": peak_mb,
            "checksum": checksum,
        }
    )


def worker_environment(mkl_dispatch: str) -> Dict[str, str]:
    """The same MKL setting for both implementations' processes."""
    from elmo_plugin.elmo.bilm.lstm.mkl_dispatch import VARIABLE, avx2_dispatch_setting

    environment = {k: v for k, v in os.environ.items() if k != VARIABLE}
    if mkl_dispatch == "avx2":
        os.environ.pop(VARIABLE, None)
        setting = avx2_dispatch_setting()
        if setting is not None:
            environment[VARIABLE] = setting
    return environment


def measure(
    implementation,
    model_dir,
    sentences_file,
    batch_size,
    environment,
    device="cpu",
    compute_dtype="float32",
) -> Dict:
    """One worker's result; `first_batch` is the path of its first batch's activations."""
    handle, first_batch = tempfile.mkstemp(prefix=f"{implementation}-", suffix=".pt", dir=model_dir)
    os.close(handle)
    result = run_child(
        __file__,
        "--worker",
        implementation,
        "--model-dir",
        model_dir,
        "--sentences-file",
        sentences_file,
        "--batch-size",
        str(batch_size),
        "--first-batch",
        first_batch,
        "--device",
        device,
        "--compute-dtype",
        compute_dtype,
        environment=environment,
    )
    return dict(result, first_batch=first_batch)


def max_layer_difference(reference: str, other: str) -> float:
    """The largest difference of any layer's activations, relative to that layer's largest."""
    import torch

    return max(
        float((a - b).abs().max() / a.abs().max())
        for a, b in zip(torch.load(reference), torch.load(other))
    )


def max_relative_difference(a, b) -> float:
    return max(
        abs(x - y) / max(abs(x), 1e-6)
        for batch_a, batch_b in zip(a, b)
        for x, y in zip(batch_a, batch_b)
    )


def main():
    from elmo_plugin.elmo.execution.compute_dtype import COMPUTE_DTYPES
    from tests.published_sizes import PUBLISHED_SIZES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", nargs="+", default=["small", "original"], choices=PUBLISHED_SIZES
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--sentences",
        type=int,
        default=None,
        help="sentences per run (default: 256 small, 128 original)",
    )
    parser.add_argument(
        "--mkl-dispatch",
        choices=["default", "avx2"],
        default="default",
        help="MKL kernels for both: MKL's own choice, or AVX2 on AMD processors",
    )
    parser.add_argument(
        "--device", default="cpu", help="cpu, or cuda for a GPU (peak memory is then the GPU's)"
    )
    parser.add_argument(
        "--compute-dtype",
        choices=sorted(COMPUTE_DTYPES),
        default="float32",
        help="ours computes in this dtype; AllenNLP's stays float32",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", help=argparse.SUPPRESS)
    parser.add_argument("--sentences-file", help=argparse.SUPPRESS)
    parser.add_argument("--first-batch", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(
            args.worker,
            args.model_dir,
            args.sentences_file,
            args.batch_size,
            args.first_batch,
            args.device,
            args.compute_dtype,
        )
        return
    corpus = shared_data(*CORPUS)
    environment = worker_environment(args.mkl_dispatch)
    threads = os.environ.get("BENCH_THREADS", "2")
    print(
        f"{header(args.device, threads)}, batch size {args.batch_size}, "
        f"{args.runs} runs each, medians; corpus {os.path.relpath(corpus)}; MKL_DEBUG_CPU_TYPE="
        f"{environment.get('MKL_DEBUG_CPU_TYPE', 'unset')} for both; ours in {args.compute_dtype}, "
        "AllenNLP's in float32"
    )
    print(
        "| size | sentences | tokens | AllenNLP tokens/s | ours tokens/s | speed-up | "
        "AllenNLP peak MB | ours peak MB | max rel. diff of layer sums | max rel. diff of layers |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        count = args.sentences or (256 if size == "small" else 128)
        sentences = read_sentences(corpus, count + args.batch_size)
        warm_up, sentences = sentences[count:], sentences[:count]
        with tempfile.TemporaryDirectory() as model_dir:
            write_random_bilm(size, model_dir)
            sentences_file = os.path.join(model_dir, "sentences.json")
            with open(sentences_file, "w") as handle:
                json.dump({"warm_up": warm_up, "timed": sentences}, handle)
            results: Dict[str, List[Dict[str, Any]]] = {"allennlp": [], "ours": []}
            for _ in range(args.runs):
                for implementation in ("allennlp", "ours"):
                    results[implementation].append(
                        measure(
                            implementation,
                            model_dir,
                            sentences_file,
                            args.batch_size,
                            environment,
                            args.device,
                            args.compute_dtype,
                        )
                    )
            layers = max_layer_difference(
                results["allennlp"][0]["first_batch"], results["ours"][0]["first_batch"]
            )
        speed = {k: statistics.median(r["tokens_per_s"] for r in v) for k, v in results.items()}
        peak = {k: statistics.median(r["peak_mb"] for r in v) for k, v in results.items()}
        difference = max_relative_difference(
            results["allennlp"][0]["checksum"], results["ours"][0]["checksum"]
        )
        tokens = sum(len(s) for s in sentences)
        print(
            f"| {size} | {count} | {tokens} | {speed['allennlp']:.0f} | {speed['ours']:.0f} | "
            f"{speed['ours'] / speed['allennlp']:.2f}x | {peak['allennlp']:.0f} | "
            f"{peak['ours']:.0f} | {difference:.1e} | {layers:.1e} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
