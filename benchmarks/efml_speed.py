"""
Embedding speed of an ELMoForManyLangs (EFML) model: our `ElmoEmbedder` over
`load_efml_bilm` against EFML's own `Embedder.sents2elmo(..., output_layer=-2)`
(elmoformanylangs 0.0.4.post2, where scripts/install_profile.sh installs it for the current
profile), same model, same sentences, one thread, in one process.

Models: "fixture" is fixtures/efml/model (trained by EFML, tiny); "published" has the size of
every published EFML model (EFML's own `cnn_50_100_512_4096_sample.json`: 2 layers of 4096
cells projected to 512, 2048 CNN filters, 100-d word embeddings), its random weights made by
EFML's own modules and saved as EFML saves them, its tables from the corpus.
Sentences: the first `--sentences` of ../shared/data/lm_wikipedia_en_2015/tokenized/valid.txt.xz
(at most 40 tokens). Each implementation embeds them once untimed (a warm-up), then the two
alternate `--runs` times; our character-CNN cache is emptied before each of our runs, so that
nothing is carried over from the run before. The medians and their ratio are printed, with the
largest difference of our outputs from those of a fresh `Embedder` given all sentences in one
batch (which start from zero states, as ours do; in the timed runs EFML carries states from
batch to batch, as it always does).

`--compute-dtype bfloat16` runs our LSTM in bfloat16 (the token layer stays float32); it pays
only on a CPU with native bfloat16 (AVX512_BF16 or AMX), and the difference printed is then
bfloat16's from EFML's float32. `--parts` also prints the float32 arithmetic of our LSTM, the
rate of one large float32 product on this core (2,048 x 512 by 512 x 16,384, the rate the
BLAS reaches here), and from these the largest speed-up our float32 LSTM could show on this
machine were every product at that rate.

    python benchmarks/efml_speed.py --models fixture published --runs 5
    python benchmarks/efml_speed.py --models published --parts --sentences 64
    python benchmarks/efml_speed.py --models published --runs 3 --compute-dtype bfloat16
"""

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from typing import Any, Dict, List

from common import ROOT, alternating_times, cpu_model, medians_of, read_sentences, shared_data

CORPUS = ("lm_wikipedia_en_2015", "tokenized", "valid.txt.xz")
FIXTURE = os.path.join(ROOT, "fixtures", "efml", "model")
PUBLISHED = "cnn_50_100_512_4096_sample.json"


def write_published_size_model(efml: Any, sentences: List[List[str]], directory: str) -> str:
    """An EFML model of the published size with EFML's random initialisation, in EFML's files."""
    import torch
    from elmoformanylangs.frontend import Model
    from elmoformanylangs.modules.embedding_layer import EmbeddingLayer

    configs = os.path.join(os.path.dirname(efml.__file__), "configs")
    with open(os.path.join(configs, PUBLISHED)) as config_file:
        config = json.load(config_file)
    specials = ["<oov>", "<bos>", "<eos>", "<pad>"]
    words = {word: i for i, word in enumerate(specials)}
    characters: Dict[str, int] = {}
    for sentence in sentences[: len(sentences) // 2]:  # the rest has unseen words
        for word in sentence:
            words.setdefault(word, len(words))
            for character in word:
                characters.setdefault(character, len(characters))
    for special in ["<bos>", "<eos>", "<oov>", "<pad>", "<bow>", "<eow>"]:
        characters.setdefault(special, len(characters))
    torch.manual_seed(0)
    word_layer = EmbeddingLayer(config["token_embedder"]["word_dim"], words, fix_emb=False)
    char_layer = EmbeddingLayer(config["token_embedder"]["char_dim"], characters, fix_emb=False)
    model = Model(config, word_layer, char_layer, use_cuda=False)
    torch.save(model.token_embedder.state_dict(), os.path.join(directory, "token_embedder.pkl"))
    torch.save(model.encoder.state_dict(), os.path.join(directory, "encoder.pkl"))
    for name, table in [("char.dic", characters), ("word.dic", words)]:
        with open(os.path.join(directory, name), "w", encoding="utf-8") as table_file:
            table_file.writelines(f"{token}\t{i}\n" for token, i in table.items())
    with open(os.path.join(directory, "config.json"), "w") as arguments_file:
        json.dump({"config_path": PUBLISHED}, arguments_file)
    with open(os.path.join(directory, PUBLISHED), "w") as config_file:
        json.dump(config, config_file)
    return directory


def measure(
    efml: Any, model_dir: str, sentences: List[List[str]], runs: int, compute_dtype: str
) -> Dict[str, Any]:
    import numpy

    from elmo_plugin.elmo.execution.compute_dtype import parse_compute_dtype
    from elmo_plugin.elmo.formats.efml import load_efml_bilm
    from elmo_plugin.embedding.elmo_embedder import ElmoEmbedder

    theirs = efml.Embedder(model_dir, batch_size=64)
    bilm = load_efml_bilm(model_dir, compute_dtype=parse_compute_dtype(compute_dtype))
    ours = ElmoEmbedder.from_bilm(bilm)

    def run_ours() -> List[Any]:
        bilm.character_encoder.clear_cache()
        return list(ours.embed_sentences(sentences, batch_size=64))

    def run_theirs() -> List[Any]:
        return theirs.sents2elmo(sentences, output_layer=-2)

    # EFML's vectors from zero states: all sentences in its first batch of a fresh Embedder.
    reference = efml.Embedder(model_dir, batch_size=len(sentences))
    expected = reference.sents2elmo(sentences, output_layer=-2)
    del reference
    difference = max(float(numpy.abs(a - b).max()) for a, b in zip(run_ours(), expected))
    run_theirs()
    times = alternating_times({"efml": run_theirs, "ours": run_ours}, runs)
    return {"medians": medians_of(times), "times": times, "difference": difference}


def measure_parts(efml: Any, model_dir: str, sentences: List[List[str]]) -> Dict[str, float]:
    """CPU seconds of each part, on one batch of all `sentences`: the token layer and the LSTM,
    ours (the character-CNN cache empty) and EFML's (its batch made beforehand, untimed)."""
    import torch
    from elmoformanylangs.elmo import create_batches, read_list

    from elmo_plugin.elmo.formats.efml import load_efml_bilm

    bilm = load_efml_bilm(model_dir).eval()
    ids = bilm.batch_to_ids(sentences)
    embedder = efml.Embedder(model_dir, batch_size=len(sentences))
    data, text = read_list(sentences, embedder.config["token_embedder"]["max_characters_per_token"])
    words, characters, _, masks, _, _ = create_batches(
        data,
        len(sentences),
        embedder.word_lexicon,
        embedder.char_lexicon,
        embedder.config,
        text=text,
    )
    model, mask = embedder.model, masks[0][0]
    parts: Dict[str, float] = {}
    with torch.no_grad():
        start = time.process_time()
        encoded = bilm.character_encoder(ids)
        parts["ours: token layer (s)"] = time.process_time() - start
        start = time.process_time()
        bilm.lstm(encoded["token_embedding"], encoded["mask"])
        parts["ours: LSTM (s)"] = time.process_time() - start
        start = time.process_time()
        tokens = model.token_embedder(words[0], characters[0], tuple(mask.shape))
        parts["EFML: token layer (s)"] = time.process_time() - start
        start = time.process_time()
        model.encoder(tokens, mask)
        parts["EFML: LSTM (s)"] = time.process_time() - start
    lstm_gflop = _lstm_flops(bilm, int(encoded["mask"].sum())) / 1e9
    parts["ours: LSTM GFLOPS"] = lstm_gflop / parts["ours: LSTM (s)"]
    parts["large float32 product GFLOPS"] = _large_product_rate()
    best_lstm = lstm_gflop / parts["large float32 product GFLOPS"]
    efml_total = parts["EFML: token layer (s)"] + parts["EFML: LSTM (s)"]
    parts["speed-up now"] = efml_total / (parts["ours: token layer (s)"] + parts["ours: LSTM (s)"])
    parts["speed-up bound in float32"] = efml_total / (parts["ours: token layer (s)"] + best_lstm)
    return parts


def _lstm_flops(bilm: Any, positions: int) -> float:
    """Multiply-adds x 2 of the LSTM's products at `positions` (markers included): each
    layer's and direction's input, recurrent and projection products."""
    flops = 0
    for layer in bilm.lstm.bilstm_layers:
        gates = 4 * layer.cell_size
        per_position = layer.input_size * gates + layer.hidden_size * gates
        per_position += layer.cell_size * layer.hidden_size
        flops += 2 * 2 * per_position  # two directions, a multiply and an add
    return float(flops * positions)


def _large_product_rate() -> float:
    """GFLOPS of a large float32 product on one thread, the best of 5."""
    import torch

    left, right = torch.randn(2048, 512), torch.randn(512, 16384)
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        torch.mm(left, right)
        best = min(best, time.process_time() - start)
    return 2 * 2048 * 512 * 16384 / best / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["fixture", "published"])
    parser.add_argument("--sentences", type=int, default=128)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--compute-dtype", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument(
        "--parts",
        action="store_true",
        help="instead, the CPU seconds of each part on one batch of --sentences (64 or fewer) "
        "and the float32 bound",
    )
    args = parser.parse_args()

    import torch

    sys.path.insert(0, ROOT)
    from tests.efml_reference import efml_available, import_efml

    if not efml_available():
        sys.exit("ELMoForManyLangs is not installed: scripts/install_profile.sh current ...")
    efml = import_efml()
    logging.getLogger("elmoformanylangs").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    sentences = read_sentences(shared_data(*CORPUS), args.sentences, max_length=40)
    tokens = sum(len(sentence) for sentence in sentences)
    print(
        f"# {cpu_model()}, 1 thread, torch {torch.__version__}, Python "
        f"{sys.version.split()[0]}; {len(sentences)} sentences, {tokens} tokens, batches of 64, "
        f"medians of {args.runs} alternating runs; ours in {args.compute_dtype}, EFML's in "
        "float32"
    )
    with tempfile.TemporaryDirectory() as scratch:
        if args.parts:
            for name in args.models:
                model_dir = FIXTURE
                if name == "published":
                    model_dir = write_published_size_model(efml, sentences, scratch)
                parts = measure_parts(efml, model_dir, sentences)
                print(f"{name}: " + ", ".join(f"{k} {v:.2f}" for k, v in parts.items()))
            return
        print("| model | EFML Embedder (s) | ours (s) | speed-up | largest difference |")
        print("|---|---|---|---|---|")
        for name in args.models:
            model_dir = FIXTURE
            if name == "published":
                model_dir = write_published_size_model(efml, sentences, scratch)
            result = measure(efml, model_dir, sentences, args.runs, args.compute_dtype)
            medians = result["medians"]
            print(
                f"| {name} | {medians['efml']:.3f} | {medians['ours']:.3f} | "
                f"{medians['efml'] / medians['ours']:.1f}x | {result['difference']:.1e} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
