"""
Exporting a trained `bilm` model to the bilm-tf format that ELMo users load: `options.json`
and `weights.hdf5`, readable by this plugin's `elmo` embedder, by AllenNLP's `Elmo` and
`elmo_token_embedder`, and by bilm-tf itself; optionally the softmax and its vocabulary too,
so that the export can be trained further (`softmax_file` of the `bilm` model).
"""

import logging
import os
from typing import Callable, Dict, List, Union

from allennlp.models import Model

from elmo_plugin.allennlp.archives import load_checked_archive
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.atomic_files import check_output_directory
from elmo_plugin.elmo.formats.naming.package_files import refuse_overwriting
from elmo_plugin.elmo.formats.naming.bilm_formats import OPTIONS_NAME, WEIGHTS_NAME
from elmo_plugin.elmo.formats.exports import save_bilm
from elmo_plugin.elmo.files.file_sets import MANIFEST_NAME
from elmo_plugin.elmo.formats.tensorflow.bilm_checkpoint import is_checkpoint, load_checkpoint_bilm
from elmo_plugin.elmo.formats.tensorflow.language_model import CheckpointLanguageModel
from elmo_plugin.allennlp.lm.corpus import TARGET_NAMESPACE
from elmo_plugin.allennlp.lm.models import BilmLanguageModel
from elmo_plugin.allennlp.lm.softmax_file import SOFTMAX_NAME, VOCAB_NAME, softmax_files

logger = logging.getLogger(__name__)

# bilm-tf trains with 261 characters and loads a biLM for inference only with
# `n_characters: 262` (the extra row is its padding); the stored table has 261 rows either way,
# and AllenNLP reads the size from the table.
INFERENCE_CHARACTERS = 262


def export_bilm(
    archive_or_model: Union[str, Model],
    output_dir: str,
    include_softmax: bool = False,
    cuda_device: int = -1,
    softmax_float16: bool = False,
) -> List[str]:
    """Writes the biLM of a `bilm` model archive (or model) in the bilm-tf format into
    `output_dir`; returns the paths written. `softmax_float16` halves the softmax file (its
    weights rounded to 16 bits; the biases stay 32-bit)."""
    check_output_directory(output_dir)
    model = archive_or_model
    if isinstance(archive_or_model, str):
        for name in (OPTIONS_NAME, WEIGHTS_NAME, SOFTMAX_NAME, VOCAB_NAME, MANIFEST_NAME):
            refuse_overwriting(os.path.join(output_dir, name), {"archive": archive_or_model})
        if is_checkpoint(archive_or_model):
            return _export_checkpoint(
                archive_or_model, output_dir, include_softmax, softmax_float16
            )
        if not os.path.exists(archive_or_model):
            raise ConfigurationError(f"model archive {archive_or_model} does not exist")
        model = load_checked_archive(archive_or_model, cuda_device=cuda_device).model
    if not isinstance(model, BilmLanguageModel):
        raise ConfigurationError(
            f"{archive_or_model} holds a {type(model).__name__}, not a `bilm` language model"
        )
    options = model.bilm.options()
    options["char_cnn"]["n_characters"] = INFERENCE_CHARACTERS
    softmax = _softmax_files(model, softmax_float16) if include_softmax else {}
    save_bilm(model.bilm, output_dir, {"char_cnn": options["char_cnn"]}, softmax)
    names = [OPTIONS_NAME, WEIGHTS_NAME] + ([SOFTMAX_NAME, VOCAB_NAME] if include_softmax else [])
    written = [os.path.join(output_dir, name) for name in names]
    logger.info("exported the biLM to %s", ", ".join(written))
    return written


def _export_checkpoint(
    checkpoint: str, output_dir: str, include_softmax: bool, float16: bool
) -> List[str]:
    """A bilm-tf training checkpoint's biLM (and softmax, with the vocabulary it was trained
    with: a `bilm` model's `softmax_file` continues its training) as an export."""
    softmax: Dict[str, Callable[[str], None]] = {}
    if include_softmax:
        language_model = CheckpointLanguageModel(checkpoint)
        bilm = language_model.bilm
        weight, bias = (array.numpy() for array in language_model.softmax())
        words = language_model.vocabulary.words
        softmax = softmax_files(words, weight.astype("float16") if float16 else weight, bias)
    else:
        bilm = load_checkpoint_bilm(checkpoint)
    options = bilm.options()
    options["char_cnn"]["n_characters"] = INFERENCE_CHARACTERS
    save_bilm(bilm, output_dir, {"char_cnn": options["char_cnn"]}, softmax)
    names = [OPTIONS_NAME, WEIGHTS_NAME] + ([SOFTMAX_NAME, VOCAB_NAME] if include_softmax else [])
    return [os.path.join(output_dir, name) for name in names]


def _softmax_files(model: BilmLanguageModel, float16: bool) -> Dict[str, Callable[[str], None]]:
    vocabulary = model.vocab.get_index_to_token_vocabulary(TARGET_NAMESPACE)
    words = [vocabulary[index] for index in range(1, len(vocabulary))]
    weight = model.softmax.weight.detach().cpu()
    bias = model.softmax.bias.detach().cpu().numpy()
    return softmax_files(words, (weight.half() if float16 else weight).numpy(), bias)
