"""Prints what `allennlp elmo-embed` wrote: each sentence's dataset shape and its first words."""

import json
import sys

import h5py

embeddings_file, sentences_file = sys.argv[1], sys.argv[2]
with h5py.File(embeddings_file, "r") as embeddings, open(sentences_file, encoding="utf-8") as text:
    lines = text.read().splitlines()
    names = sorted((k for k in embeddings if k != "sentence_to_index"), key=int)
    print(f"{len(names)} sentences in {embeddings_file}; (layers, tokens, dim) each:")
    for name in names[:5]:
        words = lines[int(name)].split()
        print(f"  {name:>3} {str(embeddings[name].shape):<16} {' '.join(words[:8])} ...")
    print(
        f"  ... sentence_to_index maps {len(json.loads(embeddings['sentence_to_index'][0]))} texts"
    )
