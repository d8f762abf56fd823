"""
Opening a TensorFlow checkpoint with a published softmax (docs/performance.md, "TensorFlow
checkpoints"): the 1B Word Benchmark vocabulary's 793,471 x 512 softmax (1.6 GB) with random
values, written by TensorFlow itself, then opened by elmo_plugin's TensorFlow-free reader in
a fresh process: the seconds and the resident memory to open it and read a small tensor (what
loading a biLM's layers does), then to read the softmax with its CRC checked.

    TF_USE_LEGACY_KERAS=1 /work/tfvenv/bin/python benchmarks/tensorflow_checkpoint_open.py \
        --write /tmp/big_softmax
    .venv/bin/python benchmarks/tensorflow_checkpoint_open.py --open /tmp/big_softmax

The first command needs TensorFlow (a venv apart from the project's, tests/elmo/
test_tensorflow_parity.py says how to make one); the second, the project alone.
"""

import argparse
import importlib
import os
import sys
import time

import numpy

VOCABULARY, DIMENSION = 793471, 512
SOFTMAX = "lm/softmax/W"
SMALL = "lm/char_embed"


def write_with_tensorflow(directory: str) -> None:
    tensorflow = importlib.import_module("tensorflow")  # the TF venv's, not the project's

    tf = tensorflow.compat.v1
    tf.disable_v2_behavior()
    tf.set_random_seed(0)
    shapes = {SOFTMAX: (VOCABULARY, DIMENSION), "lm/softmax/b": (VOCABULARY,), SMALL: (261, 16)}
    # Initialised by TensorFlow in the graph: a numpy value would be a constant of the graph,
    # which is limited to 2 GB.
    variables = [
        tf.get_variable(name, shape, initializer=tf.random_normal_initializer())
        for name, shape in shapes.items()
    ]
    os.makedirs(directory, exist_ok=True)
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        tf.train.Saver(variables).save(session, os.path.join(directory, "model.ckpt"), 1)


def resident_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def open_and_read(directory: str) -> None:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from common import cpu_model

    from elmo_plugin.elmo.formats.tensorflow.checkpoint import Checkpoint

    before = resident_mb()
    start = time.perf_counter()
    checkpoint = Checkpoint(os.path.join(directory, "model.ckpt-1"))
    checkpoint.tensor(SMALL)
    opened = time.perf_counter() - start
    after_open = resident_mb()
    start = time.perf_counter()
    total = float(checkpoint.tensor(SOFTMAX).sum(dtype=numpy.float64))
    softmax = time.perf_counter() - start
    print(f"CPU: {cpu_model()}; softmax {checkpoint.shape(SOFTMAX)}, checksum {total:.3f}")
    print("| step | seconds | resident MB added | resident MB (process) |")
    print("| --- | --- | --- | --- |")
    print(f"| imports (`import elmo_plugin` registers the plugin) | | | {before:.0f} |")
    print(
        f"| open the checkpoint, read {SMALL} | {opened:.3f} | {after_open - before:.0f} "
        f"| {after_open:.0f} |"
    )
    print(
        f"| read the softmax (CRC checked, summed) | {softmax:.2f} | {resident_mb() - before:.0f}"
        f" | {resident_mb():.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--write", metavar="DIR", help="write the checkpoint (needs TensorFlow)")
    what.add_argument("--open", metavar="DIR", help="open the checkpoint written with --write")
    args = parser.parse_args()
    if args.write:
        write_with_tensorflow(args.write)
    else:
        open_and_read(args.open)


if __name__ == "__main__":
    main()
