"""
Words to character ids: our `elmo_plugin.elmo.batch_to_ids` against AllenNLP's
`allennlp.modules.elmo.batch_to_ids`, on the first `--sentences` sentences of
../shared/data/lm_wikipedia_en_2015/tokenized/valid.txt.xz, in batches of 32 and 256, one
thread. Ours runs with an empty word table ("cold", a new `CharacterIdTable` each pass) and
with the table holding the words already ("warm"); the three alternate, `--runs` times, and
the medians and ratios are printed. The outputs are checked equal first.

    python benchmarks/character_ids_speed.py
"""

import argparse
from typing import Callable, List

from common import alternating_times, cpu_model, header, medians_of, read_sentences, shared_data


def one_pass(convert: Callable, sentences: List[List[str]], batch_size: int) -> None:
    for i in range(0, len(sentences), batch_size):
        convert(sentences[i : i + batch_size])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    import torch
    from allennlp.modules.elmo import batch_to_ids as allennlp_batch_to_ids

    from elmo_plugin.elmo import CharacterIdTable

    torch.set_num_threads(1)
    path = shared_data("lm_wikipedia_en_2015", "tokenized", "valid.txt.xz")
    sentences = read_sentences(path, args.sentences)
    tokens = sum(len(sentence) for sentence in sentences)
    print(f"{header('cpu', '1')}; CPU {cpu_model()}")
    print(f"{len(sentences)} sentences, {tokens} tokens, from {path}; medians of {args.runs}")
    print("| batch | AllenNLP | ours, empty table | ours, words known |")
    print("|---|---|---|---|")
    for batch_size in (32, 256):
        check = sentences[:batch_size]
        assert torch.equal(CharacterIdTable().batch_to_ids(check), allennlp_batch_to_ids(check))
        warm = CharacterIdTable()
        one_pass(warm.batch_to_ids, sentences, batch_size)
        passes = {
            "allennlp": lambda: one_pass(allennlp_batch_to_ids, sentences, batch_size),
            "cold": lambda: one_pass(CharacterIdTable().batch_to_ids, sentences, batch_size),
            "warm": lambda: one_pass(warm.batch_to_ids, sentences, batch_size),
        }
        median = medians_of(alternating_times(passes, args.runs))
        theirs = median["allennlp"]
        print(
            f"| {batch_size} | {theirs * 1000:.0f} ms | "
            f"{median['cold'] * 1000:.1f} ms ({theirs / median['cold']:.0f}x) | "
            f"{median['warm'] * 1000:.1f} ms ({theirs / median['warm']:.0f}x) |"
        )


if __name__ == "__main__":
    main()
