"""
Held-out perplexity of an exported biLM, without training: the export's language model
(`allennlp elmo-export --include-softmax` writes options, weights, softmax and vocabulary)
evaluated on a text file of one tokenised sentence a line, forward, backward and both, with
the exact softmax in float32 (bilm-tf's `run_test.py`, for exports). A `bilm` model archive
is evaluated by `allennlp evaluate` instead.
"""

import os
from typing import Dict

from allennlp.data.data_loaders import MultiProcessDataLoader
from allennlp.training.util import evaluate

from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.formats.naming.bilm_formats import OPTIONS_NAME, WEIGHTS_NAME
from elmo_plugin.elmo.files.file_sets import read_together
from elmo_plugin.elmo.files.zip_archives import split_member
from elmo_plugin.allennlp.lm.corpus_vocabulary import CorpusVocabulary
from elmo_plugin.allennlp.lm.dataset_readers import BilmCorpusReader
from elmo_plugin.allennlp.lm.metrics.token_perplexity import PERPLEXITY_NAMES
from elmo_plugin.allennlp.lm.models import BilmLanguageModel
from elmo_plugin.allennlp.lm.softmax_file import SOFTMAX_NAME, VOCAB_NAME


def language_model_from_export(directory: str, with_softmax: bool = True) -> BilmLanguageModel:
    """The language model of a bilm-tf-format export: its vocabulary, options, weights and
    (unless `with_softmax` is false, when the softmax starts untrained) its softmax, all of
    one export (`file_sets.read_together`)."""
    if split_member(directory) is not None:
        raise ConfigurationError(
            f"{directory}: a ZIP archive (as NLPL's repository publishes biLMs) holds a biLM "
            f"without its softmax, which perplexity needs: name a folder holding {VOCAB_NAME}, "
            f"{OPTIONS_NAME}, {WEIGHTS_NAME} and {SOFTMAX_NAME}, as `allennlp elmo-export "
            "--include-softmax` writes them"
        )
    names = [VOCAB_NAME, OPTIONS_NAME, WEIGHTS_NAME] + ([SOFTMAX_NAME] if with_softmax else [])
    files = {name: os.path.join(directory, name) for name in names}
    with read_together(list(files.values())):
        return BilmLanguageModel(
            CorpusVocabulary.from_corpus(vocab_file=files[VOCAB_NAME]),
            options_file=files[OPTIONS_NAME],
            weight_file=files[WEIGHTS_NAME],
            softmax_file=files.get(SOFTMAX_NAME),
        )


def export_perplexity(
    directory: str, text_file: str, batch_size: int = 64, cuda_device: int = -1
) -> Dict[str, float]:
    """`forward_perplexity`, `backward_perplexity` and `perplexity` (both directions) of the
    export in `directory` on every sentence of `text_file`."""
    return held_out_perplexity(
        language_model_from_export(directory), text_file, batch_size, cuda_device
    )


def held_out_perplexity(
    model: BilmLanguageModel, text_file: str, batch_size: int = 64, cuda_device: int = -1
) -> Dict[str, float]:
    """The perplexities of a `bilm` language model (an export's or an archive's) on every
    sentence of `text_file`, one sentence an instance."""
    if batch_size < 1:
        raise ConfigurationError(f"--batch-size must be a positive integer, got {batch_size}")
    if cuda_device >= 0:
        model.cuda(cuda_device)
    loader = MultiProcessDataLoader(BilmCorpusReader(), text_file, batch_size=batch_size)
    loader.index_with(model.vocab)
    metrics = evaluate(model, loader, cuda_device=cuda_device)
    return {name: metrics[name] for name in PERPLEXITY_NAMES}
