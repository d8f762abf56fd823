"""
ELMo on one GPU, in one command (under 5 minutes on an H100/H200), every number from this run:

1. **Embedding**: our `Elmo`'s biLM against AllenNLP's `Elmo`, random weights at the published
   sizes ("small", "original"), the first 1,024 sentences of ../shared/data's Wikipedia valid
   split, batches of 32 and 256, the words' character ids and the copy to the GPU included
   (AllenNLP's `batch_to_ids` for AllenNLP's, ours, `elmo_plugin.elmo.batch_to_ids`, for ours:
   each library as its user calls it), TF32 off; ours in float32 and bfloat16; medians of
   `--runs` alternating passes (each pass starts with our character-CNN cache and character-id
   table empty), and the largest difference of each layer from AllenNLP's on the first batch,
   relative to that layer's largest value.
2. **Training the paper's biLM** (`bilm_elmo_original.jsonnet`'s model: 2 x 4096 -> 512 with
   clipping, 2048-filter CNN, 2 highway layers, dropout 0.1; 8,192 sampled negatives over a
   793,471-word softmax, the 1B Word Benchmark vocabulary's size, with the sparse softmax
   gradient; the config's Adagrad 0.2 (the sparse softmax weight in a parameter group of its
   own); gradient norm 10 as the `sparse_gradient_descent` trainer clips it;
   packed windows of 20 tokens), one step as AllenNLP's trainer takes it (the batch copied to
   the GPU, forward, backward, gradient norm read back, optimizer step, loss and metrics read
   back), at 128, 512 and 2,048 lanes, in float32, TF32 and bfloat16: tokens per second, peak
   GPU memory, and kernel launches and host reads per step (one profiled step). Beside them the
   same step with CUDA graphs, with the packed LSTM path (the CPU's, the GPU's before the fused
   path), with the dense softmax gradient, and with CUDA graphs and one optimizer group (every
   parameter stepped one tensor at a time, as before the config's groups).
3. **Inference sorted by length** against the dense path (`--parts sorted`): our `Elmo`
   without CUDA graphs, each size, dtype and batch size, alternating; the evidence for
   `ElmoBiLstm.sorts_inference`'s rule.
4. **`ElmoEmbedder.embed`**, the user's call (`--parts embedder`): the sentences sorted by
   length into batches of at most 1,024 sentences and `max_tokens` positions (4,096, the
   default, and 65,536), its tokenisation and the copies both ways included, float32 and
   bfloat16 (`load_bilm(compute_dtype=...)`), tokens/s (medians of `--runs`) and the largest
   difference of bfloat16's layers from float32's, relative to each layer's largest value; the
   target is 1,000,000 tokens/s in bfloat16 at "original", within 2e-2.
5. **The hardware's LSTM**: cuDNN's `torch.nn.LSTM(proj_size=512)`, 2 layers of 4096 cells, one
   per direction, 20 steps, forward and backward in bfloat16: the reference (it has no cell or
   projection clipping, so it is not ELMo's function).

Further parts, for choosing between implementations: `encoder` and `variants` (the character
encoder's GPU choices, alone and in the training step), `deduplication` (the training step with
the encoder deduplicating tokens, and encoding every position so that nothing is read back to
the host), `profile` (a profiled training step) and `embedding_profile` (profiled embedding
passes).

    python benchmarks/gpu_speed.py                 # on a CUDA machine
    python benchmarks/gpu_speed.py --device cpu --toy   # the same code at toy sizes (a test),
                                                        # on training_configs/bilm/sample/

Words come from ../shared/data/lm_wikipedia_en_2015/tokenized/valid.txt.xz (a copy of that file
is all the run needs); training targets are drawn log-uniformly, as the vocabulary's
frequency order makes them.
"""

import argparse
import dataclasses
import contextlib
import functools
import gc
import math
import os
import statistics
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy
import torch

from common import (
    ROOT,
    alternating_times,
    header,
    medians_of,
    read_sentences,
    shared_data,
    write_random_bilm,
)

CORPUS = ("lm_wikipedia_en_2015", "tokenized", "valid.txt.xz")
TOY_CORPUS = ("training_configs", "bilm", "sample", "wiki_valid.txt")  # in the project, for `--toy`
PAPER_VOCABULARY = 793_471
WINDOW = 20
PAPER_CONFIG = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "..",
    "training_configs/bilm/bilm_elmo_original.jsonnet",
)
LAUNCHES = ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC", "cudaGraphLaunch")


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


@contextlib.contextmanager
def tf32(enabled: bool):
    previous = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = previous


# ---------------------------------------------------------------- embedding


def embedders(model_dir: str, device: str) -> Dict[str, Callable]:
    from allennlp.modules.elmo import Elmo as AllenNlpElmo
    from allennlp.modules.elmo import batch_to_ids as allennlp_batch_to_ids

    from elmo_plugin.elmo import Elmo

    options = os.path.join(model_dir, "options.json")
    weights = os.path.join(model_dir, "weights.hdf5")
    theirs = AllenNlpElmo(options, weights, 1, dropout=0.0).eval().to(device)
    # Its private biLM (`_ElmoBiLm`), assigned in `__init__` without a type mypy can infer.
    their_bilm: Any = theirs._elmo_lstm  # type: ignore[has-type]

    def allennlp(ids):
        their_bilm._elmo_lstm.reset_states()  # stateless, like ours by default
        return their_bilm(ids)["activations"]

    allennlp.to_ids = allennlp_batch_to_ids  # type: ignore[attr-defined]

    runs: Dict[str, Callable] = {"allennlp": allennlp}
    for dtype in ("float32", "bfloat16"):
        ours = Elmo(options, weights, 1, dropout=0.0, compute_dtype=dtype).eval().to(device)
        runs[dtype] = _ours(ours)
    for dtype in ("float32", "bfloat16"):
        graphed = Elmo(
            options,
            weights,
            1,
            dropout=0.0,
            compute_dtype=dtype,
            # "auto": graphs on CUDA, where this row is measured; the CPU toy run has none.
            execution={"cuda_graphs": "auto"},
        )
        graphed = graphed.eval().to(device)
        runs[f"{dtype}, graphs"] = _ours(graphed)
    return runs


def _ours(elmo) -> Callable:
    from elmo_plugin.elmo import CharacterIdTable

    def run(ids):
        return elmo.bilm(ids)["activations"]

    def clear():
        elmo.bilm.character_encoder.clear_cache()
        run.to_ids = CharacterIdTable().batch_to_ids  # type: ignore[attr-defined]

    run.clear = clear  # type: ignore[attr-defined]
    run.elmo = elmo  # type: ignore[attr-defined]
    clear()
    return run


def embedding_pass(run: Callable, sentences, batch_size: int, device: str):
    getattr(run, "clear", lambda: None)()
    to_ids = getattr(run, "to_ids")
    first = None
    synchronize(device)
    start = time.perf_counter()
    with torch.no_grad():
        for i in range(0, len(sentences), batch_size):
            activations = run(to_ids(sentences[i : i + batch_size]).to(device))
            if first is None:
                first = activations
    synchronize(device)
    assert first is not None, "no sentences"
    return time.perf_counter() - start, [layer.float().cpu() for layer in first]


def relative_difference(reference: List[torch.Tensor], other: List[torch.Tensor]) -> float:
    return max(
        float((o - r).abs().max() / r.abs().max().clamp(min=1e-12))
        for r, o in zip(reference, other)
    )


def embedding_table(sizes, batch_sizes, sentences, device: str, runs: int) -> None:
    tokens = sum(len(s) for s in sentences)
    print(
        f"\n## Embedding ({len(sentences)} sentences, {tokens} tokens; tokens/s, medians of {runs})"
    )
    print(
        "| size | batch | AllenNLP | ours float32 | ours float32, CUDA graphs | ours bfloat16 "
        "| ours bfloat16, CUDA graphs | float32 diff | bfloat16 diff |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for size in sizes:
        with tempfile.TemporaryDirectory() as model_dir:
            write_random_bilm(size, model_dir)
            implementations = embedders(model_dir, device)
            for run in implementations.values():
                embedding_pass(run, sentences[:64], 32, device)  # warm-up, kernels compiled
            for batch_size in batch_sizes:
                times: Dict[str, List[float]] = {name: [] for name in implementations}
                firsts = {}
                for _ in range(runs):
                    for name, run in implementations.items():
                        elapsed, firsts[name] = embedding_pass(run, sentences, batch_size, device)
                        times[name].append(elapsed)
                rate = {n: tokens / statistics.median(t) for n, t in times.items()}
                base = rate["allennlp"]

                def difference(dtype: str) -> float:  # the larger of the plain and graphed runs'
                    return max(
                        relative_difference(firsts["allennlp"], firsts[name])
                        for name in (dtype, f"{dtype}, graphs")
                    )

                print(
                    f"| {size} | {batch_size} | {base:,.0f} | "
                    + " | ".join(
                        f"{rate[name]:,.0f} ({rate[name] / base:.2f}x)"
                        for name in ("float32", "float32, graphs", "bfloat16", "bfloat16, graphs")
                    )
                    + f" | {difference('float32'):.1e} | {difference('bfloat16'):.1e} |",
                    flush=True,
                )
            del implementations
            gc.collect()  # the modules and their CUDA graphs, before the next part's peaks
            if device.startswith("cuda"):
                torch.cuda.empty_cache()


def embedder_table(sizes, sentences, device: str, runs: int, budgets: List[int]) -> None:
    from elmo_plugin.elmo import load_bilm
    from elmo_plugin.elmo.execution.compute_dtype import COMPUTE_DTYPES
    from elmo_plugin.embedding.elmo_embedder import ElmoEmbedder

    tokens = sum(len(s) for s in sentences)
    cuda_device = (torch.device(device).index or 0) if device.startswith("cuda") else -1
    print(
        f"\n## ElmoEmbedder.embed, sorted token budgets ({len(sentences)} sentences, {tokens} "
        f"tokens; medians of {runs})"
    )
    print("| size | max_tokens | float32 tokens/s | bfloat16 tokens/s | bfloat16 diff |")
    print("|---|---|---|---|---|")
    for size in sizes:
        with tempfile.TemporaryDirectory() as model_dir:
            files = write_random_bilm(size, model_dir)
            for budget in budgets:
                embedders = {
                    dtype: ElmoEmbedder.from_bilm(
                        load_bilm(*files, compute_dtype=COMPUTE_DTYPES[dtype]),
                        cuda_device,
                        budget,
                    )
                    for dtype in ("float32", "bfloat16")
                }
                outputs: Dict[str, torch.Tensor] = {}

                def run(dtype: str) -> None:  # embed() returns host arrays: nothing left queued
                    embedders[dtype].elmo_bilm.character_encoder.clear_cache()
                    embedded = embedders[dtype].embed(sentences, layers="all", batch_size=1024)
                    outputs[dtype] = torch.from_numpy(embedded)

                for embedder in embedders.values():
                    embedder.embed(sentences[:64], layers="all")  # warm-up, kernels compiled
                times = alternating_times(
                    {dtype: functools.partial(run, dtype) for dtype in embedders}, runs
                )
                rate = {dtype: tokens / median for dtype, median in medians_of(times).items()}
                difference = relative_difference(
                    list(outputs["float32"].unbind(1)), list(outputs["bfloat16"].unbind(1))
                )
                print(
                    f"| {size} | {budget} | {rate['float32']:,.0f} | {rate['bfloat16']:,.0f} "
                    f"| {difference:.1e} |",
                    flush=True,
                )
                embedders.clear()  # the biLMs and their GPU memory, before the next budget
                outputs.clear()
                gc.collect()
                if device.startswith("cuda"):
                    torch.cuda.empty_cache()


def embedding_profile(sentences, batch_size: int, device: str, name: str) -> None:
    """Where a pass of `embedding_table`'s `Elmo` called `name` at "original" size spends its
    time (torch.profiler over a second pass, the caches emptied, TF32 off)."""
    from torch.profiler import ProfilerActivity, profile

    with tempfile.TemporaryDirectory() as model_dir, tf32(False):
        write_random_bilm("original", model_dir)
        run = embedders(model_dir, device)[name]
        embedding_pass(run, sentences, batch_size, device)
        activities = [ProfilerActivity.CPU] + (
            [ProfilerActivity.CUDA] if device.startswith("cuda") else []
        )
        with profile(activities=activities) as profiler:
            elapsed, _ = embedding_pass(run, sentences, batch_size, device)
    events = profiler.key_averages()
    print(
        f"\n## Profile, embedding {len(sentences)} sentences in batches of {batch_size}, "
        f"original, {name}: {elapsed * 1000:.0f} ms (profiled)"
    )
    print(events.table(sort_by="self_cpu_time_total", row_limit=20, max_name_column_width=50))
    print(events.table(sort_by="self_device_time_total", row_limit=15, max_name_column_width=50))


def sorted_inference_table(sizes, batch_sizes, sentences, device: str, runs: int) -> None:
    """Our `Elmo` (no CUDA graphs) with inference sorted by length, each step on the sequences
    still running (`ElmoBiLstm._forward_sorted`), against the dense path every step on the
    whole batch, alternating in one process: tokens/s, medians of `runs`."""
    tokens = sum(len(s) for s in sentences)
    print(f"\n## Inference sorted by length against dense (tokens/s, medians of {runs})")
    print("| size | batch | dtype | dense | sorted | sorted / dense |")
    print("|---|---|---|---|---|---|")
    for size in sizes:
        with tempfile.TemporaryDirectory() as model_dir:
            write_random_bilm(size, model_dir)
            runs_by_name = embedders(model_dir, device)
            for dtype in ("float32", "bfloat16"):
                run = runs_by_name[dtype]
                lstm = _elmo_of(run).bilm.lstm
                for batch_size in batch_sizes:
                    times: Dict[str, List[float]] = {"dense": [], "sorted": []}
                    for _ in range(runs + 1):  # the first pass of each: a warm-up
                        for name in times:
                            with _sorted_inference(lstm, name == "sorted"):
                                elapsed, _ = embedding_pass(run, sentences, batch_size, device)
                            times[name].append(elapsed)
                    rate = {n: tokens / statistics.median(t[1:]) for n, t in times.items()}
                    print(
                        f"| {size} | {batch_size} | {dtype} | {rate['dense']:,.0f} | "
                        f"{rate['sorted']:,.0f} | {rate['sorted'] / rate['dense']:.2f} |",
                        flush=True,
                    )
            del runs_by_name
            gc.collect()


def _elmo_of(run: Callable):
    return run.elmo  # type: ignore[attr-defined]


@contextlib.contextmanager
def _sorted_inference(lstm, enabled: bool):
    # Both rows on the dense (fused) path, which sorting is a mode of, on every device.
    before = lstm.execution
    lstm.execution = dataclasses.replace(before, fused=True, sorted_inference=enabled)
    try:
        yield
    finally:
        lstm.execution = before


# ---------------------------------------------------------------- training


def paper_model(options, vocabulary_size: int, num_samples: int, device: str):
    from allennlp.data import Vocabulary

    from elmo_plugin.allennlp.lm.corpus import SENTENCE_END, SENTENCE_START
    from elmo_plugin.allennlp.lm.models import BilmLanguageModel

    vocab = Vocabulary(non_padded_namespaces=[])
    words = [SENTENCE_START, SENTENCE_END] + [f"w{i}" for i in range(vocabulary_size - 3)]
    vocab.add_tokens_to_namespace(words, "tokens")
    torch.manual_seed(0)
    model = BilmLanguageModel(
        vocab, bilm=options, num_samples=num_samples, dropout=0.1, sparse_softmax_gradient=True
    )
    return model.to(device)


def packed_batches(sentences, lanes: int, vocabulary_size: int, count: int):
    """`count` batches of `lanes` windows of real words, with log-uniform targets."""
    from allennlp.modules.elmo import batch_to_ids

    from elmo_plugin.elmo import ELMO_INDEXER_KEY

    stream = [word for sentence in sentences for word in sentence]
    generator = numpy.random.RandomState(0)
    batches = []
    for b in range(count):
        start = (b * lanes * WINDOW) % max(len(stream) - lanes * WINDOW, 1)
        words = (stream * (1 + lanes * WINDOW // len(stream)))[start : start + lanes * WINDOW]
        windows = [words[i * WINDOW : (i + 1) * WINDOW] for i in range(lanes)]
        targets = numpy.exp(generator.rand(lanes, WINDOW + 2) * math.log(vocabulary_size))
        batches.append(
            {
                "tokens": {ELMO_INDEXER_KEY: {"elmo_tokens": batch_to_ids(windows)}},
                "targets": {
                    "tokens": {
                        "tokens": torch.from_numpy(targets.astype(numpy.int64)).clamp(
                            1, vocabulary_size - 1
                        )
                    }
                },
                "lane": torch.arange(lanes),
            }
        )
    return batches


def training_step(model, optimizer, batch, window: int, device: str) -> None:
    """One step as AllenNLP's GradientDescentTrainer takes it."""
    from allennlp.nn.util import move_to_device

    from elmo_plugin.allennlp.training.sparse_gradient_trainer import clip_gradient_norm

    for parameter in model.parameters():
        parameter.grad = None
    inputs = move_to_device(batch, torch.device(device))  # as AllenNLP's trainer moves it
    inputs["window"] = torch.full_like(inputs["lane"], window)
    output = model(**inputs)
    output["loss"].backward()
    # What the paper configs' trainer (`sparse_gradient_descent`) does with `grad_norm`.
    clip_gradient_norm(model.parameters(), 10.0).item()
    optimizer.step()
    output["loss"].item()
    model.get_metrics()


def profile_step(model, optimizer, batch, device: str) -> Dict[str, int]:
    """Kernel launches and host reads of device values (each one a synchronisation) of one step."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + (
        [ProfilerActivity.CUDA] if device.startswith("cuda") else []
    )
    with profile(activities=activities) as profiler:
        training_step(model, optimizer, batch, 10_000, device)
        synchronize(device)
    counts = {event.key: event.count for event in profiler.key_averages()}
    return {
        "launches": sum(counts.get(name, 0) for name in LAUNCHES),
        "host_reads": counts.get("aten::_local_scalar_dense", 0),
    }


def paper_optimizer(model, grouped: bool = True):
    """bilm_elmo_original.jsonnet's optimizer, as AllenNLP builds it: Adagrad with the sparse
    softmax weight in a parameter group of its own, or (`grouped=False`) in one group with the
    rest, which steps every parameter one tensor at a time."""
    from allennlp.common import Params
    from allennlp.training.optimizers import Optimizer

    config = Params.from_file(PAPER_CONFIG).as_dict()["trainer"]["optimizer"]
    if not grouped:
        del config["parameter_groups"]
    return Optimizer.from_params(
        model_parameters=list(model.named_parameters()), params=Params(config)
    )


def measure_training(
    model, batches, device: str, steps: int, profiled: bool, grouped: bool = True
) -> Dict[str, float]:
    optimizer = paper_optimizer(model, grouped)
    model.reset_states()
    for window in range(3):  # warm-up: kernels compiled, optimizer state made
        training_step(model, optimizer, batches[window % len(batches)], window, device)
    synchronize(device)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    for window in range(3, 3 + steps):
        training_step(model, optimizer, batches[window % len(batches)], window, device)
    synchronize(device)
    elapsed = (time.perf_counter() - start) / steps
    lanes = batches[0]["lane"].numel()
    result = {"tokens_per_s": lanes * WINDOW / elapsed, "ms": elapsed * 1000}
    result["peak_gb"] = (
        torch.cuda.max_memory_allocated() / 2**30 if device.startswith("cuda") else 0.0
    )
    if profiled:
        result.update(profile_step(model, optimizer, batches[0], device))
    del optimizer
    return result


def set_compute_dtype(model, dtype: torch.dtype) -> None:
    """One model timed in both dtypes (a model per dtype would hold twice the GPU memory, or
    rebuild 0.4 G parameters per row): the biLM's one setter, and the softmax's dtype, which
    the model otherwise gives it at construction."""
    model.bilm.set_compute_dtype(dtype)
    model.softmax.compute_dtype = dtype


def training_table(options, vocabulary_size, num_samples, sentences, lane_counts, device, steps):
    from elmo_plugin.elmo import Execution

    model = paper_model(options, vocabulary_size, num_samples, device)
    parameters = sum(p.numel() for p in model.parameters())
    print(
        f"\n## Training the paper's biLM ({parameters / 1e6:.1f} M parameters, "
        f"{vocabulary_size:,}-word softmax, {num_samples} samples; {steps} timed steps)"
    )
    print("| lanes | setting | tokens/s | ms/step | peak GB | launches/step | host reads/step |")
    print("|---|---|---|---|---|---|---|")
    settings = [("float32", False), ("tf32", False), ("bfloat16", True)]
    if not device.startswith("cuda"):
        settings = [("float32", True), ("bfloat16", True)]
    for lanes in lane_counts:
        batches = packed_batches(sentences, lanes, vocabulary_size, 4)
        rows: List[Tuple[str, Dict[str, bool], bool]] = [
            (name, {}, profiled) for name, profiled in settings
        ]
        rows.append(("bfloat16, CUDA graphs", {"graphs": True}, True))
        if lanes <= 512:
            rows += [
                ("bfloat16, packed LSTM path", {"fused": False}, True),
                ("bfloat16, dense softmax gradient", {"sparse": False}, False),
                (
                    "bfloat16, CUDA graphs, one optimizer group",
                    {"graphs": True, "one_group": True},
                    True,
                ),
            ]
        for name, changes, profiled in rows:
            set_compute_dtype(
                model, torch.bfloat16 if name.startswith("bfloat16") else torch.float32
            )
            # Set as a user does: the model's `execution` (TF32 scoped to its passes).
            model.bilm.set_execution(
                Execution(
                    fused=changes.get("fused"),
                    cuda_graphs=None if changes.get("graphs") else False,  # None: on CUDA
                    tf32=name == "tf32",
                )
            )
            model.softmax.sparse_gradient = changes.get("sparse", True)
            try:
                result = measure_training(
                    model, batches, device, steps, profiled, not changes.get("one_group")
                )
            except torch.cuda.OutOfMemoryError:
                print(f"| {lanes} | {name} | out of memory | | | | |", flush=True)
                torch.cuda.empty_cache()
                continue
            print(
                f"| {lanes} | {name} | {result['tokens_per_s']:,.0f} | {result['ms']:.1f} | "
                f"{result['peak_gb']:.1f} | {result.get('launches', '')} | "
                f"{result.get('host_reads', '')} |",
                flush=True,
            )
            if device.startswith("cuda"):
                torch.cuda.empty_cache()
    model.bilm.set_execution(Execution())
    del model


def profile_table(options, vocabulary_size, num_samples, sentences, lane_counts, device) -> None:
    """Where a bfloat16 step's time goes: wall time, the GPU's busy time, and the operators
    that take most of each (torch.profiler over 3 steps after 3 warm-up steps)."""
    from torch.profiler import ProfilerActivity, profile

    model = paper_model(options, vocabulary_size, num_samples, device)
    set_compute_dtype(model, torch.bfloat16)
    for lanes in lane_counts:
        batches = packed_batches(sentences, lanes, vocabulary_size, 4)
        optimizer = paper_optimizer(model)
        model.reset_states()
        for window in range(3):
            training_step(model, optimizer, batches[window % 4], window, device)
        synchronize(device)
        activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        start = time.perf_counter()
        with profile(activities=activities, record_shapes=True) as profiler:
            for window in range(3, 6):
                training_step(model, optimizer, batches[window % 4], window, device)
            synchronize(device)
        wall = (time.perf_counter() - start) / 3
        events = profiler.key_averages()
        # The GPU's busy time is the tables' "Self CUDA time total" (over the 3 steps).
        print(f"\n## Profile, {lanes} lanes, bfloat16: {wall * 1000:.1f} ms wall a step (profiled)")
        print(
            events.table(sort_by="self_device_time_total", row_limit=24, max_name_column_width=60)
        )
        print(events.table(sort_by="self_cpu_time_total", row_limit=10, max_name_column_width=48))
        by_shape = profiler.key_averages(group_by_input_shape=True)
        print(
            by_shape.table(
                sort_by="self_device_time_total",
                row_limit=20,
                max_name_column_width=40,
                max_shapes_column_width=70,
            )
        )
        del optimizer
    del model


# ---------------------------------------------------------------- the character encoder


def _adaptive_pooling(features: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.adaptive_max_pool2d(features, 1).flatten(1)


def _sorted_unique(rows: torch.Tensor):
    return torch.unique(rows, dim=0, return_inverse=True)


def _channels_first_convolution(embedded, weight, bias=None):
    features = torch.nn.functional.conv1d(embedded.transpose(1, 2), weight, bias)
    return features.max(dim=-1).values


# The choices the character encoder's GPU path was measured against: "before" is what CUDA ran
# until the pooling and the distinct-row search were given GPU paths of their own.
ENCODER_VARIANTS: Dict[str, Dict[str, Any]] = {
    "before: adaptive_max_pool2d, unique(dim=0)": {
        "max_over_positions": _adaptive_pooling,
        "distinct_rows": _sorted_unique,
    },
    "max(dim), unique(dim=0)": {
        "distinct_rows": _sorted_unique,
    },
    "adaptive_max_pool2d, keyed rows": {"max_over_positions": _adaptive_pooling},
    "amax, keyed rows": {"max_over_positions": lambda f: f.flatten(2).amax(dim=-1)},
    "channels-first conv1d, max(dim), keyed rows": {
        "max_pooled_convolution": _channels_first_convolution
    },
    "now: max(dim), keyed rows": {},
    # Not a function but the encoder's setting: the CNN at every position, nothing read back.
    "every position, no host reads": {"deduplicates": False},
}


# `--parts deduplication`: the training step with the encoder as it is, and reading nothing back.
DEDUPLICATION_VARIANTS = ["now: max(dim), keyed rows", "every position, no host reads"]


@contextlib.contextmanager
def encoder_variant(name: str, encoder):
    """The character encoder's module functions replaced by those of `ENCODER_VARIANTS[name]`,
    and `encoder`'s settings by its settings (its entries that are not functions)."""
    from elmo_plugin.elmo.bilm.characters import encoder as character_encoder

    variant = ENCODER_VARIANTS[name]
    saved = []
    for attribute, value in variant.items():
        owner = character_encoder if callable(value) else encoder
        saved.append((owner, attribute, getattr(owner, attribute)))
        setattr(owner, attribute, value)
    try:
        yield
    finally:
        for owner, attribute, value in saved:
            setattr(owner, attribute, value)


def encoder_table(options, sentences, lanes: int, device: str, runs: int) -> None:
    """The character encoder alone, forward and backward, on one packed batch's tokens."""
    from elmo_plugin.elmo.bilm.characters.encoder import ElmoCharacterEncoder

    cnn = options["char_cnn"]
    ids = packed_batches(sentences, lanes, 10, 1)[0]["tokens"]
    ids = next(iter(next(iter(ids.values())).values())).to(device)
    print(
        f"\n## The character encoder, forward and backward ({ids.shape[0] * ids.shape[1]} "
        f"tokens of {lanes} lanes; ms, medians of {runs})"
    )
    print("| variant | float32 | bfloat16 |")
    print("|---|---|---|")
    for name in ENCODER_VARIANTS:
        times = {}
        for dtype in (torch.float32, torch.bfloat16):
            encoder = ElmoCharacterEncoder(
                cnn["embedding"]["dim"],
                cnn["filters"],
                cnn["n_highway"],
                options["lstm"]["projection_dim"],
                cache_size=0,
                compute_dtype=dtype,
            ).to(device)
            samples = []
            with encoder_variant(name, encoder):
                for run in range(runs + 2):
                    synchronize(device)
                    start = time.perf_counter()
                    encoder.encode_without_markers(ids)["token_embedding"].sum().backward()
                    synchronize(device)
                    samples.append(time.perf_counter() - start)
            times[dtype] = statistics.median(samples[2:]) * 1000
        print(f"| {name} | {times[torch.float32]:.2f} | {times[torch.bfloat16]:.2f} |", flush=True)


def encoder_variant_training(
    options, vocabulary_size, num_samples, sentences, lane_counts, device, steps, names=None
):
    """The training step of `training_table` in bfloat16 with CUDA graphs, once with each of
    the character encoder's variants (`names`, default all)."""
    from elmo_plugin.elmo import Execution

    model = paper_model(options, vocabulary_size, num_samples, device)
    set_compute_dtype(model, torch.bfloat16)
    model.bilm.set_execution(Execution(cuda_graphs=None))  # None ("auto"): on CUDA
    print(f"\n## Training, bfloat16 with CUDA graphs, by character encoder ({steps} timed steps)")
    print("| lanes | encoder | tokens/s | ms/step | host reads/step |")
    print("|---|---|---|---|---|")
    for lanes in lane_counts:
        batches = packed_batches(sentences, lanes, vocabulary_size, 4)
        for name in names or ENCODER_VARIANTS:
            with encoder_variant(name, model.bilm.character_encoder):
                result = measure_training(model, batches, device, steps, True)
            print(
                f"| {lanes} | {name} | {result['tokens_per_s']:,.0f} | {result['ms']:.1f} | "
                f"{result['host_reads']} |",
                flush=True,
            )
    model.bilm.set_execution(Execution())
    del model


# ---------------------------------------------------------------- the hardware's LSTM


def cudnn_table(lane_counts, cell: int, projection: int, device: str, steps: int) -> None:
    print(
        f"\n## cuDNN's LSTM with projections (2 layers x 2 directions, {cell} -> {projection}, "
        "20 steps, bfloat16)"
    )
    print("| lanes | tokens/s | ms/step |")
    print("|---|---|---|")
    directions = [
        torch.nn.LSTM(projection, cell, num_layers=2, proj_size=projection).to(
            device, torch.bfloat16
        )
        for _ in range(2)
    ]
    for lanes in lane_counts:
        inputs = torch.randn(WINDOW, lanes, projection, device=device, dtype=torch.bfloat16)
        inputs.requires_grad_()

        def step():
            loss = sum(lstm(inputs)[0].float().sum() for lstm in directions)
            loss.backward()

        for _ in range(3):
            step()
        synchronize(device)
        start = time.perf_counter()
        for _ in range(steps):
            step()
        synchronize(device)
        elapsed = (time.perf_counter() - start) / steps
        print(f"| {lanes} | {lanes * WINDOW / elapsed:,.0f} | {elapsed * 1000:.1f} |", flush=True)


def device_name(device: str) -> str:
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(device)
    with open("/proc/cpuinfo") as cpuinfo:
        names = [line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")]
    return names[0] if names else "CPU"


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--toy", action="store_true", help="toy sizes, to check the script")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument(
        "--parts", nargs="+", default=["embedding", "embedder", "sorted", "training", "cudnn"]
    )
    args = parser.parse_args(argv)
    from elmo_plugin.elmo.bilm.lstm.triton_gates import triton

    versions = f"triton {triton.__version__}" if triton is not None else "no triton"
    print(
        header(f"{args.device} ({device_name(args.device)})", str(torch.get_num_threads()))
        + f"; {versions}"
    )
    corpus = os.path.join(ROOT, *TOY_CORPUS) if args.toy else shared_data(*CORPUS)
    sentences = read_sentences(corpus, 64 if args.toy else 1024)
    if args.toy:
        from tests.published_sizes import published_options

        options = published_options("small")
        options["lstm"].update(dim=64, projection_dim=16)
        options["char_cnn"]["filters"] = [[1, 4], [2, 8]]
        sizes, batch_sizes, lane_counts = ["small"], [32], [4]
        vocabulary, samples, cell, projection = 2000, 64, 64, 16
    else:
        from tests.published_sizes import published_options

        options = published_options("original")
        sizes, batch_sizes, lane_counts = ["small", "original"], [32, 256], [128, 512, 2048]
        vocabulary, samples, cell, projection = PAPER_VOCABULARY, 8192, 4096, 512
    start = time.perf_counter()
    if "embedding" in args.parts:
        with tf32(False):
            embedding_table(
                sizes, batch_sizes, sentences, args.device, 1 if args.toy else args.runs
            )
    if "embedder" in args.parts:
        with tf32(False):
            embedder_table(
                sizes,
                sentences,
                args.device,
                1 if args.toy else args.runs,
                [256] if args.toy else [4096, 65536],
            )
    if "training" in args.parts:
        training_table(
            options, vocabulary, samples, sentences, lane_counts, args.device, args.steps
        )
    if "sorted" in args.parts:
        sorted_inference_table(
            sizes, batch_sizes, sentences, args.device, 1 if args.toy else args.runs
        )
    if "embedding_profile" in args.parts:
        embedding_profile(sentences[:256], 32, args.device, "bfloat16, graphs")
        embedding_profile(sentences[:512], 256, args.device, "float32")
        embedding_profile(sentences[:128], 32, args.device, "float32")
    if "encoder" in args.parts:
        encoder_table(
            options,
            sentences,
            lane_counts[1 if len(lane_counts) > 1 else 0],
            args.device,
            args.runs * 3,
        )
    if "variants" in args.parts or "deduplication" in args.parts:
        encoder_variant_training(
            options,
            vocabulary,
            samples,
            sentences,
            lane_counts[:2],
            args.device,
            args.steps,
            None if "variants" in args.parts else DEDUPLICATION_VARIANTS,
        )
    if "profile" in args.parts:
        profile_table(options, vocabulary, samples, sentences, lane_counts[:2], args.device)
    if "cudnn" in args.parts and args.device.startswith("cuda"):
        cudnn_table(lane_counts[:2], cell, projection, args.device, 10)
    print(f"\n(the whole run: {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
