"""Embeds sentences with a bilm-tf-format biLM through our `Elmo` and stock AllenNLP's, and
prints how far apart the vectors are.

    python scripts/compare_with_allennlp.py MODEL_DIR SENTENCES_FILE
"""

import os
import sys
import warnings

import torch

with warnings.catch_warnings():
    # Importing AllenNLP warns about torch deprecations that are none of this script's output.
    warnings.simplefilter("ignore", FutureWarning)
    from allennlp.modules.elmo import Elmo as AllenNlpElmo
    from allennlp.modules.elmo import batch_to_ids

    from elmo_plugin.elmo import Elmo

model_dir, sentences_file = sys.argv[1], sys.argv[2]
options, weights = os.path.join(model_dir, "options.json"), os.path.join(model_dir, "weights.hdf5")
with open(sentences_file, encoding="utf-8") as text:
    ids = batch_to_ids([line.split() for line in text if line.strip()])
with torch.no_grad():
    ours = Elmo(options, weights, 1, dropout=0.0)(ids)["elmo_representations"][0]
    stock = AllenNlpElmo(options, weights, 1, dropout=0.0)(ids)["elmo_representations"][0]
print(
    f"our Elmo and AllenNLP's on {ids.size(0)} sentences: vectors {tuple(ours.shape)}, "
    f"largest difference {float((ours - stock).abs().max()):.1e}"
)
