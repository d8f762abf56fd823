"""
Where a training step of the `bilm` model (and of its peer) spends its time: the character
CNN, the (bi)LSTM and the softmax, each timed forward + backward on the same batches as
benchmarks/bilm_training_speed.py, plus the top operators of a torch profiler run over
whole steps.

    python benchmarks/bilm_training_profile.py --model bilm --batches 4
    python benchmarks/bilm_training_profile.py --model peer --batches 4
    python benchmarks/bilm_training_profile.py --model bilm --compute-dtype bfloat16
"""

import argparse
import time
from typing import Callable, Dict, List

from bilm_training_speed import BATCH_SIZE, TRAIN, batches_of, build, corpus_sentences, vocabulary
from common import header
from elmo_plugin.elmo.execution.compute_dtype import COMPUTE_DTYPES


def timed(step: Callable[[], None], repeats: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        step()
    return time.perf_counter() - start


def components_of_ours(model, batch) -> Dict[str, Callable[[], None]]:
    import torch

    from elmo_plugin.elmo import ELMO_INDEXER_KEY

    bilm = model.bilm
    character_ids = batch["tokens"][ELMO_INDEXER_KEY]["elmo_tokens"]
    encoded = bilm.character_encoder(character_ids)
    embedding = encoded["token_embedding"].detach().requires_grad_()
    mask = encoded["mask"]
    top = bilm.lstm(embedding, mask)[0][-1].detach()
    hidden = top.size(-1) // 2
    predictions = torch.cat([top[..., :hidden][mask], top[..., hidden:][mask]]).requires_grad_()
    targets = torch.randint(0, model.softmax.num_words, (predictions.size(0),))

    return {
        "char_cnn": lambda: bilm.character_encoder(character_ids)["token_embedding"]
        .sum()
        .backward(),
        "lstm": lambda: sum(o.sum() for o in bilm.lstm(embedding, mask)[0]).backward(),
        "softmax": lambda: model.softmax(predictions, targets).sum().backward(),
    }


def components_of_peer(model, batch) -> Dict[str, Callable[[], None]]:
    import torch

    source = batch["source"]
    mask = source["tokens"]["tokens"] > 0
    embedding = model._text_field_embedder(source).detach().requires_grad_()
    top = model._contextualizer(embedding, mask).detach()
    hidden = top.size(-1) // 2
    predictions = torch.cat([top[..., :hidden][mask], top[..., hidden:][mask]]).requires_grad_()
    targets = torch.randint(0, model._softmax_loss._num_words, (predictions.size(0),))

    return {
        "char_cnn": lambda: model._text_field_embedder(source).sum().backward(),
        "lstm": lambda: model._contextualizer(embedding, mask).sum().backward(),
        "softmax": lambda: model._softmax_loss(predictions, targets).backward(),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=["bilm", "peer"], default="bilm")
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--compute-dtype", choices=sorted(COMPUTE_DTYPES), default="float32")
    args = parser.parse_args()

    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.set_num_threads(args.threads)
    print(header("cpu", str(args.threads)) + f", ours in {args.compute_dtype}", flush=True)
    model, tensors = build(args.model, vocabulary(), args.compute_dtype)
    model.train()
    sentences = corpus_sentences(TRAIN, BATCH_SIZE * args.batches)
    batches: List[Dict] = [tensors(b) for b in batches_of(sentences)]
    words = len(sentences) and sum(map(len, sentences))
    components = components_of_ours if args.model == "bilm" else components_of_peer

    totals: Dict[str, float] = {}
    for batch in batches:
        for name, step in components(model, batch).items():
            model.zero_grad()
            totals[name] = totals.get(name, 0.0) + timed(step)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def training_step(batch) -> None:
        optimizer.zero_grad()
        model(**batch)["loss"].backward()
        optimizer.step()

    totals["whole step"] = sum(timed(lambda: training_step(b)) for b in batches)
    print(f"{args.model}: {words} words in {len(batches)} batches, forward + backward seconds")
    for name, seconds in totals.items():
        share = seconds / totals["whole step"]
        print(f"  {name:12s} {seconds:7.2f} s  {share:6.1%}  ({words / seconds:6.0f} words/s)")
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        for batch in batches[:2]:
            training_step(batch)
    print(profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))


if __name__ == "__main__":
    main()
