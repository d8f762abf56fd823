"""
CPU throughput of the ONNX export (`elmo_plugin.elmo.formats.onnx.export`) in ONNX Runtime
beside our `ElmoBiLm` in PyTorch, the same biLM and sentences, one thread each, in one run.

The biLM is the shipped one (elmo_plugin/pretrained/elmo_wikipedia_512x128), or, with
`--size small|original`, random weights at a published size, or, with `--size efml-fixture`,
the ELMoForManyLangs test model (fixtures/efml/model, tiny: 16-dimensional projections), its
inputs its own character and word ids. Sentences are the first
`--sentences` of ../shared/data/lm_wikipedia_en_2015/tokenized/valid.txt.xz of at most 100
words (the fixture's sentences when ../shared/data is absent), in batches of `--batch-size`,
their character ids made once, untimed. One untimed pass warms both up; then the two
alternate, `--runs` times each, and the medians are reported with their ratio. Our character
CNN's token cache is emptied before each of our passes, so that every pass encodes its words
afresh, as the export does (which has no cache); with `--sort-by-length` the batches hold
sentences of similar lengths. The largest difference of the layers, over the
first batch, is printed too.

    python benchmarks/onnx_speed.py --runs 5
    python benchmarks/onnx_speed.py --runs 5 --sort-by-length
    python benchmarks/onnx_speed.py --runs 5 --size efml-fixture
"""

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402

SHIPPED = os.path.join(common.ROOT, "elmo_plugin", "pretrained", "elmo_wikipedia_512x128")
EFML_FIXTURE = os.path.join(common.ROOT, "fixtures", "efml", "model")
SIZES = ["shipped", "small", "original", "efml-fixture"]
CORPUS = ("lm_wikipedia_en_2015", "tokenized", "valid.txt.xz")


def _sentences(count: int):
    if os.path.isdir(common.SHARED_DATA):
        return common.read_sentences(common.shared_data(*CORPUS), count, max_length=100)
    with open(os.path.join(common.ROOT, "fixtures", "elmo", "sentences.json")) as handle:
        return [line.split() for group in json.load(handle) for line in group][:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=SIZES, default="shipped")
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--sort-by-length",
        action="store_true",
        help="batch the sentences sorted by length (less padding, which the export computes)",
    )
    args = parser.parse_args()

    import numpy
    import onnxruntime
    import torch

    from elmo_plugin.elmo import load_bilm
    from elmo_plugin.elmo.formats.efml import load_efml_bilm
    from elmo_plugin.elmo.formats.onnx.efml import onnx_inputs
    from elmo_plugin.elmo.formats.onnx.export import export_onnx

    torch.set_num_threads(1)
    workdir = tempfile.mkdtemp()
    if args.size == "shipped":
        files = (os.path.join(SHIPPED, "options.json"), os.path.join(SHIPPED, "weights.hdf5"))
        bilm = load_bilm(*files)
    elif args.size == "efml-fixture":
        bilm = load_efml_bilm(EFML_FIXTURE)
    else:
        bilm = load_bilm(*common.write_random_bilm(args.size, workdir))
    bilm.eval()
    model = export_onnx(bilm, os.path.join(workdir, "elmo.onnx"), keep_sentence_boundaries=True)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    sentences = _sentences(args.sentences)
    if args.sort_by_length:
        sentences.sort(key=len)
    size = args.batch_size
    batches = [bilm.batch_to_ids(sentences[i : i + size]) for i in range(0, len(sentences), size)]
    names = [model_input.name for model_input in session.get_inputs()]
    if args.size == "efml-fixture":
        width = bilm.character_encoder.max_characters_per_token
        feeds = [onnx_inputs(ids.numpy(), width) for ids in batches]
        arrays = [{name: feed[name] for name in names} for feed in feeds]
    else:
        arrays = [{names[0]: ids.numpy()} for ids in batches]
    tokens = sum(len(sentence) for sentence in sentences)

    def ours() -> None:
        bilm.character_encoder.clear_cache()
        with torch.no_grad():
            for ids in batches:
                bilm(ids)

    def theirs() -> None:
        for inputs in arrays:
            session.run(["layers"], inputs)

    with torch.no_grad():
        reference = torch.stack(bilm(batches[0])["activations"]).numpy()
    difference = numpy.abs(session.run(["layers"], arrays[0])[0] - reference)
    runs = {"torch": ours, "onnxruntime": theirs}
    for run in runs.values():
        run()  # warm-up, untimed
    medians = common.medians_of(common.alternating_times(runs, args.runs))

    print(common.header("cpu", "1 (torch.set_num_threads, ORT intra- and inter-op)"))
    print(f"CPU: {common.cpu_model()}; onnxruntime {onnxruntime.__version__}")
    print(
        f"biLM {args.size}; {len(sentences)} sentences, {tokens} tokens, batches of {size}"
        f"{' sorted by length' if args.sort_by_length else ''}; "
        f"{args.runs} alternating runs; largest layer difference {difference.max():.2e}"
    )
    print("| runtime | median s | tokens/s | speed vs torch |")
    print("|---|---|---|---|")
    for name, median in medians.items():
        ratio = medians["torch"] / median
        print(f"| {name} | {median:.2f} | {tokens / median:.0f} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
