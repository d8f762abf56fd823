"""
Loading a biLM for use, the one way for `Elmo` and for `load_bilm`'s other callers
(`ElmoEmbedder`, `allennlp elmo-embed`, the `bilm` model): its name resolved once to its files
and format (`naming.names.resolve_bilm`), then read by that format's reader
(`readers.READERS`). A bilm-tf biLM's options are found given inline, recorded in a model's
vocabulary or in `options.json` (`options_record`); a biLM inside a model has where its weights
come from checked at its first forward pass (`weight_provenance`).
"""

import os
from typing import Any, Dict, Optional, Union

import torch

from elmo_plugin.elmo.bilm.model import ElmoBiLm
from elmo_plugin.elmo.execution.settings import Execution
from elmo_plugin.elmo.formats.naming.names import BilmFiles, PathName, resolve_bilm
from elmo_plugin.elmo.formats.options_record import OptionsRecord
from elmo_plugin.elmo.formats.readers import BilmBuild, read_bilm


def load_bilm(
    options_file: Union[PathName, BilmFiles],
    weight_file: Optional[PathName],
    stateful: bool = False,
    char_cnn_cache_size: int = 50000,
    dropout: float = 0.0,
    compute_dtype: torch.dtype = torch.float32,
    known_options: Optional[Dict[str, Dict[str, Any]]] = None,
    vocab: Optional[OptionsRecord] = None,
    in_model: bool = False,
    execution: Union[str, Dict[str, Any], Execution] = Execution(),
) -> ElmoBiLm:
    """
    An `ElmoBiLm` of the size in `options_file` with the weights of `weight_file`.

    # Parameters

    options_file : `str`, `os.PathLike` or `BilmFiles`
        bilm-tf `options.json`: a path, a URL or `elmo_plugin://...`; or a whole biLM, which
        brings its weights: a published biLM's short name, a folder or a ZIP archive
        (`elmo_plugin.elmo.formats.naming.names`); or the files an entry point has resolved
        already (`resolve_bilm`, to check them before the work), read as they are.
    weight_file : `str` or `os.PathLike`, optional
        bilm-tf `weights.hdf5`; random weights when not given with an options file.
    stateful, char_cnn_cache_size, dropout, compute_dtype :
        As `ElmoBiLm.from_options`.
    execution : `Execution` or its config, optional (default = `"auto"`)
        As `ElmoBiLm.from_options`; a config's value (`"auto"`, `{"fused": true}`) too.
    known_options : `Dict[str, Dict[str, Any]]`, optional
        The contents of `options.json` files by name, used instead of reading that file.
    vocab : `OptionsRecord`, optional
        A model's vocabulary: options recorded there for `options_file` are used before the file
        is read, and the options are recorded there (`options_record.OPTIONS_NAMESPACE`).
    in_model : `bool`, optional (default = `False`)
        The biLM is part of a model, whose state dict (a trained archive's) may bring the
        weights and whose initializer runs after it is built: a missing `weight_file` is then an
        error only at a first forward pass that no state dict preceded, and weights changed
        between reading them and the first forward pass are an error
        (`weight_provenance.WeightProvenance`).
    """
    known_options = known_options or {}
    if isinstance(options_file, BilmFiles):
        files, options_file = options_file, options_file.options_file
    elif options_file in known_options:  # given inline: no file to find
        weights = None if weight_file is None else str(weight_file)
        files = BilmFiles(str(options_file), weights)
    else:
        files = resolve_bilm(options_file, weight_file)
    build = BilmBuild(
        os.fspath(options_file),
        stateful,
        char_cnn_cache_size,
        dropout,
        compute_dtype,
        Execution.parse(execution),
        known_options,
        vocab,
        in_model,
    )
    return read_bilm(files, build)
