"""
The biLM formats a name can stand for, each with the files that mark a folder as one: naming
tells the formats apart by these files alone, before any of them is read, and the readers
(`formats.readers`, the codecs) name their files from here, so that naming imports no codec.
"""

from typing import Dict, Tuple

from elmo_plugin.elmo.files.zip_archives import is_file

BILM_TF = "bilm-tf, as elmo-export writes it"
BILM_TF_NLPL = "bilm-tf, as NLPL's repository publishes it"
EFML = "ELMoForManyLangs"
TF_CHECKPOINT = "bilm-tf training checkpoint"
TF_HUB = "TF1 Hub module"

# bilm-tf's pair, as `dump_weights` and elmo-export write it.
OPTIONS_NAME = "options.json"
WEIGHTS_NAME = "weights.hdf5"
# NLPL's name for bilm-tf's weights file (simple_elmo's too).
NLPL_WEIGHTS_NAME = "model.hdf5"
# What marks a directory as an ELMoForManyLangs model (its training arguments, character
# table and two torch state dicts); `word.dic` only where the model has a word embedding.
EFML_FILES = ("config.json", "char.dic", "token_embedder.pkl", "encoder.pkl")
# A TensorFlow checkpoint `<prefix>` is `<prefix>.index` and `<prefix>.data-*`; a training
# folder's `checkpoint` file lists its checkpoints, latest first named.
INDEX_SUFFIX = ".index"
CHECKPOINT_STATE_NAME = "checkpoint"
# A TF1 Hub module: its graph and its variables' checkpoint.
HUB_MODULE_NAME = "tfhub_module.pb"
HUB_VARIABLES_PREFIX = "variables/variables"

# What a folder (or a ZIP) must hold to be a biLM, by format: the error for any other folder
# lists these. The bilm-tf formats name the options first, then the weights.
BILM_FOLDER_FORMATS: Dict[str, Tuple[str, ...]] = {
    BILM_TF: (OPTIONS_NAME, WEIGHTS_NAME),
    BILM_TF_NLPL: (OPTIONS_NAME, NLPL_WEIGHTS_NAME),
    EFML: EFML_FILES,
    TF_CHECKPOINT: (CHECKPOINT_STATE_NAME, OPTIONS_NAME),
    TF_HUB: (HUB_MODULE_NAME, HUB_VARIABLES_PREFIX + INDEX_SUFFIX),
}
# Formats loaded from their folder as a whole (`BilmFiles.options_file` names it).
WHOLE_FOLDER_FORMATS = (EFML, TF_CHECKPOINT, TF_HUB)


def is_checkpoint_prefix(name: str) -> bool:
    """Whether `name` names one checkpoint (`model.ckpt-N`: its `.index` file is there)."""
    return "://" not in name and is_file(name + INDEX_SUFFIX)
